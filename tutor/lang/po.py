"""The tutor's message catalogues: read a `.po` file, write the `.mo` file gettext loads.

    tutor dev po             compile every tutor/lang/locale/<lang>/LC_MESSAGES/tutor.po
    tutor dev po --missing   the marked messages a catalogue lacks, as .po entries

The `.mo` files are committed, so a fresh clone speaks Chinese without a build step;
tests/test_messages.py proves each one is what its `.po` compiles to, and that every message
the code marks with `_()` or `ngettext()` has a translation. The reader knows the subset of the
PO format this catalogue uses: `msgctxt`-free entries of `msgid` / `msgstr`, or `msgid` /
`msgid_plural` / `msgstr[N]`, strings continued on the next lines, `#` comments, and the
`#, fuzzy` flag (a fuzzy entry is left out, as msgfmt does).
"""

from __future__ import annotations

import ast
import struct
from pathlib import Path

from tutor.lang.i18n import DOMAIN, LOCALE_DIR

Key = str  # msgid, or "msgid\0msgid_plural" for a plural entry


class PoError(ValueError):
    """A line of a .po file this reader cannot take; the message names the file and line."""


def read_po(path: Path) -> dict[Key, str]:
    """Every translated entry of `path`: the key as gettext looks it up, and the translation
    (plural forms joined by NUL, as in a .mo). The header is the entry with the key ""."""
    entries: dict[Key, str] = {}
    entry: dict[str, str] = {}
    field = None
    fuzzy = False

    def finish() -> None:
        nonlocal entry, fuzzy
        if "msgid" in entry and not fuzzy:
            key = entry["msgid"]
            if "msgid_plural" in entry:
                key += "\0" + entry["msgid_plural"]
                forms = sorted(k for k in entry if k.startswith("msgstr["))
                value = "\0".join(entry[k] for k in forms)
            else:
                value = entry.get("msgstr", "")
            if value.replace("\0", ""):  # untranslated entries fall back to English
                entries[key] = value
        entry, fuzzy = {}, False

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if "msgid" in entry and field is not None and field.startswith("msgstr"):
                finish()
                field = None
            fuzzy = fuzzy or (line.startswith("#,") and "fuzzy" in line)
            continue
        if line.startswith('"'):
            if field is None:
                raise PoError(f"{path}:{number}: a string continues no field")
            entry[field] += _string(path, number, line)
            continue
        name, _space, rest = line.partition(" ")
        if name == "msgid" and "msgid" in entry:
            finish()
        if name not in ("msgid", "msgid_plural", "msgstr") and not name.startswith("msgstr["):
            raise PoError(f"{path}:{number}: unknown field {name!r}")
        field = name
        entry[field] = _string(path, number, rest.strip())
    finish()
    return entries


def _string(path: Path, number: int, text: str) -> str:
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        raise PoError(f"{path}:{number}: expected a quoted string")
    try:
        return ast.literal_eval(text)  # the PO escapes (\n, \", \\) are Python's
    except (ValueError, SyntaxError):
        raise PoError(f"{path}:{number}: the string cannot be read") from None


def mo_bytes(entries: dict[Key, str]) -> bytes:
    """The GNU .mo file of `entries` (little-endian, no hash table), keys sorted as msgfmt does."""
    keys = sorted(entries)
    ids = [k.encode("utf-8") for k in keys]
    strs = [entries[k].encode("utf-8") for k in keys]
    header_size = 7 * 4
    table = 8 * len(keys)
    ids_start = header_size + 2 * table
    offsets, blob = [], b""
    for data in ids:
        offsets.append((len(data), ids_start + len(blob)))
        blob += data + b"\0"
    strs_start = ids_start + len(blob)
    str_offsets, str_blob = [], b""
    for data in strs:
        str_offsets.append((len(data), strs_start + len(str_blob)))
        str_blob += data + b"\0"
    out = struct.pack(
        "<7I", 0x950412DE, 0, len(keys), header_size, header_size + table, 0, ids_start
    )
    out += b"".join(struct.pack("<2I", *o) for o in offsets)
    out += b"".join(struct.pack("<2I", *o) for o in str_offsets)
    return out + blob + str_blob


PACKAGE = Path(__file__).resolve().parents[1]  # tutor/: every module that marks a message
# The course's bench recipes (drills/bench/<id>.py) write findings of their own (a drill's
# known lever, e.g. m3's causal block skipping): the same catalogue translates them.
COURSE_BENCH = PACKAGE.parent / "drills" / "bench"


def all_marked() -> dict[Key, str]:
    """What the tutor's code and the course's bench recipes mark, with where each is."""
    found = marked_messages(COURSE_BENCH) if COURSE_BENCH.is_dir() else {}
    return {**found, **marked_messages(PACKAGE)}


def marked_messages(package: Path) -> dict[Key, str]:
    """Every message the code under `package` marks for translation, with where it is: the
    literal first argument of `_()` (and the two of `ngettext()`)."""
    found: dict[Key, str] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if name in ("_", "N_") and texts and isinstance(texts[0], str):
                found.setdefault(texts[0], f"{path.name}:{node.lineno}")
            elif name == "ngettext" and len(texts) >= 2:
                found.setdefault(f"{texts[0]}\0{texts[1]}", f"{path.name}:{node.lineno}")
    return found


def catalogues() -> list[Path]:
    return sorted(LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def compile_all() -> list[Path]:
    """Write the .mo beside every .po; returns the files written."""
    written = []
    for po in catalogues():
        mo = po.with_suffix(".mo")
        mo.write_bytes(mo_bytes(read_po(po)))
        written.append(mo)
    return written


def print_untranslated() -> int:
    """`tutor dev po --missing`: the marked messages a catalogue lacks, as .po entries."""
    marked = all_marked()
    for po in catalogues():
        have = read_po(po)
        for key, where in marked.items():
            if key not in have:
                singular, _nul, plural = key.partition("\0")
                print(f"#: {where}\nmsgid {_quoted(singular)}")
                if plural:
                    print(f'msgid_plural {_quoted(plural)}\nmsgstr[0] ""\n')
                else:
                    print('msgstr ""\n')
    return 0


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
