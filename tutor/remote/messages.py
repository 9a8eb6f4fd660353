"""What the learner reads about a remote host: its set-up steps, its refusals, a lost connection.

The host sends names and numbers (tutor.remote.protocol's `Progress` and `Refusal`); the
sentences are made here, in the learner's language.
"""

from __future__ import annotations

from tutor.lang.i18n import _, ngettext
from tutor.remote.protocol import Progress, Refusal
from tutor.remote.ship import NOT_FOUND, TOO_OLD

SSH_FAILED = 255  # ssh's own exit status: it could not connect or log in


def progress(host: str, step: Progress) -> str:
    detail = step.detail
    said = {
        "venv": _("{host}: making the tutor's Python environment in {path}"),
        "pip-upgrade": _("{host}: updating pip there"),
        "torch": _("{host}: installing torch and Triton from {index} (a few GB, once)"),
        "packages": _("{host}: installing {packages}"),
        "download": _("{host}: downloaded {done}"),
        "ready": _("{host}: the environment is ready ({path})"),
    }.get(step.step)
    if said is None:  # pip's own line
        return f"{host}: {detail}"
    return said.format(host=host, path=detail, index=detail, packages=detail, done=detail)


def refusal(host: str, refused: Refusal) -> str:
    facts = refused.facts
    if refused.reason == "no-gpu":
        return _(
            "{host} has no NVIDIA GPU that its driver shows ({platform}): use a host that has "
            "one, or add --cpu to run on its CPU interpreter"
        ).format(host=host, platform=facts.get("platform", "?"))
    if refused.reason == "driver-too-old":
        return _(
            "the NVIDIA driver on {host} ({driver}) runs CUDA up to {cuda}, and the torch there "
            "needs CUDA {least}: update the driver, or give --python PATH for a torch built for "
            "that CUDA"
        ).format(
            host=host,
            driver=facts.get("driver", "?"),
            cuda=facts.get("cuda", "?"),
            least=facts.get("least", "?"),
        )
    if refused.reason == "python-lacks":
        return _(
            "{python} on {host} cannot import {modules}: install them there "
            "(pip install torch triton numpy pytest pyyaml psutil), or leave out --python and "
            "the tutor sets up an environment of its own"
        ).format(python=facts.get("python"), host=host, modules=", ".join(facts.get("missing", [])))
    if refused.reason == "torch-cpu-only":
        return _(
            "the torch of {python} on {host} is built without CUDA, and {host} has a GPU: "
            "install a CUDA build there, or leave out --python"
        ).format(python=facts.get("python"), host=host)
    if refused.reason == "no-venv":
        return _(
            "{python} on {host} cannot make a virtual environment ({output}); on Debian or "
            "Ubuntu: sudo apt install python3-venv. Or give --python PATH for a Python with "
            "torch there"
        ).format(python=facts.get("python"), host=host, output=facts.get("output", ""))
    if refused.reason == "pip-failed":
        return _("pip on {host} failed (pip {command}):\n{output}").format(
            host=host, command=facts.get("command", ""), output=facts.get("output", "")
        )
    if refused.reason == "disk-full":
        return _(
            "the disk of {host} is full where the tutor keeps its files there ({path}): free "
            "some space on it, or set TUTOR_REMOTE_CACHE to a folder of {host} on another disk. "
            "Your files here are unchanged"
        ).format(host=host, path=facts.get("path", "?"))
    if refused.reason == "protocol":
        return _(
            "{host} answered in another version of the tutor's protocol ({theirs}, here "
            "{ours}): this should not happen; report it"
        ).format(host=host, theirs=facts.get("theirs"), ours=facts.get("ours"))
    return _("{host} refused: {reason} {facts}").format(
        host=host, reason=refused.reason, facts=facts
    )


def ended(host: str, python: str, returncode: int | None, stderr: list[str]) -> str:
    """Why a session ended before the host answered, from ssh's exit status and last words."""
    last = stderr[-1] if stderr else ""
    if returncode == TOO_OLD:
        version = last.rpartition(" ")[2] or "?"
        return _(
            "{python} on {host} is Python {version}; the tutor needs 3.10 or newer there: "
            "give --python PATH for a newer one"
        ).format(python=python or "python3", host=host, version=version)
    if returncode == NOT_FOUND:
        return _(
            "{host} has no {python} (the shell there says: {said}): install Python 3.10 or "
            "newer there, or give --python PATH"
        ).format(host=host, python=python or "python3", said=last or "not found")
    if returncode == SSH_FAILED:
        return _(
            "ssh could not reach or log in to {host}: {said}. The tutor's ssh never asks "
            "anything (BatchMode): check that `ssh {host}` logs in without a question (a "
            "password: use a key, ssh-copy-id; a new host: accept its key once)"
        ).format(host=host, said=last or "no reason given")
    return lost(host, last)


def lost(host: str, said: str) -> str:
    return _("the connection to {host} was lost{said}").format(
        host=host, said=f" ({said})" if said else ""
    )


def closed(host: str) -> str:
    return _("the session on {host} was closed").format(host=host)


def silent(host: str) -> str:
    return _("{host} stopped answering; the session there was ended").format(host=host)


def no_ssh(program: str, why: str) -> str:
    return _(
        "could not start {program} ({why}): the tutor reaches a remote GPU with the system's "
        "OpenSSH client"
    ).format(program=program, why=why)


def busy(host: str, processes: list[list[int]]) -> str:
    """Other processes on the host's GPU: times taken there are shared with them."""
    held = sum(used for _pid, used in processes) / 2**30
    return ngettext(
        "{host}: {count} other process is using the GPU ({gib:.1f} GiB): timings there are "
        "shared with it",
        "{host}: {count} other processes are using the GPU ({gib:.1f} GiB): timings there are "
        "shared with them",
        len(processes),
    ).format(host=host, count=len(processes), gib=held)
