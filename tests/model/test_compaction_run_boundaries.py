"""CMP-7/CMP-8 and PRN-6 at their edges (issue 43): overflow recovery on each side of ``maxOverflowRetries``, without a
routed target, with an invalid configuration; a pressure run on a log the meter refuses, and with a prune service
whose configuration breaks its bound.

CMP-7: "attempt recovery only if failure.code == CONTEXT_WINDOW_EXCEEDED, the signal is not aborted, a routed target
exists, and the number of earlier CONTEXT_WINDOW_EXCEEDED failures in priorFailures is < maxOverflowRetries";
"retry iff replaceGeneration advanced".
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sessionspec.model.compaction import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactConfig,
    SummarizerOutput,
    SummaryCall,
    pressure_compaction,
    recover_overflow,
)
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    ErrorDecision,
    Hooks,
    Prompt,
    Reply,
    ReplyKind,
    RequestErrorContext,
    TurnScript,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected


def _summarize(call: SummaryCall) -> SummarizerOutput:
    return SummarizerOutput(summary=text_content("S"), provider=call.provider, model=call.model, max_tokens=call.max_tokens)


def _at_request_error(agent: AgentConfig | None = None) -> tuple[Event, ...]:
    """The log compact-basic's request-error listener reads after an overflow: two long turns, then a failed step."""
    agent = AgentConfig(system="S") if agent is None else agent
    seen: list[tuple[Event, ...]] = []

    def spy(events: Sequence[Event], ctx: RequestErrorContext) -> ErrorDecision:
        seen.append(tuple(events))
        return ErrorDecision(action=ctx.default)

    log: tuple[Event, ...] = ()
    instance = new_instance()
    for n in range(2):
        out = run_turn(log, instance, agent, TurnScript(prompt=Prompt(content=text_content(f"long prompt {n} " * 80)),
                                                        replies=(Reply(text=f"answer {n} " * 40),)))
        assert not isinstance(out, Rejected)
        log, instance = out.log, out.instance
    overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")
    out = run_turn(log, instance, agent, TurnScript(prompt=Prompt(content=text_content("again")), replies=(overflow,)),
                   hooks=Hooks(request_error=spy))
    assert not isinstance(out, Rejected) and seen
    return seen[0]


@pytest.mark.parametrize(("prior", "recovers"), [(0, True), (1, False), (2, False)])
def test_CMP_7_recovery_only_below_max_overflow_retries(prior: int, recovers: bool) -> None:
    events = _at_request_error()
    decision = recover_overflow(events, _summarize, failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=prior,
                                config=CompactConfig(retain_tokens=0))
    assert (decision.events != ()) is recovers and decision.retry is recovers


def test_CMP_7_no_recovery_without_a_routed_target_or_for_another_code() -> None:
    events = _at_request_error(AgentConfig(system="S", provider="mock", model="mock-1"))
    no_route = tuple(e for e in events)  # the same log; the target comes from its header
    assert recover_overflow(no_route, _summarize, failure_code="SERVER", prior_overflow_failures=0).events == ()
    headerless = [e for e in events if e.type != "request/header"]
    decision = recover_overflow(headerless, _summarize, failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=0)
    assert decision.events == () and decision.retry is False and decision.error is None


def test_CMP_7_an_invalid_configuration_is_an_error_and_no_retry() -> None:
    decision = recover_overflow(_at_request_error(), _summarize, failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=0,
                                config=CompactConfig(retain_ratio=0.9))
    assert decision.events == () and decision.retry is False
    assert isinstance(decision.error, Rejected) and decision.error.rule == "CMP-3"


def _post_step() -> tuple[Event, ...]:
    out = run_turn((), new_instance(), AgentConfig(system="S"),
                   TurnScript(prompt=Prompt(content=text_content("p " * 400)), replies=(Reply(text="a " * 200),)))
    assert not isinstance(out, Rejected)
    last = max(e.seq for e in out.log if e.type == "step/end")
    return out.log[:last]


def test_CMP_8_a_prune_service_whose_configuration_breaks_its_bound_ends_the_run_with_its_rejection() -> None:
    """PRN-3's BUG rejection (an unchecked prune configuration over its bound) is the pressure run's error: the run
    stops before compacting, appending nothing."""
    from sessionspec.model.loop import ToolCallSpec

    call = ToolCallSpec(call_id="c1", name="echo", arguments="{}", result="r" * 500)
    out = run_turn((), new_instance(), AgentConfig(system="S"), TurnScript(prompt=Prompt(content=text_content("p " * 100)), replies=(
        Reply(kind=ReplyKind.TOOL_CALLS, tool_calls=(call,)), Reply(text="done"))))
    assert not isinstance(out, Rejected)
    log = out.log[:max(e.seq for e in out.log if e.type == "step/end")]
    bad_bound = PruneConfig(threshold_chars=50, head_chars=30, tail_chars=30)  # 30 + 39 + 30 > 50
    run = pressure_compaction(log, _summarize, config=CompactConfig(threshold_ratio=0.5, retain_tokens=0), context_window=2, prune=bad_bound)
    assert not isinstance(run, Rejected) and run.events == ()
    assert isinstance(run.error, Rejected) and run.error.rule == "PRN-3"


def test_CMP_8_a_log_the_meter_refuses_ends_the_pressure_run_with_the_meters_rejection() -> None:
    from dataclasses import replace

    log = _post_step()
    index = max(i for i, e in enumerate(log) if e.type == "assistant/message")
    broken = (*log[:index], replace(log[index], source_event_seqs=(log[index].seq + 3,)), *log[index + 1:])
    run = pressure_compaction(broken, _summarize, config=CompactConfig(threshold_ratio=0.5, retain_tokens=0), context_window=2)
    rejected = run if isinstance(run, Rejected) else run.error
    assert isinstance(rejected, Rejected) and not (not isinstance(run, Rejected) and run.events)


def test_CMP_7_recovery_on_a_log_the_meter_refuses_ends_with_its_rejection() -> None:
    """A log that folds but that the meter refuses (an assistant message citing a later seq, MTR-9): the overflow run
    cannot price a region (with a prune service too), so it appends nothing and does not retry."""
    from dataclasses import replace

    events = _at_request_error()
    index = max(i for i, e in enumerate(events) if e.type == "assistant/message")
    broken = (*events[:index], replace(events[index], source_event_seqs=(events[index].seq + 2,)), *events[index + 1:])
    for prune in (None, PruneConfig(threshold_chars=50, head_chars=0, tail_chars=0)):
        decision = recover_overflow(broken, _summarize, failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=0,
                                    config=CompactConfig(retain_tokens=0), prune=prune)
        assert decision.retry is False


def test_CMP_7_a_prune_service_over_its_bound_ends_the_recovery_with_its_rejection() -> None:
    from sessionspec.model.loop import ToolCallSpec

    call = ToolCallSpec(call_id="c1", name="echo", arguments="{}", result="r" * 500)
    seen: list[tuple[Event, ...]] = []

    def spy(events: Sequence[Event], ctx: RequestErrorContext) -> ErrorDecision:
        seen.append(tuple(events))
        return ErrorDecision(action=ctx.default)

    overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")
    out = run_turn((), new_instance(), AgentConfig(system="S"), TurnScript(prompt=Prompt(content=text_content("p")), replies=(
        Reply(kind=ReplyKind.TOOL_CALLS, tool_calls=(call,)), overflow)), hooks=Hooks(request_error=spy))
    assert not isinstance(out, Rejected) and seen
    decision = recover_overflow(seen[0], _summarize, failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=0,
                                config=CompactConfig(retain_tokens=0), prune=PruneConfig(threshold_chars=50, head_chars=30, tail_chars=30))
    assert decision.events == () and decision.retry is False
    assert isinstance(decision.error, Rejected) and decision.error.rule == "PRN-3"
