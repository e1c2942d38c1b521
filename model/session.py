"""Session operations outside the agent loop (LOG-16 out-of-band appends).

A plugin event that opts into out-of-band appends may be written while no turn
is running (e.g. a title or a maintenance record between turns); the session
then wraps it in a synthetic turn so that every non-header event still sits
inside a turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.log import A55_SURFACE_TYPES, D08_SURFACE_TYPES, Event, is_open, make_event
from sessionspec.model.loop import next_turn_number
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


def turn_is_open(log: Sequence[Event]) -> bool:
    """A turn is open when the last ``turn/start`` or ``turn/end`` of the log is a ``turn/start``."""
    return is_open(log, "turn/start", "turn/end")


@implements("LOG-16")
def out_of_band_events(log: Sequence[Event], type_name: str, data: Json, trigger: Json, time: int = 0) -> tuple[Event, ...] | Rejected:
    """LOG-16: "An out-of-band append (plugin types that opt in, never surface types) MUST work as follows."

    LOG-16: "If a turn is open, it is a plain append. If not, the harness
    writes ``turn/start {turn: last+1, trigger}``, then the event, then
    ``turn/end {turn, reason:{kind:"completed"}}``."  Surface types never go
    out of band.  Returns the events to append after ``log`` (seqs continue it)."""
    if type_name in A55_SURFACE_TYPES | D08_SURFACE_TYPES:
        return Rejected(rule="LOG-16", reason=f"{type_name} is a surface type and cannot be appended out of band")
    seq = len(log)
    if turn_is_open(log):
        return (make_event(type_name, seq=seq, time=time, data=data),)
    turn = next_turn_number(log)
    return (
        make_event("turn/start", seq=seq, time=time, data=JsonObject((("turn", turn), ("trigger", trigger)))),
        make_event(type_name, seq=seq + 1, time=time, data=data),
        make_event("turn/end", seq=seq + 2, time=time,
                   data=JsonObject((("turn", turn), ("reason", JsonObject((("kind", "completed"),)))))),
    )
