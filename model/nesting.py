"""Turn and step nesting and tool pairing as the session invariant companion vetoes them (LOG-13), event by event.

The harness's dev companion (``core/session/src/invariant.ts`` at ``a55f148516``) keeps, for the log so far, the
open turn and the last turn's number, the open step and the next step's number, the last seq and the calls the
open step has still to answer: :class:`Nesting`.  :func:`companion_veto` takes one event, advances that state
(always: one bad event does not cascade into vetoes of the good ones after it) and answers the veto, if any.  Each
relation is one function below, named for the rule of the loop it checks in a log: the turn numbers (LOOP-2), a
step closed before its turn (LOOP-15, LOOP-17), the meter's step vetoes (MTR-6), a prune inside an open turn
(P-PRN-3).  The companion replays a created session's seed through the same checks (QF-12), so it sees every event.

D08 is an overlay (:class:`NestingShapes`): the call a result answers is under ``data.message`` (DIA-10), a manual
compaction bracket (owner ``null``) runs between turns (DIA-3), the constructor's ``session/end-seed`` ends the seed
(DIA-5), and the turn requirement binds D08's core types alone (its plugins write session-level records between
turns).

``sessionspec check`` runs these definitions over every log (``sessionspec/check/nesting_audit.py``, through their
twin ``sessionspec/fast/nesting.py``); the loop simulator's logs are accepted by them and each change they forbid is
refused (``tests/model/test_nesting.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.jsonval import get, js_stringify
from sessionspec.model.log import Dialect, Event, json_int
from sessionspec.model.message_shape import result_call_id
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

# The start of the veto of a step closed with a call unanswered: LOOP-12's pairing, not the companion's.
UNANSWERED: Final = "step/end leaves tool call"
# The error code of the synthetic result the crash repair writes for a call that never started (LOG-14).
TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
# The D08 types that lie in an open turn: the rule book states the turn requirement for A55; D08's plugins write
# session-level records (``agent/inbox/spliced``, ``approval/policy``, ``subagent/descriptor``, ...) between turns.
D08_TURN_BOUND_TYPES: Final = frozenset({"user/message", "prompt/blocked", "todo/write", "request/header", "request/context"})


@dataclass(slots=True)
class Nesting:
    """The companion's state after the log so far: mutable, owned by whoever folds the log (as a loop ``Turn`` is).
    ``pending``: the open step's unanswered call ids, with their seqs, in call order."""

    turn: int | None = None
    last_turn: int = 0
    step: int | None = None
    next_step: int = 1
    last_seq: int = -1
    pending: dict[str, int] = field(default_factory=dict)
    # D08: a manual compaction bracket (owner null) is open between turns (DIA-3).
    manual_bracket: bool = False


def take_seq(nesting: Nesting, seq: int) -> str | None:
    """LOG-13's first relation: ``seq`` strictly increases (a seq that does not is not taken)."""
    if seq <= nesting.last_seq:
        return f"seq {seq} does not increase (previous {nesting.last_seq})"
    nesting.last_seq = seq
    return None


@decides("LOOP-2", "P-LOOP-7")
def open_turn(nesting: Nesting, event: Event) -> str | None:
    """``turn/start`` opens a turn only when none is open, numbered the last turn's plus one (LOOP-2's number, the
    turns 1..n of P-LOOP-7); it resets the step counter and the pending calls.  A turn without an integer number
    is taken as the expected one."""
    turn = json_int(get(event.data, "turn"))
    why: str | None = None
    if nesting.turn is not None:
        why = f"turn/start while turn {nesting.turn} is open"
    elif turn != nesting.last_turn + 1:
        why = f"turn/start {turn} is not the next turn {nesting.last_turn + 1}"
    nesting.turn = turn if turn is not None else nesting.last_turn + 1
    nesting.last_turn = nesting.turn
    nesting.step, nesting.next_step = None, 1
    nesting.pending.clear()
    return why


@decides("LOOP-15", "LOOP-17", "P-LOOP-4")
def close_turn(nesting: Nesting, event: Event) -> str | None:
    """``turn/end`` closes the open turn, named by its number, only when no step is open: the trace of LOOP-17's
    epilogue (an open step closed first) and of LOOP-15's interruption (``step/end`` before ``turn/end``)."""
    why: str | None = None
    if nesting.turn is None:
        why = "turn/end with no open turn"
    elif nesting.step is not None:
        why = f"turn/end while step {nesting.step} is open"
    elif (turn := json_int(get(event.data, "turn"))) != nesting.turn:
        why = f"turn/end names turn {turn}, but turn {nesting.turn} is open"
    nesting.turn, nesting.step = None, None
    nesting.pending.clear()
    return why


@decides("MTR-6")
def open_step(nesting: Nesting, event: Event) -> str | None:
    """``step/start`` belongs to the open turn, no step is open (MTR-6's veto), and it is the next step."""
    step = json_int(get(event.data, "step"))
    why: str | None = None
    if nesting.turn is None:
        why = "step/start with no open turn"
    elif (turn := json_int(get(event.data, "turn"))) != nesting.turn:
        why = f"step/start names turn {turn}, but turn {nesting.turn} is open"
    elif nesting.step is not None:
        why = f"step/start while step {nesting.step} is open"
    elif step != nesting.next_step:
        why = f"step/start {step} is not the next step {nesting.next_step}"
    nesting.step = step if step is not None else nesting.next_step
    nesting.next_step = nesting.step + 1
    return why


@decides("MTR-6")
def names_open_step(nesting: Nesting, event: Event) -> str | None:
    """An event of the step (``assistant/chunk``, ``assistant/message``, ``tool/call``, a ``tool/result`` append,
    ``step/end``) names the open turn and step: MTR-6's "reject unless inside the matching open step"."""
    turn, step = json_int(get(event.data, "turn")), json_int(get(event.data, "step"))
    if nesting.turn is None or nesting.step is None:
        return f"{event.type} outside an open step"
    if turn != nesting.turn or step != nesting.step:
        return f"{event.type} names turn {turn} step {step}, but turn {nesting.turn} step {nesting.step} is open"
    return None


@decides("MTR-6", "P-LOOP-4")
def close_step(nesting: Nesting, event: Event) -> str | None:
    """``step/end`` names the open step (MTR-6), closing what ``step/start`` opened (P-LOOP-4's counts), and clears
    the pending calls.  A call it leaves unanswered is no veto of the companion (``invariant.ts`` lines 107-112): it
    is the loop's pairing, LOOP-12 (the crash repair, LOG-14, closes only the calls of a step still open)."""
    why = names_open_step(nesting, event)
    if why is None and nesting.pending:
        why = f"{UNANSWERED} {next(iter(nesting.pending))!r} without a tool/result"
    nesting.step = None
    nesting.pending.clear()
    return why


def take_call(nesting: Nesting, event: Event) -> str | None:
    """``tool/call`` names the open step and adds its call id to the pending calls."""
    why = names_open_step(nesting, event)
    call_id = get(event.data, "callId")
    if isinstance(call_id, str):
        nesting.pending[call_id] = event.seq
    return why


def answer_call(nesting: Nesting, event: Event, dialect: Dialect) -> str | None:
    """A ``tool/result`` append names the open step and answers a pending call, which it removes, unless it is a
    synthetic ``TOOL_NOT_STARTED`` error (the crash repair's closer of a call that never started)."""
    why = names_open_step(nesting, event)
    call_id = result_call_id(event, dialect)
    if isinstance(call_id, str) and call_id in nesting.pending:
        del nesting.pending[call_id]
    elif get(get(event.data, "error"), "code") != TOOL_NOT_STARTED:
        why = why or f"tool/result answers {js_stringify(call_id)}, which is not a pending call"
    return why


@decides("P-PRN-3")
def replace_in_turn(nesting: Nesting, event: Event) -> str | None:
    """A ``tool/result`` replace (a prune's, P-PRN-3) needs only an open turn (or D08's manual bracket, DIA-3)."""
    if nesting.turn is None and not nesting.manual_bracket:
        return "tool/result replace outside an open turn"
    return None


def inside_open_turn(nesting: Nesting, event: Event) -> str | None:
    """Every other type lies inside an open turn."""
    if nesting.turn is None and not nesting.manual_bracket:
        return f"{event.type} outside an open turn"
    return None


@decides("DIA-3")
def d08_inside_open_turn(nesting: Nesting, event: Event) -> str | None:
    """:func:`inside_open_turn` in D08.  DIA-3: a compaction bracket of owner ``null`` (manual) runs between turns,
    its events in no turn (inside an open turn, a null owner is the compaction companion's veto, DIA-19, not this
    one's: any event there is turn-enclosed); DIA-5: ``session/end-seed``, written by the constructor, ends any such
    bracket of the seed.  Of the other types, D08's core ones alone need an open turn."""
    match event.type:
        case "session/end-seed":
            nesting.manual_bracket = False
        case "compaction/start" if get(event.data, "turn") is None:
            nesting.manual_bracket = nesting.turn is None
        case "compaction/end" if nesting.manual_bracket:
            nesting.manual_bracket = False
        case kind if kind in D08_TURN_BOUND_TYPES:
            return inside_open_turn(nesting, event)
        case _:
            pass
    return None


@final
@dataclass(frozen=True, slots=True)
class NestingShapes:
    """What a dialect changes in the companion's relations (:func:`nesting_shapes`): where a result names its call
    (DIA-10, :func:`~sessionspec.model.message_shape.result_call_id`) and how the other types lie in turns."""

    dialect: Dialect
    other_event: Callable[[Nesting, Event], str | None]


A55_NESTING: Final = NestingShapes(dialect=Dialect.A55, other_event=inside_open_turn)
D08_NESTING: Final = NestingShapes(dialect=Dialect.D08, other_event=d08_inside_open_turn)


def nesting_shapes(dialect: Dialect) -> NestingShapes:
    """The one place the companion's relations are selected by dialect: DIA-3's manual brackets between turns."""
    match dialect:
        case Dialect.A55:
            return A55_NESTING
        case Dialect.D08:
            return D08_NESTING


def relation_veto(nesting: Nesting, event: Event, shapes: NestingShapes) -> str | None:
    """The relation of ``event``'s type (every relation of LOG-13 but the seq's), the state advanced."""
    match event.type:
        case "assistant/chunk" | "assistant/message":
            return names_open_step(nesting, event)
        case "turn/start":
            return open_turn(nesting, event)
        case "turn/end":
            return close_turn(nesting, event)
        case "step/start":
            return open_step(nesting, event)
        case "step/end":
            return close_step(nesting, event)
        case "tool/call":
            return take_call(nesting, event)
        case "tool/result" if get(event.surface_op, "op") == "replace":
            return replace_in_turn(nesting, event)
        case "tool/result":
            return answer_call(nesting, event, shapes.dialect)
        case _:
            return shapes.other_event(nesting, event)


@decides("LOG-13")
@implements("LOG-13")
def companion_veto(nesting: Nesting, event: Event, shapes: NestingShapes) -> Rejected | None:
    """LOG-13: "(dev companion) When the session invariant companion is loaded, it MUST veto, before commit, any
    event that breaks these relations:"

    :func:`take_seq`, then the relation of the event's type (:func:`relation_veto`); the state advances either way.
    The first veto is reported (the seq's first), as LOG-13's, but an unanswered call at ``step/end``, LOOP-12's."""
    seq_veto = take_seq(nesting, event.seq)
    why = relation_veto(nesting, event, shapes)
    if seq_veto is not None:
        return Rejected(rule="LOG-13", seq=event.seq, reason=seq_veto)
    if why is None:
        return None
    return Rejected(rule="LOOP-12" if why.startswith(UNANSWERED) else "LOG-13", seq=event.seq, reason=why)
