"""The A55 agent-loop instance as pure transitions over (session log, instance state).

``run_turn(log, instance, agent, script)`` plays one message-triggered turn
exactly as ``packages/core/agent-loop/src/loop.ts`` runs it (LOOP-3..LOOP-17)
and returns the new log, the new instance state and the requests the loop
handed to the model.  Everything the real loop gets from the outside world
(the model's replies, listeners, cancel/dispose) is *data* in the
:class:`TurnScript`; the clock is the seq, so the function is deterministic.

Every append goes through :class:`~model.derive.IncrementalDerivation` (the
core surface validation), so the simulator cannot write an invalid log, and
every request is built by :func:`~model.wire.build_request` from the boundary
snapshot taken just before ``step/start`` (LOOP-6, WIRE-1).

:class:`Fault` names deliberately broken variants used only to prove that the
state machines in ``spec/machines.py`` can fail; ``Fault.NONE`` is the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Final, assert_never, final

from model.codec import serialize_event
from model.compaction import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactConfig,
    Summarizer,
    SummarizerOutput,
    SummaryCall,
    Trigger,
    balanced_cuts,
    compact_if_needed,
    compact_spec,
    pressure_compaction,
    recover_overflow,
    summarizer_request,
    target_policy,
)
from model.derive import IncrementalDerivation
from model.header import EpochHeader, HeaderReason, canonical, fold_header, header_eq, header_of_event, header_to_json
from model.jsonval import ABSENT, Absent, Json, JsonObject, freeze, get, js_stringify, with_values
from model.log import Dialect, Event, make_event
from model.meter import MeterState, fold_meter_event, latest_header, measure_state, node_price
from model.prefix import (
    NOT_COMPOSED,
    Composition,
    Contributor,
    NotComposed,
    compose,
    freeze_prefix,
    mutate_held,
)
from model.prune import PruneConfig
from model.reconstruct import rebuild_request_at
from model.rejected import FailureKind, Rejected
from model.rules import implements
from model.surface import fold_surface, log_view
from model.wire import Request, build_request, request_to_json

USER_SOURCE: Final = JsonObject((("kind", "user"),))
GOAL_SOURCE: Final = JsonObject((("kind", "plugin"), ("plugin", "goal")))
REQUEST_DELIMITER: Final = JsonObject((("type", "text"), ("text", "\n\n## My request:\n")))


def text_content(text: str) -> tuple[Json, ...]:
    """``[{type:"text", text}]``."""
    return (JsonObject((("type", "text"), ("text", text))),)


# --------------------------------------------------------------------------- script (data)


class Window(Enum):
    """Where a cancel/dispose lands: every LOOP-15 checkpoint, plus inside the
    ``agent/session-prefix`` waterfall (PFX-5).  The interruption is observed at
    the next checkpoint the loop reaches."""

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
    """Abort the turn signal at ``window`` of step ``step`` (chunk index for BEFORE_CHUNK)."""

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


# --------------------------------------------------------------------------- instance


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoopInstance:
    """LOOP-1 / PFX-1: ``{loggedHeader, prefix}`` (``disposed`` only ends the
    instance's life; nothing conversational lives here)."""

    logged_header: bool = False
    prefix: NotComposed | tuple[Json, ...] = NOT_COMPOSED
    disposed: bool = False
    # Only under Fault.NO_CLONE: the cache aliases the contributors' objects.
    live_prefix: list[object] | None = None
    # the cached prefix holds a clonable value that is not lossless JSON
    # (the JSON part is in ``prefix``); every later header append fails.
    prefix_lossy: bool = False
    # Not loop state: the objects mutating contributors still hold after the
    # composition (they edit them after every turn, the PFX-6 probe).
    contributor_refs: tuple[list[object], ...] = ()


@implements("LOOP-1", "PFX-1")
def new_instance() -> LoopInstance:
    """A process start, ``agents.resume()``, a fork child or a new agent over a log (LOOP-1)."""
    return LoopInstance()


class Fault(Enum):
    """Deliberately broken variants (only for proving the machines can fail)."""

    NONE = "none"
    RECOMPOSE_EVERY_TURN = "recompose every turn"
    CACHE_INTERRUPTED = "cache an interrupted composition"
    PREFIX_AFTER_HISTORY = "put the prefix after history"
    PREFIX_IN_HISTORY = "append the prefix to history"
    NO_CLONE = "cache the contributors' objects without cloning"
    SNAPSHOT_AFTER_REQUEST = "take the boundary after agent/request"
    COMPACT_SPLITS_TOOL_PAIR = "a retention walk that splits a tool call from its result"
    COMPACT_DROPS_PREFIX = "a compaction that folds the prefix away (logs a header without it)"
    IGNORE_SCOPE = "dispatch the session-prefix waterfall to every agent's scoped listeners"


# --------------------------------------------------------------------------- hooks


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
    """A model call a listener made that is NOT a loop request (WIRE-4: summarizer
    requests are unmarked), e.g. the CMP-17 summarizer request; ``dispatch_len``
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


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Hooks:
    """Pure seams for ``agent/post-step`` (compaction plugs in here, CMP-6) and
    ``agent/request-error`` (overflow compaction + retry, CMP-7)."""

    post_step: PostStepHook | None = None
    request_error: RequestErrorHook | None = None


# --------------------------------------------------------------------------- compact-basic on the loop


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPlugin:
    """compact-basic (CMP-3) and, optionally, the tool-result prune service
    (PRN-1) mounted on the loop.  ``summarizer`` produces the summary (a fake in
    tests: the model stays deterministic, CMP-18); ``instruction`` is the opaque
    compaction instruction that ends every summarizer request (CMP-17; it is not
    logged); ``context_window`` is the routed model's capacity (CMP-8)."""

    summarizer: Summarizer
    instruction: str
    config: CompactConfig = CompactConfig()
    context_window: int | None = None
    prune: PruneConfig | None = None


def _as_drafts(events: Sequence[Event]) -> tuple[Draft, ...]:
    """Events a pure compaction function built, re-appended through the loop's
    writer (which assigns the same seqs: they were built for this log length)."""
    return tuple(Draft(type_name=e.type, data=e.data, source_event_seqs=e.source_event_seqs,
                       surface_op=e.surface_op) for e in events)


def _recording(plugin: CompactionPlugin) -> tuple[Summarizer, list[JsonObject]]:
    """The plugin's summarizer, recording each summarizer request it is asked for (CMP-17)."""
    sent: list[JsonObject] = []

    def summarize(call: SummaryCall) -> SummarizerOutput | Rejected:
        sent.append(summarizer_request(call, plugin.instruction))
        return plugin.summarizer(call)

    return summarize, sent


def _side_calls(sent: Sequence[JsonObject], appended: Sequence[Event]) -> tuple[SideCall, ...]:
    """Each summarizer request is dispatched right after its bracket's
    ``compact/start`` (CMP-15: start, measure, then summarize)."""
    starts = [e.seq for e in appended if e.type == "compact/start"]
    return tuple(SideCall(request=r, dispatch_len=seq + 1) for r, seq in zip(sent, starts))


def _broken(fault: Fault, events: Sequence[Event], appended: tuple[Event, ...]) -> tuple[Event, ...]:
    """Only for the machines' mutant tests: what a broken compaction would have written."""
    match fault:
        case Fault.COMPACT_SPLITS_TOOL_PAIR:
            return _split_tool_pair(events, appended)
        case Fault.COMPACT_DROPS_PREFIX:
            return _drop_prefix(events, appended)
        case Fault.NONE | Fault.RECOMPOSE_EVERY_TURN | Fault.CACHE_INTERRUPTED | Fault.PREFIX_AFTER_HISTORY | \
                Fault.PREFIX_IN_HISTORY | Fault.NO_CLONE | Fault.SNAPSHOT_AFTER_REQUEST | Fault.IGNORE_SCOPE:
            return appended
        case _:
            assert_never(fault)


def _with(data: Json | Absent, **changes: Json) -> JsonObject:
    assert isinstance(data, JsonObject)
    return with_values(data, **changes)


def _split_tool_pair(events: Sequence[Event], appended: tuple[Event, ...]) -> tuple[Event, ...]:
    """Fault.COMPACT_SPLITS_TOOL_PAIR: the CMP-11 walk without its head-ward
    rounding — the shadowed range of a (single) bracket grows by the next
    surface node whenever that cut is unbalanced (CMP-10), i.e. it takes a tool
    call and leaves its result behind (or the reverse)."""
    summaries = [i for i, e in enumerate(appended) if e.type == "compact/summary"]
    if len(summaries) != 1 or summaries[0] + 1 >= len(appended):
        return appended
    i = summaries[0]
    summary, checkpoint = appended[i], appended[i + 1]
    base = [*events, *appended[: i - 1]]
    fold = fold_surface(base)
    seqs = get(summary.data, "shadowedSeqs")
    if isinstance(fold, Rejected) or not isinstance(seqs, tuple) or not seqs or seqs[-1] not in fold.state.nodes:
        return appended
    nodes = fold.state.nodes
    end_idx = nodes.index(seqs[-1])
    balanced = balanced_cuts(nodes, base)
    if end_idx + 2 >= len(nodes) or isinstance(balanced, Rejected) or balanced[end_idx + 2]:
        return appended
    extra = nodes[end_idx + 1]
    tokens = node_price(base[extra])
    count = get(summary.data, "shadowedTokenCount")
    if isinstance(tokens, Rejected) or not isinstance(count, int):
        return appended
    start = get(get(summary.data, "shadowedRange"), "start")
    assert not isinstance(start, Absent)
    new_summary = make_event(summary.type, seq=summary.seq, time=summary.time, data=_with(
        summary.data, shadowedRange=_obj(("start", start), ("end", extra)), shadowedSeqs=(*seqs, extra),
        shadowedTokenCount=count + tokens))
    provenance = checkpoint.source_event_seqs
    assert isinstance(provenance, tuple)
    new_checkpoint = make_event(checkpoint.type, seq=checkpoint.seq, time=checkpoint.time, data=checkpoint.data,
                                source_event_seqs=(*provenance, extra),
                                surface_op=_with(checkpoint.surface_op, end=extra))
    return (*appended[:i], new_summary, new_checkpoint, *appended[i + 2:])


def _drop_prefix(events: Sequence[Event], appended: tuple[Event, ...]) -> tuple[Event, ...]:
    """Fault.COMPACT_DROPS_PREFIX: a compaction that treats the prefix as part of
    what it condenses and re-anchors the header without ``messagePrefix`` inside
    its bracket (CMP-24 forbids any header event; PFX-9 keeps the prefix beside history)."""
    ends = [i for i, e in enumerate(appended) if e.type == "compact/end" and get(e.data, "error") is ABSENT]
    header = latest_header(events)
    if not ends or not isinstance(header, EpochHeader) or isinstance(header.message_prefix, Absent):
        return appended
    i = ends[0]
    dropped = replace(header, message_prefix=ABSENT)
    event = make_event("request/header", seq=appended[i].seq, time=appended[i].time,
                       data=_obj(("header", header_to_json(dropped)), ("reason", HeaderReason.CHANGE.value)))
    shifted = tuple(make_event(e.type, seq=e.seq + 1, time=e.time, data=e.data,
                               source_event_seqs=e.source_event_seqs, surface_op=e.surface_op) for e in appended[i:])
    return (*appended[:i], event, *shifted)


@implements("CMP-6")
def pressure_listener(plugin: CompactionPlugin, fault: Fault = Fault.NONE) -> PostStepHook:
    """CMP-6: "On every ``agent/post-step`` — inside the step, after the assistant
    message, tool results, deferred context and the post-stream steering drain,
    **before step/end** — run ``compactIfNeeded(pressure)`` unless the signal is
    already aborted.  Its errors MUST NOT fail the turn": committed events stay,
    a configuration error appends nothing."""

    def post_step(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
        summarize, sent = _recording(plugin)
        run = pressure_compaction(events, summarize, aborted=ctx.aborted, config=plugin.config,
                                  context_window=plugin.context_window, prune=plugin.prune)
        if isinstance(run, Rejected):
            return PostStepResult()
        appended = _broken(fault, events, run.events)
        return PostStepResult(drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return post_step


@implements("CMP-7")
def overflow_listener(plugin: CompactionPlugin, fault: Fault = Fault.NONE) -> RequestErrorHook:
    """CMP-7: in ``agent/request-error`` (after the failed step's ``step/end``),
    recover only a ``CONTEXT_WINDOW_EXCEEDED`` failure with fewer earlier overflow
    failures in ``priorFailures`` than ``maxOverflowRetries``; ``retry`` iff the
    replace generation advanced and the signal is not aborted; otherwise
    delegate to the default decision (events already committed stay)."""

    def request_error(events: Sequence[Event], ctx: RequestErrorContext) -> ErrorDecision:
        code = get(ctx.failure, "code")
        overflows = sum(1 for f in ctx.prior_failures if get(f, "code") == CONTEXT_WINDOW_EXCEEDED)
        summarize, sent = _recording(plugin)
        decision = recover_overflow(events, summarize, failure_code=code if isinstance(code, str) else "",
                                    prior_overflow_failures=overflows, aborted=ctx.aborted, config=plugin.config,
                                    prune=plugin.prune)
        action = ErrorAction.RETRY if decision.retry else ctx.default
        appended = _broken(fault, events, decision.events)
        return ErrorDecision(action=action, drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return request_error


@implements("CMP-9")
def manual_listener(plugin: CompactionPlugin, fault: Fault = Fault.NONE) -> PostStepHook:
    """A compaction requested by hand (``compactIfNeeded(manual)``: the CMP-9
    selection with ``retainTokens = 0``, one transaction, no prune).  A55 has no
    idle compaction: CMP-14 requires an open turn (the ``turn: null`` bracket of
    DIA-3 is D08 only), so the request is served in a step's post-step, inside
    the turn, like a plugin calling ``compactRegion``.  Errors never fail the turn."""

    def post_step(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
        summarize, sent = _recording(plugin)
        run = compact_if_needed(events, summarize, trigger=Trigger.MANUAL, config=plugin.config)
        if isinstance(run, Rejected):
            return PostStepResult()
        appended = _broken(fault, events, run.events)
        return PostStepResult(drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return post_step


def metered_pressure_listener(plugin: CompactionPlugin, fault: Fault = Fault.NONE) -> PostStepHook:
    """:func:`pressure_listener` behind an incremental meter, for ONE append-only
    log (a live log, or a driver's session): below the threshold
    ``compactIfNeeded`` appends nothing (CMP-8: "if total < threshold return
    none"), so the full run (which re-measures the whole log) is only needed at
    or above it; the answer is the same.  The meter (MTR-5) folds each event once."""
    full = pressure_listener(plugin, fault)
    state = MeterState()
    folded = 0
    exact = True

    def post_step(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
        nonlocal folded, exact
        while exact and folded < len(events):
            exact = fold_meter_event(state, events[folded], log_view(events, folded)) is None
            folded += 1
        provider, model = get(ctx.header.config, "provider"), get(ctx.header.config, "model")
        if exact and isinstance(provider, str) and isinstance(model, str):
            spec = compact_spec(target_policy(plugin.config, provider, model), plugin.context_window, model)
            if not isinstance(spec, Rejected) and measure_state(state).total_tokens < spec.threshold_tokens:
                return PostStepResult()
        return full(events, ctx)

    return post_step


def compaction_hooks(plugin: CompactionPlugin, fault: Fault = Fault.NONE) -> Hooks:
    """compact-basic's two listeners: pressure at post-step (CMP-6), overflow at request-error (CMP-7)."""
    return Hooks(post_step=pressure_listener(plugin, fault), request_error=overflow_listener(plugin, fault))


# --------------------------------------------------------------------------- outcome


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


# --------------------------------------------------------------------------- internals


class _Interrupted(Exception):
    def __init__(self, kind: InterruptKind) -> None:
        super().__init__(kind.value)
        self.kind = kind


class _TurnFailed(Exception):
    def __init__(self, reason: JsonObject) -> None:
        super().__init__("turn failed")
        self.reason = reason


class _AppendRejected(Exception):
    def __init__(self, rejected: Rejected) -> None:
        super().__init__(str(rejected))
        self.rejected = rejected


@dataclass(slots=True)
class _Writer:
    """The session as the loop sees it: validated appends, live derivation, header fold."""

    derivation: IncrementalDerivation
    header: EpochHeader | Absent

    @property
    def events(self) -> list[Event]:
        return self.derivation.events

    def append(self, draft: Draft) -> int:
        seq = len(self.events)
        event = make_event(
            draft.type_name,
            seq=seq,
            time=seq,
            data=draft.data,
            source_event_seqs=draft.source_event_seqs,
            surface_op=draft.surface_op,
        )
        rejected = self.derivation.append(event)
        if rejected is not None:
            raise _AppendRejected(rejected)
        if event.type == "request/header":
            h = header_of_event(event)
            if isinstance(h, Rejected):
                raise _AppendRejected(h)
            self.header = h
        return seq


def _writer(log: Sequence[Event], dialect: Dialect) -> _Writer | Rejected:
    derivation = IncrementalDerivation(dialect=dialect)
    for event in log:
        rejected = derivation.append(event)
        if rejected is not None:
            return rejected
    header = fold_header(log, ABSENT, dialect)
    if isinstance(header, Rejected):
        return header
    return _Writer(derivation=derivation, header=header)


def _obj(*pairs: tuple[str, Json | Absent]) -> JsonObject:
    return JsonObject((k, v) for k, v in pairs if not isinstance(v, Absent))


APPEND: Final = "append"
LOSSY_HEADER_MESSAGE: Final = "request/header data is not lossless JSON"


@implements("LOOP-2")
def next_turn_number(log: Sequence[Event]) -> int:
    """LOOP-2: "``turn/start.data.turn`` of the **last** ``turn/start`` in the
    log, by position, plus 1.  If the log has no ``turn/start``, it is 1." """
    for event in reversed(log):
        if event.type == "turn/start":
            turn = get(event.data, "turn")
            if isinstance(turn, int) and not isinstance(turn, bool):
                return turn + 1
    return 1


@implements("LOOP-4")
def prompt_message_data(prompt: Prompt) -> JsonObject:
    """LOOP-4: with ``prompt-prefix`` contexts the logged prompt is their content,
    the delimiter block, then the prompt; ``envelope = {displayContent,
    prefixContexts:[{source, meta?}]}``; key order ``content, source, envelope, meta?``."""
    prefixed = [c for c in prompt.contexts if c.placement is Placement.PROMPT_PREFIX]
    if not prefixed:
        return _obj(("content", prompt.content), ("source", prompt.source))
    content: list[Json] = []
    for c in prefixed:
        content.extend(c.content)
    content.append(REQUEST_DELIMITER)
    content.extend(prompt.content)
    envelope = _obj(
        ("displayContent", prompt.content),
        ("prefixContexts", tuple(_obj(("source", c.source), ("meta", c.meta)) for c in prefixed)),
    )
    return _obj(("content", tuple(content)), ("source", prompt.source), ("envelope", envelope))


@implements("LOOP-8")
def seed_config(instance: LoopInstance, agent: AgentConfig, logged: EpochHeader | Absent) -> JsonObject:
    """LOOP-8: the first request of an instance seeds ``{provider, model}`` from
    the agent options, adding ``reasoningEffort`` from the logged header only when
    the logged provider and model equal the options; temperature, maxTokens and
    stop are not inherited (Q-10).  Later requests seed from ``requestHeader().config``."""
    if instance.logged_header and isinstance(logged, EpochHeader) and isinstance(logged.config, JsonObject):
        return logged.config
    pairs: list[tuple[str, Json]] = [("provider", agent.provider), ("model", agent.model)]
    if isinstance(logged, EpochHeader):
        effort = get(logged.config, "reasoningEffort")
        if (
            get(logged.config, "provider") == agent.provider
            and get(logged.config, "model") == agent.model
            and not isinstance(effort, Absent)
        ):
            pairs.append(("reasoningEffort", effort))
    return JsonObject(pairs)


def apply_request_listener(seed: JsonObject, changes: JsonObject) -> JsonObject:
    """The ``agent/request`` waterfall as ``{...seed, ...changes}``; the seed itself
    is frozen, so delegation cannot mutate it (LOOP-8)."""
    merged = dict(seed)
    merged.update(changes)
    return JsonObject(merged.items())


@implements("LOOP-9", "PFX-15")
def header_record(instance: LoopInstance, logged: EpochHeader | Absent, header: EpochHeader) -> HeaderReason | None:
    """LOOP-9: the instance's first header is always written (``initial`` when the
    log has none, else ``resume``); later headers only when ``not headerEq``
    with the latest logged header (``change``)."""
    if not instance.logged_header:
        return HeaderReason.INITIAL if isinstance(logged, Absent) else HeaderReason.RESUME
    if isinstance(logged, Absent) or not header_eq(logged, header):
        return HeaderReason.CHANGE
    return None


def _chunks(reply: Reply) -> tuple[JsonObject, ...]:
    """The streamed chunks of a reply, in the mock adapter's shape."""
    chunks: list[JsonObject] = []
    index = 0
    if reply.kind is ReplyKind.ERROR_IN_BAND:
        failure = _failure(reply)
        return (_obj(("type", "finish"), ("reason", _obj(("kind", "error"), ("failure", failure)))),)
    if reply.kind is ReplyKind.EMPTY:
        return (_obj(("type", "finish"), ("reason", _obj(("kind", "stop")))),)
    if reply.reasoning is not None:
        chunks.append(_obj(("type", "block-start"), ("index", index), ("blockType", "reasoning")))
        chunks.append(_obj(("type", "reasoning-delta"), ("index", index), ("text", reply.reasoning)))
        block = _obj(("type", "reasoning"), ("text", reply.reasoning))
        chunks.append(_obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    if reply.text:
        chunks.append(_obj(("type", "block-start"), ("index", index), ("blockType", "text")))
        for piece in reply.text_chunks if reply.text_chunks is not None else tuple(reply.text):
            chunks.append(_obj(("type", "text-delta"), ("index", index), ("text", piece)))
        block = _obj(("type", "text"), ("text", reply.text))
        chunks.append(_obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    for call in reply.tool_calls:
        chunks.append(_obj(("type", "block-start"), ("index", index), ("blockType", "tool-call")))
        pieces = call.arguments_chunks if call.arguments_chunks is not None else (call.arguments,)
        for n, piece in enumerate(pieces):
            # Only the first delta names the tool.
            name: Json | Absent = call.name if n == 0 else ABSENT
            chunks.append(_obj(("type", "tool-call-delta"), ("index", index), ("id", call.call_id), ("name", name),
                               ("argumentsDelta", piece)))
        block = _obj(("type", "tool-call"), ("id", call.call_id), ("name", call.name), ("arguments", call.arguments))
        chunks.append(_obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    if reply.usage is not None:
        chunks.append(_obj(("type", "usage"), ("usage", _usage(reply.usage))))
    finish = "max-tokens" if reply.max_tokens else "tool-calls" if reply.tool_calls else "stop"
    chunks.append(_obj(("type", "finish"), ("reason", _obj(("kind", finish)))))
    return tuple(chunks)


def _usage(usage: tuple[int, int]) -> JsonObject:
    return _obj(("inputTokens", usage[0]), ("outputTokens", usage[1]))


def _failure(reply: Reply) -> JsonObject:
    status: Json | Absent = ABSENT if reply.error_status is None else reply.error_status
    return _obj(("message", reply.error_message), ("code", reply.error_code), ("status", status))


def _content(reply: Reply) -> tuple[Json, ...]:
    blocks: list[Json] = []
    if reply.kind is ReplyKind.EMPTY:
        return ()
    if reply.reasoning is not None:
        blocks.append(_obj(("type", "reasoning"), ("text", reply.reasoning)))
    if reply.text:
        blocks.append(_obj(("type", "text"), ("text", reply.text)))
    for call in reply.executed_calls:
        blocks.append(_obj(("type", "tool-call"), ("id", call.call_id), ("name", call.name), ("arguments", call.arguments)))
    return tuple(blocks)


# --------------------------------------------------------------------------- the turn


@dataclass(slots=True, kw_only=True)
class _Turn:
    """Mutable state of one running turn (never escapes :func:`run_turn`)."""

    w: _Writer
    instance: LoopInstance
    agent: AgentConfig
    script: TurnScript
    hooks: Hooks
    fault: Fault
    turn: int
    step: int = 0
    open_step: int | None = None
    aborted: InterruptKind | None = None
    requests: list[SentRequest] = field(default_factory=list)
    side_calls: list[SideCall] = field(default_factory=list)
    compositions: int = 0
    interrupted_composition: bool = False
    max_tokens: bool = False

    def signal(self, window: Window, chunk: int = 0) -> None:
        """The scripted cancel/dispose fires when the loop passes ``window``."""
        i = self.script.interrupt
        prologue = window in (Window.AFTER_TURN_START, Window.AFTER_PROMPT_SUBMIT)
        if i is not None and i.window is window and (prologue or i.step == self.step) and (
            window is not Window.BEFORE_CHUNK or i.chunk == chunk
        ):
            # Disposal wins over an earlier cancel (LOOP-15).
            if self.aborted is not InterruptKind.DISPOSE:
                self.aborted = i.kind

    def checkpoint(self, window: Window, chunk: int = 0) -> None:
        """LOOP-15: an interruption checkpoint (the signal may fire right here)."""
        self.signal(window, chunk)
        if self.aborted is not None:
            raise _Interrupted(self.aborted)

    def append(self, draft: Draft) -> int:
        return self.w.append(draft)


def _reply_for(script: TurnScript, index: int) -> Reply:
    return script.replies[index] if index < len(script.replies) else Reply()


@implements("LOOP-3", "LOOP-5", "LOOP-7", "LOOP-10", "LOOP-11", "LOOP-12", "LOOP-13", "LOOP-14", "LOOP-15",
            "LOOP-16", "LOOP-17", "PFX-2", "PFX-5", "PFX-7", "PFX-8", "PFX-14", "PFX-16", "WIRE-1")
def run_turn(
    log: Sequence[Event],
    instance: LoopInstance,
    agent: AgentConfig,
    script: TurnScript,
    *,
    hooks: Hooks = Hooks(),
    fault: Fault = Fault.NONE,
    dialect: Dialect = Dialect.A55,
) -> TurnOutcome | Rejected:
    """One message-triggered turn (LOOP-3 prologue, LOOP-5 step stages, LOOP-7
    ``runStep``, LOOP-13 epilogue, LOOP-14 request errors, LOOP-15 windows,
    LOOP-16/17 failures).  Returns the grown log, the new instance state, and the
    requests sent.  Total: an invalid input log or a disposed instance is a
    ``Rejected``."""
    if dialect is not Dialect.A55:
        return Rejected(rule="DIA-8", reason="the loop model covers the A55 dialect only")
    w = _writer(log, dialect)
    if isinstance(w, Rejected):
        return w
    return _run_on(w, instance, agent, script, hooks, fault)


@final
@dataclass(slots=True)
class LiveLog:
    """A session log kept open across turns: its derivation and header fold
    advance with every append instead of being rebuilt from the whole log for
    each turn (what :func:`run_turn` does).  Mutable on purpose and owned by one
    driver (the simulator); each turn still returns its outcome as values."""

    writer: _Writer

    @property
    def events(self) -> Sequence[Event]:
        return self.writer.events


def open_log(log: Sequence[Event] = ()) -> LiveLog | Rejected:
    """A :class:`LiveLog` over ``log`` (validated once, like :func:`run_turn` does per turn)."""
    w = _writer(log, Dialect.A55)
    return w if isinstance(w, Rejected) else LiveLog(writer=w)


def run_turn_live(live: LiveLog, instance: LoopInstance, agent: AgentConfig, script: TurnScript, *,
                  hooks: Hooks = Hooks(), fault: Fault = Fault.NONE) -> TurnOutcome | Rejected:
    """:func:`run_turn` on a :class:`LiveLog` (same transitions; the live log grows in place)."""
    return _run_on(live.writer, instance, agent, script, hooks, fault)


def _run_on(w: _Writer, instance: LoopInstance, agent: AgentConfig, script: TurnScript, hooks: Hooks,
            fault: Fault) -> TurnOutcome | Rejected:
    if instance.disposed:
        return Rejected(rule="LOOP-1", reason="the loop instance was disposed; start a new instance")
    if fault is Fault.RECOMPOSE_EVERY_TURN:
        instance = replace(instance, prefix=NOT_COMPOSED, live_prefix=None)
    t = _Turn(w=w, instance=instance, agent=agent, script=script, hooks=hooks, fault=fault,
              turn=next_turn_number(w.events))
    try:
        reason = _play(t)
    except _AppendRejected as failed:
        return Rejected(rule=failed.rejected.rule, seq=failed.rejected.seq, kind=FailureKind.BUG,
                        reason=f"the loop model wrote an invalid event: {failed.rejected.reason}")
    disposed = t.aborted is InterruptKind.DISPOSE
    # Contributors that keep references edit them after the turn (PFX-6 probe).
    mutate_held(t.instance.contributor_refs)
    return TurnOutcome(
        log=tuple(w.events),
        instance=replace(t.instance, disposed=disposed),
        agent=t.agent,
        requests=tuple(t.requests),
        compositions=t.compositions,
        interrupted_composition=t.interrupted_composition,
        turn=t.turn,
        end_reason=reason,
        side_calls=tuple(t.side_calls),
    )


def _play(t: _Turn) -> JsonObject:
    """The turn body with its outer catch (LOOP-17): close an open step first,
    then ``turn/end`` with completed / aborted / disposed / error."""
    source = t.script.prompt.source
    t.append(Draft(type_name="turn/start",
                   data=_obj(("turn", t.turn), ("trigger", _obj(("kind", "message"), ("source", source))))))
    try:
        reason = _body(t)
    except _Interrupted as interrupted:
        reason = interruption_reason(interrupted.kind, t.step)
    except _TurnFailed as failed:
        reason = failed.reason
    if t.open_step is not None:
        t.append(Draft(type_name="step/end", data=_obj(("turn", t.turn), ("step", t.open_step))))
        t.open_step = None
    t.append(Draft(type_name="turn/end", data=_obj(("turn", t.turn), ("reason", reason))))
    return reason


@implements("LOOP-15")
def interruption_reason(kind: InterruptKind, step: int) -> JsonObject:
    """LOOP-15: ``{kind:"aborted"}``, or ``{kind:"disposed"}`` when the handle is
    disposed; Q-30: a foreign abort reason ends ``{kind:"error", step, message:"turn interrupted"}``."""
    match kind:
        case InterruptKind.CANCEL | InterruptKind.DISPOSE:
            return _obj(("kind", kind.value))
        case InterruptKind.FOREIGN:
            return _obj(("kind", "error"), ("step", step), ("message", "turn interrupted"))
        case _:
            assert_never(kind)


def _body(t: _Turn) -> JsonObject:
    prompt = t.script.prompt
    t.checkpoint(Window.AFTER_TURN_START)
    if prompt.submit_error is not None:
        # a prompt-submit failure names step 0.
        raise _TurnFailed(_obj(("kind", "error"), ("step", 0), ("message", prompt.submit_error)))
    t.checkpoint(Window.AFTER_PROMPT_SUBMIT)
    if prompt.block_reason is not None:
        t.append(Draft(type_name="prompt/blocked",
                       data=_obj(("content", prompt.content), ("source", prompt.source), ("reason", prompt.block_reason))))
        return _obj(("kind", "rejected"), ("reason", prompt.block_reason))
    t.append(Draft(type_name="user/message", data=prompt_message_data(prompt), surface_op=APPEND))
    for ctx in prompt.contexts:
        if ctx.placement is Placement.SEPARATE:
            t.append(Draft(type_name="user/message",
                           data=_obj(("content", ctx.content), ("source", ctx.source), ("meta", ctx.meta)),
                           surface_op=APPEND))
    pending: list[Steering] = list(t.script.steering)
    replies = 0
    prior_failures: list[JsonObject] = []
    while True:
        t.step += 1
        _drain(t, pending)
        t.checkpoint(Window.AFTER_ASSEMBLY)
        _compose_if_needed(t)
        if t.script.pre_step_error is not None:
            raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", t.script.pre_step_error)))
        t.checkpoint(Window.AFTER_PRE_STEP)
        reply = _reply_for(t.script, replies)
        replies += 1
        outcome = _run_step(t, reply, prior_failures)
        if outcome is _StepEnd.RETRY:
            continue
        # LOOP-13: drain, post-step, check, step/end, continuation, turn-stop.
        _drain(t, pending)
        # A cancel that lands while the tools run is already visible to the
        # post-step listeners (CMP-6 skips when aborted); the checkpoint after
        # post-step then ends the turn.
        t.signal(Window.AFTER_POST_STEP)
        if t.hooks.post_step is not None:
            header = t.w.header
            assert isinstance(header, EpochHeader)
            # The live log is passed read-only (no copy per step: the simulator runs long logs).
            listened = t.hooks.post_step(t.w.events, StepContext(
                turn=t.turn, step=t.step, header=header, had_tool_calls=bool(reply.executed_calls),
                aborted=t.aborted is not None))
            for draft in listened.drafts:
                t.append(draft)
            t.side_calls.extend(listened.side_calls)
        t.checkpoint(Window.AFTER_POST_STEP)
        t.append(Draft(type_name="step/end", data=_obj(("turn", t.turn), ("step", t.step))))
        t.open_step = None
        prior_failures.clear()
        if reply.continue_with is not None:
            pending.append(Steering(content=text_content(reply.continue_with), source=GOAL_SOURCE))
        go_on = bool(reply.executed_calls) or bool(pending)
        t.max_tokens = t.max_tokens or reply.max_tokens
        t.checkpoint(Window.AFTER_CONTINUATION)
        if not go_on:
            t.checkpoint(Window.AFTER_TURN_STOP)
            # LOG-11: "max-tokens takes precedence over completed only".
            return _obj(("kind", "max-tokens" if t.max_tokens else "completed"))


@implements("LOOP-13")
def _drain(t: _Turn, pending: list[Steering]) -> None:
    """LOOP-13: each steering item becomes ``steering/message`` (surfaceOp append)."""
    while pending:
        item = pending.pop(0)
        t.append(Draft(type_name="steering/message",
                       data=_obj(("turn", t.turn), ("content", item.content), ("source", item.source)),
                       surface_op=APPEND))


def _compose_if_needed(t: _Turn) -> None:
    """PFX-2/PFX-5/PFX-12: compose while ``NOT_COMPOSED``; injects join the current
    boundary (PFX-8); the checkpoint sits between the waterfall and the cache write."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    contributors = t.agent.contributors
    if t.fault is Fault.IGNORE_SCOPE:
        contributors = tuple(replace(c, scope=None) for c in contributors)
    comp = compose(contributors, t.agent.agent_id)
    for inject in comp.injects:
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))
    t.signal(Window.IN_COMPOSITION)
    if comp.failure is not None:
        raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))
    if t.aborted is not None:
        t.interrupted_composition = True
        if t.fault is Fault.CACHE_INTERRUPTED:
            _write_cache(t, comp)
        raise _Interrupted(t.aborted)
    _write_cache(t, comp)


@implements("PFX-6", "PFX-9")
def _write_cache(t: _Turn, comp: Composition) -> None:
    """PFX-6: cache a deep frozen copy; PFX-9: the prefix never enters the log
    (only ``Fault.PREFIX_IN_HISTORY`` breaks this, deliberately)."""
    match t.fault:
        case Fault.PREFIX_IN_HISTORY:
            for message in freeze_prefix(comp.held):
                t.append(Draft(type_name="user/message",
                               data=_obj(("content", get(message, "content")), ("source", USER_SOURCE)),
                               surface_op=APPEND))
            t.instance = replace(t.instance, prefix=())
        case Fault.NO_CLONE:
            t.instance = replace(t.instance, prefix=freeze_prefix(comp.held), live_prefix=comp.held)
        case Fault.NONE | Fault.RECOMPOSE_EVERY_TURN | Fault.CACHE_INTERRUPTED | Fault.PREFIX_AFTER_HISTORY | \
                Fault.SNAPSHOT_AFTER_REQUEST | Fault.COMPACT_SPLITS_TOOL_PAIR | Fault.COMPACT_DROPS_PREFIX | \
                Fault.IGNORE_SCOPE:
            t.instance = replace(t.instance, prefix=freeze_prefix(comp.held))
        case _:
            assert_never(t.fault)
    t.compositions += 1
    t.instance = replace(t.instance, contributor_refs=comp.mutators_own,
                         prefix_lossy=any(c.lossy for c in t.agent.contributors))


class _StepEnd(Enum):
    DONE = "done"
    RETRY = "retry"


def _cached_prefix(t: _Turn) -> tuple[Json, ...]:
    if t.instance.live_prefix is not None:
        # Fault.NO_CLONE: whatever the contributors' objects hold now.
        return freeze_prefix(t.instance.live_prefix)
    prefix = t.instance.prefix
    return () if isinstance(prefix, NotComposed) else prefix


@implements("LOOP-6", "LOOP-7", "PFX-10")
def _run_step(t: _Turn, reply: Reply, prior_failures: list[JsonObject]) -> _StepEnd:
    """LOOP-5 (9..12) and LOOP-7: boundary (``derive(log)`` immediately before
    ``step/start``, LOOP-6), step/start, runStep.  An empty prefix is dropped by
    ``canonical`` so the header omits ``messagePrefix`` (PFX-10)."""
    boundary = t.w.derivation.messages()
    t.append(Draft(type_name="step/start", data=_obj(("turn", t.turn), ("step", t.step))))
    t.open_step = t.step
    step_start_seq = len(t.w.events) - 1
    t.checkpoint(Window.AFTER_STEP_START)
    config = apply_request_listener(seed_config(t.instance, t.agent, t.w.header), t.agent.request_config)
    if reply.request_inject is not None:
        t.append(Draft(type_name="user/message", data=reply.request_inject, surface_op=APPEND))
    if t.fault is Fault.SNAPSHOT_AFTER_REQUEST:
        boundary = t.w.derivation.messages()
    t.checkpoint(Window.AFTER_REQUEST)
    if not get(config, "provider") or not get(config, "model"):
        raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", "request lacks provider/model")))
    t.checkpoint(Window.AFTER_PREPARE_CALL)
    header = canonical(EpochHeader(config=config, system=t.agent.system, tools=t.agent.tools,
                                   message_prefix=_cached_prefix(t)))
    reason = header_record(t.instance, t.w.header, header)
    if reason is not None and t.instance.prefix_lossy:
        # Q-3 / PFX-13: the append rejects the non-JSON header after step/start;
        # the cache is never cleared, so every later step of the instance fails.
        raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", LOSSY_HEADER_MESSAGE)))
    if reason is not None:
        t.append(Draft(type_name="request/header",
                       data=_obj(("header", header_to_json(header)), ("reason", reason.value))))
        t.instance = replace(t.instance, logged_header=True)
    request = build_request(header, boundary)
    if t.fault is Fault.PREFIX_AFTER_HISTORY:
        request = replace(request, messages=tuple(boundary) + _cached_prefix(t))
    if reply.mutation_error is not None:
        _mutation_attempt(t, request, reply.mutation_error)
    t.requests.append(SentRequest(request=request, step_start_seq=step_start_seq, dispatch_len=len(t.w.events),
                                  turn=t.turn, step=t.step))
    return _stream(t, reply, header, prior_failures)


@implements("LOOP-10", "LOOP-12")
def _stream(t: _Turn, reply: Reply, header: EpochHeader, prior_failures: list[JsonObject]) -> _StepEnd:
    """LOOP-10..LOOP-12 and the LOOP-14 request-error path.  LOOP-12: "For each
    tool-call block ... append tool/call ..., then tool/result ... Results keep
    model order; context that tools defer is appended after **all** results of the batch"."""
    chunk_seqs: list[Json] = []
    chunks = () if reply.kind is ReplyKind.ERROR_THROWN else _chunks(reply)
    for index, chunk in enumerate(chunks):
        t.checkpoint(Window.BEFORE_CHUNK, index)
        chunk_seqs.append(t.append(Draft(type_name="assistant/chunk",
                                         data=_obj(("turn", t.turn), ("step", t.step), ("chunk", chunk)))))
    t.checkpoint(Window.AFTER_STREAM)
    if reply.kind in (ReplyKind.ERROR_THROWN, ReplyKind.ERROR_IN_BAND):
        return _request_error(t, reply, prior_failures)
    if reply.step_result_error is not None:
        # LOOP-11: "If agent/step-result throws, an assistant/message with
        # content: [] and no replayState is recorded, and the turn then fails."
        _record_assistant(t, header, reply, (), chunk_seqs)
        raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", reply.step_result_error)))
    t.checkpoint(Window.AFTER_STEP_RESULT)
    _record_assistant(t, header, reply, _content(reply), chunk_seqs)
    for call in reply.executed_calls:
        call_seq = t.append(Draft(type_name="tool/call",
                                  data=_obj(("turn", t.turn), ("step", t.step), ("callId", call.call_id),
                                            ("name", call.name), ("arguments", call.arguments))))
        t.append(Draft(type_name="tool/result",
                       data=_obj(("turn", t.turn), ("step", t.step), ("callId", call.call_id),
                                 ("content", text_content(call.result)), ("isError", call.is_error)),
                       source_event_seqs=(call_seq,), surface_op=APPEND))
    for call in reply.executed_calls:
        for context in call.deferred:
            t.append(Draft(type_name="user/message", data=context, surface_op=APPEND))
    if reply.system_after is not None:
        t.agent = replace(t.agent, system=reply.system_after)
    if reply.tools_after is not None:
        t.agent = replace(t.agent, tools=reply.tools_after)
    return _StepEnd.DONE


@implements("WIRE-3")
def _mutation_attempt(t: _Turn, request: Request, message: str) -> None:
    """WIRE-3: "The request MUST be deeply immutable, except for signal.  Any
    attempt to mutate it (for example by a stream listener) raises into the
    step, which becomes a turn error."  The attempt is made for real on the
    model's value (a frozen dataclass of tuples and :class:`JsonObject`), so a
    mutable request would let it pass and this step would go on."""
    for value in request.messages:
        if isinstance(value, JsonObject):
            try:
                value["content"] = ()  # the immutability under test
            except TypeError:
                raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("message", message))) from None
            return


@implements("LOOP-11")
def _record_assistant(t: _Turn, header: EpochHeader, reply: Reply, content: tuple[Json, ...],
                      chunk_seqs: Sequence[Json]) -> None:
    """LOOP-11: ``assistant/message {turn, step, content, provenance:{provider, model}, usage?}``
    citing every chunk seq of the step, ``surfaceOp:"append"``."""
    config = header.config
    provenance = _obj(("provider", get(config, "provider")), ("model", get(config, "model")))
    usage: Json | Absent = ABSENT if reply.usage is None or reply.kind is ReplyKind.EMPTY else _usage(reply.usage)
    t.append(Draft(type_name="assistant/message",
                   data=_obj(("turn", t.turn), ("step", t.step), ("content", content),
                             ("provenance", provenance), ("usage", usage)),
                   source_event_seqs=tuple(chunk_seqs), surface_op=APPEND))


@implements("LOOP-14")
def _request_error(t: _Turn, reply: Reply, prior_failures: list[JsonObject]) -> _StepEnd:
    """LOOP-14: close the step; interruption wins; ask ``agent/request-error``
    (default fail); ``retry`` starts a new numbered step without recomposition."""
    t.append(Draft(type_name="step/end", data=_obj(("turn", t.turn), ("step", t.step))))
    t.open_step = None
    failure = _failure(reply)
    default = ErrorAction.RETRY if reply.retry else ErrorAction.FAIL
    decision = ErrorDecision(action=default)
    if t.hooks.request_error is not None:
        decision = t.hooks.request_error(t.w.events, RequestErrorContext(
            turn=t.turn, step=t.step, failure=failure, prior_failures=tuple(prior_failures), default=default,
            aborted=t.aborted is not None))
    for draft in decision.drafts:
        t.append(draft)
    t.side_calls.extend(decision.side_calls)
    if t.aborted is not None:
        raise _Interrupted(t.aborted)
    match decision.action:
        case ErrorAction.RETRY:
            prior_failures.append(failure)
            return _StepEnd.RETRY
        case ErrorAction.FAIL:
            raise _TurnFailed(_obj(("kind", "error"), ("step", t.step), ("failure", failure)))
        case _:
            assert_never(decision.action)


# --------------------------------------------------------------------------- sessions


@implements("LOG-15")
def fork_seed(log: Sequence[Event]) -> tuple[Event, ...]:
    """A fork child's seed: the source up to its latest completed turn boundary
    (through the last ``turn/end``); the child runs in a new instance (PFX-1)."""
    for index in range(len(log) - 1, -1, -1):
        if log[index].type == "turn/end":
            return tuple(log[: index + 1])
    return ()


# --------------------------------------------------------------------------- the invariant


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Mismatch:
    """Which request fields differ from the rebuild (INV-5), and whether the
    harness's weaker INV-4 check would still accept it (Q-6)."""

    fields: tuple[str, ...]
    harness_accepts: bool


# INV-4: the harness compares these against the folded header (plus messages);
# it deliberately omits provider and reasoningEffort.
HARNESS_FIELDS: Final = ("messages", "model", "system", "temperature", "maxTokens", "stop", "tools")
MODEL_FIELDS: Final = ("provider", "model", "reasoningEffort", "messages", "system", "tools", "temperature",
                       "maxTokens", "stop")


@implements("INV-3", "INV-4", "INV-5")
def reconstruction_mismatch(log: Sequence[Event], sent: SentRequest) -> Mismatch | Rejected | None:
    """INV-5 (the model's theorem): rebuild the request from ``log`` strictly before
    the step's ``step/start`` with a FRESH derivation (``derive`` from scratch, as
    the harness's ``fresh_session`` re-validates a copy), with the header folded
    over the log as it stood at dispatch, and compare every field.  ``None`` when
    equal.  INV-4, the harness's weak companion, skips ``provider`` and
    ``reasoningEffort`` and compares ``tools`` as ``tools or []``."""
    # The header in force at dispatch is the fold over the log as it stood then
    # (nothing is appended between dispatch and the first chunk).
    rebuilt = rebuild_request_at(list(log[: sent.dispatch_len]), sent.step_start_seq, None)
    if isinstance(rebuilt, Rejected):
        return rebuilt
    expected = request_to_json(rebuilt)
    actual = request_to_json(sent.request)
    differing = tuple(key for key in MODEL_FIELDS if _field_text(expected, key) != _field_text(actual, key))
    if not differing:
        return None
    harness_sees = [
        key for key in differing
        if key in HARNESS_FIELDS and not (key == "tools" and _tools_or_empty(expected) == _tools_or_empty(actual))
    ]
    return Mismatch(fields=differing, harness_accepts=not harness_sees)


def _field_text(request: JsonObject, key: str) -> str | None:
    """``JS(value)``, or None when the key is absent (absent differs from any value)."""
    value = get(request, key)
    return None if isinstance(value, Absent) else js_stringify(value)


def _tools_or_empty(request: JsonObject) -> str:
    value = get(request, "tools")
    return js_stringify(() if isinstance(value, Absent) else value)


# --------------------------------------------------------------------------- generator


ECHO_TOOL: Final = freeze({"name": "echo", "description": "echo back the text argument",
                           "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})
PERSONA: Final = "You are an AI agent powered by the DeepSeek Harness SDK.\n\nYou are the ground-truth test agent."


def to_jsonl(events: Sequence[Event]) -> str:
    """The log as JSONL text, byte-exact real key order (one event per line)."""
    return "".join(serialize_event(e) + "\n" for e in events)
