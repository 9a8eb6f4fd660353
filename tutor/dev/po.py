"""`tutor dev po`: compile the tutor's message catalogues, or list what they lack.

tutor dev po             write every tutor/lang/locale/<lang>/LC_MESSAGES/tutor.mo
tutor dev po --missing   the messages the code marks that a catalogue lacks, as .po entries
"""

from __future__ import annotations

import argparse
import sys

from tutor.lang.po import PoError, compile_all, print_untranslated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tutor dev po", description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list what is not translated")
    args = parser.parse_args(argv)
    if args.missing:
        return print_untranslated()
    try:
        for path in compile_all():
            print(f"wrote {path}")
    except PoError as exc:
        print(f"tutor dev po: {exc}", file=sys.stderr)
        return 2
    return 0
