"""The acceptor of :mod:`sessionspec.model.compaction.bracket_contents` for the checker's one pass: the same moves
of the same :class:`~sessionspec.model.compaction.trigger_place.TriggerPlace` and the same decisions, in a module the
compiled wheel compiles (issue 44).

The fold hands the place every step and turn boundary, every surface event and every chunk of a log; compiled, a
call per such event into the model's interpreted ``take_boundary``/``take_surface``/``take_chunk`` would cost what
the fold cost before the move (the zero-retention move measured 1 % of the whole check for less).  So the fold runs
these twins; every finding is still the model's deciding function (``check_bracket_placement``, ``check_checkpoint_source``,
...), asked only where the model's acceptor asks it, and ``tests/fast/test_fast_trigger_place.py`` holds the twins
equal to the model, event for event (the place after each event and the findings), on the logs the loop simulator
writes with brackets appended where the triggers run and where they do not, in both dialects.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction.bracket_contents import check_bracket_body, check_checkpoint_source
from sessionspec.model.compaction.brackets import is_checkpoint_source
from sessionspec.model.compaction.trigger_place import (
    TriggerPlace,
    check_bracket_closed,
    check_bracket_placement,
    check_overflow_retry,
    check_prune_placement,
)
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

# The class as a constant of this module (compiled, an imported name is a dictionary lookup at each read).
_OBJECT: Final = JsonObject


def take_chunk(place: TriggerPlace, event: Event) -> None:
    """:func:`sessionspec.model.compaction.trigger_place.take_chunk`."""
    data = event.data
    chunk = data.get("chunk", ABSENT) if type(data) is _OBJECT else ABSENT
    if type(chunk) is _OBJECT and chunk.get("type") == "finish":
        reason = get(chunk, "reason")
        place.failed_attempt = get(reason, "kind") == "error"
        place.failure_code = get(get(reason, "failure"), "code")


def take_boundary(place: TriggerPlace, event: Event, live: bool, found: list[Rejected]) -> None:
    """:func:`sessionspec.model.compaction.bracket_contents.take_boundary`."""
    kind = event.type
    if kind == "request/header":
        place.header = True
    bad: Rejected | None = None
    if place.bracket and live and (kind == "step/start" or kind == "step/end" or kind == "turn/end" or kind == place.end_type):
        bad = check_bracket_closed(place, event)
        if bad is not None:
            found.append(bad)
    if live and kind == place.start_type:
        bad = check_bracket_placement(place, event)
        place.bracket, place.surface_append, place.checkpoint, place.step_end_in_bracket = True, None, None, None
    elif kind == place.end_type and place.bracket:
        failed = get(event.data, "error") is not ABSENT
        bad = check_bracket_body(place, event, failed) if live else None
        committed = place.rules.committed_overflow(place, event, failed)
        if committed is not None:
            place.overflow_committed = committed
        place.bracket = False
    elif live and kind == "turn/end" and place.overflow_committed is not None:
        bad = check_overflow_retry(place, event)
    elif kind in place.releasing:
        bad = None
        place.bracket = False
    else:
        bad = None
    if bad is not None:
        found.append(bad)
    if kind == "step/start":
        place.overflow_committed = None
        place.in_step, place.message, place.message_event, place.results, place.failed_attempt = True, False, None, 0, False
        place.failure_code = ABSENT
    elif kind == "step/end":
        place.last_step_failed = not place.message
        place.last_failure_code = place.failure_code if not place.message else ABSENT
        place.in_step = False
    elif kind == "turn/start":
        place.in_step, place.last_step_failed = False, False
    elif kind == "assistant/chunk":
        take_chunk(place, event)


def take_surface(place: TriggerPlace, event: Event, live: bool, found: list[Rejected]) -> None:
    """:func:`sessionspec.model.compaction.bracket_contents.take_surface`."""
    op, kind, seq = event.surface_op, event.type, event.seq
    if type(op) is _OBJECT:
        bad: Rejected | None = None
        if live and kind == "tool/result" and not place.bracket:
            bad = check_prune_placement(place, event)
        elif live and kind == "user/message" and place.bracket and is_checkpoint_source(get(event.data, "source")):
            bad = check_checkpoint_source(event, place.dialect)
        if bad is not None:
            found.append(bad)
    elif op == "append":
        if kind == "assistant/message":
            place.message, place.message_event = True, event
        elif kind == "tool/result":
            place.results += 1
    if place.bracket:
        if isinstance(op, str):
            place.surface_append = place.surface_append if place.surface_append is not None else seq
        elif kind == "user/message" and is_checkpoint_source(get(event.data, "source")):
            place.checkpoint = seq
    if kind not in place.eligible:
        return
    if op == "append":
        place.head = seq if place.size == 0 else place.head
        place.last = seq
        place.size += 1
        return
    if get(op, "start") == place.head:
        place.head = seq
    if get(op, "end") == place.last:
        place.last = seq
