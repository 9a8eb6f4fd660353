"""Every drill's tests run under the tutor's drill plugin (options, backend, `impl` fixture)."""

pytest_plugins = ["tutor.harness.drill_plugin"]
