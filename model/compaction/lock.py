"""Who may open a bracket, and when (CMP-6, CMP-14): the A55 lock and the pressure trigger's place.

The D08 overrides (DIA-3, DIA-5, DIA-6) are in :mod:`model.compaction.d08`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.records import CompactionRun, Owner
from sessionspec.model.jsonval import Absent, Json, get
from sessionspec.model.log import Event, is_open
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


@implements("CMP-14")
def bracket_owner(events: Sequence[Event], manual: bool = False) -> Owner | Rejected:
    """CMP-14: "(lock, A55) The transaction MUST decide the lock and owner turn as follows."

    CMP-14: scan back to the latest ``turn/start`` or ``turn/end``; the first
    ``compact/start|end`` met decides the lock; a locked bracket or no open
    turn rejects (Q-12: the scan is turn-local); otherwise "``turn`` = that
    ``turn/start``'s turn", copied as it is (Q-31: a ``null`` turn reads as no
    open turn, an absent one makes the ``compact/start`` append fail, LOG-4).
    A55 has no manual path: ``manual`` is ignored."""
    locked: bool | None = None
    turn_edge: Event | None = None
    for event in reversed(events):
        if event.type in ("turn/start", "turn/end"):
            turn_edge = event
            break
        if locked is None and event.type in ("compact/start", "compact/end"):
            locked = event.type == "compact/start"
    if turn_edge is not None and turn_edge.type == "turn/start" and turn_edge.data is None:
        return Rejected(rule="CMP-14", reason="Cannot read properties of null (reading 'turn')")
    if locked:
        return Rejected(rule="CMP-14", reason="compaction already in progress")
    return turn_owner(get(turn_edge.data, "turn") if turn_edge is not None and turn_edge.type == "turn/start" else None)


def turn_owner(turn: Json | Absent) -> Owner | Rejected:
    """CMP-14's owner step of :func:`bracket_owner`: no open turn (or a ``null`` turn) rejects, an absent turn
    fails the append (LOG-4), any other value is the owner, copied as it is (Q-31).

    ``turn``: the open ``turn/start``'s ``turn`` as logged, ``None`` when no turn is open (the representation of
    the real invariant's ``openTurn``).  The lock (:func:`bracket_owner`) and the companion's judgement of a
    logged ``compact/start`` (:func:`model.compaction.companion.check_owner`) both ask this one definition."""
    if turn is None:
        return Rejected(rule="CMP-14", reason="compactRegion: no open turn — compaction events must be enclosed in a turn")
    if isinstance(turn, Absent):
        return Rejected(rule="LOG-4", reason='session event "compact/start" carries non-JSON-serializable data')
    return Owner(turn=turn)


def step_is_open(events: Sequence[Event]) -> bool:
    """Whether the latest ``step/start`` has no ``step/end`` yet."""
    return is_open(events, "step/start", "step/end")


def pressure_gate(events: Sequence[Event]) -> CompactionRun | Rejected | None:
    """CMP-6: the pressure trigger runs on ``agent/post-step``, inside the step
    (after its results, before ``step/end``).  None: go on; a Rejected: the
    loop called it at the wrong place (a loop bug)."""
    if not step_is_open(events):
        return Rejected(rule="CMP-6", reason="pressure compaction runs inside the step, before step/end")
    return None
