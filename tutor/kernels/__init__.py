"""The kernel languages a drill may be written in, behind one interface (tutor.kernels.base).

    language("triton")    # the language's object: tutor.kernels.<name>.LANGUAGE
    use("triton")         # in a run: the language of the drill under test ...
    current()             # ... for the harness's code that does not know the drill

A language's package is named after it; the catalogue says which names exist and the file
suffix of each (tutor.course.catalogue.KERNEL_LANGUAGES), and gives every drill its language. A
language's package is imported only when it is asked for, so the tutor's start-up pays for none.
"""

from __future__ import annotations

import importlib

from tutor.course.catalogue import KERNEL_LANGUAGES
from tutor.kernels.base import KernelLanguage

DEFAULT = "triton"
_current = DEFAULT


def language(name: str) -> KernelLanguage:
    """The language called `name` in drills.yaml (KeyError for one the catalogue lacks)."""
    if name not in KERNEL_LANGUAGES:
        raise KeyError(name)
    return importlib.import_module(f"tutor.kernels.{name}").LANGUAGE


def every() -> list[KernelLanguage]:
    """Every language the catalogue knows (the warm process preloads them all)."""
    return [language(name) for name in KERNEL_LANGUAGES]


def use(name: str) -> KernelLanguage:
    """Make `name` the language of this process's run; it is returned."""
    global _current
    found = language(name)
    _current = name
    return found


def current() -> KernelLanguage:
    """The language of this process's run (Triton unless a drill said otherwise)."""
    return language(_current)
