"""docs/check.md's audit table (issues 17, 28): rendered from spec.status and the model's @decides links,
the committed copy equals the rendering, and the loader answer follows the table."""

from __future__ import annotations

import re
from pathlib import Path

from sessionspec.check.audit_table import END_MARK, START_MARK, registered_ids, render, with_table
from sessionspec.check.loader_levels import LOADER_REFUSES, loader_answer
from sessionspec.model.rejected import FailureKind
from sessionspec.spec.status import STATUS, Audited, NotYet, Undecidable, WithDeployment

DOC = Path(__file__).resolve().parents[2] / "docs" / "check.md"


def test_every_registered_rule_and_property_has_one_row() -> None:
    ids = registered_ids()
    assert len(ids) == len(set(ids)) and len(ids) >= 188 + 62
    rows = [line.split(" | ")[0].removeprefix("| ") for line in render(ids).splitlines()[2:]]
    assert rows == ids


def test_reasons_are_one_line() -> None:
    for status in STATUS.values():
        match status.log:
            case Audited(part=text) | WithDeployment(part=text) | Undecidable(reason=text) | NotYet(reason=text):
                assert "\n" not in text and len(text) < 200


def test_committed_docs_table_equals_the_rendering() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert START_MARK in doc and END_MARK in doc
    assert with_table(doc) == doc, "docs/check.md is stale: run python -m sessionspec.check.audit_table"


def test_loader_answer_follows_the_table() -> None:
    """Only audited rules the real loader enforces refuse; quirks and checker limits never do."""
    assert all(isinstance(STATUS[rid].log, Audited) for rid in LOADER_REFUSES)
    assert loader_answer("LOG-1", FailureKind.INVALID) == "refuses"
    assert loader_answer("HDR-8", FailureKind.INVALID) == "refuses"
    assert loader_answer("LOOP-12", FailureKind.INVALID) == "accepts"
    assert loader_answer("LOG-13", FailureKind.INVALID) == "accepts"
    assert loader_answer("Q-17", FailureKind.INVALID) == "accepts"
    assert loader_answer("FMT-1", FailureKind.LIMIT) == "accepts"
    # LOG-8 lists what a load validates; a rule outside it (the loop's own) is accepted by the loader.
    assert not {"LOG-9", "LOG-11", "LOG-12", "LOG-14", "HDR-2", "HDR-7", "SURF-13", "MTR-9"} & LOADER_REFUSES


def test_every_audited_rule_is_named_by_a_corruption_test() -> None:
    """A coverage guard: the ID each audited rule's findings carry (itself, or its
    ``reported_as``) is asserted by some test; "note"/"unknown" rules by a test
    of the note or verdict (named in the test's name)."""
    tests = Path(__file__).resolve().parents[1]
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(tests.rglob("test_*.py")) if p.relative_to(tests).parts[0] != "data")
    literals = set(re.findall(r'"((?:P-)?[A-Z]+-\d+)"', text))
    names = set(re.findall(r"def test_(\w+)", text))
    missing = []
    for rid, status in STATUS.items():
        if not isinstance(status.log, Audited):
            continue
        reported = status.log.reported_as or rid
        if reported in ("note", "unknown"):
            if not any(rid.replace("-", "_") in n for n in names):
                missing.append(rid)
        elif reported not in literals:
            missing.append(rid)
    assert not missing, missing
