"""The compaction audit's findings (sessionspec/check/compaction_audit.py): each names what is wrong and where.

CMP-25: the bracket audit names a nested start, and a summary whose ``shadowedSeqs`` and ``shadowedRange``
disagree; PRN-4: a prune's provenance is ``[originalSeq]``.
"""

from __future__ import annotations

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.log import Dialect, make_event
from sessionspec.replay import LoadedLog, load_log_text
from tests.support import GROUNDTRUTH, busy_log, compacted_head


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
    _, outcome = compacted_head(log, 2)
    start, summary, checkpoint, end = outcome.events
    assert isinstance(summary.data, JsonObject)
    broken = JsonObject((k, freeze({"start": 0, "end": 0}) if k == "shadowedRange" else v) for k, v in summary.data.items())
    forged = make_event(summary.type, seq=summary.seq, time=summary.time, data=broken)
    findings = audit_compactions([*log.events, start, forged, checkpoint, end], Dialect.A55)
    assert any(f.rule == "CMP-25" and f.seq == summary.seq and f.reason == "shadowedSeqs/shadowedRange malformed" for f in findings), findings
    # the untouched bracket is clean
    assert audit_compactions([*log.events, start, summary, checkpoint, end], Dialect.A55) == ()


def test_PRN_4_a_prune_whose_provenance_is_not_the_original_seq_is_a_finding_on_the_prune() -> None:
    """PRN-4: a prune replaces one node and its provenance is [originalSeq]; the real j2 prune
    (seq 13 replacing seq 12) with provenance [11] is reported on seq 13."""
    lines = (GROUNDTRUTH / "j2-tool-result-prune" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    assert '"seq":13,' in lines[13] and '"sourceEventSeqs":[12]' in lines[13]
    clean = load_log_text("\n".join(lines))
    assert isinstance(clean, LoadedLog) and audit_compactions(clean.events, Dialect.A55) == ()
    lines[13] = lines[13].replace('"sourceEventSeqs":[12]', '"sourceEventSeqs":[11]')
    forged = load_log_text("\n".join(lines))
    assert isinstance(forged, LoadedLog)
    findings = audit_compactions(forged.events, Dialect.A55)
    assert [(f.rule, f.seq, f.reason) for f in findings if f.reason == "prune provenance is not [originalSeq]"] == [("PRN-4", 13, "prune provenance is not [originalSeq]")]
