"""The loop's script: everything the real loop gets from the outside world, as data.

The model's replies, the listeners' static behaviour, cancel/dispose and the
agent options are values of :class:`TurnScript` and :class:`AgentConfig`, so a
turn is a deterministic function of (log, instance, agent, script).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.prefix import Contributor

USER_SOURCE: Final = JsonObject((("kind", "user"),))
GOAL_SOURCE: Final = JsonObject((("kind", "plugin"), ("plugin", "goal")))


def text_content(text: str) -> tuple[Json, ...]:
    """``[{type:"text", text}]``."""
    return (JsonObject((("type", "text"), ("text", text))),)


# --------------------------------------------------------------------------- script (data)


class Window(Enum):
    """Where a cancel/dispose lands: every LOOP-15 checkpoint, plus inside the
    ``agent/session-prefix`` waterfall (PFX-5).  The interruption is observed at
    the next checkpoint the loop reaches.

    Positions (step windows apply to ``Interrupt.step``): IN_COMPOSITION lands
    at the innermost point of the waterfall, once every dispatched contributor
    ran (its injects appended) and before the cache write; a throwing
    contributor ends the waterfall before that point, so it never fires there;
    AFTER_STREAM is a checkpoint only for a stream that ends: on a thrown
    stream the abort lands but the request-error path decides (QF-7);
    AFTER_STEP_RESULT is inside the step-result try, so an interruption there
    records an empty assistant message first (QF-3); AFTER_CONTINUATION and
    AFTER_TURN_STOP follow ``step/end`` on every step, also when the turn goes
    on (QF-5)."""

    AFTER_TURN_START = "after turn/start"
    AFTER_PROMPT_SUBMIT = "after prompt-submit"
    AFTER_ASSEMBLY = "after assembly"
    IN_COMPOSITION = "inside the session-prefix waterfall"
    AFTER_PRE_STEP = "after pre-step"
    AFTER_STEP_START = "after step/start"
    AFTER_REQUEST = "after agent/request"
    AFTER_PREPARE_CALL = "after prepareCall"
    BEFORE_CHUNK = "before a chunk append"
    AFTER_STREAM = "after the stream"
    AFTER_STEP_RESULT = "after step-result"
    AFTER_POST_STEP = "after post-step"
    AFTER_CONTINUATION = "after turn-continuation"
    AFTER_TURN_STOP = "after turn-stop"


class InterruptKind(Enum):
    """LOOP-15: a cancel ends the turn ``aborted``; a dispose ``disposed`` (and wins).
    FOREIGN is an abort whose reason is not an agent interrupt reason (Q-30)."""

    CANCEL = "aborted"
    DISPOSE = "disposed"
    FOREIGN = "foreign"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Interrupt:
    """Abort the turn signal at ``window`` of step ``step`` (chunk index for BEFORE_CHUNK).

    It fires once per send: a window not passed in one turn may still be passed
    in a re-queued turn of the same send (QF-4), and once it fired the agent's
    ``cancel()`` (or dispose) has discarded whatever was still queued (QF-9)."""

    window: Window
    kind: InterruptKind = InterruptKind.CANCEL
    step: int = 1
    chunk: int = 0


class ReplyKind(Enum):
    TEXT = "text"
    TOOL_CALLS = "tool-calls"
    EMPTY = "empty"
    ERROR_THROWN = "error-thrown"
    ERROR_IN_BAND = "error-in-band"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallSpec:
    call_id: str
    name: str
    arguments: str
    result: str
    is_error: bool = False
    # How the adapter splits the arguments into deltas (None: one delta).
    arguments_chunks: tuple[str, ...] | None = None
    # LOOP-12: contexts the tool defers (``user/message`` data), appended after ALL results of the batch.
    deferred: tuple[JsonObject, ...] = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """The model's answer to one request, plus what listeners do around it.

    ``retry`` is the default ``agent/request-error`` decision for an error
    reply; ``continue_with`` a turn-continuation reason (logged as steering
    before the next step, LOOP-13); ``request_inject`` an ``inject()`` during
    ``agent/request`` (joins the NEXT request, LOOP-6); ``system_after`` /
    ``tools_after`` change the assembled prompt/tools while the tools run.
    """

    kind: ReplyKind = ReplyKind.TEXT
    text: str = "ok"
    # How the adapter splits the text into deltas (None: one per character).
    text_chunks: tuple[str, ...] | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    usage: tuple[int, int] | None = (10, 10)
    error_code: str = "SERVER"
    error_message: str = "request failed"
    error_status: int | None = None
    retry: bool = False
    continue_with: str | None = None
    request_inject: JsonObject | None = None
    system_after: str | None = None
    tools_after: tuple[Json, ...] | None = None
    # LOOP-11: the stream finishes ``max-tokens`` (tool-call blocks dropped, no tools run).
    max_tokens: bool = False
    # LOOP-11: an ``agent/step-result`` listener throws with this message.
    step_result_error: str | None = None
    # WIRE-3: a stream listener tries to mutate the request; the runtime's
    # immutability error (this message) raises into the step.
    mutation_error: str | None = None

    @property
    def executed_calls(self) -> tuple[ToolCallSpec, ...]:
        """LOOP-11: "On a max-tokens finish, tool-call blocks are dropped ... and no tools run"."""
        return () if self.max_tokens else self.tool_calls


class Placement(Enum):
    SEPARATE = "separate"
    PROMPT_PREFIX = "prompt-prefix"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PromptContext:
    """An ``additionalContexts`` entry of ``agent/prompt-submit`` (LOOP-3/LOOP-4)."""

    content: tuple[Json, ...]
    source: Json
    placement: Placement = Placement.SEPARATE
    meta: Json | Absent = ABSENT


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    content: tuple[Json, ...]
    source: Json = USER_SOURCE
    block_reason: str | None = None
    contexts: tuple[PromptContext, ...] = ()
    submit_error: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Steering:
    content: tuple[Json, ...]
    source: Json = USER_SOURCE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnScript:
    prompt: Prompt
    replies: tuple[Reply, ...] = ()
    interrupt: Interrupt | None = None
    steering: tuple[Steering, ...] = ()
    pre_step_error: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig:
    """Agent options and the listeners' static behaviour.

    ``request_config`` is what an ``agent/request`` listener merges over the
    seeded config (``{...seed, ...changes}``, so existing keys keep their place).
    """

    provider: str = "mock"
    model: str = "mock-1"
    system: str = ""
    tools: tuple[Json, ...] = ()
    contributors: tuple[Contributor, ...] = ()
    request_config: JsonObject = field(default_factory=JsonObject)
    # PFX-4: the composing agent (its scoped session-prefix listeners run; other agents' do not).
    agent_id: str = "agent"



def obj(*pairs: tuple[str, Json | Absent]) -> JsonObject:
    """A JSON object of the pairs whose value is present (an absent value drops its key)."""
    return JsonObject((k, v) for k, v in pairs if not isinstance(v, Absent))
