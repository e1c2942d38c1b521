"""Crash-repair closers (LOG-14, Q-25) of model.repair."""

from __future__ import annotations

from sessionspec.model.codec import serialize_event
from sessionspec.model.jsonval import get, obj
from sessionspec.model.log import Event
from sessionspec.model.repair import REPAIR_NOT_STARTED, REPAIR_UNKNOWN, repair_closers, scan_for_repair
from sessionspec.model.seed import validate_seed
from sessionspec.spec.log_builder import LogBuilder
from tests.support import timed_event


def _open_step_with_calls() -> LogBuilder:
    b = LogBuilder()
    b.turn_start()
    b.user_message("go")
    b.step_start()
    calls = tuple(obj((("type", "tool-call"), ("id", i), ("name", "read"), ("arguments", "{}"))) for i in ("a", "b", "c"))
    b.assistant_message(calls, [])
    b.tool_call("a", "read")  # started, then answered
    b.tool_result("a", 4, "ok")
    b.tool_call("c", "read")  # started, unanswered
    return b


def test_LOG_14_empty_log_and_closed_turns_need_no_closers() -> None:
    assert repair_closers([]) == ()
    b = LogBuilder()
    b.turn_start()
    b.turn_end()
    assert repair_closers(b.events) == ()


def test_LOG_14_open_turn_without_step_gets_only_turn_end() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("x")
    b.time = 77
    b.plugin_event("plugin/event", None)
    (closer,) = repair_closers(b.events)
    assert serialize_event(closer) == '{"type":"turn/end","seq":3,"time":77,"data":{"turn":1,"reason":{"kind":"interrupted"}}}'


def test_LOG_14_answers_pending_calls_in_insertion_order_then_closes() -> None:
    b = _open_step_with_calls()
    last: Event = b.events[-1]
    closers = repair_closers(b.events)
    assert [e.type for e in closers] == ["tool/result", "tool/result", "step/end", "turn/end"]
    assert [e.seq for e in closers] == [last.seq + 1 + k for k in range(4)]
    assert all(e.time == last.time for e in closers)
    not_started, started = closers[0], closers[1]
    assert serialize_event(not_started) == (
        '{"type":"tool/result","seq":7,"time":TIME,"data":{"turn":1,"step":1,"callId":"b","content":[{"type":"text","text":"TEXT"}],'
        '"isError":true,"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"}},"surfaceOp":"append"}'
    ).replace("TIME", str(last.time)).replace("TEXT", REPAIR_NOT_STARTED)
    assert serialize_event(started) == (
        '{"type":"tool/result","seq":8,"time":TIME,"data":{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"TEXT"}],'
        '"isError":true,"error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}},"surfaceOp":"append","sourceEventSeqs":[6]}'
    ).replace("TIME", str(last.time)).replace("TEXT", REPAIR_UNKNOWN)
    assert get(closers[2].data, "step") == 1
    assert validate_seed(tuple(b.events) + closers) is None


def test_LOG_14_appendix_A_texts_are_exact() -> None:
    assert REPAIR_NOT_STARTED == "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
    assert REPAIR_UNKNOWN.startswith("The tool call was interrupted after it was recorded, but no result was durably recorded.")
    assert REPAIR_UNKNOWN.endswith("if it may have side effects, first verify external state or ask the user. Do not retry blindly.")


def test_Q_25_repair_forgets_calls_of_closed_steps() -> None:
    b = LogBuilder()
    b.turn_start()
    b.step_start()
    call = obj((("type", "tool-call"), ("id", "old"), ("name", "read"), ("arguments", "{}")))
    b.assistant_message((call,), [])
    b.step_end()
    b.step_start()
    b.tool_call("orphan", "read")  # a tool/call without an assistant entry is ignored
    closers = repair_closers(b.events)
    assert [e.type for e in closers] == ["step/end", "turn/end"]
    assert get(closers[0].data, "step") == 2


def test_LOG_14_turn_start_clears_previous_pending_calls() -> None:
    b = _open_step_with_calls()
    b.turn_start()  # (a broken log) a new turn resets the scan
    closers = repair_closers(b.events)
    assert [e.type for e in closers] == ["turn/end"]
    assert get(closers[0].data, "turn") == 2


# ---------------------------------------------------------------- LOG-14 closers of an open step, the scan of a closed log


def test_LOG_14_closers_close_the_open_step_with_its_turn_and_step() -> None:
    events = [timed_event("turn/start", 0, {"turn": 3}), timed_event("step/start", 1, {"turn": 3, "step": 2})]
    closers = repair_closers(events)
    assert [serialize_event(e) for e in closers] == [
        '{"type":"step/end","seq":2,"time":101,"data":{"turn":3,"step":2}}',
        '{"type":"turn/end","seq":3,"time":101,"data":{"turn":3,"reason":{"kind":"interrupted"}}}',
    ]


def test_LOG_14_scan_of_an_empty_or_closed_log_has_no_open_turn() -> None:
    assert scan_for_repair([]).open_turn is False
    closed = [timed_event("turn/start", 0, {"turn": 1}), timed_event("turn/end", 1, {"turn": 1, "reason": {"kind": "completed"}})]
    scan = scan_for_repair(closed)
    assert scan.open_turn is False and scan.open_step is False
    assert repair_closers(closed) == ()
