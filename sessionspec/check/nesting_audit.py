"""Turn/step nesting and tool pairing as the session invariant companion vetoes them (LOG-13, with
LOOP-2, LOOP-15, LOOP-17, MTR-6, DIA-3): every event, the seed too (QF-12)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.fast.jsonget import json_int as _int
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
UNANSWERED: Final = "step/end leaves tool call"
D08_TURN_BOUND_TYPES: Final = frozenset({"user/message", "prompt/blocked", "todo/write", "request/header", "request/context"})


# --------------------------------------------------------------------------- LOG-13


def _result_call_id(event: Event, dialect: Dialect) -> Json | Absent:
    if dialect is D08:
        return get(get(get(event.data, "message"), "source"), "callId")
    return get(event.data, "callId")


def _is_not_started(event: Event) -> bool:
    return get(get(event.data, "error"), "code") == TOOL_NOT_STARTED


def is_replace(event: Event) -> bool:
    return get(event.surface_op, "op") == "replace"


@dataclass(slots=True)
class _Nesting:
    """The session invariant companion's state (LOG-13)."""

    turn: int | None = None
    last_turn: int = 0
    step: int | None = None
    next_step: int = 1
    last_seq: int = -1
    pending: dict[str, int] = field(default_factory=dict)
    # D08: a manual compaction bracket (owner null) runs between turns (DIA-3).
    manual_bracket: bool = False


class NestingAudit(WalkFold):
    """LOG-13: the vetoes of the session invariant companion, for every event:
    the seed too, which the companion replays through the same validation on
    ``session/created`` (``core/session/src/invariant.ts`` lines 196-210 at
    ``a55f148516``, ``seedSession``; QF-12).

    ``seq`` increases; ``turn/start`` opens turn last+1 when none is open;
    ``turn/end`` closes it with no step open; ``step/start`` opens the next
    step of the open turn; ``step/end`` closes it and clears pending calls;
    chunks, assistant messages and tool calls name the open turn and step; a
    ``tool/result`` append names them and answers a pending call (or is a
    synthetic TOOL_NOT_STARTED); a replace needs an open turn; every other
    event lies in an open turn.  D08 exceptions: ``session/end-seed`` (written
    by the constructor, DIA-5) and events of a manual (owner ``null``)
    compaction bracket (DIA-3)."""

    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        s = _Nesting()
        while (event := (yield)) is not None:
            if type(event) is ChunkRun:
                why = _nesting_run(s, event, dialect, first_live_seq, found)
                continue
            why = _nesting_step(s, event, dialect)
            if why is not None:
                found.append(_veto(why, event.seq, first_live_seq))
        return found


audits("LOG-13", "LOOP-2", "LOOP-15", "LOOP-17", "MTR-6", "DIA-3", "P-LOOP-4", "P-LOOP-7", "P-PRN-3")(NestingAudit)


def _veto(why: str, seq: int, first_live_seq: int) -> Rejected:
    """The finding of a veto at ``seq``."""
    # An unanswered call at step/end is the loop's pairing (LOOP-12): the companion's step/end
    # only clears the pending calls (core/session/src/invariant.ts lines 107-112 at a55f148516).
    rule = "LOOP-12" if why.startswith(UNANSWERED) else "LOG-13"
    return Rejected(rule=rule, seq=seq, reason=why if seq >= first_live_seq else f"{why} (in the seed)")


def _nesting_run(s: _Nesting, run: ChunkRun, dialect: Dialect, first_live_seq: int, found: list[Rejected]) -> str | None:
    """:func:`_nesting_step` of each member of a packed row, its vetoes added to ``found``; the last
    member's veto.  CHK-6: the members' seqs are consecutive and they share the type, turn and step,
    and a chunk changes no state but the last seq: once the first member's seq increases, every
    member's does, and each names the open step exactly as the first does (one veto, reported at
    each member's seq).  Else (a seq that does not increase) each member is stepped."""
    if run.seq > s.last_seq:
        why = _names_open_step(s, run.members[0])
        s.last_seq = run.last
        if why is not None:
            found += [_veto(why, seq, first_live_seq) for seq in range(run.seq, run.last + 1)]
        return why
    for event in run.members:
        why = _nesting_step(s, event, dialect)
        if why is not None:
            found.append(_veto(why, event.seq, first_live_seq))
    return why


def check_nesting(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`NestingAudit` run alone."""
    return run_alone(NestingAudit, events, dialect, first_live_seq)


def _names_open_step(s: _Nesting, event: Event) -> str | None:
    data = event.data
    if s.step is not None and isinstance(data, JsonObject):
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


def _nesting_step(s: _Nesting, event: Event, dialect: Dialect) -> str | None:
    """Advance the companion state by one event; the veto reason, if any.
    The state always advances (so one bad event does not cascade)."""
    data, seq = event.data, event.seq  # read once (compiled, each read is a generic attribute read)
    why: str | None = None
    if seq <= s.last_seq:
        why = f"seq {seq} does not increase (previous {s.last_seq})"
    else:
        s.last_seq = seq
    match event.type:
        # First the commonest events (the cases are disjoint by type, so their order is free).
        case "assistant/chunk" | "assistant/message":
            why = why or _names_open_step(s, event)
        case "turn/start":
            turn = _int(get(data, "turn"))
            if s.turn is not None:
                why = why or f"turn/start while turn {s.turn} is open"
            elif turn != s.last_turn + 1:
                why = why or f"turn/start {turn} is not the next turn {s.last_turn + 1}"
            s.turn = turn if turn is not None else s.last_turn + 1
            s.last_turn = s.turn
            s.step, s.next_step = None, 1
            s.pending.clear()
        case "turn/end":
            if s.turn is None:
                why = why or "turn/end with no open turn"
            elif s.step is not None:
                why = why or f"turn/end while step {s.step} is open"
            elif _int(get(data, "turn")) != s.turn:
                why = why or f"turn/end names turn {_int(get(data, 'turn'))}, but turn {s.turn} is open"
            s.turn, s.step = None, None
            s.pending.clear()
        case "step/start":
            step = _int(get(data, "step"))
            if s.turn is None:
                why = why or "step/start with no open turn"
            elif _int(get(data, "turn")) != s.turn:
                why = why or f"step/start names turn {_int(get(data, 'turn'))}, but turn {s.turn} is open"
            elif s.step is not None:
                why = why or f"step/start while step {s.step} is open"
            elif step != s.next_step:
                why = why or f"step/start {step} is not the next step {s.next_step}"
            s.step = step if step is not None else s.next_step
            s.next_step = s.step + 1
        case "step/end":
            why = why or _names_open_step(s, event)
            if why is None and s.pending:
                # Pairing: a closed step must have answered its calls (the
                # repair, LOG-14, only closes calls of the still-open step).
                why = f"{UNANSWERED} {next(iter(s.pending))!r} without a tool/result"
            s.step = None
            s.pending.clear()
        case "tool/call":
            why = why or _names_open_step(s, event)
            call_id = get(data, "callId")
            if isinstance(call_id, str):
                s.pending[call_id] = seq
        case "tool/result" if is_replace(event):
            if s.turn is None and not s.manual_bracket:
                why = why or "tool/result replace outside an open turn"
        case "tool/result":
            why = why or _names_open_step(s, event)
            call_id = _result_call_id(event, dialect)
            if isinstance(call_id, str) and call_id in s.pending:
                del s.pending[call_id]
            elif not _is_not_started(event):
                why = why or f"tool/result answers {js_stringify(call_id if call_id is not ABSENT else None)}, which is not a pending call"
        case "session/end-seed" if dialect is D08:
            s.manual_bracket = False
        case "compaction/start" if dialect is D08 and get(data, "turn") is None:
            # A null owner inside an open turn is the compaction companion's veto (DIA-19, reported by the
            # compaction audit), not the session companion's: inside a turn any event is turn-enclosed.
            s.manual_bracket = s.turn is None
        case "compaction/end" if dialect is D08 and s.manual_bracket:
            s.manual_bracket = False
        case _:
            # D08 writes session-level plugin records (agent/inbox/spliced,
            # approval/policy, subagent/descriptor, ...) between turns; the
            # rule book states the turn requirement for A55 only, so in D08 it
            # binds the core types alone.
            bound = dialect is A55 or event.type in D08_TURN_BOUND_TYPES
            if s.turn is None and not s.manual_bracket and bound:
                why = why or f"{event.type} outside an open turn"
    return why
