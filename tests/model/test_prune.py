"""Unit tests for the tool-result prune (PRN), named after rule IDs."""

from __future__ import annotations

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.compaction import compact_if_needed
from sessionspec.model.derive import derive
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.log import Dialect, make_event
from sessionspec.model.meter import estimate_message, measure
from sessionspec.model.prune import (
    PRUNE_MARKER,
    PruneConfig,
    PruneOutcome,
    check_prune_config,
    content_chars,
    only_surface_results,
    prune_again_is_empty,
    prune_content,
    prune_pass,
    prune_session,
    resolve_prune_config,
    tool_result_content,
)
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from tests.support import BUSY_LOG_PRUNE, Log, busy_log, d08_tool_result_log, short, with_data

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
    log = d08_tool_result_log()
    out = prune_session(log.events, SMALL, dialect=Dialect.D08)
    # The audit prices nodes without the meter's step discipline (no step here).
    assert not isinstance(out, Rejected)
    assert [e.type for e in out] == ["compaction/prune", "tool/result"]
    assert get(out[0].data, "shadowedSeqs") == (2,)
    assert audit_compactions([*log.events, *out], Dialect.D08) == ()
    assert fold_surface([*log.events, *out], Dialect.D08) is not None


def test_DIA_18_the_d08_prune_record_has_the_harness_shape() -> None:
    """DIA-18, the real pruner (611615650f compaction-tool-result-pruner/src/index.ts:162-166) appends
    ``compaction/prune {shadowedRange: {start: seq, end: seq}, shadowedSeqs: [seq], shadowedTokenCount}``: exactly
    these keys in this order (key order is observable, JSONEQ), the range a one-node span of the replaced seq, at
    the next seq, right before the replacement; an A55 prune writes no record (PRN-4)."""
    log = d08_tool_result_log()
    out = prune_session(log.events, SMALL, dialect=Dialect.D08)
    assert not isinstance(out, Rejected)
    record, replacement = out
    original = get(log.events[2].data, "message")
    assert isinstance(original, JsonObject)
    assert (record.type, record.seq, replacement.seq) == ("compaction/prune", len(log.events), len(log.events) + 1)
    assert record.data == freeze({"shadowedRange": {"start": 2, "end": 2}, "shadowedSeqs": [2],
                                  "shadowedTokenCount": estimate_message(original)})
    assert isinstance(record.data, JsonObject)
    assert list(record.data) == ["shadowedRange", "shadowedSeqs", "shadowedTokenCount"]
    assert list(get(record.data, "shadowedRange")) == ["start", "end"]  # type: ignore[arg-type]
    a55 = prune_session(pruned_log().events, SMALL, dialect=Dialect.A55)
    assert not isinstance(a55, Rejected) and a55 and all(e.type == "tool/result" for e in a55)


# ---------------------------------------------------------------- PRN-1/2 refusals and counts, the prune contracts


def test_PRN_1_bad_configs_are_refused_under_PRN_1() -> None:
    """PRN-1: values are integers, and headChars + CP(PRUNE_MARKER) + tailChars <= thresholdChars."""
    over = check_prune_config(PruneConfig(threshold_chars=100, head_chars=50, tail_chars=50))
    assert isinstance(over, Rejected) and over.rule == "PRN-1"
    not_int = resolve_prune_config(freeze({"headChars": "10"}))
    assert isinstance(not_int, Rejected) and not_int.rule == "PRN-1"
    assert not_int.reason == "prune config headChars must be an integer"
    not_object = resolve_prune_config(freeze([1]))
    assert isinstance(not_object, Rejected) and not_object.rule == "PRN-1"
    assert not_object.reason == "prune config must be an object"


def test_PRN_2_only_text_blocks_count() -> None:
    """PRN-2: "summed over `text` blocks only; non-text blocks count 0"."""
    blocks = freeze([{"type": "text", "text": "abc"}, {"type": "reasoning", "text": "0123456789"}])
    assert content_chars(blocks) == 3


def test_DIA_18_a_d08_tool_result_without_content_blocks_has_no_prunable_content() -> None:
    for message in ({"role": "tool", "content": []}, {"role": "tool"}):
        event = make_event("tool/result", seq=4, time=0, data=freeze({"turn": 1, "step": 1, "message": message}))
        assert tool_result_content(event, Dialect.D08) is None


def test_PRN_4_PRN_5_a_real_prune_replaces_single_tool_results_and_a_second_pass_is_empty() -> None:
    log = busy_log()
    outcome = prune_pass(log.events, BUSY_LOG_PRUNE)
    assert not isinstance(outcome, Rejected) and len(outcome.events) == 4
    assert only_surface_results(log.events, outcome, Dialect.A55) is None
    assert prune_again_is_empty(log.events, outcome, BUSY_LOG_PRUNE, Dialect.A55) is True


def test_DIA_18_a_real_d08_prune_keeps_its_contract() -> None:
    """D08: the ``compaction/prune`` record precedes each replacement; the replacement is still checked."""
    log = d08_tool_result_log()
    outcome = prune_pass(log.events, BUSY_LOG_PRUNE, dialect=Dialect.D08)
    assert not isinstance(outcome, Rejected)
    assert [e.type for e in outcome.events] == ["compaction/prune", "tool/result"]
    assert only_surface_results(log.events, outcome, Dialect.D08) is None
    assert prune_again_is_empty(log.events, outcome, BUSY_LOG_PRUNE, Dialect.D08) is True


# ---------------------------------------------------------------- issue 29, seed-1 sample at 15fa9c8: its survivors


def test_PRN_1_a_non_positive_threshold_or_negative_head_is_refused_under_PRN_1() -> None:
    """PRN-1: "threshold > 0, head/tail >= 0"; the refusal names PRN-1."""
    for bad in (PruneConfig(threshold_chars=0, head_chars=0, tail_chars=0), PruneConfig(threshold_chars=100, head_chars=-1, tail_chars=0)):
        refused = check_prune_config(bad)
        assert isinstance(refused, Rejected) and refused.rule == "PRN-1"


def test_PRN_4_the_events_of_a_prune_carry_the_time_of_the_pass() -> None:
    for dialect, log in ((Dialect.A55, pruned_log()), (Dialect.D08, d08_tool_result_log())):
        out = prune_session(log.events, SMALL, dialect=dialect, time=1234)
        assert not isinstance(out, Rejected) and out and all(e.time == 1234 for e in out)


def test_DIA_18_the_prune_record_prices_the_original_message() -> None:
    """DIA-18: ``shadowedTokenCount: estimateMessage(original message)``, the replaced result's ``message``."""
    log = d08_tool_result_log()
    out = prune_session(log.events, SMALL, dialect=Dialect.D08)
    assert not isinstance(out, Rejected)
    original = get(log.events[2].data, "message")
    assert isinstance(original, JsonObject)
    expected = estimate_message(original)
    assert expected > 0 and get(out[0].data, "shadowedTokenCount") == expected


def test_PRN_5_a_pass_that_left_a_prunable_result_is_not_idempotent() -> None:
    """PRN-5 (the contract helpers): on a valid log and its true surface, an outcome that pruned nothing where a
    result exceeds the threshold breaks idempotence, and one that replaces a non-result breaks PRN-4; with the true
    surface given as ``nodes`` the verdict is the same, with a wrong one the contract is vacuous."""
    log = busy_log()
    nothing = PruneOutcome(events=(), pruned=(), chars_removed=0)
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    for nodes in (None, fold.state.nodes):
        assert prune_again_is_empty(log.events, nothing, BUSY_LOG_PRUNE, Dialect.A55, nodes) is False
    assert prune_again_is_empty(log.events, nothing, BUSY_LOG_PRUNE, Dialect.A55, ()) is True
    outcome = prune_pass(log.events, BUSY_LOG_PRUNE)
    assert not isinstance(outcome, Rejected)
    shifted = PruneOutcome(events=outcome.events[1:], pruned=outcome.pruned[1:], chars_removed=0)
    assert only_surface_results(log.events, shifted, Dialect.A55, fold.state.nodes) is not None
    assert only_surface_results(log.events, shifted, Dialect.A55, ()) is None


def test_QF_16_a_throw_after_a_replacement_keeps_the_replacement() -> None:
    """``pruneSession`` appends each replacement as it goes (compact-tool-result-prune/src/index.ts lines 134-154
    at a55f148516): a later result whose content ``measureContent`` throws on (here ``null``) stops the pass after
    the first replacement, which stays; the pass's error is PRN-2.  The same result first: nothing appended, the
    pass itself is refused."""
    log = pruned_log()
    bad = with_data(log.events[5], content=None)
    events = [*log.events[:5], bad, *log.events[6:]]
    outcome = prune_pass(events, SMALL)
    assert not isinstance(outcome, Rejected)
    assert [e.source_event_seqs for e in outcome.events] == [(4,)]
    assert outcome.error is not None and outcome.error.rule == "PRN-2" and outcome.error.seq == 5
    assert prune_session(events, SMALL) == outcome.error
    first_bad = [*log.events[:4], with_data(log.events[4], content=None), *log.events[5:]]
    refused = prune_pass(first_bad, SMALL)
    assert isinstance(refused, Rejected) and refused.rule == "PRN-2" and refused.seq == 4
