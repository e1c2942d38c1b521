"""compact-basic mounted on the loop: its ``agent/post-step`` listener (pressure,
CMP-6), its ``agent/request-error`` listener (overflow, CMP-7) and a manual
compaction request (CMP-9), as pure functions of the log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

from sessionspec.model.compaction import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactConfig,
    Summarizer,
    SummarizerOutput,
    SummaryCall,
    Trigger,
    compact_if_needed,
    pressure_compaction,
    recover_overflow,
    summarizer_request,
)
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.log import Event
from sessionspec.model.loop.events import (
    Draft,
    ErrorAction,
    ErrorDecision,
    Hooks,
    PostStepHook,
    PostStepResult,
    RequestErrorContext,
    RequestErrorHook,
    SideCall,
    StepContext,
)
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected


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


def pressure_listener(plugin: CompactionPlugin) -> PostStepHook:
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
        appended = run.events
        return PostStepResult(drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return post_step


def overflow_listener(plugin: CompactionPlugin) -> RequestErrorHook:
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
        appended = decision.events
        return ErrorDecision(action=action, drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return request_error


def manual_listener(plugin: CompactionPlugin) -> PostStepHook:
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
        appended = run.events
        return PostStepResult(drafts=_as_drafts(appended), side_calls=_side_calls(sent, appended))

    return post_step


def compaction_hooks(plugin: CompactionPlugin) -> Hooks:
    """compact-basic's two listeners: pressure at post-step (CMP-6), overflow at request-error (CMP-7)."""
    return Hooks(post_step=pressure_listener(plugin), request_error=overflow_listener(plugin))
