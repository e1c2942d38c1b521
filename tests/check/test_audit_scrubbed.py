"""Scrubbed header values are opaque (FMT-6, LEG-8; issue 17): a log whose header
fields a snapshot normaliser replaced stays valid, no finding depends on them,
and a note names what was opaque."""

from __future__ import annotations

import json

from sessionspec.check.checker import Verdict
from tests.audit_support import A55_SNAPSHOTS, check, gt, load


def _scrub(rows: list[dict[str, object]], *, tools_as_names: bool) -> list[dict[str, object]]:
    for r in rows:
        if r.get("type") == "request/header":
            header = r["data"]["header"]  # type: ignore[index]
            if "system" in header:
                header["system"] = "{{system}}"
            if "tools" in header:
                header["tools"] = [t["name"] for t in header["tools"]] if tools_as_names else "{{tools}}"
    return rows


def test_scrubbed_change_headers_are_not_judged_equal() -> None:
    """g-header-change changes system and tools; scrubbed, the change headers
    look equal to the header in force, but the difference lies in scrubbed
    fields, so no finding may say "change equal to the header in force"."""
    for names in (True, False):
        rows = _scrub(gt("g-header-change-system-and-tools"), tools_as_names=names)
        headers = [json.dumps(r["data"]["header"]) for r in rows if r.get("type") == "request/header"]  # type: ignore[index]
        assert len(set(headers)) < len(headers)  # scrubbing made some change look like no change
        report = check(rows)
        assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]
        note = " ".join(report.notes)
        assert "opaque" in note and "system" in note and "tools" in note


def test_tools_reduced_to_names_skip_the_type_check() -> None:
    """HDR-1 types tools as ToolSchema objects; a list of names is a scrubbed value, not a wrong type."""
    rows = load(A55_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    header = next(r for r in rows if r.get("type") == "request/header")
    header["data"]["header"]["tools"] = ["read", "write"]
    report = check(rows)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]
    assert any("tools" in n and "opaque" in n for n in report.notes)


def test_a_real_type_error_next_to_a_scrubbed_field_is_still_found() -> None:
    """Opaqueness is per field: a non-string system beside scrubbed tools is HDR-1."""
    rows = _scrub(gt("b-prefix-idioms-tool-roundtrip"), tools_as_names=True)
    header = next(r for r in rows if r.get("type") == "request/header")
    header["data"]["header"]["system"] = 7  # type: ignore[index]
    assert "HDR-1" in {f.rule for f in check(rows).findings}
