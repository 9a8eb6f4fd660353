"""How a drill's tests run: in a child process, under one supervisor, with results streamed back.

The tutor's side starts a keeper (`keeper`) that starts the run, cold or forked from the warm
process (`warm` on this side, `zygote` on the other; their messages in `protocol`), and the
`supervisor` holds its limits. Inside the run, the pytest plugin `pytest_events` writes one
sealed line (`seal`) per test, and `child_guard` ends the run with its tutor. Back here the
lines become typed records (`events`) folded into a `results.RunResult` by the `runner`. Where
runs start is the runner's `host`: this machine, or one over ssh (tutor.remote). docs/DESIGN.md
draws it.
"""
