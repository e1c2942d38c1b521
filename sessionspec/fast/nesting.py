"""The session invariant companion's relations of ``model/nesting.py`` (LOG-13, and the loop's rules it checks in a
log), for the checker's one pass: the same findings, computed by a module the compiled wheel compiles (issue 44).

The fold calls these at every event, the hottest step of the check: compiled, a call into the interpreted model
per event would cost more than the relations themselves.  So the fold runs these, and
``tests/fast/test_fast_nesting.py`` holds them equal to the definitions, finding for finding, on the logs the loop
simulator writes, both dialects, and on every change of an event's nesting the model refuses.  Besides the
definitions, :func:`chunk_row_vetoes` takes a packed row's chunks at once (CHK-6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

from sessionspec.fast.constants import ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.fast.jsonget import json_int as _int
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.nesting import D08_TURN_BOUND_TYPES, TOOL_NOT_STARTED, UNANSWERED
from sessionspec.model.rejected import Rejected

_OBJECT: Final = JsonObject
# The fields of an event whose data is no object: none.
_NO_FIELDS: Final[dict[str, Json]] = {}


@final
class Nesting:
    """:class:`sessionspec.model.nesting.Nesting`, as a native class."""

    __slots__ = ("turn", "last_turn", "step", "next_step", "last_seq", "pending", "manual_bracket")

    def __init__(self) -> None:
        self.turn: int | None = None
        self.last_turn = 0
        self.step: int | None = None
        self.next_step = 1
        self.last_seq = -1
        self.pending: dict[str, int] = {}
        self.manual_bracket = False


def _names_open_step(s: Nesting, event: Event) -> str | None:
    """:func:`sessionspec.model.nesting.names_open_step`."""
    data = event.data
    if s.step is not None and type(data) is _OBJECT:
        # The common case, answered without the helpers (issue 26): integers naming the open turn and step.
        turn, step = data.get("turn"), data.get("step")
        if type(turn) is int and type(step) is int and turn == s.turn and step == s.step:
            return None
    turn, step = _int(get(data, "turn")), _int(get(data, "step"))
    if s.turn is None or s.step is None:
        return f"{event.type} outside an open step"
    if turn != s.turn or step != s.step:
        return f"{event.type} names turn {turn} step {step}, but turn {s.turn} step {s.step} is open"
    return None


def _veto(why: str, seq: int) -> Rejected:
    return Rejected(rule="LOOP-12" if why.startswith(UNANSWERED) else "LOG-13", seq=seq, reason=why)


def companion_veto(s: Nesting, event: Event, dialect: Dialect) -> Rejected | None:
    """:func:`sessionspec.model.nesting.companion_veto` (``dialect``: the overlay the model's ``nesting_shapes``
    selects)."""
    seq, kind = event.seq, event.type  # read once (compiled, each read is a generic attribute read)
    why: str | None = None
    if seq > s.last_seq:
        s.last_seq = seq
    else:
        why = f"seq {seq} does not increase (previous {s.last_seq})"
    if kind == "assistant/chunk" or kind == "assistant/message":
        # The commonest events, and their common case answered here (issue 26): integers naming the open step.
        if why is None:
            data = event.data
            if type(data) is _OBJECT and s.step is not None:
                turn, step = data.get("turn"), data.get("step")
                if type(turn) is int and type(step) is int and turn == s.turn and step == s.step:
                    return None
            why = _names_open_step(s, event)
    else:
        why = _relation(s, event, kind, dialect, why)
    return None if why is None else _veto(why, seq)


def _relation(s: Nesting, event: Event, kind: str, dialect: Dialect, why: str | None) -> str | None:
    """The relation of an event of type ``kind`` but a chunk or a message (``why``: the seq's veto, which wins).
    Its fields are read in place (a call per read is most of the cost)."""
    data = event.data
    fields = data if type(data) is _OBJECT else _NO_FIELDS
    match kind:
        # The cases are disjoint by type, so their order is free: the commonest first.
        case "step/start":
            step, turn = fields.get("step"), fields.get("turn")
            step = step if type(step) is int else None
            if s.turn is None:
                why = why or "step/start with no open turn"
            elif (turn if type(turn) is int else None) != s.turn:
                why = why or f"step/start names turn {turn if type(turn) is int else None}, but turn {s.turn} is open"
            elif s.step is not None:
                why = why or f"step/start while step {s.step} is open"
            elif step != s.next_step:
                why = why or f"step/start {step} is not the next step {s.next_step}"
            s.step = step if step is not None else s.next_step
            s.next_step = s.step + 1
        case "step/end":
            if why is None:
                turn, step = fields.get("turn"), fields.get("step")
                if not (type(turn) is int and type(step) is int and turn == s.turn and step == s.step and s.step is not None):
                    why = _names_open_step(s, event)
                if why is None and s.pending:
                    why = f"{UNANSWERED} {next(iter(s.pending))!r} without a tool/result"
            s.step = None
            s.pending.clear()
        case "turn/start":
            turn = fields.get("turn")
            turn = turn if type(turn) is int else None
            if s.turn is not None:
                why = why or f"turn/start while turn {s.turn} is open"
            elif turn != s.last_turn + 1:
                why = why or f"turn/start {turn} is not the next turn {s.last_turn + 1}"
            s.turn = turn if turn is not None else s.last_turn + 1
            s.last_turn = s.turn
            s.step, s.next_step = None, 1
            s.pending.clear()
        case "turn/end":
            turn = fields.get("turn")
            if s.turn is None:
                why = why or "turn/end with no open turn"
            elif s.step is not None:
                why = why or f"turn/end while step {s.step} is open"
            elif (turn if type(turn) is int else None) != s.turn:
                why = why or f"turn/end names turn {turn if type(turn) is int else None}, but turn {s.turn} is open"
            s.turn, s.step = None, None
            s.pending.clear()
        case "tool/call":
            why = why or _names_open_step(s, event)
            called = fields.get("callId")
            if type(called) is str:
                s.pending[called] = event.seq
        case "tool/result":
            op = event.surface_op
            if type(op) is _OBJECT and op.get("op") == "replace":
                if s.turn is None and not s.manual_bracket:
                    why = why or "tool/result replace outside an open turn"
                return why
            why = why or _names_open_step(s, event)
            call_id: Json | Absent = get(get(fields.get("message"), "source"), "callId") if dialect is D08 else fields.get("callId")
            if type(call_id) is str and call_id in s.pending:
                del s.pending[call_id]
            elif get(fields.get("error"), "code") != TOOL_NOT_STARTED:
                why = why or f"tool/result answers {js_stringify(call_id if call_id is not ABSENT else None)}, which is not a pending call"
        case "session/end-seed" if dialect is D08:
            s.manual_bracket = False
        case "compaction/start" if dialect is D08 and fields.get("turn", ABSENT) is None:
            s.manual_bracket = s.turn is None
        case "compaction/end" if dialect is D08 and s.manual_bracket:
            s.manual_bracket = False
        case _:
            if s.turn is None and not s.manual_bracket and (dialect is not D08 or kind in D08_TURN_BOUND_TYPES):
                why = why or f"{kind} outside an open turn"
    return why


def chunk_row_vetoes(s: Nesting, chunks: Sequence[Event], last: int, dialect: Dialect) -> list[Rejected]:
    """:func:`companion_veto` of each of a packed row's chunks (``last``: the last one's seq), in order.  CHK-6: the
    members' seqs are consecutive and they share the turn and step, and a chunk changes no state but the last seq:
    once the first member's seq increases, every member's does, and each names the open step exactly as the first
    does (one veto, found at each member's seq).  Else each member is taken."""
    first = chunks[0]
    if first.seq > s.last_seq:
        why = _names_open_step(s, first)
        s.last_seq = last
        return [] if why is None else [_veto(why, seq) for seq in range(first.seq, last + 1)]
    found: list[Rejected] = []
    for chunk in chunks:
        bad = companion_veto(s, chunk, dialect)
        if bad is not None:
            found.append(bad)
    return found
