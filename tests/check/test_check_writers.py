"""Issue 25: a writer rule binds only the events that writer wrote (rule book FMT-7, "Writers").

Each class is built here from a real or ground-truth log, its expectation reasoned from the book
and the harness source: logs the harness or its tooling writes stay valid by construction, and the
writer-impossible classes are caught with the rule that forbids them.

Ground truth ``b-prefix-idioms-tool-roundtrip`` (``B``): turn 1 = seqs 0..22 (step 1 = 2..21, its
chunks 4..19 with the usage chunk 18, message 20), turn 2 = 23..55 (message 35, tool/call 36,
tool/result 37, step 2 = 39..54, message 53).  ``j2-tool-result-prune``: turn 1 step 1 = 2..14
(message 10, call 11, result 12, its prune replacement 13), step 2 = 15..40, turn/end 41.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sessionspec.check.checker import Verdict, check_log
from sessionspec.check.logfile import read_path
from sessionspec.model.log import Dialect
from tests.support import A55_SNAPSHOTS, D08_SNAPSHOTS, Row, check, gt, index, load, permute, renumber_insert, rules


def B() -> list[Row]:
    return gt("b-prefix-idioms-tool-roundtrip")


def _without(rows: list[Row], drop: set[int]) -> list[Row]:
    """``rows`` without the events at the seqs ``drop``, renumbered (references follow)."""
    events = [r for r in rows if r.get("type") != "session"]
    return permute(rows, [i for i, r in enumerate(events) if r["seq"] not in drop])


def _valid(rows: list[Row]) -> str:
    report = check(rows)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]
    return " ".join(report.notes)


def _finding_rules(rows: list[Row]) -> set[str]:
    report = check(rows)
    assert report.verdict is Verdict.INVALID, report.notes
    return rules(report)


# --------------------------------------------------------------------------- priority 1: writers that are not the loop


def test_api_built_step_with_no_chunks_and_no_source_event_seqs_is_valid() -> None:
    """A step appended through the session API: its message has no chunk and no sourceEventSeqs,
    and its usage comes from no usage chunk.  The loop always records sourceEventSeqs (LOOP-11:
    "explicitly [] for an empty stream"), so the loop did not write it and LOOP-11 does not bind it."""
    rows = _without(B(), set(range(4, 20)))
    message = rows[index(rows, "assistant/message")]
    del message["sourceEventSeqs"]
    assert "usage" in message["data"]
    notes = _valid(rows)
    assert "session API or tooling" in notes and "LOOP-10..LOOP-12" in notes
    writers = check(rows).to_json()["writers"]
    assert [(w["turn"], w["kind"], w["apiSteps"]) for w in writers] == [(1, "session-api", [2]), (2, "a55-loop", [])]  # type: ignore[union-attr]


def test_a_loop_step_missing_its_source_event_seqs_is_still_loop_11() -> None:
    """The same message in a step that streamed (a chunk remains) was the loop's: LOOP-11 binds it."""
    rows = _without(B(), set(range(5, 20)))
    del rows[index(rows, "assistant/message")]["sourceEventSeqs"]
    assert "LOOP-11" in _finding_rules(rows)


def test_semantic_checkpoint_snapshot_without_chunks_is_valid() -> None:
    """Tooling that keeps the durable events and drops the chunks (and the citations of them)
    leaves steps no loop streamed: every such step is attributed to tooling, the log stays valid.
    (Kept citations could not load: renumbered they cite the message itself or later events, SURF-4;
    not renumbered, the seqs have gaps, LOG-1.)"""
    rows = B()
    rows = _without(rows, {r["seq"] for r in rows if r["type"] == "assistant/chunk"})
    for row in rows:
        if row["type"] == "assistant/message":
            del row["sourceEventSeqs"]
    assert "session API or tooling" in _valid(rows)


def _d08_turn_end(reason: dict[str, Any]) -> list[Row]:
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    rows[index(rows, "turn/end")]["data"]["reason"] = reason
    return rows


@pytest.mark.parametrize("error", [
    {"message": "boom", "code": "UNKNOWN"},
    {"message": "rate limited", "code": "RATE_LIMITED", "status": 429, "providerRetryAfterMs": 1000, "requestId": "r-1"},
])
def test_d08_error_turn_end_with_an_error_object_is_valid(error: dict[str, Any]) -> None:
    """The D08 loop ends a failed turn ``{kind:"error", error: LlmFailure}`` (agent-loop/src/agent.ts
    lines 303-313 at 611615650f; LlmFailure {message, code, status?, providerRetryAfterMs?, requestId?},
    llm/src/types.ts lines 40-51): not LOG-11's A55 forms."""
    _valid(_d08_turn_end({"kind": "error", "error": error}))


@pytest.mark.parametrize("reason", [
    {"kind": "error", "error": {"message": "boom"}},
    {"kind": "error", "error": {"message": "boom", "code": "X", "extra": 1}},
    {"kind": "error", "error": {"message": "boom", "code": "X"}, "step": 2},
])
def test_d08_error_turn_end_that_is_no_llm_failure_is_log_11(reason: dict[str, Any]) -> None:
    assert _finding_rules(_d08_turn_end(reason)) == {"LOG-11"}


def test_d08_blocked_turn_is_valid() -> None:
    """D08 ends a rejected prompt ``{kind:"blocked"}`` with no step (agent.ts lines 266-268; the
    TurnEndReasonMap, session/src/types.ts line 160)."""
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    time = rows[-1]["time"]
    rows += [{"type": "turn/start", "seq": rows[-1]["seq"] + 1, "time": time, "data": {"turn": 2}},
             {"type": "turn/end", "seq": rows[-1]["seq"] + 2, "time": time, "data": {"turn": 2, "reason": {"kind": "blocked"}}}]
    _valid(rows)


def test_out_of_band_and_seeded_turns_are_named_in_the_writers_note() -> None:
    """LOG-16: turn/start, one log-only event, turn/end completed is the out-of-band append."""
    rows = B()
    time = rows[-1]["time"]
    rows += [
        {"type": "turn/start", "seq": 56, "time": time, "data": {"turn": 3, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
        {"type": "session/title", "seq": 57, "time": time, "data": {"title": "t", "messageSeqs": [1], "source": {"kind": "fallback"}}},
        {"type": "turn/end", "seq": 58, "time": time, "data": {"turn": 3, "reason": {"kind": "completed"}}},
    ]
    assert "out-of-band append (LOG-16): turn 3" in _valid(rows)


# --------------------------------------------------------------------------- priority 2: the misses


def test_two_assistant_messages_in_one_step_is_loop_11() -> None:
    """FMT-8: "in A55 each step has at most one loop attempt"; LOOP-11: a successful stream appends
    one assistant/message citing the step's chunks.  A copy of message 20 right after it."""
    rows = B()
    copied = copy.deepcopy(rows[20])
    assert "LOOP-11" in _finding_rules(renumber_insert(rows, 21, copied))


def test_two_prompt_blocked_in_one_turn_is_loop_3() -> None:
    """LOOP-3: "block: append prompt/blocked and end the turn with {kind:"rejected", reason}"."""
    rows = gt("l-blocked-prompt-then-turn")
    assert "LOOP-3" in _finding_rules(renumber_insert(rows, 2, copy.deepcopy(rows[1])))


@pytest.mark.parametrize("after", [14, 40], ids=["after-a-successful-step-end", "after-the-last-step-end"])
def test_prune_replacement_outside_compact_if_needed_windows_is_prn_6(after: int) -> None:
    """PRN-6: a prune runs only from compactIfNeeded: A55 pressure in post-step, before step/end
    (CMP-6), or overflow after a *failed* step's step/end (CMP-7).  Step 1 of j2 succeeded (its
    message at seq 10), so after its step/end (or after the turn's last step/end) no prune runs."""
    rows = gt("j2-tool-result-prune")
    assert rows[13]["surfaceOp"] == {"op": "replace", "start": 12, "end": 12}
    order = [i for i in range(len(rows)) if i != 13]
    order.insert(order.index(after) + 1, 13)
    assert "PRN-6" in _finding_rules(permute(rows, order))


def test_prune_in_post_step_stays_valid() -> None:
    _valid(gt("j2-tool-result-prune"))


def test_legacy_user_message_inside_a_d08_turn_is_dia_13() -> None:
    """DIA-13 migrates legacy (A55-written) events on load; the D08 loop writes identity-shaped
    messages only (DIA-10), so one legacy user/message in a turn it wrote has no writer."""
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    message = rows[index(rows, "user/message")]
    del message["data"]["role"], message["data"]["id"]
    assert _finding_rules(rows) == {"DIA-13"}


def test_d08_shaped_user_message_in_an_a55_log_is_log_12() -> None:
    """LOG-12: A55 prompt data is {content, source, envelope?, meta?}; a D08 identity-shaped one
    inside an A55 turn is no writer's (the file's markers are mixed, the finding holds in both)."""
    rows = B()
    rows[1]["data"].update(role="user", id="m-1")
    assert "LOG-12" in _finding_rules(rows)


def test_d08_error_turn_end_in_an_a55_log_is_log_11() -> None:
    rows = B()
    rows[22]["data"]["reason"] = {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}}
    assert _finding_rules(rows) == {"LOG-11"}


# --------------------------------------------------------------------------- found by the structural sweep


def _d08_cancel() -> list[Row]:
    """D08 cancel: splice 2, step/start 3, entering messages 4-5, header 7, chunks 9-10 (text
    "partial"), interrupted message 11, step/end 12, turn/end aborted 13 (after the header line)."""
    return load(D08_SNAPSHOTS / "cancel" / "session.jsonl")


def test_d08_entering_message_before_step_start_is_dia_12() -> None:
    """DIA-12: "turn/start -> inbox claim -> ... -> step/start -> the entering user/messages"."""
    rows = _d08_cancel()
    order = list(range(14))
    order[3], order[4] = order[4], order[3]
    assert "DIA-12" in _finding_rules(permute(rows, order))


def test_d08_header_inside_a_streaming_attempt_is_fmt_9() -> None:
    """DIA-12: the header (if changed) comes before dispatch; a retry after a finish may write
    another (DIA-7), a header between an attempt's chunks no writer writes."""
    rows = _d08_cancel()
    order = [i for i in range(14) if i != 7]
    order.insert(order.index(9) + 1, 7)
    assert "FMT-9" in _finding_rules(permute(rows, order))


def test_d08_cancelled_visible_stream_without_its_message_is_dia_15() -> None:
    """DIA-15: "A cancelled stream with visible text/reasoning MUST append assistant/message {..., interrupted: true}"."""
    rows = _d08_cancel()
    assert rows[12]["seq"] == 11 and rows[12]["data"]["interrupted"] is True
    assert "DIA-15" in _finding_rules(_without(rows, {11}))


def test_a55_cancelled_stream_without_a_message_read_as_d08_stays_valid() -> None:
    """The A55 loop records no message on a cancel (LOOP-10); its turn, read as D08, is a legacy
    turn (DIA-13), which DIA-15 does not bind."""
    report = check_log(read_path(str(A55_SNAPSHOTS / "cancel" / "session.jsonl")), forced=Dialect.D08)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


def test_the_writers_note_names_seed_and_crash_repair() -> None:
    """FMT-7 Writers: a fork child's seed (LOG-8: judged where it was written) and a turn the
    crash repair closed (LOG-14) are named in the report."""
    from sessionspec.model.repair import repair_closers
    from tests.support import GROUNDTRUTH, events_to_rows, rows_to_events
    child = check_log(read_path(str(GROUNDTRUTH / "k-fork-seeded-child" / "session.jsonl")))
    assert child.verdict is Verdict.VALID and any(n.startswith("writers (FMT-7): seed (copied; judged where it was written): turn 1;") for n in child.notes)
    rows = B()[:37]
    rows += events_to_rows(repair_closers(rows_to_events(rows)))
    assert "A55 loop, closed by crash repair (LOG-14): turn 2" in _valid(rows)


def test_a_chunkless_step_citing_an_empty_stream_is_the_loops() -> None:
    """LOOP-11: an empty stream is cited as []; its message is the loop's, so a usage not taken from
    a usage chunk is LOOP-11."""
    rows = _without(B(), set(range(4, 20)))
    rows[index(rows, "assistant/message")]["sourceEventSeqs"] = []
    assert "LOOP-11" in _finding_rules(rows)


def test_d08_request_context_inside_a_streaming_attempt_is_dia_12() -> None:
    """DIA-12: "header / request/context if changed -> dispatch"; the cancel log's request/context
    (seq 8) moved after the attempt's first chunk (seq 9)."""
    rows = _d08_cancel()
    order = [i for i in range(14) if i != 8]
    order.insert(order.index(9) + 1, 8)
    assert "DIA-12" in _finding_rules(permute(rows, order))
