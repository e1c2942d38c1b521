"""Compaction-audit findings that mutation testing found unpinned (issue 9, docs/quality.md).

CMP-25: the bracket audit names what is wrong and where: a nested start, and a
summary whose ``shadowedSeqs`` and ``shadowedRange`` disagree.
"""

from __future__ import annotations

from model.compaction import compact_region
from model.jsonval import JsonObject, freeze
from model.log import Dialect, make_event
from model.rejected import Rejected
from model.surface import fold_surface
from sessionspec.check.compaction_audit import audit_compactions
from tests.support import busy_log, short


def test_CMP_25_nested_start_is_named_at_the_second_start() -> None:
    log = busy_log(steps=1)
    log.add("compact/start", {"turn": 1})
    log.add("compact/start", {"turn": 1})
    log.add("compact/end", {"turn": 1})
    second_start = log.events[-2].seq
    findings = [f for f in audit_compactions(log.events, Dialect.A55) if f.rule == "CMP-25"]
    assert any(f.seq == second_start and f.reason == "compaction start while a bracket is open" for f in findings), findings


def test_CMP_25_summary_whose_range_disagrees_with_its_seqs_is_malformed() -> None:
    log = busy_log()
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    outcome = compact_region(log.events, fold.state.nodes[0], fold.state.nodes[2], short)
    assert not isinstance(outcome, Rejected)
    start, summary, checkpoint, end = outcome.events
    assert isinstance(summary.data, JsonObject)
    broken = JsonObject((k, freeze({"start": 0, "end": 0}) if k == "shadowedRange" else v) for k, v in summary.data.items())
    forged = make_event(summary.type, seq=summary.seq, time=summary.time, data=broken)
    findings = audit_compactions([*log.events, start, forged, checkpoint, end], Dialect.A55)
    assert any(f.rule == "CMP-25" and f.seq == summary.seq and f.reason == "shadowedSeqs/shadowedRange malformed" for f in findings), findings
    # the untouched bracket is clean
    assert audit_compactions([*log.events, start, summary, checkpoint, end], Dialect.A55) == ()
