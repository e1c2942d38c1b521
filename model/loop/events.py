"""What the loop exchanges with its listeners and its caller: drafts to append,
the ``agent/post-step`` and ``agent/request-error`` seams (Hooks), the requests
it sent and the outcome of a turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, final

from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop.instance import LoopInstance
from sessionspec.model.loop.script import AgentConfig
from sessionspec.model.prefix import Composition
from sessionspec.model.rules import implements
from sessionspec.model.wire import Request


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """An event to append; the writer assigns seq and time."""

    type_name: str
    data: Json
    source_event_seqs: Json | Absent = ABSENT
    surface_op: Json | Absent = ABSENT


@implements("WIRE-4")
@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SideCall:
    """WIRE-4: "Loop requests MUST be marked as loop requests, by identity."

    A model call a listener made that is NOT a loop request (summarizer requests are
    unmarked), e.g. the CMP-17 summarizer request; ``dispatch_len``
    is the log length when it was sent."""

    request: JsonObject
    dispatch_len: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StepContext:
    turn: int
    step: int
    header: EpochHeader
    had_tool_calls: bool
    # The turn signal is already aborted (CMP-6: pressure compaction then skips).
    aborted: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PostStepResult:
    """What the ``agent/post-step`` listeners append (before ``step/end``) and the
    model calls they made."""

    drafts: tuple[Draft, ...] = ()
    side_calls: tuple[SideCall, ...] = ()


class ErrorAction(Enum):
    FAIL = "fail"
    RETRY = "retry"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestErrorContext:
    turn: int
    step: int
    failure: JsonObject
    prior_failures: tuple[JsonObject, ...]
    default: ErrorAction
    aborted: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDecision:
    action: ErrorAction
    drafts: tuple[Draft, ...] = ()
    side_calls: tuple[SideCall, ...] = ()


PostStepHook = Callable[[Sequence[Event], StepContext], PostStepResult]
RequestErrorHook = Callable[[Sequence[Event], RequestErrorContext], ErrorDecision]
CompositionHook = Callable[[Composition], None]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Hooks:
    """Pure seams for ``agent/post-step`` (compaction plugs in here, CMP-6) and
    ``agent/request-error`` (overflow compaction + retry, CMP-7), and the environment's seam after
    a composition: a contributor keeps the objects it returned and may edit them later (PFX-6).
    The model never edits them itself; a test script that plays such a contributor supplies the
    edit here (``spec.probes.edit_held_objects``), called once the cache is written."""

    post_step: PostStepHook | None = None
    request_error: RequestErrorHook | None = None
    after_composition: CompositionHook | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SentRequest:
    """A request the loop handed to the model; ``dispatch_len`` is the log length
    at the ``llm/stream`` dispatch."""

    request: Request
    step_start_seq: int
    dispatch_len: int
    turn: int
    step: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOutcome:
    log: tuple[Event, ...]
    instance: LoopInstance
    agent: AgentConfig
    requests: tuple[SentRequest, ...]
    compositions: int
    interrupted_composition: bool
    turn: int
    end_reason: JsonObject
    # Listener model calls (summarizer requests), in dispatch order.
    side_calls: tuple[SideCall, ...] = ()


# No listeners on the two seams.
NO_HOOKS: Final = Hooks()
