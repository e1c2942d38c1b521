"""Unit tests for the tool-result prune (PRN), named after rule IDs."""

from __future__ import annotations

from model.compaction import compact_if_needed
from model.derive import derive
from model.jsonval import freeze, get
from model.log import Dialect
from model.meter import measure
from model.prune import (
    PRUNE_MARKER,
    PruneConfig,
    content_chars,
    prune_content,
    prune_pass,
    prune_session,
    resolve_prune_config,
)
from model.rejected import Rejected
from model.surface import fold_surface
from sessionspec.check.compaction_audit import audit_compactions
from tests.support import Log, short

SMALL = PruneConfig(threshold_chars=60, head_chars=10, tail_chars=5)


def test_PRN_1_config_defaults_and_bounds() -> None:
    assert resolve_prune_config(None) == PruneConfig()
    assert len(PRUNE_MARKER) == 39
    assert isinstance(resolve_prune_config(freeze({"headChars": 1.5})), Rejected)
    assert isinstance(resolve_prune_config(freeze({"other": 1})), Rejected)
    assert isinstance(resolve_prune_config(freeze({"thresholdChars": 50, "headChars": 10, "tailChars": 5})), Rejected)
    assert resolve_prune_config(freeze({"thresholdChars": 54, "headChars": 10, "tailChars": 5})) == PruneConfig(
        threshold_chars=54, head_chars=10, tail_chars=5)


def test_PRN_2_code_points_over_text_blocks_only() -> None:
    blocks = freeze([{"type": "text", "text": "\U0001F600ab"}, {"type": "image", "data": "x" * 100}])
    assert content_chars(blocks) == 3


def test_PRN_3_head_marker_tail_and_no_surrogate_split() -> None:
    text = "\U0001F600" * 100
    out = prune_content(freeze([{"type": "text", "text": text}]), SMALL)
    assert isinstance(out, tuple)
    assert get(out[0], "text") == "\U0001F600" * 10 + PRUNE_MARKER + "\U0001F600" * 5
    assert prune_content(freeze([{"type": "text", "text": "x" * 60}]), SMALL) is None


def test_PRN_3_multi_block_keeps_non_text_order_and_drops_empty() -> None:
    blocks = freeze([
        {"type": "text", "text": "a" * 8},
        {"type": "image", "data": "i"},
        {"type": "text", "text": "b" * 50},
        {"type": "text", "text": "c" * 3},
    ])
    out = prune_content(blocks, SMALL)
    assert isinstance(out, tuple)
    assert [get(b, "type") for b in out] == ["text", "image", "text", "text"]
    assert get(out[0], "text") == "a" * 8
    assert get(out[2], "text") == "bb" + PRUNE_MARKER + "bb"
    assert get(out[3], "text") == "ccc"
    zero = prune_content(freeze([{"type": "text", "text": "z" * 100}]), PruneConfig(threshold_chars=60, head_chars=0, tail_chars=0))
    assert isinstance(zero, tuple) and get(zero[0], "text") == PRUNE_MARKER


def pruned_log() -> Log:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.user("q")
    log.add("step/start", {"turn": 1, "step": 1})
    log.assistant(1, 1, calls=("c1", "c2"))
    log.result(1, 1, "c1", "y" * 200)
    log.result(1, 1, "c2", "short")
    return log


def test_PRN_4_single_node_content_only_replace() -> None:
    log = pruned_log()
    outcome = prune_pass(log.events, SMALL)
    assert not isinstance(outcome, Rejected)
    (event,) = outcome.events
    assert event.type == "tool/result" and event.source_event_seqs == (4,)
    assert event.surface_op == freeze({"op": "replace", "start": 4, "end": 4})
    assert list(event.data) == list(log.events[4].data)  # type: ignore[arg-type]
    assert outcome.pruned[0].chars_before == 200 and outcome.pruned[0].chars_after == 54
    assert outcome.chars_removed == 146
    assert audit_compactions([*log.events, event], Dialect.A55) == ()


def test_PRN_5_second_pass_is_empty_and_replay_stable() -> None:
    log = pruned_log()
    first = prune_session(log.events, SMALL)
    assert not isinstance(first, Rejected)
    events = [*log.events, *first]
    assert prune_session(events, SMALL) == ()
    fold = fold_surface(events)
    assert not isinstance(fold, Rejected) and fold.state.replace_generation == 1
    assert derive(events) == derive(events)


def test_PRN_6_prune_only_when_pressure_qualifies() -> None:
    log = pruned_log()
    log.header()
    m = measure(log.events)
    assert not isinstance(m, Rejected)
    quiet = compact_if_needed(log.events, short, context_window=m.total_tokens * 10, prune=SMALL)
    assert not isinstance(quiet, Rejected) and quiet.events == ()


def test_DIA_18_d08_prune_record_precedes_replacement() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("assistant/message", {"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant", "content": [
        {"type": "tool-call", "id": "c", "name": "t", "arguments": "{}"}], "source": {"kind": "model"}}}, op="append")
    log.add("tool/result", {"turn": 1, "step": 1, "message": {"id": "r", "role": "user", "content": [
        {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "y" * 200}], "isError": False}],
        "source": {"kind": "tool", "callId": "c"}}}, op="append", prov=[1])
    out = prune_session(log.events, SMALL, dialect=Dialect.D08)
    # The audit prices nodes without the meter's step discipline (no step here).
    assert not isinstance(out, Rejected)
    assert [e.type for e in out] == ["compaction/prune", "tool/result"]
    assert get(out[0].data, "shadowedSeqs") == (2,)
    assert audit_compactions([*log.events, *out], Dialect.D08) == ()
    assert fold_surface([*log.events, *out], Dialect.D08) is not None
