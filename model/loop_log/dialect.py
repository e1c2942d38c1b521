"""The one place the loop's log rules are selected by dialect.

:data:`A55` lists the A55 loop's definitions of every step a dialect modifies; :data:`D08` is A55 with the D08
loop's: its message shapes (DIA-10, :func:`sessionspec.model.message_shape.message_shape`), its step order (DIA-12: the entering messages and ``request/context`` after
``step/start``, before dispatch), its retry inside the step (DIA-7: a failed finish is followed by the retry's
message, whose usage is the retry's) and its cancelled streams (DIA-15).  The definitions never branch on the
dialect: they call ``track.shapes.f``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from sessionspec.model.jsonval import Absent, Json, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop_log.step import (
    attempt_kept,
    check_entering_placement,
    check_no_message_after_failure,
    check_prompt_prefix,
    check_request_context,
    message_after_retry,
    no_request_context,
    usage_retried,
)
from sessionspec.model.loop_log.track import LoopShapes, LoopTrack, TurnTrack
from sessionspec.model.loop_log.turn import (
    cancelled_visible_stream,
    check_cancelled_end,
    check_error_step,
    check_prompt_before_step,
    check_stepless_end,
    unrecorded_stream,
)
from sessionspec.model.message_shape import message_shape


def a55_turn_closed(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent, reason: Json | Absent) -> None:
    """A55: LOG-16's stepless turns and LOOP-16's step counter."""
    check_stepless_end(track, t, event, kind)
    check_error_step(track, t, event, kind, get(reason, "step"))


def d08_turn_closed(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent, reason: Json | Absent) -> None:
    """D08: a cancelled visible stream records its message (DIA-15); an error end carries an LLM failure and no
    step (DIA-14); the D08 loop's stepless ends (``blocked``) are DIA-14's."""
    check_cancelled_end(track, t, event, kind)


def no_prompt_first(track: LoopTrack, t: TurnTrack, event: Event) -> None:
    """DIA-12 (D08): the entering messages follow ``step/start``."""


A55: Final = LoopShapes(
    dialect=Dialect.A55,
    message=message_shape(Dialect.A55),
    entering_message=check_prompt_prefix,
    request_context=no_request_context,
    step_closed=unrecorded_stream,
    turn_closed=a55_turn_closed,
    failed_finish_message=check_no_message_after_failure,
    prompt_before_step=check_prompt_before_step,
    attempt_failed=attempt_kept,
)

D08: Final = replace(
    A55,
    dialect=Dialect.D08,
    message=message_shape(Dialect.D08),
    entering_message=check_entering_placement,
    request_context=check_request_context,
    step_closed=cancelled_visible_stream,
    turn_closed=d08_turn_closed,
    failed_finish_message=message_after_retry,
    prompt_before_step=no_prompt_first,
    attempt_failed=usage_retried,
)


def loop_shapes(dialect: Dialect) -> LoopShapes:
    """The dialect's loop rules: A55's, or D08's overlay (DIA-7, DIA-10, DIA-12, DIA-14, DIA-15)."""
    match dialect:
        case Dialect.A55:
            return A55
        case Dialect.D08:
            return D08


def new_track(dialect: Dialect) -> LoopTrack:
    """The loop before any event of a log in ``dialect``."""
    return LoopTrack(shapes=loop_shapes(dialect))
