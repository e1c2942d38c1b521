"""MTR-6/MTR-8/MTR-9 at their boundaries (issue 43): the usage baseline exactly at the estimate and one below,
malformed usage, steps that do not match, chunk citations out of range.

MTR-8: "baseline = {kind:"usage", tokens: provider, usage} if provider >= est, else {kind:"estimated", tokens: est}";
"provider = inputTokens + (cacheReadTokens or 0) + (cacheWriteTokens or 0) + outputTokens"; without a header the
baseline is estimated.  MTR-6: step/end and assistant/message must match the open step.  MTR-9: every cited seq MUST
be < event.seq.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Event, make_event
from sessionspec.model.loop import AgentConfig, Prompt, Reply, TurnScript, new_instance, run_turn, text_content
from sessionspec.model.meter import BaselineKind, measure_state, meter_state, provider_output_price
from sessionspec.model.rejected import Rejected


def _one_turn() -> tuple[Event, ...]:
    out = run_turn((), new_instance(), AgentConfig(system="S"), TurnScript(prompt=Prompt(content=text_content("p " * 40)),
                                                                            replies=(Reply(text="answer " * 30),)))
    assert not isinstance(out, Rejected)
    return out.log


def _with(log: tuple[Event, ...], type_name: str, change: dict[str, Any]) -> tuple[Event, ...]:
    """``log`` with the data of its (last) ``type_name`` event changed."""
    index = max(i for i, e in enumerate(log) if e.type == type_name)
    data = {**log[index].data, **change}  # type: ignore[dict-item]
    data = {k: v for k, v in data.items() if v is not None}
    return (*log[:index], replace(log[index], data=freeze(data)), *log[index + 1:])  # type: ignore[arg-type]


def _usage(tokens: int, **extra: int | bool) -> dict[str, Any]:
    return {"usage": {"inputTokens": tokens - 1, "outputTokens": 1, **extra}}


def _estimate(log: tuple[Event, ...]) -> int:
    """The estimate the anchor compares usage with: the baseline of the same log without usage."""
    state = meter_state(_with(log, "assistant/message", {"usage": None}))
    assert not isinstance(state, Rejected)
    baseline = measure_state(state).baseline
    assert baseline.kind is BaselineKind.ESTIMATED
    return baseline.tokens


@pytest.mark.parametrize(("offset", "kind"), [(0, BaselineKind.USAGE), (1, BaselineKind.USAGE), (-1, BaselineKind.ESTIMATED)])
def test_MTR_8_usage_is_the_baseline_from_the_estimate_up(offset: int, kind: BaselineKind) -> None:
    log = _one_turn()
    est = _estimate(log)
    state = meter_state(_with(log, "assistant/message", _usage(est + offset)))
    assert not isinstance(state, Rejected)
    baseline = measure_state(state).baseline
    assert baseline.kind is kind and baseline.tokens == (est + offset if kind is BaselineKind.USAGE else est)


def test_MTR_8_cache_tokens_count_reasoning_tokens_do_not() -> None:
    log = _one_turn()
    est = _estimate(log)
    usage = {"usage": {"inputTokens": est, "outputTokens": 1, "cacheReadTokens": 2, "cacheWriteTokens": 3, "reasoningTokens": 50}}
    state = meter_state(_with(log, "assistant/message", usage))
    assert not isinstance(state, Rejected) and measure_state(state).baseline.tokens == est + 6


@pytest.mark.parametrize("usage", [{"inputTokens": 5}, {"inputTokens": True, "outputTokens": 1}, {"inputTokens": "5", "outputTokens": 1},
                                   {"inputTokens": 5, "outputTokens": 1, "cacheReadTokens": None}])
def test_MTR_8_malformed_usage_is_rejected(usage: dict[str, Any]) -> None:
    state = meter_state(_with(_one_turn(), "assistant/message", {"usage": usage}))
    assert isinstance(state, Rejected) and state.rule == "MTR-8"


def test_MTR_8_without_a_header_usage_is_not_the_baseline() -> None:
    """The header's place taken by a log-only event: usage present, no header, so the baseline is the estimate."""
    log = tuple(make_event("session/title", seq=e.seq, time=e.time, data=freeze({"title": "t"})) if e.type == "request/header" else e
                for e in _with(_one_turn(), "assistant/message", _usage(10**6)))
    state = meter_state(log)
    assert not isinstance(state, Rejected)
    assert measure_state(state).baseline.kind is BaselineKind.ESTIMATED


@pytest.mark.parametrize(("type_name", "change"), [("step/end", {"turn": 9}), ("step/end", {"step": 9}),
                                                   ("assistant/message", {"turn": 9}), ("assistant/message", {"step": 9})])
def test_MTR_6_a_step_end_or_message_of_another_step_is_rejected(type_name: str, change: dict[str, Any]) -> None:
    state = meter_state(_with(_one_turn(), type_name, change))
    assert isinstance(state, Rejected) and state.rule in ("MTR-6", "MTR-7")


def test_MTR_9_a_citation_of_a_later_seq_is_rejected() -> None:
    """Every cited seq MUST be < event.seq: a citation of itself or of a later seq is rejected (the fold's surface check
    refuses it first, as MTR-7; the price on its own, as MTR-9)."""
    log = _with(_one_turn(), "assistant/message", _usage(10))
    index = max(i for i, e in enumerate(log) if e.type == "assistant/message")
    message = log[index]
    for seq in (message.seq, message.seq + 5):
        state = meter_state((*log[:index], replace(message, source_event_seqs=(seq,)), *log[index + 1:]))
        assert isinstance(state, Rejected) and state.rule == "MTR-7"
        priced = provider_output_price(replace(message, source_event_seqs=(seq,)), 0, log[:index])
        assert isinstance(priced, Rejected) and priced.rule == "MTR-9"
