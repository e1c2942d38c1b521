"""Compaction, meter and prune against real logs and the real harness's ground truth."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.codec import event_to_json, parse_event_line
from sessionspec.model.compaction import (
    CompactConfig,
    Ids,
    SummarizerOutput,
    SummaryCall,
    Trigger,
    compact_if_needed,
    recover_overflow,
    summary_requests,
)
from sessionspec.model.derive import derive
from sessionspec.model.jsonval import Json, JsonObject, freeze, get, js_stringify
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.meter import measure
from sessionspec.model.prune import PruneConfig, prune_session
from sessionspec.model.rejected import Rejected
from tests.support import GROUNDTRUTH, REAL

RECOVERY = REAL / "611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"


def load(path: Path) -> list[Event]:
    events: list[Event] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parsed = parse_event_line(line)
        if isinstance(parsed, Rejected):
            assert '"type":"session"' in line  # the storage header line
            continue
        events.extend(parsed)
    return events


def timeless(events: Sequence[Event]) -> list[str]:
    return [js_stringify(JsonObject((k, v) for k, v in event_to_json(e).items() if k != "time")) for e in events]


def replaying(summary_event: Event) -> SummarizerOutput:
    """A fake summarizer output returning what the log recorded."""
    data = summary_event.data
    summary, raw = get(data, "summary"), get(data, "rawOutput")
    cap, provider, model = get(data, "maxTokens"), get(data, "provider"), get(data, "model")
    assert isinstance(summary, tuple) and isinstance(provider, str) and isinstance(model, str)
    return SummarizerOutput(
        summary=summary,
        provider=provider,
        model=model,
        max_tokens=cap if isinstance(cap, int) else None,
        raw_output=raw if isinstance(raw, tuple) else None,
        llm_stream_call=True if get(data, "llmStreamCall") is True else None,
        usage=get(data, "usage"),
    )


def first_index(events: Sequence[Event], type_name: str, after: int = 0) -> int:
    return next(i for i, e in enumerate(events) if i >= after and e.type == type_name)


# ---------------------------------------------------------------- the D08 real overflow compaction


def test_DIA_4_DIA_7_real_overflow_compaction_is_reproduced_from_the_log() -> None:
    events = load(RECOVERY)
    start = first_index(events, "compaction/start")
    before = events[:start]
    summary, checkpoint = events[start + 1], events[start + 2]
    cid = get(summary.data, "compactionId")
    mid = get(checkpoint.data, "id")
    assert isinstance(cid, str) and isinstance(mid, str)
    calls: list[SummaryCall] = []

    def summarizer(call: SummaryCall) -> SummarizerOutput:
        calls.append(call)
        return replaying(summary)

    decision = recover_overflow(
        before,
        summarizer,
        failure_code="CONTEXT_WINDOW_EXCEEDED",
        prior_overflow_failures=0,
        dialect=Dialect.D08,
        config=CompactConfig(max_tokens=32),
        ids=lambda attempt: Ids(compaction_id=cid, message_id=mid),
    )
    # Region selection (retain 0 rounds head-ward past the open tool pair),
    # shadowedTokenCount 266, the replace and its provenance: all as logged.
    assert decision.error is None and decision.retry
    assert timeless(decision.events) == timeless(events[start : start + 4])
    assert get(decision.events[1].data, "shadowedSeqs") == (4,)
    assert get(decision.events[1].data, "shadowedTokenCount") == 266
    # DIA-17: the summarizer saw exactly the shadowed message, no prefix.
    assert [json.loads(js_stringify(m)) for m in calls[0].input.messages] == [json.loads(js_stringify(events[4].data))]
    # The retry streams again inside the same step (DIA-7): its request is the
    # post-compaction derivation, checkpoint first.
    retried = derive(events[: start + 4], Dialect.D08)
    assert not isinstance(retried, Rejected)
    assert retried[0] == checkpoint.data
    assert audit_compactions(events, Dialect.D08) == ()


def test_real_overflow_surface_tokens_shrink() -> None:
    events = load(RECOVERY)
    start = first_index(events, "compaction/start")
    before, after = measure(events[:start], Dialect.D08), measure(events[: start + 4], Dialect.D08)
    assert not isinstance(before, Rejected) and not isinstance(after, Rejected)
    assert after.surface_tokens < before.surface_tokens  # P-CMP-6


# ---------------------------------------------------------------- A55 ground truth


def groundtruth(name: str) -> tuple[list[Event], list[dict[str, object]]]:
    directory = GROUNDTRUTH / name
    requests = json.loads((directory / "requests.json").read_text(encoding="utf-8"))
    return load(directory / "session.jsonl"), requests


def compaction_requests(requests: list[dict[str, object]]) -> list[dict[str, object]]:
    return [r for r in requests if r.get("purpose") == "compaction"]


def instruction_of(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    text = messages[-1]["content"][0]["text"]
    assert isinstance(text, str)
    return text


def test_CMP_17_summary_requests_equal_ground_truth() -> None:
    for name in ("j1-pressure-compaction", "j3-overflow-compaction-retry"):
        events, requests = groundtruth(name)
        expected = compaction_requests(requests)
        rebuilt = summary_requests(events, Dialect.A55, instruction_of(expected[0]))
        assert len(rebuilt) == len(expected)
        for mine, real in zip(rebuilt, expected):
            # sessionId is the live session's id: the log cannot determine it.
            real_without_session = {k: v for k, v in real.items() if k != "sessionId"}
            assert js_stringify(mine) == js_stringify(freeze(real_without_session))


def test_CMP_17_a_summary_outside_a_bracket_asks_for_no_request() -> None:
    """CMP-16/17: one summarizer request per bracket, from the ``compact/summary`` that follows its
    ``compact/start``; a summary with no open bracket (before any start, or a second one) belongs to none."""
    events, requests = groundtruth("j1-pressure-compaction")
    instruction = instruction_of(compaction_requests(requests)[0])
    expected = summary_requests(events, Dialect.A55, instruction)
    summary = next(e for e in events if e.type == "compact/summary")
    assert isinstance(summary.data, JsonObject)
    stray = make_event("compact/summary", seq=len(events), time=summary.time,
                       data=JsonObject((k, "other" if k == "model" else v) for k, v in summary.data.items()))
    assert summary_requests([*events, stray], Dialect.A55, instruction) == expected
    lone = make_event("compact/summary", seq=0, time=0, data=summary.data)
    assert summary_requests([lone], Dialect.A55, instruction) == ()


def test_CMP_8_pressure_transactions_reproduce_j1() -> None:
    events, _ = groundtruth("j1-pressure-compaction")
    config = CompactConfig(threshold_ratio=0.5, retain_tokens=250, max_tokens=256, compaction_retries=1)
    starts = [i for i, e in enumerate(events) if e.type == "compact/start"]
    assert len(starts) == 2
    for start in starts:
        logged_summary = events[start + 1]
        run = compact_if_needed(
            events[:start],
            lambda call, logged=logged_summary: replaying(logged),
            trigger=Trigger.PRESSURE,
            config=config,
            context_window=2000,
        )
        assert not isinstance(run, Rejected) and run.error is None
        assert timeless(run.events) == timeless(events[start : start + 4])


def test_CMP_9_overflow_transaction_reproduces_j3() -> None:
    events, _ = groundtruth("j3-overflow-compaction-retry")
    start = first_index(events, "compact/start")
    config = CompactConfig(threshold_ratio=1, retain_tokens=30, max_tokens=64, compaction_retries=0)
    decision = recover_overflow(
        events[:start],
        lambda call: replaying(events[start + 1]),
        failure_code="CONTEXT_WINDOW_EXCEEDED",
        prior_overflow_failures=0,
        config=config,
    )
    assert decision.retry and decision.error is None
    assert timeless(decision.events) == timeless(events[start : start + 4])


def test_CMP_7_overflow_budget_exhausted_declines() -> None:
    events, _ = groundtruth("j3-overflow-compaction-retry")
    start = first_index(events, "compact/start")
    decision = recover_overflow(
        events[:start],
        lambda call: replaying(events[start + 1]),
        failure_code="CONTEXT_WINDOW_EXCEEDED",
        prior_overflow_failures=1,
    )
    assert decision.events == () and not decision.retry


def test_PRN_4_prune_reproduces_j2() -> None:
    events, _ = groundtruth("j2-tool-result-prune")
    replaced = next(i for i, e in enumerate(events) if e.type == "tool/result" and isinstance(e.surface_op, JsonObject))
    config = PruneConfig(threshold_chars=200, head_chars=60, tail_chars=30)
    appended = prune_session(events[:replaced], config)
    assert not isinstance(appended, Rejected)
    assert timeless(appended) == timeless(events[replaced : replaced + 1])
    # The pressure run that pruned stops there: pruning alone cleared pressure.
    run = compact_if_needed(
        events[:replaced],
        lambda call: Rejected(rule="CMP-18", reason="not expected"),
        config=CompactConfig(threshold_ratio=0.25, retain_tokens=100),
        context_window=800,
        prune=config,
    )
    assert not isinstance(run, Rejected) and run.error is None
    assert timeless(run.events) == timeless(events[replaced : replaced + 1])


def test_MTR_10_post_step_pressure_matches_j1_record() -> None:
    """scenario.md records the real meter's total at every post-step."""
    events, _ = groundtruth("j1-pressure-compaction")
    totals: list[int] = []
    cut: int | None = None
    for index, event in enumerate(events):
        if event.type == "compact/start" and cut is None:
            cut = index
        if event.type == "step/end":
            m = measure(events[: cut if cut is not None else index])
            assert not isinstance(m, Rejected)
            totals.append(m.total_tokens)
            cut = None
    assert totals == [336, 571, 806, 1041, 908, 1143, 685, 711]


def test_FMT_7_audit_accepts_ground_truth_logs() -> None:
    for name in ("j1-pressure-compaction", "j2-tool-result-prune", "j3-overflow-compaction-retry"):
        events, _ = groundtruth(name)
        assert audit_compactions(events, Dialect.A55) == ()


def test_FMT_7_audit_catches_a_wrong_token_count() -> None:
    events, _ = groundtruth("j1-pressure-compaction")
    index = first_index(events, "compact/summary")
    summary = events[index]
    data = summary.data
    assert isinstance(data, JsonObject)
    forged: Json = JsonObject((k, 999 if k == "shadowedTokenCount" else v) for k, v in data.items())
    events[index] = _with_data(summary, forged)
    findings = audit_compactions(events, Dialect.A55)
    assert [f.rule for f in findings] == ["CMP-15"]


def _with_data(event: Event, data: Json) -> Event:
    return make_event(
        event.type, seq=event.seq, time=event.time, data=data,
        source_event_seqs=event.source_event_seqs, surface_op=event.surface_op,
    )


def test_FMT_7_audit_accepts_planted_checkpoint_outside_bracket() -> None:
    """A real D08 snapshot fixture plants a checkpoint-sourced replace with no
    bracket; it is not a compaction the harness wrote, so no finding."""
    path = REAL / "611615650f/examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl"
    assert audit_compactions(load(path), Dialect.D08) == ()
