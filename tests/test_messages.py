"""The message catalogue: every message the code marks is translated, with the same
placeholders, and the committed .mo is what its .po compiles to (a fresh clone needs no build)."""

from __future__ import annotations

import re

import pytest

from tutor import states
from tutor.lang import i18n, po

CATALOGUES = po.catalogues()
_FIELD = re.compile(r"\{(\w*)[^}]*\}")


def test_there_is_a_chinese_catalogue():
    assert [c.parent.parent.name for c in CATALOGUES] == ["zh"]


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=lambda p: p.parent.parent.name)
def test_the_committed_mo_is_the_po_compiled(catalogue):
    assert catalogue.with_suffix(".mo").read_bytes() == po.mo_bytes(po.read_po(catalogue)), (
        "run `tutor dev po` and commit the .mo"
    )


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=lambda p: p.parent.parent.name)
def test_every_marked_message_is_translated_with_its_placeholders(catalogue):
    entries = po.read_po(catalogue)
    marked = po.all_marked()
    labels = {text: "states._LABELS" for text in states._LABELS.values()}
    missing = [
        f"{where}: {key!r}" for key, where in {**marked, **labels}.items() if key not in entries
    ]
    assert not missing, "untranslated (tutor dev po --missing):\n" + "\n".join(missing)
    for key, value in entries.items():
        if not key:
            continue
        for source in key.split("\0"):
            for form in value.split("\0"):
                assert sorted(_FIELD.findall(form)) == sorted(_FIELD.findall(source)), key
    unused = [k for k in entries if k and k not in marked and k not in labels]
    assert not unused, f"entries no code marks: {unused}"


def test_plural_forms_come_from_the_header():
    try:
        i18n.activate("zh")
        assert i18n.ngettext("{n} row", "{n} rows", 1) == i18n.ngettext("{n} row", "{n} rows", 7)
        i18n.activate("en")
        assert i18n.ngettext("{n} row", "{n} rows", 1) == "{n} row"
        assert i18n.ngettext("{n} row", "{n} rows", 7) == "{n} rows"
    finally:
        i18n.activate("en")


def test_a_po_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "x.po"
    bad.write_text('msgid "a"\nmsgstr "b"\nmsgfoo "c"\n', encoding="utf-8")
    with pytest.raises(po.PoError, match=r"x.po:3: unknown field 'msgfoo'"):
        po.read_po(bad)
    bad.write_text('msgid "a"\nmsgstr b\n', encoding="utf-8")
    with pytest.raises(po.PoError, match=r"x.po:2: expected a quoted string"):
        po.read_po(bad)


def test_a_fuzzy_or_empty_entry_falls_back_to_english(tmp_path):
    path = tmp_path / "x.po"
    path.write_text(
        '#, fuzzy\nmsgid "a"\nmsgstr "甲"\n\nmsgid "b"\nmsgstr ""\n\nmsgid "c"\n"d"\nmsgstr "丙"\n',
        encoding="utf-8",
    )
    assert po.read_po(path) == {"cd": "丙"}
