"""Decision outcomes of crash repair, D08's shapes and the time note no other test took (issue 43 item 1):
LOG-14's closers as a log holds them, DIA-10's message identity, DIA-7's retry message and Q-17's time order.

Each test builds the closers or the message whose decision is at stake; the expected closers are LOG-14's
(computed from the log before them: a result per pending call, the step's end, ``turn/end {interrupted}``, at
the last event's time).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sessionspec.model.d08_shapes import RetryAttempts, assistant_message_flaws, check_retry_message, tool_result_flaws
from sessionspec.model.diagnostics import earlier_than_previous
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import (
    A55_SHAPES,
    D08_SHAPES,
    CloserWatch,
    RepairScanState,
    check_closers,
    closers_of,
    repair_closers,
    scan_event,
    scan_for_repair,
    watch_event,
)
from tests.support import Log


def _open_turn_with_started_call() -> Log:
    log = Log()
    log.add("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {}}})
    log.add("step/start", {"turn": 1, "step": 1})
    log.assistant(1, 1, calls=("c1",))
    log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "t", "arguments": "{}"})
    return log


def _scan(events: list[Event]) -> RepairScanState:
    scan = RepairScanState()
    for event in events:
        scan_event(scan, event, A55_SHAPES)
    return scan


# ---------------------------------------------------------------- LOG-14: the closers a log holds


def test_LOG_14_closers_of_a_whole_log_scan_are_the_repairs_closers() -> None:
    events = _open_turn_with_started_call().events
    closers = closers_of(scan_for_repair(events), len(events), events[-1].time)
    assert closers == repair_closers(events)
    assert [e.type for e in closers] == ["tool/result", "step/end", "turn/end"]
    assert closers[0].source_event_seqs == (3,)


def test_LOG_14_a_synthetic_result_must_be_an_append() -> None:
    events = _open_turn_with_started_call().events
    closers = list(repair_closers(events))
    assert check_closers(_scan(events), events[-1].time, closers, A55_SHAPES) == []
    closers[0] = replace(closers[0], surface_op=freeze({"op": "replace", "start": 2, "end": 2}))
    found = check_closers(_scan(events), events[-1].time, closers, A55_SHAPES)
    assert [(r.rule, r.seq) for r in found] == [("LOG-14", 4)] and "provenance is not [callSeq]" in found[0].reason


def test_LOG_14_a_step_end_closer_differing_from_the_computed_one_is_refused() -> None:
    events = _open_turn_with_started_call().events
    closers = list(repair_closers(events))
    closers[1] = replace(closers[1], data=freeze({"turn": 1, "step": 2}))
    found = check_closers(_scan(events), events[-1].time, closers, A55_SHAPES)
    assert [(r.rule, r.seq) for r in found] == [("LOG-14", 5)] and "crash-repair step/end differs" in found[0].reason


def test_LOG_14_closers_of_other_types_are_one_finding_at_the_interrupted_turn_end() -> None:
    """LOG-14: the closers are "the same types in the same order" as the log before them gives; when they are not,
    the run as a whole is refused once, at its last event (the ``turn/end {interrupted}`` that ends it), however
    long the run."""
    events = _open_turn_with_started_call().events
    result, step_end, turn_end = repair_closers(events)
    swapped = [replace(step_end, seq=4), replace(result, seq=5), turn_end]
    found = check_closers(_scan(events), events[-1].time, swapped, A55_SHAPES)
    assert [(r.rule, r.seq) for r in found] == [("LOG-14", 6)]
    assert found[0].reason == ("crash-repair closers are step/end, tool/result, turn/end; "
                               "the log before them gives tool/result, step/end, turn/end")
    alone = [replace(turn_end, seq=4)]  # the result and the step's end are missing
    found = check_closers(_scan(events), events[-1].time, alone, A55_SHAPES)
    assert [(r.rule, r.seq) for r in found] == [("LOG-14", 4)]
    assert found[0].reason == "crash-repair closers are turn/end; the log before them gives tool/result, step/end, turn/end"


def test_LOG_14_each_closer_at_another_time_than_the_last_event_is_refused() -> None:
    """LOG-14: the closers are written at the time of the last event before them; each one that is not is a finding
    at its own seq (and one at that time is none)."""
    events = _open_turn_with_started_call().events
    result, step_end, turn_end = repair_closers(events)
    last = events[-1].time
    late = [result, replace(step_end, time=last + 1), turn_end]
    found = check_closers(_scan(events), last, late, A55_SHAPES)
    assert [(r.rule, r.seq, r.reason) for r in found] == [
        ("LOG-14", 5, f"crash-repair closer time {last + 1} is not the last event's time {last}")]


def test_LOG_14_D08_a_synthetic_result_cites_its_started_call() -> None:
    """D08's repair result (a message, DIA-10) is compared by its code and its provenance: [callSeq] when started."""
    events = _open_turn_with_started_call().events
    closer = repair_closers(events)[0]
    logged = make_event("tool/result", seq=closer.seq, time=closer.time, data=freeze({"error": {"code": "TOOL_OUTCOME_UNKNOWN"}}),
                        surface_op="append", source_event_seqs=(3,))
    assert D08_SHAPES.result_differs(logged, closer) is None
    uncited = replace(logged, source_event_seqs=freeze([]))
    assert D08_SHAPES.result_differs(uncited, closer) == "synthetic tool/result is not the TOOL_OUTCOME_UNKNOWN closer of its call"


def test_LOG_14_closers_at_the_start_of_a_log_close_no_turn() -> None:
    """With no event before (``previous`` None) the scan has no turn: the computed turn/end closes turn null, and
    there is no last time to hold the closer to."""
    watch = CloserWatch(shapes=A55_SHAPES)
    end = make_event("turn/end", seq=0, time=50, data=freeze({"turn": 1, "reason": {"kind": "interrupted"}}))
    found = watch_event(watch, end, None)
    assert [r.rule for r in found] == ["LOG-14"] and "differs from the closer LOG-14 computes" in found[0].reason
    assert check_closers(RepairScanState(), None, [replace(end, data=freeze({"turn": None, "reason": {"kind": "interrupted"}}))], A55_SHAPES) == []


# ---------------------------------------------------------------- DIA-10: D08 message identity


def _assistant(message: dict[str, Any]) -> Any:
    return freeze({"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant", **message}})


def test_DIA_10_an_assistant_message_has_content_and_a_model_source() -> None:
    source = {"kind": "model", "provider": "p", "model": "m"}
    assert assistant_message_flaws(_assistant({"content": [], "source": source})) == []
    assert assistant_message_flaws(_assistant({"content": "x", "source": source})) == ["no message.content list"]
    assert assistant_message_flaws(_assistant({"content": [], "source": {**source, "model": ""}})) == [
        'message.source is not {kind:"model", provider, model}']


def _result(content: Any, source: dict[str, Any]) -> Any:
    return freeze({"turn": 1, "step": 1, "message": {"id": "r", "role": "user", "content": content, "source": source}})


def test_DIA_10_a_tool_result_is_a_tool_result_block_from_a_tool() -> None:
    block, source = [{"type": "tool-result", "toolCallId": "c"}], {"kind": "tool", "callId": "c"}
    assert tool_result_flaws(_result(block, source)) == []
    not_block = "message.content is not [tool-result block]"
    assert tool_result_flaws(_result("x", source)) == [not_block]
    assert tool_result_flaws(_result([{"type": "text", "text": "t"}], source)) == [not_block]
    assert tool_result_flaws(_result(block, {"kind": "model", "callId": "c"})) == ['message.source is not {kind:"tool", callId}']


# ---------------------------------------------------------------- DIA-7: the retry's message


def test_DIA_7_only_integer_cited_seqs_of_a_failed_attempt_are_stale() -> None:
    attempts = RetryAttempts(failed={3, 4})
    message = make_event("assistant/message", seq=9, time=0, data=freeze({"turn": 1}), source_event_seqs=freeze(["x", 4, 7]), surface_op="append")
    found = check_retry_message(message, attempts)
    assert [(r.rule, r.reason) for r in found] == [("DIA-7", "assistant/message cites chunks [4] of a failed attempt (it cites only the retry's chunks)")]


# ---------------------------------------------------------------- time order is shown, never refused


def test_Q_17_only_an_earlier_time_is_shown() -> None:
    event = make_event("step/start", seq=2, time=100, data=freeze({"turn": 1, "step": 1}))
    assert earlier_than_previous(event, None) is None
    assert earlier_than_previous(event, 100) is None
    shown = earlier_than_previous(event, 101)
    assert isinstance(shown, Rejected) and shown.rule == "Q-17"
