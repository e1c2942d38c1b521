"""Crash repair (LOG-14): the closers appended to a log whose last turn is open, and the closers a log holds.

A pure function of the log.  The scan tracks the open turn, the open step and the calls still pending in that
step (:class:`RepairScanState`, one :func:`scan_event` per event); the closers answer every pending call with a
synthetic error result, close the step, and end the turn ``{kind:"interrupted"}`` (:func:`closers_of`).  Texts
are the logged constants of Appendix A.

The writer, :func:`repair_closers`, and the judge of the closers a log holds, :func:`check_closers` (which
``sessionspec check`` runs, through :class:`CloserWatch`), compute the closers by the same two functions, so the
model never writes closers it refuses (``tests/model/test_repair_check.py`` holds them together both ways).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, json_eq, obj
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.message_shape import MessageShape, message_shape
from sessionspec.model.provenance import CallKey, call_key
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

REPAIR_UNKNOWN: Final = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. "
    "Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may "
    "have side effects, first verify external state or ask the user. Do not retry blindly."
)
REPAIR_NOT_STARTED: Final = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
)
# The event types LOG-14's scan reads (:func:`scan_event`); only they may be closers.
SCANNED_TYPES: Final = frozenset({"turn/start", "turn/end", "step/start", "step/end", "assistant/message", "tool/call", "tool/result"})
# The error codes of the synthetic results: only the repair writes them.
SYNTHETIC_CODES: Final = frozenset({"TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"})


class PendingCall(NamedTuple):
    """A call registered by an ``assistant/message`` tool-call block.

    ``call_seq`` is the seq of its ``tool/call`` once the call was started.  Immutable (a tuple: the scan builds
    one per call block and per start, and a frozen dataclass costs the checker 0.2 % of its instructions).
    """

    call_id: Json
    step: Json
    call_seq: int | None = None


@dataclass(slots=True)
class RepairScanState:
    """LOG-14's scan state so far: mutable, owned by whoever folds the log (as a loop ``Turn`` is).  The pending
    calls by :func:`~sessionspec.model.provenance.call_key` (the harness's ``Map`` by call id), in insertion order."""

    turn: Json = None
    step: Json = None
    open_turn: bool = False
    open_step: bool = False
    pending: dict[CallKey, PendingCall] = field(default_factory=dict)

    def copy(self) -> RepairScanState:
        # The entries are frozen: a copy of the map is a copy of the state.
        return RepairScanState(self.turn, self.step, self.open_turn, self.open_step, dict(self.pending))


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


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RepairShapes:
    """What a dialect changes in crash repair: where a message's blocks are and which call a result answers (DIA-10,
    :mod:`sessionspec.model.message_shape`), and how a logged synthetic result is compared with the closer
    (:func:`repair_shapes`)."""

    message: MessageShape
    result_differs: Callable[[Event, Event], str | None]


def _val(v: Json | Absent) -> Json:
    """A read field as a JSON value (a missing field is written as null)."""
    return None if v is ABSENT else v


def _a55_result_differs(event: Event, closer: Event) -> str | None:
    """The A55 closer is byte-exact: its data, then its provenance and its append."""
    if not json_eq(event.data, closer.data):
        return f"crash-repair {event.type} differs from the closer LOG-14 computes ({js_stringify(closer.data)[:80]})"
    if event.source_event_seqs != closer.source_event_seqs or event.surface_op != "append":
        return "synthetic tool/result provenance is not [callSeq] of a started call (nothing for an unstarted one)"
    return None


def _d08_result_differs(event: Event, closer: Event) -> str | None:
    """D08's repair writes its result as a message (``data.message``, DIA-10, with an id the model does not
    write): its error code and its provenance are compared."""
    want = get(get(closer.data, "error"), "code")
    if get(get(event.data, "error"), "code") != want or event.source_event_seqs != closer.source_event_seqs:
        return f"synthetic tool/result is not the {want} closer of its call"
    return None


A55_SHAPES: Final = RepairShapes(message=message_shape(Dialect.A55), result_differs=_a55_result_differs)
D08_SHAPES: Final = RepairShapes(message=message_shape(Dialect.D08), result_differs=_d08_result_differs)


def repair_shapes(dialect: Dialect) -> RepairShapes:
    """The one place repair is selected by dialect: DIA-10's message shapes and the closer's comparison."""
    match dialect:
        case Dialect.A55:
            return A55_SHAPES
        case Dialect.D08:
            return D08_SHAPES


def scan_event(scan: RepairScanState, event: Event, shapes: RepairShapes) -> None:
    """LOG-14's scan, one event (:func:`repair_closers` quotes it)."""
    data = event.data
    match event.type:
        case "turn/start":
            scan.turn, scan.open_turn = _val(get(data, "turn")), True
            scan.step, scan.open_step = None, False
            scan.pending.clear()
        case "turn/end":
            scan.turn, scan.step, scan.open_turn, scan.open_step = None, None, False, False
            scan.pending.clear()
        case "step/start":
            scan.step, scan.open_step = _val(get(data, "step")), True
        case "step/end":
            scan.step, scan.open_step = None, False
            scan.pending.clear()
        case "assistant/message":
            content = shapes.message.content(data)
            for block in content if isinstance(content, tuple) else ():
                if isinstance(block, JsonObject) and get(block, "type") == "tool-call":
                    call_id = _val(get(block, "id"))
                    # Map.set on an existing key keeps its position, resets the value.
                    scan.pending[call_key(call_id)] = PendingCall(call_id=call_id, step=_val(get(data, "step")))
        case "tool/call":
            key = call_key(_val(get(data, "callId")))
            entry = scan.pending.get(key)
            if entry is not None:
                scan.pending[key] = PendingCall(call_id=entry.call_id, step=entry.step, call_seq=event.seq)
        case "tool/result":
            scan.pending.pop(call_key(_val(shapes.message.call_id(data))), None)
        case _:
            pass


def scan_for_repair(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> RepairScan:
    """LOG-14's scan over a whole log (:func:`scan_event` of each event)."""
    scan, shapes = RepairScanState(), repair_shapes(dialect)
    for event in events:
        scan_event(scan, event, shapes)
    return RepairScan(turn=scan.turn, step=scan.step, open_turn=scan.open_turn, open_step=scan.open_step,
                      pending=tuple(scan.pending.values()))


def _synthetic_result(turn: Json, call: PendingCall, seq: int, time: int) -> Event:
    started = call.call_seq is not None
    text = REPAIR_UNKNOWN if started else REPAIR_NOT_STARTED
    error = (
        obj((("name", "ToolOutcomeUnknownError"), ("code", "TOOL_OUTCOME_UNKNOWN")))
        if started
        else obj((("name", "ToolNotStartedError"), ("code", "TOOL_NOT_STARTED")))
    )
    data = obj((("turn", turn), ("step", call.step), ("callId", call.call_id),
                ("content", (obj((("type", "text"), ("text", text))),)), ("isError", True), ("error", error)))
    if call.call_seq is None:
        return make_event("tool/result", seq=seq, time=time, data=data, surface_op="append")
    # LOG-3/LOG-14: the closers write surfaceOp before sourceEventSeqs.
    return make_event(
        "tool/result", seq=seq, time=time, data=data, surface_op="append", source_event_seqs=(call.call_seq,), op_first=True
    )


def closers_of(scan: RepairScanState | RepairScan, seq: int, time: int) -> tuple[Event, ...]:
    """The closers of the scan's turn, from ``seq`` on, at ``time``, in LOG-14's order: a synthetic result per
    pending call, ``step/end`` if a step is open, ``turn/end {interrupted}``."""
    pending = scan.pending.values() if isinstance(scan, RepairScanState) else scan.pending
    closers: list[Event] = []
    for call in pending:
        closers.append(_synthetic_result(scan.turn, call, seq, time))
        seq += 1
    if scan.open_step:
        closers.append(make_event("step/end", seq=seq, time=time, data=obj((("turn", scan.turn), ("step", scan.step)))))
        seq += 1
    reason = obj((("kind", "interrupted"),))
    closers.append(make_event("turn/end", seq=seq, time=time, data=obj((("turn", scan.turn), ("reason", reason)))))
    return tuple(closers)


@implements("LOG-14")
def repair_closers(events: Sequence[Event]) -> tuple[Event, ...]:
    """LOG-14: "Crash repair MUST compute the closers as a pure function of the log.
    - Scan the log and track state:
      - `turn/start` opens the turn, clears the open step, and clears the pending calls;
      - `turn/end` clears everything;
      - `step/start` sets the open step;
      - `step/end` clears the open step and the pending calls;
      - each `tool-call` block of an `assistant/message` registers the call as pending, with the message's step,
        keyed by call id in insertion order;
      - `tool/call` records `callSeq` on an existing pending entry;
      - `tool/result` deletes the entry for its `callId`.
    - No open turn, or an empty log, gives `[]`.
    - Otherwise the closers take `seq = last.seq + 1, …` and `time = last.time`, in this order:
      1. for each pending call, in insertion order, a `tool/result {turn, step, callId, content:[{type:"text", text}],
         isError:true, error}` with `surfaceOp:"append"`. It also carries `sourceEventSeqs:[callSeq]`, but only when
         the call was started; [...]
      2. `step/end {turn, step}`, if a step is open;
      3. `turn/end {turn, reason:{kind:"interrupted"}}`."

    The scan is :func:`scan_event`, the closers :func:`closers_of` (A55's shapes: the model writes A55 logs)."""
    if not events:
        return ()
    scan = RepairScanState()
    for event in events:
        scan_event(scan, event, A55_SHAPES)
    if not scan.open_turn:
        return ()
    last = events[-1]
    return closers_of(scan, last.seq + 1, last.time)


@decides("LOG-14", "P-LOG-6")
def check_closers(before: RepairScanState, last_time: int | None, run: Sequence[Event], shapes: RepairShapes) -> list[Rejected]:
    """The closers a log holds, ``run`` (ending in its ``turn/end {interrupted}``), against those LOG-14 computes
    from the log before them (:func:`repair_closers`'s :func:`closers_of` of the scan ``before``): the same types
    in the same order, each the computed closer, at the time of the last event before them (``last_time``; None:
    none came before).  The seqs are LOG-1's."""
    expected = closers_of(before, run[0].seq, 0 if last_time is None else last_time)
    if [e.type for e in run] != [e.type for e in expected]:
        shown = ", ".join(e.type for e in expected)
        return [Rejected(rule="LOG-14", seq=run[-1].seq, reason=f"crash-repair closers are {', '.join(e.type for e in run)}; the log before them gives {shown}")]
    found: list[Rejected] = []
    for event, closer in zip(run, expected, strict=True):
        if event.type == "tool/result":
            why = shapes.result_differs(event, closer)
        elif not json_eq(event.data, closer.data):
            why = f"crash-repair {event.type} differs from the closer LOG-14 computes ({js_stringify(closer.data)[:80]})"
        else:
            why = None
        if why is not None:
            found.append(Rejected(rule="LOG-14", seq=event.seq, reason=why))
        if last_time is not None and event.time != last_time:
            found.append(Rejected(rule="LOG-14", seq=event.seq, reason=f"crash-repair closer time {event.time} is not the last event's time {last_time}"))
    return found


def judge_closer_run(run: Sequence[Event], befores: Sequence[tuple[RepairScanState, int | None]], shapes: RepairShapes) -> list[Rejected]:
    """A run of candidates ending in ``turn/end {interrupted}``, with the scan and the last time before each: the
    closers are a suffix of it.  Synthetic results come only from the repair, so with any the closers start at
    the first of them; without any, a ``step/end`` before the ``turn/end`` may be an ordinary one, and either
    reading that matches is accepted."""
    synthetic = next((i for i, e in enumerate(run) if e.type == "tool/result"), None)
    starts = [synthetic] if synthetic is not None else list(range(len(run)))
    attempts = [check_closers(befores[i][0], befores[i][1], run[i:], shapes) for i in starts]
    if any(not a for a in attempts):
        return []
    return attempts[0]


@dataclass(slots=True)
class CloserWatch:
    """LOG-14 over a log read event by event: the scan so far, and the run of candidate closers since the last
    event that could not be one (with the scan and the last time before each).  Mutable, owned by whoever folds
    the log, who hands over the events LOG-14's scan reads (:data:`SCANNED_TYPES`; no other is a closer) with
    the event just before each."""

    shapes: RepairShapes
    scan: RepairScanState = field(default_factory=RepairScanState)
    run: list[Event] = field(default_factory=list)
    befores: list[tuple[RepairScanState, int | None]] = field(default_factory=list)


@decides("LOG-14")
def watch_event(watch: CloserWatch, event: Event, previous: Event | None) -> Sequence[Rejected]:
    """An event the scan reads, ``previous`` the log's event before it (None: it is the first): the findings of the
    closers it ends (a ``turn/end {interrupted}``, written only by the repair, :func:`judge_closer_run`), then the
    scan moves on.  The closers take the time of the event before them; an event that is not a candidate closer
    (any other type in between, too) ends the run."""
    found: Sequence[Rejected] = ()
    run = watch.run
    if run and run[-1] is not previous:
        run = watch.run = []
        watch.befores = []
    kind = event.type
    # A candidate closer: a step/end, a synthetic result (only the repair writes their codes), or the closing turn/end.
    closing = kind == "turn/end" and get(get(event.data, "reason"), "kind") == "interrupted"
    if closing or kind == "step/end" or (kind == "tool/result" and get(get(event.data, "error"), "code") in SYNTHETIC_CODES):
        watch.befores.append((watch.scan.copy(), None if previous is None else previous.time))
        run.append(event)
        if closing:
            found = judge_closer_run(run, watch.befores, watch.shapes)
            watch.run, watch.befores = [], []
    elif run:
        watch.run, watch.befores = [], []  # not a closer: the run before it was none
    scan_event(watch.scan, event, watch.shapes)
    return found
