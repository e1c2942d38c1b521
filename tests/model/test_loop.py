"""LOOP / PFX / INV rules of the loop-instance model (model/loop.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionspec.fast.request_points import reconstruct_requests, request_points
from sessionspec.model.codec import parse_event_line
from sessionspec.model.derive import derive
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    Draft,
    ErrorAction,
    ErrorDecision,
    Hooks,
    Interrupt,
    InterruptKind,
    LoopInstance,
    Placement,
    PostStepResult,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    RequestErrorContext,
    StepContext,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    Window,
    fork_seed,
    new_instance,
    next_turn_number,
    prompt_message_data,
    run_turn,
    seed_config,
    text_content,
)
from sessionspec.model.prefix import NOT_COMPOSED, Contributor, Idiom, prefix_message
from sessionspec.model.reconstruct import Mismatch, reconstruction_mismatch
from sessionspec.model.rejected import Rejected
from sessionspec.simulate import ECHO_TOOL, PERSONA, simulate, to_jsonl
from sessionspec.spec.loop_properties import (
    PROPERTY_PREDICATES,
    empty_prefix_leaves_requests_bare,
    interrupted_composition_discarded,
    requests_rebuild_from_log,
    steps_closed_before_turn_end,
)

PFX = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<pfx>"),))
AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,), contributors=(PFX,))


def _turn(log: tuple[Event, ...] = (), instance: LoopInstance | None = None, agent: AgentConfig = AGENT,
          text: str = "hi", replies: tuple[Reply, ...] = (), **kw: object) -> TurnOutcome:
    script = TurnScript(prompt=Prompt(content=text_content(text)), replies=replies, **kw)  # type: ignore[arg-type]
    outcome = run_turn(log, instance or new_instance(), agent, script)
    assert not isinstance(outcome, Rejected), outcome
    return outcome


def _types(events: tuple[Event, ...]) -> list[str]:
    return [e.type for e in events]


def _reasons(log: tuple[Event, ...]) -> list[object]:
    return [get(e.data, "reason") for e in log if e.type == "request/header"]


# ----------------------------------------------------------------- LOOP-2/3/4


def test_LOOP_2_turn_number_follows_the_last_turn_start() -> None:
    first = _turn()
    assert next_turn_number(()) == 1 and next_turn_number(first.log) == 2
    assert get(_turn(first.log, first.instance).log[len(first.log)].data, "turn") == 2


def test_LOOP_3_cancel_after_turn_start_logs_no_prompt() -> None:
    out = _turn(interrupt=Interrupt(window=Window.AFTER_TURN_START))
    assert _types(out.log) == ["turn/start", "turn/end"]
    assert out.end_reason == JsonObject((("kind", "aborted"),))


def test_LOOP_3_PFX_14_blocked_prompt_is_a_zero_step_rejected_turn() -> None:
    script = TurnScript(prompt=Prompt(content=text_content("no"), block_reason="policy"))
    out = run_turn((), new_instance(), AGENT, script)
    assert not isinstance(out, Rejected)
    assert _types(out.log) == ["turn/start", "prompt/blocked", "turn/end"]
    assert get(out.end_reason, "kind") == "rejected" and out.requests == () and out.compositions == 0
    assert out.instance.prefix is NOT_COMPOSED


def test_LOOP_3_separate_contexts_follow_the_prompt() -> None:
    ctx = PromptContext(content=text_content("ctx"), source=freeze({"kind": "plugin", "plugin": "p"}),
                        meta=freeze({"k": 1}))
    script = TurnScript(prompt=Prompt(content=text_content("hi"), contexts=(ctx,)))
    out = run_turn((), new_instance(), AGENT, script)
    assert not isinstance(out, Rejected)
    assert _types(out.log)[:3] == ["turn/start", "user/message", "user/message"]
    assert js_stringify(out.log[2].data) == '{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"plugin","plugin":"p"},"meta":{"k":1}}'


def test_LOOP_4_prompt_prefix_contexts_are_baked_into_the_prompt() -> None:
    ctx = PromptContext(content=text_content("C"), source=freeze({"kind": "plugin", "plugin": "p"}),
                        placement=Placement.PROMPT_PREFIX)
    data = prompt_message_data(Prompt(content=text_content("P"), contexts=(ctx,)))
    assert js_stringify(data) == (
        '{"content":[{"type":"text","text":"C"},{"type":"text","text":"\\n\\n## My request:\\n"},'
        '{"type":"text","text":"P"}],"source":{"kind":"user"},"envelope":{"displayContent":'
        '[{"type":"text","text":"P"}],"prefixContexts":[{"source":{"kind":"plugin","plugin":"p"}}]}}')


# ----------------------------------------------------------------- LOOP-8/9


def test_LOOP_8_effort_is_inherited_only_on_the_same_route() -> None:
    logged = EpochHeader(config=freeze({"provider": "mock", "model": "mock-1", "reasoningEffort": "high",
                                        "temperature": 0.5}))
    same = seed_config(new_instance(), AgentConfig(), logged)
    assert js_stringify(same) == '{"provider":"mock","model":"mock-1","reasoningEffort":"high"}'
    other = seed_config(new_instance(), AgentConfig(model="mock-2"), logged)
    assert js_stringify(other) == '{"provider":"mock","model":"mock-2"}'
    later = seed_config(LoopInstance(logged_header=True), AgentConfig(model="mock-2"), logged)
    assert later is logged.config


def test_LOOP_9_initial_then_nothing_while_unchanged() -> None:
    first = _turn()
    second = _turn(first.log, first.instance)
    assert _reasons(second.log) == ["initial"]


def test_LOOP_9_resume_on_a_new_instance_even_unchanged() -> None:
    first = _turn()
    resumed = _turn(first.log, new_instance())
    assert _reasons(resumed.log) == ["initial", "resume"]
    # P-LOOP-2: nothing drifted, so the resume request extends the last one.
    previous, current = first.requests[-1].request.messages, resumed.requests[0].request.messages
    assert current[: len(previous)] == previous


def test_LOOP_9_system_change_and_tool_reorder_are_change_headers() -> None:
    first = _turn()
    changed = _turn(first.log, first.instance, agent=replace(AGENT, system="other"))
    shout = freeze({"name": "shout", "description": "s", "parameters": {}})
    two = _turn(changed.log, changed.instance, agent=replace(AGENT, system="other", tools=(ECHO_TOOL, shout)))
    swapped = _turn(two.log, two.instance, agent=replace(AGENT, system="other", tools=(shout, ECHO_TOOL)))
    assert _reasons(swapped.log) == ["initial", "change", "change", "change"]


def test_Q_10_resume_drops_logged_temperature() -> None:
    first = _turn(agent=replace(AGENT, request_config=freeze({"temperature": 0.5})))  # type: ignore[arg-type]
    resumed = _turn(first.log, new_instance())
    assert resumed.requests[0].request.temperature is ABSENT
    assert _reasons(resumed.log) == ["initial", "resume"]


# ----------------------------------------------------------------- PFX in the loop


def test_PFX_7_one_composition_fronts_every_request() -> None:
    tools = Reply(kind=ReplyKind.TOOL_CALLS, text="x", tool_calls=(
        ToolCallSpec(call_id="c", name="echo", arguments="{}", result="r"),))
    first = _turn(replies=(tools, Reply()))
    second = _turn(first.log, first.instance)
    assert first.compositions == 1 and second.compositions == 0
    for sent in first.requests + second.requests:
        assert sent.request.messages[0] == prefix_message("<pfx>")


def test_PFX_5_cancel_in_composition_discards_and_the_next_turn_recomposes() -> None:
    out = _turn(interrupt=Interrupt(window=Window.IN_COMPOSITION))
    assert _types(out.log) == ["turn/start", "user/message", "turn/end"]
    assert out.interrupted_composition and out.instance.prefix is NOT_COMPOSED
    assert interrupted_composition_discarded(out, 0) is None
    fresh = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("fresh"),)),))
    nxt = _turn(out.log, out.instance, agent=fresh)
    assert nxt.compositions == 1 and nxt.requests[0].request.messages[0] == prefix_message("fresh")


def test_PFX_5_dispose_in_composition_ends_the_instance() -> None:
    out = _turn(interrupt=Interrupt(window=Window.IN_COMPOSITION, kind=InterruptKind.DISPOSE))
    assert get(out.end_reason, "kind") == "disposed" and out.instance.disposed
    again = run_turn(out.log, out.instance, AGENT, TurnScript(prompt=Prompt(content=text_content("x"))))
    assert isinstance(again, Rejected) and again.rule == "LOOP-1"


def test_PFX_12_Q_4_throwing_contributor_is_a_turn_error_without_step_start() -> None:
    thrower = Contributor(idiom=Idiom.PREPEND, content=(), throws="boom")
    out = _turn(agent=replace(AGENT, contributors=(PFX, thrower)))
    assert _types(out.log) == ["turn/start", "user/message", "turn/end"]
    assert js_stringify(out.end_reason) == '{"kind":"error","step":1,"message":"boom"}'
    assert out.instance.prefix is NOT_COMPOSED


def test_PFX_16_Q_5_cancel_after_composition_anchors_the_cached_prefix_later() -> None:
    out = _turn(interrupt=Interrupt(window=Window.AFTER_PRE_STEP))
    assert out.instance.prefix == (prefix_message("<pfx>"),) and not out.instance.logged_header
    drifted = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("new"),)),))
    nxt = _turn(out.log, out.instance, agent=drifted)
    assert _reasons(nxt.log) == ["initial"] and nxt.compositions == 0
    assert nxt.requests[0].request.messages[0] == prefix_message("<pfx>")


def test_PFX_8_inject_during_composition_joins_the_current_request() -> None:
    inject = JsonObject((("content", text_content("injected")), ("source", freeze({"kind": "plugin", "plugin": "c"}))))
    agent = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(), inject=inject),))
    out = _turn(agent=agent)
    assert out.requests[0].request.messages[-1] == JsonObject((("role", "user"), ("content", text_content("injected"))))


def test_PFX_10_P_PFX_7_empty_composition_omits_message_prefix() -> None:
    out = _turn(agent=replace(AGENT, contributors=()))
    assert get(get(out.log[3].data, "header"), "messagePrefix") is ABSENT
    assert empty_prefix_leaves_requests_bare(out, 0) is None


def test_PFX_6_contributor_mutation_never_reaches_later_requests() -> None:
    agent = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("m"),),
                                                     mutate_after=True),))
    first = _turn(agent=agent)
    second = _turn(first.log, first.instance, agent=agent)
    assert second.requests[0].request.messages[0] == prefix_message("m")
    assert _reasons(second.log) == ["initial"]


# ----------------------------------------------------------------- LOOP-6/13/14/15


def test_LOOP_6_P_INV_3_request_time_inject_joins_the_next_request() -> None:
    inject = JsonObject((("content", text_content("late")), ("source", freeze({"kind": "plugin", "plugin": "r"}))))
    late = JsonObject((("role", "user"), ("content", text_content("late"))))
    out = _turn(replies=(Reply(request_inject=inject, continue_with="go"), Reply()))
    first, second = out.requests
    assert late not in first.request.messages and late in second.request.messages
    assert requests_rebuild_from_log(out.log, out.requests) is None


def test_LOOP_13_continuation_reason_is_steering_before_the_next_step() -> None:
    out = _turn(replies=(Reply(continue_with="more"), Reply()))
    types = _types(out.log)
    i = types.index("steering/message")
    assert types[i - 1] == "step/end" and types[i + 1] == "step/start"


def test_LOOP_14_retry_is_a_new_step_without_recomposition_or_header() -> None:
    out = _turn(replies=(Reply(kind=ReplyKind.ERROR_THROWN, retry=True),
                         Reply(kind=ReplyKind.ERROR_IN_BAND, retry=True), Reply()))
    steps = [get(e.data, "step") for e in out.log if e.type == "step/start"]
    assert steps == [1, 2, 3] and _reasons(out.log) == ["initial"] and out.compositions == 1
    assert len(out.requests) == 3 and get(out.end_reason, "kind") == "completed"
    assert reconstruct_requests(out.log) == tuple(s.request for s in out.requests)


def test_LOOP_14_fail_ends_the_turn_with_the_failure() -> None:
    out = _turn(replies=(Reply(kind=ReplyKind.ERROR_THROWN, error_code="SERVER"),))
    assert js_stringify(out.end_reason) == (
        '{"kind":"error","step":1,"failure":{"message":"request failed","code":"SERVER"}}')
    assert _types(out.log)[-2:] == ["step/end", "turn/end"]


@pytest.mark.parametrize("kind", list(InterruptKind))
@pytest.mark.parametrize("window", list(Window))
def test_LOOP_15_every_window_closes_steps_and_names_the_reason(window: Window, kind: InterruptKind) -> None:
    out = _turn(interrupt=Interrupt(window=window, kind=kind, chunk=1))
    assert steps_closed_before_turn_end(out, 0) is None
    if kind is InterruptKind.FOREIGN:
        # not an agent interrupt reason.
        assert get(out.end_reason, "kind") == "error" and get(out.end_reason, "message") == "turn interrupted"
    else:
        assert get(out.end_reason, "kind") == kind.value
    types = _types(out.log)
    before_step = window in (Window.AFTER_TURN_START, Window.AFTER_PROMPT_SUBMIT, Window.AFTER_ASSEMBLY,
                             Window.IN_COMPOSITION, Window.AFTER_PRE_STEP)
    assert ("step/start" in types) is not before_step
    if not before_step:
        assert types[-2:] == ["step/end", "turn/end"]
    # The model was called iff the interruption landed after the header was recorded.
    called = window in (Window.BEFORE_CHUNK, Window.AFTER_STREAM, Window.AFTER_STEP_RESULT, Window.AFTER_POST_STEP,
                        Window.AFTER_CONTINUATION, Window.AFTER_TURN_STOP)
    assert bool(out.requests) is called
    assert requests_rebuild_from_log(out.log, out.requests) is None


def test_Q_4_prompt_submit_failure_names_step_0_and_pre_step_failure_the_pending_step() -> None:
    out = run_turn((), new_instance(), AGENT, TurnScript(prompt=Prompt(content=(), submit_error="x")))
    assert not isinstance(out, Rejected) and js_stringify(out.end_reason) == '{"kind":"error","step":0,"message":"x"}'
    pre = _turn(pre_step_error="y")
    assert js_stringify(pre.end_reason) == '{"kind":"error","step":1,"message":"y"}'
    assert "step/start" not in _types(pre.log)


def test_LOOP_15_dispose_after_step_start_closes_the_step_and_ends_the_instance() -> None:
    script = TurnScript(prompt=Prompt(content=text_content("x")),
                        interrupt=Interrupt(window=Window.AFTER_STEP_START, kind=InterruptKind.DISPOSE))
    out = run_turn((), new_instance(), AGENT, script)
    assert not isinstance(out, Rejected) and get(out.end_reason, "kind") == "disposed"
    assert _types(out.log)[-3:] == ["step/start", "step/end", "turn/end"] and out.instance.disposed
    # The composition succeeded before the dispose; a resume composes anew anyway.
    assert out.compositions == 1 and _reasons(out.log) == []


def test_Q_3_lossy_prefix_fails_every_later_header_of_the_instance() -> None:
    lossy = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("d"),), lossy=True),))
    first = _turn(agent=lossy)
    assert first.compositions == 1 and first.requests == () and _reasons(first.log) == []
    assert _types(first.log)[-3:] == ["step/start", "step/end", "turn/end"]
    assert get(first.end_reason, "kind") == "error" and get(first.end_reason, "step") == 1
    second = _turn(first.log, first.instance, agent=replace(AGENT))
    assert second.compositions == 0 and get(second.end_reason, "kind") == "error"
    # A new instance recomposes from clean contributors and recovers.
    third = _turn(second.log, new_instance())
    assert _reasons(third.log) == ["initial"] and len(third.requests) == 1


# ----------------------------------------------------------------- hooks


def test_hooks_post_step_appends_before_step_end_and_request_error_decides() -> None:
    seen: list[StepContext] = []

    def post_step(log: object, ctx: StepContext) -> PostStepResult:
        seen.append(ctx)
        return PostStepResult(drafts=(Draft(type_name="compact/probe", data=JsonObject((("step", ctx.step),))),))

    def on_error(log: object, ctx: RequestErrorContext) -> ErrorDecision:
        return ErrorDecision(action=ErrorAction.RETRY if not ctx.prior_failures else ErrorAction.FAIL)

    script = TurnScript(prompt=Prompt(content=text_content("hi")),
                        replies=(Reply(kind=ReplyKind.ERROR_THROWN), Reply()))
    out = run_turn((), new_instance(), AGENT, script, hooks=Hooks(post_step=post_step, request_error=on_error))
    assert not isinstance(out, Rejected)
    types = _types(out.log)
    assert types[-3:] == ["compact/probe", "step/end", "turn/end"] and [c.step for c in seen] == [2]


def test_CMP_6_the_post_step_context_names_the_turn_and_step() -> None:
    """CMP-6: the pressure trigger runs on ``agent/post-step`` inside the step; the listener is told which turn
    and step it runs in (the turn/start's ``turn``), as its ``compact/start {turn}`` needs."""
    seen: list[StepContext] = []

    def post_step(log: object, ctx: StepContext) -> PostStepResult:
        seen.append(ctx)
        return PostStepResult()

    earlier = _turn().log
    script = TurnScript(prompt=Prompt(content=text_content("again")))
    out = run_turn(earlier, new_instance(), AGENT, script, hooks=Hooks(post_step=post_step))
    assert not isinstance(out, Rejected)
    starts = [get(e.data, "turn") for e in out.log if e.type == "turn/start"]
    assert starts == [1, 2] and [(c.turn, c.step) for c in seen] == [(2, 1)]


# ----------------------------------------------------------------- INV and generator


def test_INV_4_Q_6_the_harness_check_skips_provider_and_effort() -> None:
    out = _turn()
    sent = out.requests[0]
    assert reconstruction_mismatch(out.log, sent.request, sent.step_start_seq, sent.dispatch_len) is None
    provider = replace(sent, request=replace(sent.request, provider="other"))
    assert reconstruction_mismatch(out.log, provider.request, provider.step_start_seq, provider.dispatch_len) == Mismatch(fields=("provider",), harness_accepts=True)
    model = replace(sent, request=replace(sent.request, model="other"))
    assert reconstruction_mismatch(out.log, model.request, model.step_start_seq, model.dispatch_len) == Mismatch(fields=("model",), harness_accepts=False)


def test_INV_4_the_harness_compares_tools_as_tools_or_empty() -> None:
    """INV-4: ``JS(tools or [])`` must equal the folded header's: absent and ``[]`` are the same to the harness,
    another tool list is not (the model's INV-5 sees both)."""
    other = freeze([{"name": "t", "description": "d", "parameters": {"type": "object"}}])
    for agent in (AGENT, replace(AGENT, tools=())):
        out = _turn(agent=agent)
        sent = out.requests[0]
        no_tools = sent.request.tools in ((), ABSENT)
        for changed, accepted in ((() if sent.request.tools is ABSENT else ABSENT, no_tools), (other, False)):
            request = replace(sent.request, tools=changed)
            found = reconstruction_mismatch(out.log, request, sent.step_start_seq, sent.dispatch_len)
            assert found == Mismatch(fields=("tools",), harness_accepts=accepted)


def test_INV_2_no_boundary_is_rejected() -> None:
    out = _turn()
    bad = replace(out.requests[0], step_start_seq=0)
    result = reconstruction_mismatch(out.log, bad.request, bad.step_start_seq, bad.dispatch_len)
    assert isinstance(result, Rejected) and result.rule == "INV-2"


def test_simulate_writes_valid_reconstructable_logs_deterministically() -> None:
    log = simulate(7, 12)
    assert log == simulate(7, 12)
    assert not isinstance(derive(log), Rejected)
    requests = reconstruct_requests(log)
    assert not isinstance(requests, Rejected) and requests and all(r is not None for r in requests)
    reasons = _reasons(log)
    assert reasons[0] == "initial" and "resume" in reasons
    lines = to_jsonl(log).splitlines()
    parsed = [e for line in lines for e in parse_event_line(line)]  # type: ignore[union-attr]
    assert tuple(parsed) == log


def test_fork_seed_ends_at_the_last_turn_end() -> None:
    out = _turn()
    open_turn = _turn(out.log, out.instance, interrupt=Interrupt(window=Window.AFTER_STEP_START))
    assert fork_seed(open_turn.log + open_turn.log[:0]) == open_turn.log
    assert fork_seed(open_turn.log[:-1])[-1].type == "turn/end" and fork_seed(()) == ()


def test_run_turn_rejects_an_invalid_log() -> None:
    out = _turn()
    broken = out.log[:1] + out.log[2:]
    result = run_turn(broken, new_instance(), AGENT, TurnScript(prompt=Prompt(content=text_content("x"))))
    assert isinstance(result, Rejected)


def test_property_predicates_are_registered_by_id() -> None:
    assert {"P-INV-1", "P-INV-4", "P-PFX-1", "P-PFX-6", "P-PFX-8", "P-LOOP-1"} <= set(PROPERTY_PREDICATES)


def test_INV_7_the_one_pass_checker_agrees_with_the_loop_and_sees_tampering() -> None:
    from sessionspec.spec.loop_properties import checker_finds_the_sent_requests

    first = _turn(replies=(Reply(kind=ReplyKind.ERROR_THROWN, retry=True), Reply()))
    assert checker_finds_the_sent_requests(first.log, first.requests, find=request_points) is None
    tampered = replace(first.requests[1], request=replace(first.requests[1].request, system="forged"))
    problem = checker_finds_the_sent_requests(first.log, (first.requests[0], tampered), find=request_points)
    assert problem is not None and problem.startswith("P-INV-1")


# ----------------------------------------------------------------- LOOP-11 / LOOP-12


def _two_calls(**kw: object) -> Reply:
    deferred = JsonObject((("content", text_content("deferred by a")), ("source", freeze({"kind": "plugin", "plugin": "t"}))))
    calls = (ToolCallSpec(call_id="a", name="echo", arguments="{}", result="ra", deferred=(deferred,)),
             ToolCallSpec(call_id="b", name="echo", arguments="{}", result="rb"))
    return Reply(kind=ReplyKind.TOOL_CALLS, text="two", tool_calls=calls, **kw)  # type: ignore[arg-type]


def test_LOOP_11_max_tokens_drops_tool_calls_runs_no_tools_and_ends_max_tokens() -> None:
    out = _turn(replies=(_two_calls(max_tokens=True),))
    types = _types(out.log)
    assert "tool/call" not in types and "tool/result" not in types
    message = next(e for e in out.log if e.type == "assistant/message")
    assert [get(b, "type") for b in get(message.data, "content")] == ["text"]  # type: ignore[union-attr]
    # The streamed chunks stay as the adapter sent them (tool-call blocks included).
    assert any(get(get(e.data, "chunk"), "blockType") == "tool-call" for e in out.log if e.type == "assistant/chunk")
    finish = [get(e.data, "chunk") for e in out.log if e.type == "assistant/chunk"][-1]
    assert get(get(finish, "reason"), "kind") == "max-tokens"
    # No tool calls ran, so the turn stops after one step; LOG-11: max-tokens takes precedence over completed.
    assert types.count("step/start") == 1 and out.end_reason == JsonObject((("kind", "max-tokens"),))
    assert requests_rebuild_from_log(out.log, out.requests) is None


def test_LOOP_11_a_throwing_step_result_records_an_empty_message_and_fails_the_turn() -> None:
    out = _turn(replies=(_two_calls(step_result_error="step-result listener exploded"),))
    types = _types(out.log)
    message = next(e for e in out.log if e.type == "assistant/message")
    assert get(message.data, "content") == () and "replayState" not in js_stringify(message.data)
    assert "tool/call" not in types and types[-2:] == ["step/end", "turn/end"]
    assert out.end_reason == JsonObject((("kind", "error"), ("step", 1), ("message", "step-result listener exploded")))


def test_LOOP_12_results_keep_model_order_and_deferred_context_follows_all_results() -> None:
    out = _turn(replies=(_two_calls(), Reply(text="done")))
    types = _types(out.log)
    first = types.index("tool/call")
    assert types[first:first + 5] == ["tool/call", "tool/result", "tool/call", "tool/result", "user/message"]
    results = [get(e.data, "callId") for e in out.log if e.type == "tool/result"]
    assert results == ["a", "b"]
    deferred = out.log[first + 4]
    assert js_stringify(get(deferred.data, "content")) == '[{"type":"text","text":"deferred by a"}]'
    # The deferred context joins the next request, after both results.
    second = out.requests[1].request.messages
    tail = [get(get(m, "content")[0], "toolCallId") for m in second[-3:-1]]  # type: ignore[index]
    assert tail == ["a", "b"] and js_stringify(second[-1]) == '{"role":"user","content":[{"type":"text","text":"deferred by a"}]}'
    assert requests_rebuild_from_log(out.log, out.requests) is None


def test_WIRE_3_a_stream_listener_mutating_the_request_fails_the_turn() -> None:
    out = _turn(replies=(Reply(text="never", mutation_error="Cannot assign to read only property 'content'"),))
    types = _types(out.log)
    # The request was built and frozen (header logged), the mutation raised into the step: no model output.
    assert types == ["turn/start", "user/message", "step/start", "request/header", "step/end", "turn/end"]
    assert out.end_reason == JsonObject((("kind", "error"), ("step", 1),
                                         ("message", "Cannot assign to read only property 'content'")))
    assert out.requests == ()


def test_WIRE_3_requests_are_deeply_immutable_values() -> None:
    import dataclasses

    request = _turn().requests[0].request
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.messages = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        request.messages[0]["role"] = "system"  # type: ignore[index]
    assert isinstance(request.messages, tuple) and isinstance(get(request.messages[0], "content"), tuple)


def test_PFX_4_another_agents_scoped_listener_never_contributes() -> None:
    from sessionspec.planted.loop import Planted, planted
    from sessionspec.spec.loop_properties import other_agents_never_contribute

    theirs = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<theirs>"),), scope="other")
    mine = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<mine>"),), scope="me")
    agent = replace(AGENT, contributors=(PFX, theirs, mine), agent_id="me")
    out = run_turn((), new_instance(), agent, TurnScript(prompt=Prompt(content=text_content("hi"))))
    assert not isinstance(out, Rejected)
    assert [js_stringify(m) for m in out.requests[0].request.messages[:2]] == [
        js_stringify(prefix_message("<pfx>")), js_stringify(prefix_message("<mine>"))]
    assert other_agents_never_contribute(out.requests, theirs.content) is None
    with planted(Planted.IGNORE_SCOPE):
        broken = run_turn((), new_instance(), agent, TurnScript(prompt=Prompt(content=text_content("hi"))))
    assert not isinstance(broken, Rejected)
    problem = other_agents_never_contribute(broken.requests, theirs.content)
    assert problem is not None and problem.startswith("P-PFX-4")
