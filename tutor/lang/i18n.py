"""Which language the tutor speaks, and the words around the course in it (gettext).

English is the source; Chinese (`zh`) sits beside it. The language is, in this order:

1. `--lang zh|en` on the command line (`choose(explicit=...)`);
2. `$TUTOR_LANG`;
3. the choice remembered in `.tutor/language` (the app writes it when the learner switches;
   the CLI reads it too, so `tutor hint` speaks as the app does: tutor.course.language);
4. the locale: the first of `$LC_ALL`, `$LC_MESSAGES`, `$LANG` that is set, when it starts with
   `zh` (`zh_CN.UTF-8`);
5. English.

An unknown `--lang` or `$TUTOR_LANG` is a `LanguageError` (one line, exit 2); an unreadable
remembered choice is none. The messages come from `tutor/lang/locale/<lang>/LC_MESSAGES/tutor.mo`
(compiled from the `.po` beside it by `tutor dev po`); English needs no catalogue.
A run's child process is told the language through `child_env()`, so the sentences written
there (where the output is wrong, the failure messages) come out in it.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

ENGLISH, CHINESE = "en", "zh"
LANGUAGES = (ENGLISH, CHINESE)
NAMES = {ENGLISH: "English", CHINESE: "中文"}  # each in its own language, for the switch
ENV = "TUTOR_LANG"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
DOMAIN = "tutor"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


class LanguageError(ValueError):
    """A language the tutor does not speak was asked for."""


def _known(value: str, where: str) -> str:
    lang = value.strip().lower()
    if lang not in LANGUAGES:
        raise LanguageError(f"{where} {value!r} is not a language the tutor speaks (en, zh)")
    return lang


def from_locale(env: Mapping[str, str]) -> str:
    """`zh` when the locale in `env` is Chinese, else English."""
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            return CHINESE if value.lower().startswith("zh") else ENGLISH
    return ENGLISH


def choose(
    explicit: str | None = None,
    *,
    remembered: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The language to speak (see the module's docstring for the order); `remembered` is the
    choice kept in the course's state folder (tutor.course.language.remembered), if any."""
    env = os.environ if env is None else env
    if explicit:
        return _known(explicit, "--lang")
    if env.get(ENV, "").strip():
        return _known(env[ENV], ENV)
    if remembered:
        return remembered
    return from_locale(env)


# -- the active language ---------------------------------------------------------------------

_current = ENGLISH
_catalogue: gettext.NullTranslations = gettext.NullTranslations()


def activate(lang: str) -> None:
    """Speak `lang` from now on in this process (the core and the app read it at draw time)."""
    global _current, _catalogue
    _current = _known(lang, "language")
    _catalogue = (
        gettext.NullTranslations()
        if _current == ENGLISH
        else gettext.translation(DOMAIN, LOCALE_DIR, languages=[_current], fallback=True)
    )


def current() -> str:
    return _current


def _(message: str) -> str:
    """`message` in the active language (itself when there is no translation)."""
    return _catalogue.gettext(message)


def N_(message: str) -> str:
    """Marks `message` for the catalogue where it is defined; `_()` translates it where used."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for `n` things, in the active language."""
    return _catalogue.ngettext(singular, plural, n)


def child_env() -> dict[str, str]:
    """What a child process needs in its environment to speak the active language."""
    return {ENV: _current}


def activate_from_env(env: Mapping[str, str] | None = None) -> None:
    """In a child process: speak what the parent passed in `$TUTOR_LANG` (else English)."""
    env = os.environ if env is None else env
    try:
        activate(env.get(ENV) or ENGLISH)
    except LanguageError:
        activate(ENGLISH)
