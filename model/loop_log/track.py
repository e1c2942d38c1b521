"""What the log so far shows of the loop: the open turn, the open step and the loop instance
(:class:`LoopTrack`), and what a dialect changes in the loop's rules (:class:`LoopShapes`).

Mutable, owned by whoever folds the log (as a loop ``Turn`` is); the definitions of
:mod:`sessionspec.model.loop_log.turn` and :mod:`sessionspec.model.loop_log.step` advance it and
record what they refuse in ``found``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, js_stringify, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.message_shape import MessageShape
from sessionspec.model.rejected import Rejected

# (id, name, arguments) of a ``tool-call`` block, in content order.
ToolBlock = tuple[Json | Absent, Json | Absent, Json | Absent]

# LOOP-10: "A ``finish`` with kind ``error`` or ``aborted`` is also a request error."
FAILED_FINISHES: Final = frozenset({"error", "aborted"})

# StepTrack and TurnTrack are built at every step and turn: plain classes with ``__slots__`` (the
# checker folds every log through them).


class StepTrack:
    """The open step: its current attempt (request made, last usage chunk, finish, visible text, streaming),
    its message and the tool-call blocks it keeps, and how many were called and answered."""

    __slots__ = ("turn", "step", "requested", "attempt_usage", "finish", "message", "max_tokens", "blocks", "calls",
                 "results", "last_result", "context_after_results", "failed_attempt", "api", "attempt_visible", "streaming")

    def __init__(self, turn: Json | Absent, step: Json | Absent, api: bool = False) -> None:
        self.turn = turn
        self.step = step
        self.requested = False
        self.attempt_usage: Json | Absent = ABSENT
        self.finish: Json | Absent = ABSENT
        self.message = False
        self.max_tokens = False
        self.blocks: list[ToolBlock] = []
        self.calls = 0
        self.results = 0
        self.last_result = -1
        self.context_after_results: int | None = None
        self.failed_attempt = False
        # FMT-7 Writers: a step with a message but no stream and no sourceEventSeqs was written through
        # the session API or by tooling, not by the loop: the loop's own rules do not bind it.
        self.api = api
        # The current attempt streamed visible text or reasoning and has not finished (DIA-15).
        self.attempt_visible = False
        # The current attempt has streamed a chunk and not yet its finish.
        self.streaming = False


class TurnTrack:
    """The open turn: its number and trigger, its prompt or blocked prompt, its steps, and what its last step
    left (a failed step, a successful stream with no message, a max-tokens finish)."""

    __slots__ = ("number", "trigger", "prompt", "blocked", "steps", "last_step", "max_tokens", "requested", "failed_step",
                 "inner", "inner_surface", "unrecorded", "cancelled_visible", "legacy")

    def __init__(self, number: Json | Absent, trigger: Json | Absent) -> None:
        self.number = number
        self.trigger = trigger
        self.prompt = False
        self.blocked: Event | None = None
        self.steps = 0
        self.last_step = 0
        self.max_tokens = False
        self.requested = False
        self.failed_step: int | None = None
        # The events inside the turn (LOG-16's out-of-band shape): how many, and whether one is a surface op.
        self.inner = 0
        self.inner_surface = False
        # A55: a step whose stream finished successfully but recorded no message (seq of its step/end).
        self.unrecorded: int | None = None
        # D08: a step whose attempt streamed visible text and recorded no message (seq of its step/end).
        self.cancelled_visible: int | None = None
        # D08: a legacy turn the A55 loop wrote (its messages carry migrated legacy ids, DIA-13).
        self.legacy = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoopShapes:
    """What a dialect changes in the loop's rules a log shows (``sessionspec.model.loop_log.dialect``): where a
    message keeps its content and route (DIA-10), what an entering ``user/message`` and a ``request/context`` must
    respect (LOOP-4; D08: DIA-12), what a step's end and a turn's end leave to judge (A55: LOOP-11, LOG-16,
    LOOP-16; D08: DIA-15), whether a failed finish may be followed by a message (LOOP-10; D08: DIA-7), and
    whether a message-triggered step needs its prompt first (LOOP-3; D08: DIA-12)."""

    dialect: Dialect
    message: MessageShape
    entering_message: Callable[[LoopTrack, Event], None]
    request_context: Callable[[LoopTrack, Event], None]
    step_closed: Callable[[LoopTrack, TurnTrack, StepTrack, Event], None]
    turn_closed: Callable[[LoopTrack, TurnTrack, Event, Json | Absent, Json | Absent], None]
    failed_finish_message: Callable[[LoopTrack, StepTrack, Event], None]
    prompt_before_step: Callable[[LoopTrack, TurnTrack, Event], None]
    attempt_failed: Callable[[StepTrack], None]


@dataclass(slots=True)
class LoopTrack:
    """The loop as the log so far shows it: the open turn and step, whether the instance anchored a header,
    the provenance the header config in force gives a message, and the findings so far."""

    shapes: LoopShapes
    found: list[Rejected] = field(default_factory=list)
    # FMT-7 Writers: the judgement of the step being started (whoever folds the log knows it).
    step_api: bool = False
    turn: TurnTrack | None = None
    step: StepTrack | None = None
    anchored: bool = False
    # The provenance a message of the routed header in force records (LOOP-11; None: no header config yet).
    routed: tuple[Json | Absent, Json | Absent] | None = None

    def report(self, rule: str, event: Event, why: str) -> None:
        self.found.append(Rejected(rule=rule, seq=event.seq, reason=why))


def show(v: Json | Absent) -> str:
    """A short JSON rendering for a finding's reason."""
    return js_stringify(None if v is ABSENT else v)[:40]


def same(a: Json | Absent, b: Json | Absent) -> bool:
    """:func:`sessionspec.model.jsonval.json_eq`, answered at once for one object and for two strings (JS texts of
    strings are equal exactly when the strings are): the ids, names and arguments a log repeats are strings."""
    if a is b:
        return True
    if type(a) is str and type(b) is str:
        return a == b
    return json_eq(a, b)
