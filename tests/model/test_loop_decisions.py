"""The loop's orders, precedences and boundaries, each outcome taken by a test that fails when it flips (issue 43).

LOOP-13 (steering first-in first-out: the harness's inbox "returns the drained messages in arrival order",
agent-loop/src/inbox.ts 104-108), LOOP-7/LOOP-8 (the ``agent/request`` waterfall is ``{...seed, ...changes}``: a
listener's key wins, the seed's own keys too), CMP-8 (``if total < threshold`` declines: at the threshold
compact-basic acts), and the loop decisions no other test took (a turn's reply list running out, the lossy
prefix of Q-3, an empty provider).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionspec.model.compaction import CompactConfig, SummarizerOutput, SummaryCall, pressure_compaction
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop import (
    AgentConfig,
    Prompt,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    apply_request_listener,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.meter import measure_state, meter_state
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.rejected import Rejected

AGENT = AgentConfig(system="S", tools=())


def _run(script: TurnScript, agent: AgentConfig = AGENT, log: tuple[Event, ...] = ()) -> TurnOutcome:
    out = run_turn(log, new_instance(), agent, script)
    assert not isinstance(out, Rejected), out
    return out


def _texts(out: TurnOutcome, type_name: str) -> list[str]:
    texts = []
    for event in out.log:
        content = get(event.data, "content")
        if event.type == type_name and isinstance(content, tuple):
            texts.append(str(get(content[0], "text")))
    return texts


def test_LOOP_13_several_steering_items_drain_first_in_first_out() -> None:
    steering = tuple(Steering(content=text_content(f"s{i}")) for i in range(3))
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"), Reply(text="b")), steering=steering))
    assert _texts(out, "steering/message") == ["s0", "s1", "s2"]


def test_QF_4_re_queued_steering_runs_as_turns_in_queue_order() -> None:
    steering = tuple(Steering(content=text_content(f"s{i}")) for i in range(3))
    out = _run(TurnScript(prompt=Prompt(content=text_content("p"), block_reason="policy"), steering=steering,
                          replies=(Reply(text="a"), Reply(text="b"), Reply(text="c"))))
    assert _texts(out, "user/message") == ["s0", "s1", "s2"]


def test_LOOP_7_a_listener_key_wins_over_the_seed_the_seeds_own_keys_included() -> None:
    seed = freeze({"provider": "mock", "model": "mock-1", "reasoningEffort": "low"})
    changes = freeze({"model": "other", "reasoningEffort": "high", "temperature": 0.5})
    merged = apply_request_listener(seed, changes)  # type: ignore[arg-type]
    assert list(merged.items()) == [("provider", "mock"), ("model", "other"), ("reasoningEffort", "high"), ("temperature", 0.5)]
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"),)),
               replace(AGENT, request_config=freeze({"provider": "other-provider", "model": "other-model"})))  # type: ignore[arg-type]
    request = out.requests[0].request
    assert (request.provider, request.model) == ("other-provider", "other-model")
    header = next(e for e in out.log if e.type == "request/header")
    assert get(get(get(header.data, "header"), "config"), "provider") == "other-provider"


def test_LOOP_7_an_empty_provider_from_the_listener_fails_the_step() -> None:
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"),)),
               replace(AGENT, request_config=freeze({"provider": ""})))  # type: ignore[arg-type]
    assert out.requests == () and get(out.end_reason, "kind") == "error"
    model_only = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"),)),
                      replace(AGENT, request_config=freeze({"model": ""})))  # type: ignore[arg-type]
    assert model_only.requests == () and get(model_only.end_reason, "kind") == "error"


def test_LOOP_5_a_turn_whose_scripted_replies_run_out_answers_with_the_default_reply() -> None:
    """More steps than replies (a tool round asks for a second step): the scripted model answers the default text."""
    call = ToolCallSpec(call_id="c1", name="echo", arguments="{}", result="r")
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(kind=ReplyKind.TOOL_CALLS, tool_calls=(call,)),)))
    assert len(out.requests) == 2 and get(out.end_reason, "kind") == "completed"


def test_Q_3_a_lossy_prefix_fails_every_header_append_of_the_instance() -> None:
    lossy = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<p>"),), lossy=True)
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"),)), replace(AGENT, contributors=(lossy,)))
    assert out.requests == () and get(out.end_reason, "kind") == "error" and out.instance.prefix_lossy


def test_LOOP_11_max_tokens_reason_holds_over_completed_in_a_later_step() -> None:
    out = _run(TurnScript(prompt=Prompt(content=text_content("p")),
                          replies=(Reply(text="a", max_tokens=True, continue_with="go on"), Reply(text="b"))))
    assert get(out.end_reason, "kind") == "max-tokens" and len(out.requests) == 2


def test_DIA_8_the_loop_is_the_A55_dialect_only() -> None:
    out = run_turn((), new_instance(), AGENT, TurnScript(prompt=Prompt(content=text_content("p"))), dialect=Dialect.D08)
    assert isinstance(out, Rejected) and out.rule == "DIA-8"


def _summarize(call: SummaryCall) -> SummarizerOutput:
    return SummarizerOutput(summary=text_content("S"), provider=call.provider, model=call.model, max_tokens=call.max_tokens)


def _busy() -> tuple[Event, ...]:
    """Three turns, cut before the last ``step/end``: where compact-basic's post-step listener runs (CMP-6)."""
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for n in range(3):
        out = run_turn(log, instance, AGENT, TurnScript(prompt=Prompt(content=text_content(f"prompt {n} " * 100)),
                                                        replies=(Reply(text=f"answer {n} " * 20),)))
        assert not isinstance(out, Rejected)
        log, instance = out.log, out.instance
    last = max(e.seq for e in log if e.type == "step/end")
    return log[:last]


def test_CMP_8_at_the_threshold_compact_basic_compacts_one_above_it_declines() -> None:
    """``if total < threshold`` return none: a total equal to ``floor(cw x 0.5)`` compacts, one below does not."""
    log = _busy()
    state = meter_state(log)
    assert not isinstance(state, Rejected)
    total = measure_state(state).total_tokens
    config = CompactConfig(threshold_ratio=0.5, retain_tokens=total // 4)
    at = pressure_compaction(log, _summarize, config=config, context_window=2 * total)
    between = pressure_compaction(log, _summarize, config=config, context_window=2 * total + 1)  # 0.5 floored away
    above = pressure_compaction(log, _summarize, config=config, context_window=2 * total + 2)
    assert not isinstance(at, Rejected) and not isinstance(between, Rejected) and not isinstance(above, Rejected)
    assert [e.type for e in at.events][:1] == ["compact/start"] and at.events == between.events
    assert above.events == () and above.error is None


def test_CMP_4_the_retained_budget_floors_so_the_tail_summing_to_it_is_kept() -> None:
    """``retainTokens = floor(cw x retainRatio)``: with the product a tail sum plus a half, the walk stops at that tail
    (a ceiling would keep one node more)."""
    log = _busy()
    state = meter_state(log)
    assert not isinstance(state, Rejected)
    measured = measure_state(state)
    total, nodes = measured.total_tokens, measured.nodes
    tail = sum(n.tokens for n in nodes[2:])
    window = 2 * total
    floored = CompactConfig(threshold_ratio=0.5, retain_ratio=(tail + 0.5) / window)
    run = pressure_compaction(log, _summarize, config=floored, context_window=window)
    assert not isinstance(run, Rejected) and run.results
    assert run.results[0].shadowed_range.end == nodes[1].seq  # nodes[2:] retained: their sum is the budget
    exact = pressure_compaction(log, _summarize, config=replace(floored, retain_ratio=None, retain_tokens=tail + 1), context_window=window)
    assert not isinstance(exact, Rejected) and exact.results[0].shadowed_range.end == nodes[0].seq  # one more token: one node more


def test_JsonObject_is_what_the_listener_returns() -> None:
    assert isinstance(apply_request_listener(JsonObject(()), JsonObject((("a", 1),))), JsonObject)


# The held-out faults of issue 43, each the inversion of one decision (spec/decision_probe.py ``Probe.flipped``: the
# model's own code, instrumented, with that one decision going the other way): the tests above that pin it pass on
# the model and fail with it inverted.  (Left out of mutation runs by [tool.mutmut]: the probe recompiles model/.)
CATCHES = {
    "loop.turn:drain_steering: pending.pop(0)": [test_LOOP_13_several_steering_items_drain_first_in_first_out],
    "loop.turn:play_turn: queued.pop(0)": [test_QF_4_re_queued_steering_runs_as_turns_in_queue_order],
    "loop.instance:apply_request_listener: merged.update(changes)": [test_LOOP_7_a_listener_key_wins_over_the_seed_the_seeds_own_keys_included],
    "compaction.run:compact_under_pressure: now < spec.threshold_tokens": [test_CMP_8_at_the_threshold_compact_basic_compacts_one_above_it_declines],
    "compaction.policy:compact_spec: math.floor(context_window * _retain_ratio(policy.retain_ratio))":
        [test_CMP_4_the_retained_budget_floors_so_the_tail_summing_to_it_is_kept],
}


@pytest.mark.parametrize("decision", sorted(CATCHES))
def test_the_pinning_tests_fail_with_the_decision_inverted(decision: str) -> None:
    from sessionspec.spec.decision_probe import recording

    for test in CATCHES[decision]:
        test()
        with recording() as probe, probe.flipped(decision), pytest.raises(AssertionError):
            test()
