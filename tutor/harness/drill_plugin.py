"""The pytest plugin every drill's tests run under: options, the backend, and the fixtures.

    pytest drills/tests/test_t3_layernorm.py --impl mine|solutions|PATH [--cpu]

drills/tests/conftest.py names it (`pytest_plugins = ["tutor.harness.drill_plugin"]`), so a
drill's test module only sets `DRILL = "<id>"` and asks for the fixtures:

- `impl`: the learner's module for that drill, each function observed (tutor.harness.learner);
  what it must define comes from drills.yaml, or from `--impl-functions` and `--impl-torch-core`
  (the tutor's runner gives them, having read the catalogue already);
- `backend`: where kernels run (`.device`, `.is_cpu`); `device`: the torch device string.

The drill's kernel language (`--kernel-language`, which the runner takes from drills.yaml)
chooses the backend once, in `pytest_configure`, before any test module (or learner file)
imports triton, so Triton's CPU interpreter can be switched on in time; what it chose goes to
the run's event stream too (tutor.run.pytest_events.SESSION_FACTS).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tutor import kernels
from tutor.course import diagnoses as dx
from tutor.course.catalogue import load_catalogue
from tutor.course.paths import CoursePaths
from tutor.harness import backend as backend_mod
from tutor.harness import learner, story_text
from tutor.harness.failures import DrillFailure, HarnessFailure
from tutor.harness.inputs import guard_fill
from tutor.lang import i18n
from tutor.lang.i18n import _, ngettext
from tutor.run.pytest_events import SESSION_FACTS
from tutor.run.zygote import restart_cold

_BACKEND = pytest.StashKey[backend_mod.Backend]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tutor drills")
    group.addoption(
        "--impl",
        default="mine",
        help="the file under test: mine, solutions, starter, or a path (default: mine)",
    )
    group.addoption(
        "--cpu", action="store_true", help="run kernels on the CPU (Triton's interpreter, ...)"
    )
    group.addoption(
        "--kernel-language",
        default=kernels.DEFAULT,
        help=f"the drill's kernel language, as drills.yaml names it (default: {kernels.DEFAULT})",
    )
    # The tutor's runner has read drills.yaml already and says what it holds for the drill;
    # without these (pytest run by hand) the `impl` fixture reads it.
    group.addoption(
        "--impl-functions",
        metavar="NAME,...",
        default=None,
        help="the functions the file under test must define (default: from drills.yaml)",
    )
    group.addoption(
        "--impl-torch-core",
        metavar="NAME,...",
        default="",
        help="with --impl-functions: the torch operations that do the drill's work",
    )


def pytest_configure(config: pytest.Config) -> None:
    i18n.activate_from_env()  # the runner passes the learner's language in $TUTOR_LANG
    language = kernels.use(config.getoption("--kernel-language"))
    chosen = language.select_backend(config.getoption("--cpu"), restart_cold)
    config.stash[_BACKEND] = chosen
    config.stash[SESSION_FACTS] = {
        "backend": chosen.name,
        "device_name": chosen.device_name,
        "torch": torch.__version__,
        **language.versions(),
    }


def pytest_report_header(config: pytest.Config) -> str:
    chosen = config.stash[_BACKEND]
    return (
        f"tutor backend: {chosen.name} ({chosen.device_name}); impl: {config.getoption('--impl')}"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Check a missing-mask claim made from NaN before it reaches the learner.

    The claim says the NaN came from guard memory next to the inputs. The test runs again with
    guards of 0: if the same positions are NaN again, the kernel made the NaN itself (inf * 0,
    0 / 0), and the failure is named `nan-or-inf` instead. In a drill whose test module sets
    ZEROS_PAST_END_HARMLESS (a lane past the end is never stored, or adds to nothing, so a load
    there that reads 0 does no harm), a run with 0 there that is still wrong shows the loads
    reach the wrong places (strides swapped), not only past the end: a mismatch, said so.
    """
    try:
        return (yield)
    except DrillFailure as failure:
        evidence = failure.guard_evidence
        if failure.diagnosis != dx.MISSING_MASK or evidence is None:
            raise
        try:
            with guard_fill(0.0):
                item.runtest()
        except DrillFailure as again:
            if again.guard_evidence is not None and torch.equal(again.guard_evidence, evidence):
                raise HarnessFailure(
                    dx.NAN_OR_INF,
                    failure.message,
                    ngettext(
                        "{count} value is NaN or inf where the reference is finite, and it "
                        "stays NaN when the memory around the inputs holds 0 instead of NaN: "
                        "the kernel makes it itself (inf - inf, 0 * inf, 0 / 0).",
                        "{count} values are NaN or inf where the reference is finite, and they "
                        "stay NaN when the memory around the inputs holds 0 instead of NaN: "
                        "the kernel makes them itself (inf - inf, 0 * inf, 0 / 0).",
                        int(evidence.sum()),
                    ).format(count=int(evidence.sum())),
                    where=failure.where,
                    error_map=failure.error_map,
                    facts=failure.facts_renamed(),
                ) from None
            # Still wrong with 0 around, and not the same NaN: the loads reach past the guards
            # or into the wrong places, which no mask would mend where 0 does no harm. (A store
            # past the end, seen in the fence, is a missing mask whatever the loads do.)
            stores_past = again.diagnosis == dx.MISSING_MASK and again.guard_evidence is None
            if getattr(item.module, "ZEROS_PAST_END_HARMLESS", False) and not stores_past:
                raise HarnessFailure(
                    dx.MISMATCH,
                    failure.message,
                    _(
                        "NaN came in from the memory around the inputs, and with 0 there the "
                        "output is still wrong, where a load past the end that reads 0 does no "
                        "harm: the loads reach the wrong places (strides passed in the wrong "
                        "order?), not only past the end."
                    ),
                    where=failure.where,
                    error_map=failure.error_map,
                    facts=failure.facts_renamed(),
                ) from None
        except Exception:  # noqa: BLE001 - the re-run is evidence only; the claim stands
            pass
        raise failure from None


def chosen_backend(config: pytest.Config) -> backend_mod.Backend:
    """The backend `pytest_configure` chose, for other plugins of the same session."""
    return config.stash[_BACKEND]


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> backend_mod.Backend:
    """Where kernels run: `backend.device` is the torch device to allocate on."""
    return chosen_backend(pytestconfig)


@pytest.fixture(scope="session")
def device(backend: backend_mod.Backend) -> str:
    return backend.device


@pytest.fixture(scope="module")
def impl(request: pytest.FixtureRequest) -> learner.Learner:
    """The learner's module for the drill named by the test module's DRILL."""
    # The test module is <course>/drills/tests/test_<file>: its course is the one tested.
    test_file = Path(request.module.__file__).resolve()
    paths = CoursePaths(test_file.parents[2])
    story_text.use(paths.hints(request.module.DRILL))  # its stories in the learner's language
    config = request.config
    functions = config.getoption("--impl-functions")
    if functions is None:
        drill = load_catalogue(paths).drill(request.module.DRILL)
        file, functions, torch_core = drill.file, drill.functions, drill.torch_core
    else:
        # test_<stem>.py tests <stem> in the drill's kernel language
        file = Path(test_file.name.removeprefix("test_")).stem + kernels.current().suffix
        functions = _names(functions)
        torch_core = _names(config.getoption("--impl-torch-core"))
    path = paths.resolve_impl(file, config.getoption("--impl"))
    return learner.load(path, functions, torch_core, paths.host(file))


def _names(option: str) -> tuple[str, ...]:
    return tuple(name for name in option.split(",") if name)
