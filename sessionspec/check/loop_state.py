"""The state of the loop audit's fold (``sessionspec.check.loop_audit``): the open turn, the open
step and the loop instance."""

from __future__ import annotations

from dataclasses import dataclass, field

from model.jsonval import Absent, Json
from model.log import Dialect, Event
from model.rejected import Rejected
from sessionspec.check.event_fields import ToolBlock
from sessionspec.fast.constants import ABSENT


@dataclass(slots=True)
class StepState:
    turn: Json | Absent
    step: Json | Absent
    requested: bool = False
    attempt_usage: Json | Absent = ABSENT
    finish: Json | Absent = ABSENT
    message: bool = False
    max_tokens: bool = False
    blocks: list[ToolBlock] = field(default_factory=list)
    calls: int = 0
    results: int = 0
    last_result: int = -1
    context_after_results: int | None = None
    failed_attempt: bool = False
    # FMT-7 Writers: a step with a message but no stream and no sourceEventSeqs was written through
    # the session API or by tooling, not by the loop: the loop's own rules do not bind it.
    api: bool = False
    # D08: the current attempt streamed visible text or reasoning and has not finished (DIA-15).
    attempt_visible: bool = False
    # The current attempt has streamed a chunk and not yet its finish.
    streaming: bool = False


@dataclass(slots=True)
class TurnState:
    number: Json | Absent
    trigger: Json | Absent
    prompt: bool = False
    blocked: Event | None = None
    steps: int = 0
    last_step: int = 0
    max_tokens: bool = False
    requested: bool = False
    failed_step: int | None = None
    inner: int = 0
    inner_surface: bool = False
    # A55: a step whose stream finished successfully but recorded no message (seq of its step/end).
    unrecorded: int | None = None
    # D08: a step whose attempt streamed visible text and recorded no message (seq of its step/end).
    cancelled_visible: int | None = None
    # D08: a legacy turn the A55 loop wrote (its messages carry migrated legacy ids, DIA-13).
    legacy: bool = False


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
