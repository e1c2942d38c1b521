"""The rule-by-rule audit table (issue 17): every registered rule and property
is in exactly one column, the committed docs/check.md equals its rendering, and
the loader answer follows the table."""

from __future__ import annotations

import importlib
from pathlib import Path

from model.rejected import FailureKind
from sessionspec.check.audit_table import (
    AUDITED,
    END_MARK,
    LOADER_REFUSES,
    NOT_YET,
    START_MARK,
    UNDECIDABLE,
    loader_answer,
    registered_ids,
    render,
    with_table,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "check.md"


def test_every_registered_rule_and_property_is_in_exactly_one_column() -> None:
    ids = registered_ids()
    assert len(ids) == len(set(ids)) and len(ids) >= 188 + 62
    columns = (set(AUDITED), set(UNDECIDABLE), set(NOT_YET))
    for rid in ids:
        assert sum(rid in c for c in columns) == 1, rid
    assert set().union(*columns) == set(ids), "the table names an ID the rule book does not register"


def test_a_rule_in_no_column_is_rendered_as_missing() -> None:
    """The test above fails for such a rule; the rendering says so too."""
    assert "**missing from the audit table**" in render(["LOG-1", "NOPE-1"])
    assert "**missing from the audit table**" not in render(registered_ids())


def test_every_checker_named_is_a_real_function() -> None:
    for rid, (checker, _) in AUDITED.items():
        module, name = checker.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), name)), (rid, checker)


def test_reasons_are_one_line() -> None:
    for text in (*UNDECIDABLE.values(), *NOT_YET.values(), *(part for _, part in AUDITED.values())):
        assert "\n" not in text and len(text) < 200


def test_committed_docs_table_equals_the_rendering() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert START_MARK in doc and END_MARK in doc
    assert with_table(doc) == doc, "docs/check.md is stale: run python -m sessionspec.check.audit_table"


def test_loader_answer_follows_the_table() -> None:
    """Only audited rules the real loader enforces refuse; quirks and checker limits never do."""
    assert set(AUDITED) >= LOADER_REFUSES
    assert loader_answer("LOG-1", FailureKind.INVALID) == "refuses"
    assert loader_answer("HDR-8", FailureKind.INVALID) == "refuses"
    assert loader_answer("LOOP-12", FailureKind.INVALID) == "accepts"
    assert loader_answer("LOG-13", FailureKind.INVALID) == "accepts"
    assert loader_answer("Q-17", FailureKind.INVALID) == "accepts"
    assert loader_answer("FMT-1", FailureKind.LIMIT) == "accepts"
    # LOG-8 lists what a load validates; a rule outside it (the loop's own) is accepted by the loader.
    assert not {"LOG-9", "LOG-11", "LOG-12", "LOG-14", "HDR-2", "HDR-7", "SURF-13", "MTR-9"} & LOADER_REFUSES


def test_every_audited_rule_is_named_by_a_corruption_test() -> None:
    """A coverage guard: the ID each audited rule's findings carry (itself, or
    REPORTED_AS) is asserted by some test; "note"/"unknown" rules by a test
    of the note or verdict (named in the test's name)."""
    import re

    from sessionspec.check.audit_table import REPORTED_AS

    tests = Path(__file__).resolve().parent
    text = "".join(p.read_text(encoding="utf-8") for p in tests.glob("test_*.py"))
    literals = set(re.findall(r'"((?:P-)?[A-Z]+-\d+)"', text))
    names = set(re.findall(r"def test_(\w+)", text))
    missing = []
    for rid in AUDITED:
        reported = REPORTED_AS.get(rid, rid)
        if reported in ("note", "unknown"):
            if not any(rid.replace("-", "_") in n for n in names):
                missing.append(rid)
        elif reported not in literals:
            missing.append(rid)
    assert not missing, missing
