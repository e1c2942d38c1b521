"""Unit tests for CMP (and the D08 overrides it carries), named after rule IDs."""

from __future__ import annotations

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.compaction import (
    CHECKPOINT_PREAMBLE,
    CompactConfig,
    Ids,
    ModelPolicy,
    Owner,
    Range,
    SummarizerOutput,
    SummaryCall,
    Trigger,
    balanced_cuts,
    check_compact_config,
    check_summary_smaller,
    compact_if_needed,
    compact_region,
    compact_spec,
    compaction_owner,
    frame_summary,
    is_checkpoint_source,
    pressure_compaction,
    recover_overflow,
    routed_target,
    select_range,
    summarization_input,
    summary_text_blocks,
    target_policy,
)
from sessionspec.model.compaction.cancellation import AbortPoint, stops_when_aborted
from sessionspec.model.compaction.region import check_region, price_region
from sessionspec.model.derive import derive
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.meter import Baseline, BaselineKind, Measurement, PricedNode, measure
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from tests.support import Log, busy_log, compacted_head, d08_log, events_of_lines, short, summarizer_of

# ---------------------------------------------------------------- events and sources


def test_CMP_1_success_writes_start_summary_checkpoint_end() -> None:
    _, outcome = compacted_head(busy_log(), 4)
    assert outcome.error is None
    assert [e.type for e in outcome.events] == ["compact/start", "compact/summary", "user/message", "compact/end"]
    assert list(outcome.events[1].data) == ["summary", "shadowedRange", "shadowedSeqs", "shadowedTokenCount", "provider", "model"]
    assert all(e.surface_op is ABSENT for i, e in enumerate(outcome.events) if i != 2)


def test_DIA_1_DIA_2_d08_names_and_compaction_id() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("user/message", {"content": [{"type": "text", "text": "q" * 400}], "source": {"kind": "user"}, "role": "user", "id": "u1"}, op="append")
    log.add("user/message", {"content": [{"type": "text", "text": "r"}], "source": {"kind": "user"}, "role": "user", "id": "u2"}, op="append")
    log.header()
    outcome = compact_region(log.events, 1, 1, short, dialect=Dialect.D08, ids=Ids(compaction_id="cid", message_id="mid"))
    assert not isinstance(outcome, Rejected) and outcome.error is None
    assert [e.type for e in outcome.events] == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    assert all(get(e.data, "compactionId") == "cid" for e in outcome.events if e.type != "user/message")
    assert get(outcome.events[2].data, "source") == freeze({"kind": "plugin", "plugin": "compact", "compactionId": "cid"})
    assert get(outcome.events[2].data, "id") == "mid"


def test_CMP_2_checkpoint_source_recognition_ignores_extra_keys() -> None:
    assert is_checkpoint_source(freeze({"kind": "plugin", "plugin": "compact", "compactionId": "x"}))
    assert not is_checkpoint_source(freeze({"kind": "plugin", "plugin": "other"}))
    assert not is_checkpoint_source(freeze({"kind": "user"}))


# ---------------------------------------------------------------- configuration


def test_CMP_3_config_validation() -> None:
    assert isinstance(check_compact_config(CompactConfig()), CompactConfig)
    assert isinstance(check_compact_config(CompactConfig(retain_ratio=0.1, retain_tokens=5)), Rejected)
    assert isinstance(check_compact_config(CompactConfig(threshold_ratio=0.1)), Rejected)  # 0.16 >= 0.1
    assert isinstance(check_compact_config(CompactConfig(threshold_ratio=1.5)), Rejected)
    assert isinstance(check_compact_config(CompactConfig(summarization_provider="p")), Rejected)
    dup = (ModelPolicy(provider="p", model="m"), ModelPolicy(provider="p", model="m"))
    assert isinstance(check_compact_config(CompactConfig(model_policies=dup)), Rejected)


def test_CMP_4_policy_overlay_and_spec() -> None:
    config = CompactConfig(model_policies=(ModelPolicy(provider="p", model="m", retain_tokens=10),))
    policy = target_policy(config, "p", "m")
    assert policy.retain_tokens == 10 and policy.threshold_ratio == 0.8
    assert target_policy(config, "p", "other") == config
    spec = compact_spec(CompactConfig(), 1000, "p/m")
    assert not isinstance(spec, Rejected)
    assert (spec.threshold_tokens, spec.retain_tokens) == (800, 160)
    assert isinstance(compact_spec(CompactConfig(retain_tokens=800), 1000, "p/m"), Rejected)
    assert isinstance(compact_spec(CompactConfig(), 0, "p/m"), Rejected)


def test_CMP_5_no_routed_header_means_no_compaction() -> None:
    log = busy_log()
    log.events = [e for e in log.events if e.type != "request/header"]
    log.events = [make_event(e.type, seq=i, time=0, data=e.data, source_event_seqs=e.source_event_seqs, surface_op=e.surface_op)
                  for i, e in enumerate(log.events)]
    assert routed_target(log.events) is None
    run = compact_if_needed(log.events, short, context_window=100)
    assert not isinstance(run, Rejected) and run.events == ()


# ---------------------------------------------------------------- pairing and retention


def test_CMP_10_balance_is_a_counter_not_call_ids() -> None:
    log = Log()
    a = log.assistant(1, 1, calls=("x", "y"))
    r1 = log.result(1, 1, "other", "r")  # a foreign call id still balances
    r2 = log.result(1, 1, "y", "r")
    assert balanced_cuts([a, r1, r2], log.events) == (True, False, False, True)
    corrupt = balanced_cuts([r1], log.events)
    # CMP-10: "a negative running sum MUST be rejected as a corrupt surface", on the result that makes it negative.
    assert isinstance(corrupt, Rejected) and (corrupt.rule, corrupt.seq) == ("CMP-10", r1)
    assert corrupt.reason == "corrupt surface: more tool results than tool calls"


def test_CMP_11_retention_walk_rounds_head_ward() -> None:
    log = busy_log(steps=2)
    fold = fold_surface(log.events)
    m = measure(log.events)
    assert not isinstance(fold, Rejected) and not isinstance(m, Rejected)
    priced = [(n.seq, n.tokens) for n in m.nodes]
    nodes = fold.state.nodes  # user, a1, r1, a2, r2
    # retain 1: the last node alone reaches it; the cut before r2 is open -> keep a2.
    assert select_range(priced, nodes, log.events, 1) == Range(start=nodes[0], end=nodes[2])
    # a huge retain keeps everything: no range.
    assert select_range(priced, nodes, log.events, 10**9) is None
    assert isinstance(select_range(priced[1:], nodes, log.events, 1), Rejected)


def test_CMP_12_whole_surface_one_pair_declines() -> None:
    log = Log()
    log.assistant(1, 1, calls=("x",))
    log.result(1, 1, "x", "r")
    nodes = (0, 1)
    assert select_range([(0, 10), (1, 10)], nodes, log.events, 0) is None


def test_CMP_13_rejects_unbalanced_edges_without_events() -> None:
    log = busy_log(steps=1)
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    nodes = fold.state.nodes
    bad = compact_region(log.events, nodes[0], nodes[1], short)
    assert isinstance(bad, Rejected) and bad.rule == "CMP-13"
    bad = compact_region(log.events, nodes[2], nodes[0], short)
    assert isinstance(bad, Rejected) and bad.rule == "CMP-13"


# region.ts:111-113, the harness's words.
NO_OPEN_TURN = Rejected(rule="CMP-14", reason="compactRegion: no open turn — compaction events must be enclosed in a turn")


def test_CMP_14_lock_and_open_turn() -> None:
    log = busy_log(steps=1)
    assert compaction_owner(log.events, Dialect.A55).turn == 1  # type: ignore[union-attr]
    log.add("compact/start", {"turn": 1})
    locked = compaction_owner(log.events, Dialect.A55)
    assert locked == Rejected(rule="CMP-14", reason="compaction already in progress")  # region.ts:110
    log.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert compaction_owner(log.events, Dialect.A55) == NO_OPEN_TURN
    assert compaction_owner(log.events[1:3], Dialect.A55) == NO_OPEN_TURN  # no boundary at all (region.ts:226)
    log.add("turn/start", {"turn": 2})
    assert compaction_owner(log.events, Dialect.A55).turn == 2  # type: ignore[union-attr]  # Q-12


def _with_turn_start(log: Log, data: object) -> list[Event]:
    """``log`` with its first event (a ``turn/start``) carrying ``data`` instead."""
    first = log.events[0]
    return [make_event("turn/start", seq=0, time=first.time, data=freeze(data)), *log.events[1:]]


def test_CMP_14_owner_turn_is_the_logged_value_as_it_is() -> None:
    """region.ts:223 ``return { turn: event.data.turn, ... }`` and region.ts:116/161/173 write
    ``{turn: tail.turn}``: the value is copied as it is (a log LOG-13's companion would veto); ``null``
    is "no open turn" (region.ts:111), an absent ``turn`` is an ``undefined`` the append rejects
    (LOG-4, index.ts:420), a ``null`` data throws while scanning, before the lock is read."""
    log = busy_log(steps=1)
    nodes = fold_surface(log.events)
    assert not isinstance(nodes, Rejected)
    first, last = nodes.state.nodes[0], nodes.state.nodes[-1]
    for turn in ("x", 2.5, {"k": 1}, [1], True, 1):
        events = _with_turn_start(log, {"turn": turn, "trigger": {"kind": "message"}})
        outcome = compact_region(events, first, last, short)
        assert not isinstance(outcome, Rejected)
        brackets = [e for e in outcome.events if e.type in ("compact/start", "compact/end")]
        assert [get(e.data, "turn") for e in brackets] == [freeze(turn)] * 2
    assert compaction_owner(_with_turn_start(log, {"turn": None}), Dialect.A55) == NO_OPEN_TURN
    absent = compact_region(_with_turn_start(log, {"trigger": {"kind": "message"}}), first, last, short)
    assert absent == Rejected(rule="LOG-4", reason='session event "compact/start" carries non-JSON-serializable data')
    locked = Log([*_with_turn_start(log, None)])
    locked.add("compact/start", {"turn": 1})
    thrown = compaction_owner(locked.events, Dialect.A55)
    assert thrown == Rejected(rule="CMP-14", reason="Cannot read properties of null (reading 'turn')")
    assert compaction_owner(_with_turn_start(log, "s"), Dialect.A55) == absent


def test_DIA_3_d08_owner_turn_is_the_logged_value_as_it_is() -> None:
    """D08 region.ts:538-539 ``openTurn = event.data.turn``; 164-181: busy first, then a manual bracket
    needs ``openTurn === null``, an automatic one ``openTurn !== null`` and writes it as ``turn``."""
    log = busy_log(steps=1)
    idle = Rejected(rule="DIA-3", reason="busy: manual compaction needs an idle agent")
    for turn in ("x", 2.5, 1):
        assert compaction_owner(_with_turn_start(log, {"turn": turn}), Dialect.D08) == Owner(turn=freeze(turn))
        assert compaction_owner(_with_turn_start(log, {"turn": turn}), Dialect.D08, manual=True) == idle
    nulled = _with_turn_start(log, {"turn": None})
    assert compaction_owner(nulled, Dialect.D08, manual=True) == Owner(turn=None)
    assert compaction_owner(nulled, Dialect.D08) == Rejected(rule="DIA-3", reason="compactRegion: no open turn")
    absent = compaction_owner(_with_turn_start(log, {}), Dialect.D08)
    assert absent == Rejected(rule="LOG-4", reason='session event "compaction/start" carries non-JSON-serializable data')
    assert compaction_owner(_with_turn_start(log, {}), Dialect.D08, manual=True) == idle
    locked = Log([*_with_turn_start(log, None)])
    locked.add("compaction/start", {"compactionId": "a", "turn": 1})
    for manual_flag in (False, True):
        thrown = compaction_owner(locked.events, Dialect.D08, manual=manual_flag)
        assert thrown == Rejected(rule="DIA-3", reason="Cannot read properties of null (reading 'turn')")
    busy = Log([*log.events])
    busy.add("compaction/start", {"compactionId": "a", "turn": 1})
    assert compaction_owner(busy.events, Dialect.D08) == Rejected(rule="DIA-5", reason="busy: compaction already in progress")


def test_DIA_5_DIA_3_d08_lock_cleared_only_by_end_seed() -> None:
    log = Log()
    log.add("compaction/start", {"compactionId": "a", "turn": None})
    log.add("turn/start", {"turn": 1})
    assert isinstance(compaction_owner(log.events, Dialect.D08), Rejected)
    log.add("session/end-seed", {})
    assert compaction_owner(log.events, Dialect.D08) == compaction_owner(log.events, Dialect.D08)
    assert not isinstance(compaction_owner(log.events, Dialect.D08), Rejected)
    manual = compaction_owner(log.events, Dialect.D08, manual=True)
    assert isinstance(manual, Rejected) and manual.rule == "DIA-3"


# ---------------------------------------------------------------- transaction


def test_CMP_15_shadowed_token_count_is_meter_sum() -> None:
    log = busy_log()
    m = measure(log.events)
    assert not isinstance(m, Rejected)
    outcome = compact_region(log.events, m.nodes[0].seq, m.nodes[2].seq, short)
    assert not isinstance(outcome, Rejected)
    assert get(outcome.events[1].data, "shadowedTokenCount") == sum(n.tokens for n in m.nodes[:3])


def test_CMP_16_DIA_17_input_replays_prefix_then_shadowed() -> None:
    prefix = [{"role": "user", "content": [{"type": "text", "text": "P"}]}]
    h = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="S", message_prefix=freeze(prefix))
    log = busy_log(steps=1)
    got = summarization_input(log.events, (1,), h, Dialect.A55)
    assert not isinstance(got, Rejected)
    assert got.messages[0] == freeze(prefix[0]) and len(got.messages) == 2 and got.system == "S"
    d08 = summarization_input(log.events, (1,), h, Dialect.D08)
    assert not isinstance(d08, Rejected) and len(d08.messages) == 1  # DIA-17


def test_CMP_18_only_text_blocks_and_non_blank() -> None:
    kept = summary_text_blocks((freeze({"type": "reasoning", "text": "r"}), freeze({"type": "text", "text": "t"})))
    assert kept == (freeze({"type": "text", "text": "t"}),)
    bad = summary_text_blocks((freeze({"type": "text", "text": "  "}),))
    assert isinstance(bad, Rejected) and bad.rule == "CMP-18"


def test_CMP_20_framing() -> None:
    framed = frame_summary((freeze({"type": "text", "text": "body"}),))
    assert get(framed[0], "text") == CHECKPOINT_PREAMBLE + "\n\n<compacted-summary>"
    assert get(framed[-1], "text") == "</compacted-summary>" and len(framed) == 3


def test_CMP_21_summary_must_be_strictly_smaller() -> None:
    framed = frame_summary((freeze({"type": "text", "text": "b"}),))
    tokens = check_summary_smaller(framed, 10**6)
    assert isinstance(tokens, int)
    assert isinstance(check_summary_smaller(framed, tokens), Rejected)
    assert check_summary_smaller(framed, tokens + 1) == tokens


def test_CMP_22_checkpoint_provenance_and_replace() -> None:
    log = busy_log()
    surface, outcome = compacted_head(log, 2)
    nodes = surface.nodes
    assert outcome.result is not None
    start, summary, checkpoint, _ = outcome.events
    assert checkpoint.source_event_seqs == (start.seq, summary.seq, *nodes[:3])
    assert checkpoint.surface_op == freeze({"op": "replace", "start": nodes[0], "end": nodes[2]})
    after = fold_surface([*log.events, *outcome.events])
    assert not isinstance(after, Rejected) and after.state.nodes == (checkpoint.seq, *nodes[3:])
    assert audit_compactions([*log.events, *outcome.events], Dialect.A55) == ()


def test_CMP_22_the_result_names_the_seqs_of_the_bracket_it_appended() -> None:
    """CMP-22, the real region (a55f148516 compact-basic/src/region.ts:160-168): the result's ``startSeq``,
    ``summarySeq`` and ``endSeq`` are the seqs of the appended ``compact/start``, ``compact/summary`` and
    ``compact/end``, in that order at the end of the log, the checkpoint between summary and end; its range,
    seqs and price are the ones the summary records."""
    log = busy_log()
    surface, outcome = compacted_head(log, 2)
    result = outcome.result
    assert result is not None and outcome.error is None
    start, summary, checkpoint, end = outcome.events
    assert [e.type for e in outcome.events] == ["compact/start", "compact/summary", "user/message", "compact/end"]
    first = len(log.events)
    assert (result.start_seq, result.summary_seq, result.checkpoint_seq, result.end_seq) == (
        first, first + 1, first + 2, first + 3)
    assert (start.seq, summary.seq, checkpoint.seq, end.seq) == (first, first + 1, first + 2, first + 3)
    assert (result.shadowed_range.start, result.shadowed_range.end) == (surface.nodes[0], surface.nodes[2])
    assert result.shadowed_seqs == surface.nodes[:3] == get(summary.data, "shadowedSeqs")
    assert result.shadowed_token_count == get(summary.data, "shadowedTokenCount")


def test_CMP_23_failure_writes_error_end_and_keeps_surface() -> None:
    log = busy_log()
    surface, outcome = compacted_head(log, 2, summarizer_of("x" * 100000))  # type: ignore[arg-type]
    assert outcome.error is not None and outcome.error.rule == "CMP-21"
    assert [e.type for e in outcome.events] == ["compact/start", "compact/end"]
    assert isinstance(get(outcome.events[1].data, "error"), str)
    after = fold_surface([*log.events, *outcome.events])
    assert not isinstance(after, Rejected) and after.state == surface
    assert audit_compactions([*log.events, *outcome.events], Dialect.A55) == ()


def test_CMP_24_no_header_written_and_prefix_untouched() -> None:
    log = busy_log()
    _, outcome = compacted_head(log, 2)
    assert all(e.type != "request/header" for e in outcome.events)
    messages = derive([*log.events, *outcome.events])
    assert not isinstance(messages, Rejected) and get(messages[0], "content") == get(outcome.events[2].data, "content")


# ---------------------------------------------------------------- compactIfNeeded and overflow


def test_CMP_8_below_threshold_does_nothing_and_above_compacts() -> None:
    log = busy_log()
    m = measure(log.events)
    assert not isinstance(m, Rejected)
    quiet = compact_if_needed(log.events, short, context_window=m.total_tokens * 10)
    assert not isinstance(quiet, Rejected) and quiet.events == ()
    run = compact_if_needed(log.events, short, config=CompactConfig(retain_tokens=50), context_window=m.total_tokens)
    assert not isinstance(run, Rejected) and run.error is None and len(run.results) == 1
    missing = compact_if_needed(log.events, short)
    assert isinstance(missing, Rejected) and missing.rule == "CMP-8"


def test_CMP_8_bounded_retries_then_error() -> None:
    log = busy_log()
    # The envelope alone stays above threshold: the loop ends with
    # "still above threshold"; the committed compaction stays (P-CMP-12).
    config = CompactConfig(threshold_ratio=0.5, retain_tokens=1, compaction_retries=0)
    run = compact_if_needed(log.events, short, config=config, context_window=10)
    assert not isinstance(run, Rejected)
    assert run.error is not None and run.error.rule == "CMP-8"
    assert len(run.results) == 1 and [e.type for e in run.events][-1] == "compact/end"
    # One retry: the second transaction re-compacts the head checkpoint alone,
    # which cannot shrink (CMP-21); at most retries + 1 transactions ran.
    again = compact_if_needed(log.events, short, config=CompactConfig(threshold_ratio=0.5, retain_tokens=1),
                              context_window=10)
    assert not isinstance(again, Rejected) and again.error is not None
    assert sum(1 for e in again.events if e.type == "compact/start") == 2
    assert again.error.rule == "CMP-21" and len(again.results) == 1


def test_CMP_9_overflow_needs_no_window() -> None:
    log = busy_log()
    run = compact_if_needed(log.events, short, trigger=Trigger.CONTEXT_OVERFLOW)
    assert not isinstance(run, Rejected) and len(run.results) == 1
    m = measure(log.events)
    assert not isinstance(m, Rejected)
    assert run.results[0].shadowed_seqs[-1] != m.nodes[-1].seq  # retain 0 still keeps a tail


def test_CMP_7_overflow_retry_only_when_surface_changed() -> None:
    log = busy_log()
    retry = recover_overflow(log.events, short, failure_code="CONTEXT_WINDOW_EXCEEDED", prior_overflow_failures=0)
    assert retry.retry
    other = recover_overflow(log.events, short, failure_code="RATE_LIMIT", prior_overflow_failures=0)
    assert not other.retry and other.events == ()
    aborted = recover_overflow(log.events, short, failure_code="CONTEXT_WINDOW_EXCEEDED",
                               prior_overflow_failures=0, aborted=True)
    assert not aborted.retry and aborted.events == ()


# ---------------------------------------------------------------- audit


def test_CMP_25_audit_rejects_nested_start_and_end_without_summary() -> None:
    log = busy_log(steps=1)
    log.add("compact/start", {"turn": 1})
    log.add("compact/start", {"turn": 1})
    log.add("compact/end", {"turn": 1})
    rules = [f.rule for f in audit_compactions(log.events, Dialect.A55)]
    assert "CMP-25" in rules


def test_FMT_7_audit_rejects_forged_checkpoint_provenance() -> None:
    log = busy_log()
    _, outcome = compacted_head(log, 2)
    start, summary, checkpoint, end = outcome.events
    cited = checkpoint.source_event_seqs
    assert isinstance(cited, tuple)
    forged = make_event("user/message", seq=checkpoint.seq, time=0, data=checkpoint.data,
                        source_event_seqs=(summary.seq, start.seq, *cited[2:]), surface_op=checkpoint.surface_op)
    rules = [f.rule for f in audit_compactions([*log.events, start, summary, forged, end], Dialect.A55)]
    assert rules == ["CMP-22"]


# ---------------------------------------------------------------- triggers


def test_CMP_6_pressure_runs_inside_the_step_and_skips_when_aborted() -> None:
    log = busy_log()
    # busy_log closes every step: a post-step call there is misplaced.
    misplaced = pressure_compaction(log.events, short, context_window=100)
    assert misplaced == Rejected(rule="CMP-6", reason="pressure compaction runs inside the step, before step/end")
    log.add("step/start", {"turn": 1, "step": 9})
    log.assistant(1, 9, text="done")
    run = pressure_compaction(log.events, short, config=CompactConfig(retain_tokens=20), context_window=400)
    assert not isinstance(run, Rejected) and run.results
    skipped = pressure_compaction(log.events, short, aborted=True, context_window=400)
    assert not isinstance(skipped, Rejected) and skipped.events == ()
    manual_off = pressure_compaction(log.events, short, config=CompactConfig(auto=False), context_window=400)
    assert not isinstance(manual_off, Rejected) and manual_off.events == ()


def test_DIA_6_d08_pressure_runs_before_step_start_and_respects_lock() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("user/message", {"content": [{"type": "text", "text": "q" * 400}], "source": {"kind": "user"}, "role": "user", "id": "u1"}, op="append")
    log.add("user/message", {"content": [{"type": "text", "text": "r"}], "source": {"kind": "user"}, "role": "user", "id": "u2"}, op="append")
    log.header()
    run = pressure_compaction(log.events, short, dialect=Dialect.D08, config=CompactConfig(retain_tokens=5), context_window=100)
    assert not isinstance(run, Rejected) and len(run.results) == 1
    log.add("step/start", {"turn": 1, "step": 1})
    inside = pressure_compaction(log.events, short, dialect=Dialect.D08, context_window=100)
    assert isinstance(inside, Rejected) and inside.rule == "DIA-6"
    log.add("step/end", {"turn": 1, "step": 1})
    log.add("compaction/start", {"compactionId": "x", "turn": 1})
    busy = pressure_compaction(log.events, short, dialect=Dialect.D08, config=CompactConfig(retain_tokens=5), context_window=100)
    assert not isinstance(busy, Rejected) and busy.events == () and busy.error is not None and busy.error.rule == "DIA-5"


def test_CMP_19_pure_run_sees_a_stable_surface_and_tolerates_log_only_appends() -> None:
    log = busy_log()
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    log.add("request/header", {"reason": "change", "header": {"config": {"provider": "p", "model": "m"}, "system": "sys"}})
    outcome = compact_region(log.events, fold.state.nodes[0], fold.state.nodes[2], short)
    assert not isinstance(outcome, Rejected) and outcome.error is None


def test_CMP_26_no_abort_check_before_commit() -> None:
    """Q-2: a summarizer that completes despite a later abort still commits: the transaction told the signal is
    aborted as the summarizer returns commits the same events as one told it is not."""
    log = busy_log()
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    first, last = fold.state.nodes[0], fold.state.nodes[2]
    calm = compact_region(log.events, first, last, short)
    late_abort = compact_region(log.events, first, last, short, aborted=True)
    assert not isinstance(calm, Rejected) and calm.error is None and calm.result is not None
    assert late_abort == calm


def test_CMP_26_one_definition_says_which_points_stop_on_an_abort() -> None:
    """The pressure trigger and the overflow path stop on an aborted signal; the commit does not (Q-2); the
    triggers ask this one definition (a planted inversion of it flips the outcomes tested above and below)."""
    assert stops_when_aborted(AbortPoint.PRESSURE_TRIGGER) and stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY)
    assert not stops_when_aborted(AbortPoint.COMMIT)
    log = busy_log()
    decision = recover_overflow(log.events, short, failure_code="CONTEXT_WINDOW_EXCEEDED",
                                prior_overflow_failures=0, aborted=True)
    assert decision.events == () and not decision.retry
    run = compact_if_needed(log.events, short, trigger=Trigger.CONTEXT_OVERFLOW)
    assert not isinstance(run, Rejected) and run.results


def test_DIA_20_manual_compaction_is_idle_with_null_owner() -> None:
    log = d08_log()
    run = compact_if_needed(log.events, short, dialect=Dialect.D08, trigger=Trigger.MANUAL,
                            ids=lambda attempt: Ids(compaction_id="m", message_id="k", source_command_id="cmd"))
    assert not isinstance(run, Rejected) and run.error is None and len(run.results) == 1
    start, summary, checkpoint, end = run.events
    assert get(start.data, "turn") is None and get(end.data, "turn") is None
    assert get(summary.data, "sourceCommandId") == "cmd"
    assert get(checkpoint.data, "source") == freeze(
        {"kind": "plugin", "plugin": "compact", "compactionId": "m", "sourceCommandId": "cmd"})
    assert audit_compactions([*log.events, *run.events], Dialect.D08) == ()
    log.add("turn/start", {"turn": 1})
    busy = compact_if_needed(log.events, short, dialect=Dialect.D08, trigger=Trigger.MANUAL)
    assert not isinstance(busy, Rejected) and busy.events == () and busy.error is not None


def test_DIA_19_audit_vetoes_foreign_checkpoint_id_and_turn_inside_bracket() -> None:
    log = d08_log()
    run = compact_if_needed(log.events, short, dialect=Dialect.D08, trigger=Trigger.MANUAL,
                            ids=lambda attempt: Ids(compaction_id="m", message_id="k"))
    assert not isinstance(run, Rejected)
    start, summary, checkpoint, end = run.events
    data = checkpoint.data
    assert isinstance(data, JsonObject)
    forged_data = JsonObject((k, freeze({"kind": "plugin", "plugin": "compact", "compactionId": "other"}) if k == "source" else v)
                             for k, v in data.items())
    forged = make_event("user/message", seq=checkpoint.seq, time=0, data=forged_data,
                        source_event_seqs=checkpoint.source_event_seqs, surface_op=checkpoint.surface_op)
    assert "DIA-19" in [f.rule for f in audit_compactions([*log.events, start, summary, forged, end], Dialect.D08)]
    log.add("compaction/start", {"compactionId": "z", "turn": None})
    log.add("turn/start", {"turn": 1})
    assert "DIA-19" in [f.rule for f in audit_compactions(log.events, Dialect.D08)]


# ---------------------------------------------------------------- refusals with the book's reasons, DIA-2


def test_CMP_3_retain_ratio_at_or_above_the_threshold_is_refused_with_its_reason() -> None:
    refused = check_compact_config(CompactConfig(threshold_ratio=0.5, retain_ratio=0.5))
    assert isinstance(refused, Rejected) and refused.rule == "CMP-3"
    assert refused.reason == "compact config: retainRatio must be below thresholdRatio"


def test_CMP_4_a_matching_policy_overlays_max_tokens_and_the_summarization_model() -> None:
    """CMP-4: "the defaults overlaid field-wise by the modelPolicies entry whose (provider, model) equals the
    target exactly"."""
    policy = ModelPolicy(provider="p", model="m", max_tokens=100, summarization_provider="sp", summarization_model="sm")
    config = CompactConfig(max_tokens=8192, summarization_provider="dp", summarization_model="dm", model_policies=(policy,))
    resolved = target_policy(config, "p", "m")
    assert (resolved.max_tokens, resolved.summarization_provider, resolved.summarization_model) == (100, "sp", "sm")
    other = target_policy(config, "p", "other")
    assert (other.max_tokens, other.summarization_provider, other.summarization_model) == (8192, "dp", "dm")


def test_CMP_13_a_seq_off_the_surface_is_refused_with_the_books_reason() -> None:
    """CMP-13: both seqs on the surface ("compactRegion: start|end seq X not found in surface")."""
    for start, end, reason in ((5, 1, "compactRegion: start seq 5 not found in surface"),
                               (0, 9, "compactRegion: end seq 9 not found in surface")):
        refused = check_region([], [0, 1], start, end, Dialect.A55)
        assert isinstance(refused, Rejected) and (refused.rule, refused.reason) == ("CMP-13", reason)


def test_CMP_15_a_measurement_whose_nodes_moved_is_refused_with_the_books_reason() -> None:
    measured = Measurement(log_revision=2, baseline=Baseline(kind=BaselineKind.NONE, tokens=0), surface_delta_tokens=0,
                           total_tokens=7, surface_tokens=7, nodes=(PricedNode(seq=0, tokens=3), PricedNode(seq=1, tokens=4)),
                           header=ABSENT)
    assert price_region(measured, 0, 1, (0, 1)) == 7
    refused = price_region(measured, 0, 1, (0, 2))
    assert isinstance(refused, Rejected)
    assert (refused.rule, refused.reason) == ("CMP-15", "selected surface changed before summarization began")


def test_CMP_17_no_summarization_target_closes_the_bracket_with_the_books_error() -> None:
    """CMP-17: no configured pair, no requestHeader().config → raise "no provider/model available for
    summarization"; CMP-23 closes the bracket with that error."""
    events = events_of_lines(
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}',
        '{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
    )

    def never(call: SummaryCall) -> SummarizerOutput:
        raise AssertionError("the summarizer must not be called")

    outcome = compact_region(events, 1, 1, never)
    assert not isinstance(outcome, Rejected) and outcome.result is None and outcome.error is not None
    assert (outcome.error.rule, outcome.error.reason) == ("CMP-17", "no provider/model available for summarization")
    assert [(e.type, get(e.data, "error")) for e in outcome.events][-1] == ("compact/end", "no provider/model available for summarization")


def test_DIA_2_a_run_stamps_its_time_and_the_identities_of_its_attempt() -> None:
    """DIA-2: the D08 identities are passed in (per attempt); every appended event carries the run's time."""
    log = d08_log()
    run = compact_if_needed(log.events, short, dialect=Dialect.D08, trigger=Trigger.MANUAL, time=77,
                            ids=lambda attempt: Ids(compaction_id=f"c{attempt}", message_id=f"k{attempt}"))
    assert not isinstance(run, Rejected) and run.error is None and len(run.results) == 1
    assert {e.time for e in run.events} == {77}
    assert get(run.events[0].data, "compactionId") == "c0"


def test_CMP_23_an_overflow_or_manual_run_reports_its_failed_transaction() -> None:
    """CMP-23: a failure after the start appends ``start … end{error}`` and carries the error; the overflow run
    (CMP-9) and the manual run (DIA-20) are one transaction each, so the run reports that error."""
    failing = summarizer_of("x" * 100000)
    overflow = compact_if_needed(busy_log().events, failing, trigger=Trigger.CONTEXT_OVERFLOW)  # type: ignore[arg-type]
    manual = compact_if_needed(d08_log().events, failing, dialect=Dialect.D08, trigger=Trigger.MANUAL)  # type: ignore[arg-type]
    for run in (overflow, manual):
        assert not isinstance(run, Rejected) and run.error is not None and run.error.rule == "CMP-21"
        assert [e.type for e in run.events][-1] in ("compact/end", "compaction/end") and not run.results


def test_CMP_8_below_the_threshold_the_pressure_run_returns_none() -> None:
    """CMP-8: "if `total < threshold` return none": nothing appended, no result and no error, with or without a
    prune service."""
    log = busy_log()
    for prune in (None, PruneConfig()):
        run = compact_if_needed(log.events, short, context_window=10**9, prune=prune)
        assert not isinstance(run, Rejected) and (run.events, run.results, run.error) == ((), (), None)


def test_CMP_17_the_configured_summarization_pair_is_the_target() -> None:
    """CMP-17: "Target = the configured summarization pair (non-empty, from the policy of the conversation target)
    else `requestHeader().config` ...": a pressure run calls the summarizer with that pair."""
    calls: list[SummaryCall] = []

    def recording(call: SummaryCall) -> SummarizerOutput:
        calls.append(call)
        return short(call)

    config = CompactConfig(threshold_ratio=0.5, retain_tokens=1, compaction_retries=0,
                           summarization_provider="sp", summarization_model="sm")
    run = compact_if_needed(busy_log().events, recording, config=config, context_window=10)
    assert not isinstance(run, Rejected) and calls
    assert all((call.provider, call.model) == ("sp", "sm") for call in calls)


def test_CMP_13_a_start_inside_a_call_result_pair_is_refused_with_the_books_reason() -> None:
    """CMP-13: ``balancedBefore(start)`` ("not a balanced boundary (would split a step's tool-call/result pair)")."""
    log = busy_log(steps=1)
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    result = next(seq for seq in fold.state.nodes if log.events[seq].type == "tool/result")
    refused = check_region(log.events, fold.state.nodes, result, fold.state.nodes[-1], Dialect.A55)
    reason = f"compactRegion: start seq {result} is not a balanced boundary (would split a step's tool-call/result pair)"
    assert isinstance(refused, Rejected) and (refused.rule, refused.reason) == ("CMP-13", reason)


def test_CMP_3_a_policy_whose_resolved_retain_ratio_reaches_its_threshold_is_refused() -> None:
    """CMP-3: "resolved `retainRatio < thresholdRatio` (also per model policy)": the policy's own threshold
    with the global retainRatio 0.16 is refused; with a threshold above 0.16 the configuration passes."""
    config = CompactConfig(model_policies=(ModelPolicy(provider="p", model="m", threshold_ratio=0.1),))
    refused = check_compact_config(config)
    assert isinstance(refused, Rejected) and refused.rule == "CMP-3"
    assert refused.reason == "compact config: policy p/m: retainRatio must be below thresholdRatio"
    fine = CompactConfig(model_policies=(ModelPolicy(provider="p", model="m", threshold_ratio=0.5),))
    assert check_compact_config(fine) is fine


def test_CMP_4_a_context_window_that_is_not_a_positive_integer_is_refused_as_such() -> None:
    """CMP-4: "`cw` a positive integer (else `TargetPressureConfigError`)", before any threshold is computed."""
    for window in (0, -100, 1.5):
        refused = compact_spec(CompactConfig(), window, "p/m")
        assert isinstance(refused, Rejected) and (refused.rule, refused.reason) == ("CMP-4", "invalid context window for p/m")


def test_CMP_4_the_threshold_is_overlaid_field_wise_and_a_window_of_one_is_positive() -> None:
    """CMP-4: the defaults "overlaid field-wise by the `modelPolicies` entry" (thresholdRatio: the policy's, else
    the configured default), and `cw` = 1 is a positive integer: the spec is computed, not refused."""
    config = CompactConfig(threshold_ratio=0.6, model_policies=(ModelPolicy(provider="p", model="m", threshold_ratio=0.5),
                                                                ModelPolicy(provider="p", model="n", max_tokens=10)))
    assert target_policy(config, "p", "m").threshold_ratio == 0.5
    assert target_policy(config, "p", "n").threshold_ratio == 0.6
    spec = compact_spec(CompactConfig(threshold_ratio=1.0, retain_tokens=0), 1, "p/m")
    assert not isinstance(spec, Rejected) and (spec.threshold_tokens, spec.retain_tokens) == (1, 0)
