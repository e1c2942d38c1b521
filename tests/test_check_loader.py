"""Issue 25: the real loader's answer in the three levels the harness has (docs/check.md).

The harness's core load (the Session constructor and the persistence load: envelope, lossless
JSON, contiguous seq, surface transitions, LOG-8's shapes) refuses some logs; its session
invariant companion (LOG-13, on in the harness's own tests and dev runs) refuses more; every other
finding is about a writer, and the loader accepts the log.  Expectations from the book: LOG-1 is a
core-load rule (LOG-8/LEG-10), LOG-13 the companion's, LOOP-11 the loop's only.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from audit_support import Row, check, gt, renumber_insert
from jsonschema import Draft202012Validator

from model.rejected import FailureKind
from sessionspec.check.audit_table import loader_level

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "check.v3.schema.json"


def B() -> list[Row]:
    return gt("b-prefix-idioms-tool-roundtrip")


def test_loader_levels_follow_the_rule() -> None:
    assert loader_level("LOG-1", FailureKind.INVALID) == "refuses"
    assert loader_level("LOG-13", FailureKind.INVALID) == "companion-refuses"
    assert loader_level("LOOP-11", FailureKind.INVALID) == "accepts"
    assert loader_level("LOG-13", FailureKind.LIMIT) == "accepts"


def _answer(rows: list[Row]) -> tuple[str | None, str, dict[str, object]]:
    report = check(rows)
    return report.loader(), report.verdict_text(), report.to_json()


def test_a_nesting_break_is_refused_by_the_companion_only() -> None:
    """A step/end moved before the step's message: LOG-13 ("assistant/message ... name the open turn
    and step"), which only the invariant companion vetoes."""
    rows = B()
    rows[20], rows[21] = rows[21], rows[20]
    rows[20]["seq"], rows[21]["seq"] = 20, 21
    rows[21]["sourceEventSeqs"] = list(range(4, 20))
    loader, text, record = _answer(rows)
    assert loader == "companion-refuses" and text.endswith("[loader: only its invariant companion refuses]"), text
    assert {f["loader"] for f in record["findings"]} >= {"companion-refuses"}  # type: ignore[attr-defined]
    assert list(Draft202012Validator(json.loads(SCHEMA.read_text())).iter_errors(record)) == []


def test_a_seq_break_is_refused_by_the_core_load() -> None:
    rows = B()
    rows[5]["seq"] = 4
    loader, text, _ = _answer(rows)
    assert loader == "refuses" and text.endswith("[loader refuses]")


def test_a_writer_finding_is_accepted_by_the_loader() -> None:
    """Two assistant/message in one step (LOOP-11): no load check forbids it."""
    loader, text, record = _answer(renumber_insert(B(), 21, copy.deepcopy(B()[20])))
    assert record["verdict"] == "invalid" and loader == "accepts" and text.endswith("[loader accepts]")
