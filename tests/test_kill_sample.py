"""Tests for survivors of the whole-model mutation sample (quality/run --sample-total, docs/quality.md)."""

from __future__ import annotations

import json

from model.codec import expand_row, parse_value
from model.jsonval import JsonObject
from model.log import Dialect
from model.rejected import Rejected
from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.replay import LoadedLog, load_log_text
from tests.support import GROUNDTRUTH

MAX_SAFE = 2**53 - 1


def _row(seq0: int) -> JsonObject:
    value = parse_value(json.dumps({"type": "text-chunks", "seq0": seq0, "time0": 0,
                                    "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]}}))
    assert isinstance(value, JsonObject)
    return value


def test_CHK_5_a_row_whose_last_seq_passes_2_53_is_refused_naming_the_seq_range() -> None:
    """Three texts from seq0 = 2^53 - 2 end at 2^53: not a safe integer (LOG-4), so CHK-5 refuses the row."""
    refused = expand_row(_row(MAX_SAFE - 1))
    assert isinstance(refused, Rejected) and refused.rule == "CHK-5" and refused.seq == MAX_SAFE - 1
    assert refused.reason == "malformed text-chunks storage row: seq range"
    accepted = expand_row(_row(MAX_SAFE - 2))  # ends exactly at 2^53 - 1
    assert not isinstance(accepted, Rejected) and [e.seq for e in accepted] == [MAX_SAFE - 2, MAX_SAFE - 1, MAX_SAFE]


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
