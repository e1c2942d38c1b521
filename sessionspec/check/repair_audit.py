"""Crash-repair closers are exactly what LOG-14 computes (one fold).

The LOG-14 scan state (open turn and step, pending calls in insertion order
with the seq of their ``tool/call``) is advanced event by event.  A run of
events that could be closers (synthetic tool results, ``step/end``) keeps a
copy of the state from before the run; when the run ends in ``turn/end
{interrupted}`` -- written only by the repair -- the run must equal the
closers computed from that copy.  Memory: the pending calls of the open step.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import CHUNK, WalkFold
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify, json_eq, obj
from sessionspec.model.log import Dialect, Event
from sessionspec.model.provenance import call_key
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import REPAIR_NOT_STARTED, REPAIR_UNKNOWN

SYNTHETIC_CODES: Final = frozenset({"TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"})


@dataclass(slots=True)
class _Pending:
    call_id: Json
    step: Json
    call_seq: int | None = None


@dataclass(slots=True)
class _Scan:
    turn: Json = None
    step: Json = None
    open_step: bool = False
    pending: dict[str | tuple[str], _Pending] = field(default_factory=dict)

    def copy(self) -> _Scan:
        return _Scan(self.turn, self.step, self.open_step, {k: _Pending(p.call_id, p.step, p.call_seq) for k, p in self.pending.items()})


def _val(v: Json | Absent) -> Json:
    return None if v is ABSENT else v


def _call_id(event: Event, dialect: Dialect) -> Json:
    if event.type == "tool/result" and dialect is D08:
        return _val(get(get(get(event.data, "message"), "source"), "callId"))
    return _val(get(event.data, "callId"))


def _advance(scan: _Scan, event: Event, dialect: Dialect) -> None:
    """LOG-14's scan, one event."""
    data = event.data
    match event.type:
        case "turn/start":
            scan.turn, scan.step, scan.open_step = _val(get(data, "turn")), None, False
            scan.pending.clear()
        case "turn/end":
            scan.turn, scan.step, scan.open_step = None, None, False
            scan.pending.clear()
        case "step/start":
            scan.step, scan.open_step = _val(get(data, "step")), True
        case "step/end":
            scan.step, scan.open_step = None, False
            scan.pending.clear()
        case "assistant/message":
            content = get(data, "content") if dialect is A55 else get(get(data, "message"), "content")
            for block in content if isinstance(content, tuple) else ():
                if get(block, "type") == "tool-call":
                    call_id = _val(get(block, "id"))
                    # Map.set on an existing key keeps its position.
                    scan.pending[call_key(call_id)] = _Pending(call_id, _val(get(data, "step")))
        case "tool/call":
            entry = scan.pending.get(call_key(_call_id(event, dialect)))
            if entry is not None:
                entry.call_seq = event.seq
        case "tool/result":
            scan.pending.pop(call_key(_call_id(event, dialect)), None)
        case _:
            pass


def _expected_result(turn: Json, call: _Pending) -> tuple[JsonObject, Json | Absent]:
    started = call.call_seq is not None
    error = obj((("name", "ToolOutcomeUnknownError"), ("code", "TOOL_OUTCOME_UNKNOWN"))) if started else obj(
        (("name", "ToolNotStartedError"), ("code", "TOOL_NOT_STARTED")))
    text = REPAIR_UNKNOWN if started else REPAIR_NOT_STARTED
    data = obj((("turn", turn), ("step", call.step), ("callId", call.call_id),
                ("content", (obj((("type", "text"), ("text", text))),)), ("isError", True), ("error", error)))
    return data, (call.call_seq,) if call.call_seq is not None else ABSENT


@audits("LOG-14", "P-LOG-6")
def check_closers(before: _Scan, last_time: int | None, run: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """LOG-14: the closers of an interrupted turn are, in order, one synthetic
    ``tool/result`` per pending call (``TOOL_OUTCOME_UNKNOWN`` citing
    ``[callSeq]`` when started, else ``TOOL_NOT_STARTED`` citing nothing),
    ``step/end`` if a step is open, then ``turn/end {interrupted}``; every
    closer takes the time of the last event before them.  (In D08 the repair
    writes the D08 result shape; its code and provenance are checked.)"""
    found: list[Rejected] = []
    expected: list[tuple[str, JsonObject, Json | Absent]] = []
    for call in before.pending.values():
        data, cited = _expected_result(before.turn, call)
        expected.append(("tool/result", data, cited))
    if before.open_step:
        expected.append(("step/end", obj((("turn", before.turn), ("step", before.step))), ABSENT))
    expected.append(("turn/end", obj((("turn", before.turn), ("reason", obj((("kind", "interrupted"),))))), ABSENT))
    if [e.type for e in run] != [t for t, _, _ in expected]:
        shown = ", ".join(t for t, _, _ in expected)
        return [Rejected(rule="LOG-14", seq=run[-1].seq, reason=f"crash-repair closers are {', '.join(e.type for e in run)}; the log before them gives {shown}")]
    for event, (_, data, cited) in zip(run, expected, strict=True):
        if event.type == "tool/result" and dialect is D08:
            want = get(get(data, "error"), "code")
            if get(get(event.data, "error"), "code") != want or event.source_event_seqs != cited:
                found.append(Rejected(rule="LOG-14", seq=event.seq, reason=f"synthetic tool/result is not the {want} closer of its call"))
            continue
        if not json_eq(event.data, data):
            found.append(Rejected(rule="LOG-14", seq=event.seq, reason=f"crash-repair {event.type} differs from the closer LOG-14 computes ({js_stringify(data)[:80]})"))
        elif event.type == "tool/result" and (event.source_event_seqs != cited or event.surface_op != "append"):
            found.append(Rejected(rule="LOG-14", seq=event.seq, reason="synthetic tool/result provenance is not [callSeq] of a started call (nothing for an unstarted one)"))
        if last_time is not None and event.time != last_time:
            found.append(Rejected(rule="LOG-14", seq=event.seq, reason=f"crash-repair closer time {event.time} is not the last event's time {last_time}"))
    return found


def _candidate(event: Event) -> bool:
    if event.type == "tool/result":
        return get(get(event.data, "error"), "code") in SYNTHETIC_CODES
    return event.type == "step/end"


class RepairAudit(WalkFold):
    """Every live ``turn/end {interrupted}`` ends the closers of LOG-14.  An
    ordinary ``step/end`` may precede the closers, so each suffix of the run
    is tried; the state before each run event is kept (the run is at most the
    pending calls plus two events long)."""

    # A packed row's chunks come as one ChunkRun: a chunk is no closer and moves no scan state.
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        scan = _Scan()
        run: list[Event] = []
        befores: list[tuple[_Scan, int | None]] = []
        last_time: int | None = None
        while (event := (yield)) is not None:
            if isinstance(event, ChunkRun):
                # Every chunk resets the same state and sets the last time (below): a row's chunks
                # leave what its last one leaves.
                event = event.members[-1]
            if event.type == CHUNK:
                # LOG-14's closers are tool results, step/end and turn/end, and its scan reads no
                # chunk: a chunk only breaks a run of candidate closers and moves the time the
                # closers must take (the last event's).
                if run:
                    run, befores = [], []
                last_time = event.time
                continue
            closing = event.type == "turn/end" and get(get(event.data, "reason"), "kind") == "interrupted"
            if closing or _candidate(event):
                befores.append((scan.copy(), last_time))
                run.append(event)
                if closing:
                    # The run ends here: judged if live, then a new one may start.
                    if event.seq >= first_live_seq:
                        found += _judge_run(run, befores, dialect)
                    run, befores = [], []
            elif run:
                run, befores = [], []  # not a closer: the run before it was none
            _advance(scan, event, dialect)
            last_time = event.time
        return found


audits("LOG-14")(RepairAudit)


def audit_repair(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`RepairAudit` run alone."""
    return run_alone(RepairAudit, events, dialect, first_live_seq)


def _judge_run(run: Sequence[Event], befores: Sequence[tuple[_Scan, int | None]], dialect: Dialect) -> list[Rejected]:
    """The closers are a suffix of the run.  Synthetic results come only from
    the repair, so with any the closers start at the first of them; without
    any, a ``step/end`` before the ``turn/end`` may be an ordinary one, and
    either reading that matches is accepted."""
    synthetic = next((i for i, e in enumerate(run) if e.type == "tool/result"), None)
    starts = [synthetic] if synthetic is not None else list(range(len(run)))
    attempts = [check_closers(befores[i][0], befores[i][1], run[i:], dialect) for i in starts]
    if any(not a for a in attempts):
        return []
    return attempts[0]
