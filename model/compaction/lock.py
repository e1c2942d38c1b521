"""Who may open a bracket, and when (CMP-6, CMP-14): the A55 lock and the pressure trigger's place.

The D08 overrides (DIA-3, DIA-5, DIA-6) are in :mod:`model.compaction.d08`.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.compaction.records import CompactionRun, Owner
from model.jsonval import get
from model.log import Event, is_open
from model.rejected import Rejected
from model.rules import implements


@implements("CMP-14")
def bracket_owner(events: Sequence[Event], manual: bool = False) -> Owner | Rejected:
    """CMP-14: "(lock, A55) The transaction MUST decide the lock and owner turn as follows."

    CMP-14: scan back to the latest ``turn/start`` or ``turn/end``; the first
    ``compact/start|end`` met decides the lock; a locked bracket or no open
    turn rejects (Q-12: the scan is turn-local).  A55 has no manual path:
    ``manual`` is ignored."""
    locked: bool | None = None
    turn_edge: Event | None = None
    for event in reversed(events):
        if event.type in ("turn/start", "turn/end"):
            turn_edge = event
            break
        if locked is None and event.type in ("compact/start", "compact/end"):
            locked = event.type == "compact/start"
    if locked:
        return Rejected(rule="CMP-14", reason="compaction already in progress")
    if turn_edge is None or turn_edge.type == "turn/end":
        return Rejected(rule="CMP-14", reason="compactRegion: no open turn — compaction events must be enclosed in a turn")
    turn = get(turn_edge.data, "turn")
    return Owner(turn=turn if isinstance(turn, int) else None)


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
