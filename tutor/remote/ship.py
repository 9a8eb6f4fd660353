"""The command ssh runs on the host: a Python one-liner that carries the bootstrap's modules.

    command = remote_command(python="")    # "python3 -c 'import base64,zlib;exec(...)'"

Nothing of the tutor is on a host before its first contact, and no second connection is made to
copy it there: the bootstrap (tutor.remote.bootstrap) and the standard-library-only modules it
imports travel inside the command itself, compressed, and are imported from memory. The command
is only letters, digits and `+/=` inside single quotes, so any login shell passes it on as it is.

The loader refuses a Python older than the tutor supports with its own exit status (TOO_OLD)
and its version on standard error, before any module that needs a newer one is read.
"""

from __future__ import annotations

import base64
import shlex
import zlib
from importlib import resources

# The bootstrap and what it imports, all standard library only; packages are listed too.
SHIPPED = (
    "tutor",
    "tutor.run",
    "tutor.run.seal",
    "tutor.run.gpu",
    "tutor.remote",
    "tutor.remote.protocol",
    "tutor.remote.store",
    "tutor.remote.hostenv",
    "tutor.remote.bootstrap",
)
PACKAGES = {"tutor", "tutor.run", "tutor.remote"}
TOO_OLD = 86  # the loader's exit status on a Python older than 3.10
NOT_FOUND = 127  # the shell's, when the Python named is not there

_LOADER = """
import sys
if sys.version_info < (3, 10):
    sys.stderr.write("tutor-remote: python %d.%d\\n" % sys.version_info[:2])
    sys.exit({too_old})
import importlib.abc, importlib.util
SOURCES = {sources!r}
PACKAGES = {packages!r}
class Shipped(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name in SOURCES:
            return importlib.util.spec_from_loader(name, self, is_package=name in PACKAGES)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        code = compile(SOURCES[module.__name__], "<tutor " + module.__name__ + ">", "exec")
        exec(code, module.__dict__)
sys.meta_path.insert(0, Shipped())
from tutor.remote.bootstrap import main
main()
"""


def _source(module: str) -> str:
    package, _, name = module.rpartition(".")
    if module in PACKAGES:
        package, name = module, "__init__"
    return resources.files(package).joinpath(f"{name}.py").read_text(encoding="utf-8")


def loader() -> str:
    """The program the host runs first: the bootstrap, with its modules inline."""
    sources = {module: _source(module) for module in SHIPPED}
    return _LOADER.format(too_old=TOO_OLD, sources=sources, packages=sorted(PACKAGES))


def remote_command(python: str = "") -> str:
    """The command line for ssh: `python3` (or the Python named) running the loader."""
    packed = base64.b64encode(zlib.compress(loader().encode("utf-8"), 9)).decode("ascii")
    program = f'import base64,zlib;exec(zlib.decompress(base64.b64decode("{packed}")))'
    return f"{_shell_path(python) if python else 'python3'} -c '{program}'"


def _shell_path(path: str) -> str:
    """`path` quoted for the host's shell, a leading `~/` left for it to expand."""
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:])
    return shlex.quote(path)
