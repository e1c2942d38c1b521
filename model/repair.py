"""Crash repair (LOG-14): the closers appended to a log whose last turn is open.

A pure function of the log.  The scan tracks the open turn, the open step and
the calls still pending in that step; the closers answer every pending call
with a synthetic error result, close the step, and end the turn
``{kind:"interrupted"}``.  Texts are the logged constants of Appendix A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, obj
from sessionspec.model.log import Event, make_event
from sessionspec.model.rules import implements

REPAIR_UNKNOWN: Final = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. "
    "Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may "
    "have side effects, first verify external state or ask the user. Do not retry blindly."
)
REPAIR_NOT_STARTED: Final = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCall:
    """A call registered by an ``assistant/message`` tool-call block.

    ``call_seq`` is the seq of its ``tool/call`` once the call was started.
    """

    call_id: Json
    step: Json
    call_seq: int | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RepairScan:
    """The LOG-14 scan state after a whole log."""

    turn: Json | None = None
    step: Json | None = None
    open_turn: bool = False
    open_step: bool = False
    # Insertion order of the call ids is the closers' order.
    pending: tuple[PendingCall, ...] = ()


def _val(v: Json | Absent) -> Json:
    """A read field as a JSON value (a missing field is written as null)."""
    return None if v is ABSENT else v


def _tool_call_ids(content: Json | Absent) -> list[Json]:
    if not isinstance(content, tuple):
        return []
    return [
        _val(get(block, "id"))
        for block in content
        if isinstance(block, JsonObject) and get(block, "type") == "tool-call"
    ]


def _key(call_id: Json | Absent) -> str:
    # Call ids are JSON values; JS Map keys compare strings by value (and
    # other values by identity, which real logs never need).
    return js_stringify(_val(call_id))


def scan_for_repair(events: Sequence[Event]) -> RepairScan:
    """LOG-14 scan: ``turn/start`` opens the turn and clears step and pending
    calls; ``turn/end`` clears everything; ``step/start`` sets the open step;
    ``step/end`` clears the open step and the pending calls; each ``tool-call``
    block of an ``assistant/message`` registers a pending call with the
    message's step (keyed by call id, insertion order); ``tool/call`` records
    its seq on an existing entry; ``tool/result`` deletes its entry."""
    turn: Json | None = None
    step: Json | None = None
    open_turn = False
    open_step = False
    pending: dict[str, PendingCall] = {}
    for event in events:
        data = event.data
        match event.type:
            case "turn/start":
                turn, open_turn = _val(get(data, "turn")), True
                step, open_step = None, False
                pending.clear()
            case "turn/end":
                turn, step, open_turn, open_step = None, None, False, False
                pending.clear()
            case "step/start":
                step, open_step = _val(get(data, "step")), True
            case "step/end":
                step, open_step = None, False
                pending.clear()
            case "assistant/message":
                message_step = _val(get(data, "step"))
                for call_id in _tool_call_ids(get(data, "content")):
                    # Map.set on an existing key keeps its position, resets the value.
                    pending[_key(call_id)] = PendingCall(call_id=call_id, step=message_step)
            case "tool/call":
                key = _key(get(data, "callId"))
                entry = pending.get(key)
                if entry is not None:
                    pending[key] = PendingCall(call_id=entry.call_id, step=entry.step, call_seq=event.seq)
            case "tool/result":
                pending.pop(_key(get(data, "callId")), None)
            case _:
                pass
    return RepairScan(turn=turn, step=step, open_turn=open_turn, open_step=open_step, pending=tuple(pending.values()))


def _synthetic_result(turn: Json, call: PendingCall, seq: int, time: int) -> Event:
    started = call.call_seq is not None
    text = REPAIR_UNKNOWN if started else REPAIR_NOT_STARTED
    error = (
        obj((("name", "ToolOutcomeUnknownError"), ("code", "TOOL_OUTCOME_UNKNOWN")))
        if started
        else obj((("name", "ToolNotStartedError"), ("code", "TOOL_NOT_STARTED")))
    )
    data = obj(
        (
            ("turn", turn),
            ("step", call.step),
            ("callId", call.call_id),
            ("content", (obj((("type", "text"), ("text", text))),)),
            ("isError", True),
            ("error", error),
        )
    )
    if call.call_seq is None:
        return make_event("tool/result", seq=seq, time=time, data=data, surface_op="append")
    # LOG-3/LOG-14: the closers write surfaceOp before sourceEventSeqs.
    return make_event(
        "tool/result", seq=seq, time=time, data=data, surface_op="append", source_event_seqs=(call.call_seq,), op_first=True
    )


@implements("LOG-14")
def repair_closers(events: Sequence[Event]) -> tuple[Event, ...]:
    """LOG-14: "Crash repair MUST compute the closers as a pure function of the log."

    LOG-14: "No open turn, or an empty log, gives ``[]``.  Otherwise the
    closers take ``seq = last.seq + 1, …`` and ``time = last.time``, in this
    order: 1. for each pending call, in insertion order, a ``tool/result
    {turn, step, callId, content:[{type:"text", text}], isError:true, error}``
    with ``surfaceOp:"append"`` [and ``sourceEventSeqs:[callSeq]`` only when the
    call was started]; 2. ``step/end {turn, step}``, if a step is open; 3.
    ``turn/end {turn, reason:{kind:"interrupted"}}``."""
    if not events:
        return ()
    scan = scan_for_repair(events)
    if not scan.open_turn:
        return ()
    last = events[-1]
    seq, time = last.seq + 1, last.time
    closers: list[Event] = []
    for call in scan.pending:
        closers.append(_synthetic_result(scan.turn, call, seq, time))
        seq += 1
    if scan.open_step:
        data = obj((("turn", scan.turn), ("step", scan.step)))
        closers.append(make_event("step/end", seq=seq, time=time, data=data))
        seq += 1
    reason = obj((("kind", "interrupted"),))
    closers.append(make_event("turn/end", seq=seq, time=time, data=obj((("turn", scan.turn), ("reason", reason)))))
    return tuple(closers)
