"""The state of the loop audit's fold (``sessionspec.check.loop_audit``): the open turn, the open
step and the loop instance."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionspec.check.event_fields import ToolBlock
from sessionspec.fast.constants import ABSENT
from sessionspec.model.jsonval import Absent, Json
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

# StepState and TurnState are built at every step and turn: plain classes with their own
# ``__init__``, which mypyc compiles (a dataclass's generated initializer stays interpreted code,
# about 6000 instructions a call; docs/performance.md, step 15).

class StepState:
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
        # D08: the current attempt streamed visible text or reasoning and has not finished (DIA-15).
        self.attempt_visible = False
        # The current attempt has streamed a chunk and not yet its finish.
        self.streaming = False


class TurnState:
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
        self.inner = 0
        self.inner_surface = False
        # A55: a step whose stream finished successfully but recorded no message (seq of its step/end).
        self.unrecorded: int | None = None
        # D08: a step whose attempt streamed visible text and recorded no message (seq of its step/end).
        self.cancelled_visible: int | None = None
        # D08: a legacy turn the A55 loop wrote (its messages carry migrated legacy ids, DIA-13).
        self.legacy = False


@dataclass(slots=True)
class LoopState:
    dialect: Dialect
    found: list[Rejected] = field(default_factory=list)
    # FMT-7 Writers: the judgement of the step being started (sessionspec.check.api_steps).
    step_api: bool = False
    turn: TurnState | None = None
    step: StepState | None = None
    anchored: bool = False
    config: Json | Absent = ABSENT

    def report(self, rule: str, event: Event, why: str) -> None:
        self.found.append(Rejected(rule=rule, seq=event.seq, reason=why))
