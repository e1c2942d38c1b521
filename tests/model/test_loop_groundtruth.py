"""Issue 10 part 2: ground-truth scenarios replayed through the loop model.

Each scenario of ``tests/data/groundtruth`` is encoded as a test-local script
(prompts, contributors, model replies, interruptions).  The simulated log must
equal ``session.jsonl`` (type, seq, data, surfaceOp, sourceEventSeqs and order;
``time`` is not compared, Q-17) and the simulated loop requests must equal
``requests.json`` (``sessionId`` dropped).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sessionspec.model.codec import parse_event_line, serialize_event
from sessionspec.model.compaction import CompactConfig, Summarizer, SummarizerOutput, SummaryCall
from sessionspec.model.jsonval import Json, JsonObject, freeze, get, thaw
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    CompactionPlugin,
    Interrupt,
    InterruptKind,
    LoopInstance,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    SentRequest,
    ToolCallSpec,
    TurnScript,
    Window,
    compaction_hooks,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import request_to_json
from sessionspec.simulate import ECHO_TOOL, PERSONA
from tests.support import GROUNDTRUTH

BASE = AgentConfig(system=PERSONA)
TOOLS = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))


@dataclass(frozen=True)
class Turn:
    agent: AgentConfig
    script: TurnScript


def _prompt(text: str, contexts: tuple[PromptContext, ...] = (), block: str | None = None) -> Prompt:
    return Prompt(content=text_content(text), contexts=contexts, block_reason=block)


def _pre(text: str, idiom: Idiom = Idiom.PREPEND, role: str = "user", **kw: Any) -> Contributor:
    return Contributor(idiom=idiom, content=(prefix_message(text, role),), **kw)


def _text(text: str, out: int | None = None, **kw: Any) -> Reply:
    return Reply(text=text, usage=(10, len(text) if out is None else out), **kw)


def _echo(call_id: str, arg: str, text: str = "") -> Reply:
    arguments = json.dumps({"text": arg}, separators=(",", ":"))
    call = ToolCallSpec(call_id=call_id, name="echo", arguments=arguments, result=f"echo:{arg}",
                        arguments_chunks=(arguments[:5], arguments[5:]))
    return Reply(kind=ReplyKind.TOOL_CALLS, text=text, text_chunks=(text,) if text else None, tool_calls=(call,),
                 usage=(10, 5))


def _run(turns: Sequence[Turn], log: tuple[Event, ...] = (), instance: LoopInstance | None = None
         ) -> tuple[tuple[Event, ...], list[SentRequest]]:
    instance = instance or new_instance()
    sent: list[SentRequest] = []
    for turn in turns:
        outcome = run_turn(log, instance, turn.agent, turn.script)
        assert not isinstance(outcome, Rejected), outcome
        log, instance = outcome.log, outcome.instance
        sent.extend(outcome.requests)
    return log, sent


def _assert_log(name: str, log: Sequence[Event], file: str = "session.jsonl") -> None:
    expected = [json.loads(line) for line in (GROUNDTRUTH / name / file).read_text().splitlines()]
    actual = [json.loads(serialize_event(e)) for e in log]
    for e in expected + actual:
        e.pop("time")
    for index, (want, got) in enumerate(zip(expected, actual)):
        assert got == want, f"{name}: event {index} differs"
    assert len(actual) == len(expected)


def _assert_requests(name: str, sent: Sequence[SentRequest], session: str | None = None) -> None:
    recorded = json.loads((GROUNDTRUTH / name / "requests.json").read_text())
    expected = [{k: v for k, v in r.items() if k != "sessionId"} for r in recorded
                if session is None or r["sessionId"] == session]
    actual = [thaw(request_to_json(s.request)) for s in sent]
    assert actual == expected
    # Key order too (the real object's insertion order).
    assert [list(r) for r in actual] == [list(r) for r in expected]


def _t(agent: AgentConfig, text: str, *replies: Reply, **kw: Any) -> Turn:
    return Turn(agent, TurnScript(prompt=_prompt(text), replies=replies, **kw))


def test_gt_a_single_turn_no_prefix() -> None:
    log, sent = _run([_t(BASE, "hello", _text("hello back"))])
    _assert_log("a-single-turn-no-prefix", log)
    _assert_requests("a-single-turn-no-prefix", sent)


def test_gt_b_prefix_idioms_tool_roundtrip() -> None:
    a1 = freeze({"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>A1 append: skills catalog</system-reminder>"},
        {"type": "text", "text": "second block of A1"}]})
    agent = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,), contributors=(
        _pre("<system-reminder>P1 prepend: workspace rules</system-reminder>"),
        Contributor(idiom=Idiom.APPEND, content=(a1,)),
        _pre("<system-reminder>P2 prepend: memory</system-reminder>"),
        Contributor(idiom=Idiom.PREPEND, content=()),  # the counting pass-through
    ))
    log, sent = _run([
        _t(agent, "turn one", _text("first answer")),
        _t(agent, "turn two: please echo ping", _echo("call-1", "ping", "let me echo"), _text("echo done")),
    ])
    _assert_log("b-prefix-idioms-tool-roundtrip", log)
    _assert_requests("b-prefix-idioms-tool-roundtrip", sent)


def test_gt_c_inject_during_composition() -> None:
    inject = freeze({"content": [{"type": "text", "text": "<system-reminder>injected during composition</system-reminder>"}],
                     "source": {"kind": "plugin", "plugin": "gt-composer"}, "meta": {"kind": "gt-inject"}})
    assert isinstance(inject, JsonObject)
    agent = replace_contributors(BASE, _pre("<system-reminder>prefix from the injecting contributor</system-reminder>",
                                            inject=inject))
    log, sent = _run([_t(agent, "first prompt", _text("saw the injected context")),
                      _t(agent, "second prompt", _text("second turn answer"))])
    _assert_log("c-inject-during-composition", log)
    _assert_requests("c-inject-during-composition", sent)


def replace_contributors(agent: AgentConfig, *contributors: Contributor) -> AgentConfig:
    return AgentConfig(provider=agent.provider, model=agent.model, system=agent.system, tools=agent.tools,
                       contributors=contributors)


def test_gt_d_cancel_during_composition_then_recompose() -> None:
    stale = replace_contributors(BASE, _pre("STALE opener"))
    fresh = replace_contributors(BASE, _pre("fresh opener #2"))
    log, sent = _run([
        _t(stale, "dropped prompt", interrupt=Interrupt(window=Window.IN_COMPOSITION)),
        _t(fresh, "real prompt", _text("reply to the real prompt")),
        _t(replace_contributors(BASE, _pre("would be #3")), "third prompt", _text("third turn reply")),
    ])
    _assert_log("d-cancel-during-composition-then-recompose", log)
    _assert_requests("d-cancel-during-composition-then-recompose", sent)


def test_gt_e_dispose_during_composition() -> None:
    agent = replace_contributors(BASE, _pre("never sent"))
    log, sent = _run([_t(agent, "go", interrupt=Interrupt(window=Window.IN_COMPOSITION, kind=InterruptKind.DISPOSE))])
    _assert_log("e-dispose-during-composition", log)
    assert sent == []


def test_gt_f_throwing_contributor() -> None:
    good = _pre("good contributor prefix")
    first = replace_contributors(BASE, good, Contributor(idiom=Idiom.PREPEND, content=(),
                                                         throws="contributor exploded on first composition"))
    later = replace_contributors(BASE, good, Contributor(idiom=Idiom.PREPEND, content=()))
    log, sent = _run([_t(first, "first prompt (composition throws)"),
                      _t(later, "second prompt", _text("recovered turn answer"))])
    _assert_log("f-throwing-contributor", log)
    _assert_requests("f-throwing-contributor", sent)


def test_gt_i_request_error_retry() -> None:
    agent = replace_contributors(BASE, _pre("<system-reminder>prefix composed once</system-reminder>"),
                                 Contributor(idiom=Idiom.PREPEND, content=()))
    log, sent = _run([
        _t(agent, "please answer",
           Reply(kind=ReplyKind.ERROR_THROWN, error_code="SERVER", retry=True),
           Reply(kind=ReplyKind.ERROR_IN_BAND, error_code="OVERLOADED", error_message="in-band overload",
                 error_status=529, retry=True),
           _text("third time lucky")),
        _t(agent, "and again", _text("second turn answer")),
    ])
    _assert_log("i-request-error-retry", log)
    _assert_requests("i-request-error-retry", sent)


def test_gt_k_fork_seeded_child() -> None:
    def identity(agent_id: str) -> AgentConfig:
        return replace_contributors(TOOLS, _pre(f"<system-reminder>agent identity: {agent_id}</system-reminder>"))

    parent = identity("gt-k-parent")
    parent_log, parent_sent = _run([
        _t(parent, "parent first", _text("parent turn 1")),
        _t(parent, "parent second (echo)", _echo("call-k1", "parent"), _text("parent turn 2 done")),
    ])
    seed = parent_log[:24]
    child = identity("gt-k-child")
    log, sent = _run([_t(child, "child task", _text("child answer")),
                      _t(child, "child follow-up", _text("child answer 2"))], log=seed)
    _assert_log("k-fork-seeded-child", log)
    _assert_requests("k-fork-seeded-child", sent, session="gt-k-child")
    _assert_log("k-fork-seeded-child", parent_log, file="session.parent.jsonl")
    _assert_requests("k-fork-seeded-child", parent_sent, session="gt-k-parent")


def test_gt_l_blocked_prompt_then_turn() -> None:
    agent = replace_contributors(BASE, _pre("prefix after a blocked turn"))
    log, sent = _run([
        Turn(agent, TurnScript(prompt=_prompt("forbidden request", block="policy says no"))),
        _t(agent, "allowed request", _text("answer to the allowed prompt")),
    ])
    _assert_log("l-blocked-prompt-then-turn", log)
    _assert_requests("l-blocked-prompt-then-turn", sent)


def test_gt_m_steering_empty_assistant_reasoning() -> None:
    agent = replace_contributors(BASE, _pre("a system-role prefix message", role="system"))
    ctx = (PromptContext(content=text_content("<system-reminder>per-prompt context</system-reminder>"),
                         source=freeze({"kind": "plugin", "plugin": "gt-ctx"}), placement=Placement.SEPARATE),)

    def turn(text: str, *replies: Reply) -> Turn:
        return Turn(agent, TurnScript(prompt=_prompt(text, ctx), replies=replies))

    log, sent = _run([
        turn("turn one (empty reply)", Reply(kind=ReplyKind.EMPTY)),
        turn("turn two (reasoning, then continuation steering)",
             Reply(text="reasoned answer", text_chunks=("reasoned answer",), reasoning="thinking about it",
                   usage=None, continue_with="keep going on the goal"),
             _text("after continuation steering")),
        turn("turn three", _text("last")),
    ])
    _assert_log("m-steering-empty-assistant-reasoning", log)
    _assert_requests("m-steering-empty-assistant-reasoning", sent)


def test_gt_o_cancel_after_composition_before_anchor() -> None:
    log, sent = _run([
        _t(replace_contributors(BASE, _pre("prefix composed during turn 1")), "turn one (cancelled in pre-step)",
           interrupt=Interrupt(window=Window.AFTER_PRE_STEP)),
        _t(replace_contributors(BASE, _pre("prefix composed during turn 2")), "turn two", _text("answer in turn two")),
    ])
    _assert_log("o-cancel-after-composition-before-anchor", log)
    _assert_requests("o-cancel-after-composition-before-anchor", sent)


def test_gt_g_header_change_system_and_tools() -> None:
    name = "g-header-change-system-and-tools"
    agent = replace_contributors(TOOLS, _pre("<system-reminder>stable prefix</system-reminder>"))
    changed = PERSONA + "\n\nNew guidance added during a tool call."
    shout = freeze({"name": "shout", "description": "a second tool registered between turns",
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})
    # A second tool is registered between turn 1 and turn 2.
    agent2 = AgentConfig(system=changed, tools=(ECHO_TOOL, shout), contributors=agent.contributors)
    log, sent = _run([
        Turn(agent, TurnScript(prompt=_prompt("turn one: call echo"), replies=(
            # The echo tool adds a system-prompt section while it runs.
            Reply(kind=ReplyKind.TOOL_CALLS, text="", tool_calls=_echo("call-g1", "a").tool_calls, usage=(10, 5),
                  system_after=changed),
            _text("step two after a system change")))),
        _t(agent2, "turn two", _text("turn two after a tools change")),
        _t(agent2, "turn three", _text("turn three with nothing changed")),
    ])
    _assert_log(name, log)
    _assert_requests(name, sent)


def _seed(name: str, length: int) -> tuple[Event, ...]:
    events: list[Event] = []
    for line in (GROUNDTRUTH / name / "session.jsonl").read_text().splitlines()[:length]:
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected), parsed
        events.extend(parsed)
    return tuple(events)


def test_gt_q_seeded_log_without_header_anchors_initial() -> None:
    name = "q-seeded-log-without-header"
    agent = replace_contributors(BASE, _pre("<system-reminder>prefix over a header-less seed</system-reminder>"))
    log, sent = _run([_t(agent, "live question", _text("first live answer"))], log=_seed(name, 6))
    _assert_log(name, log)
    _assert_requests(name, sent)


def test_gt_h1_resume_without_drift() -> None:
    name = "h1-resume-no-drift"
    agent = replace_contributors(TOOLS, _pre("<system-reminder>workspace instructions v1</system-reminder>"))
    gen1, sent1 = _run([_t(agent, "generation one prompt", _echo("call-h1", "gen1"), _text("gen1 answer"))])
    _assert_log(name, gen1, file="session.gen1.jsonl")
    # Generation 2: a new process, hence a new instance over the same log.
    log, sent2 = _run([_t(agent, "generation two prompt", _text("gen2 answer"))], log=gen1)
    _assert_log(name, log)
    _assert_requests(name, sent1 + sent2)


# ----------------------------------------------------------------- j*: compaction and prune on the loop


def _logged_summaries(name: str) -> list[SummarizerOutput]:
    """The fake summarizer's outputs: what the scenario's log recorded, in order."""
    outputs = []
    for event in _seed(name, 10_000):
        if event.type == "compact/summary":
            summary, provider, model = get(event.data, "summary"), get(event.data, "provider"), get(event.data, "model")
            cap = get(event.data, "maxTokens")
            assert isinstance(summary, tuple) and isinstance(provider, str) and isinstance(model, str)
            outputs.append(SummarizerOutput(summary=summary, provider=provider, model=model,
                                            max_tokens=cap if isinstance(cap, int) else None))
    return outputs


def _fake_summarizer(name: str) -> tuple[Summarizer, list[SummaryCall]]:
    outputs, calls = _logged_summaries(name), []

    def summarize(call: SummaryCall) -> SummarizerOutput | Rejected:
        calls.append(call)
        return outputs[len(calls) - 1]

    return summarize, calls


def _instruction(name: str) -> str:
    recorded = json.loads((GROUNDTRUTH / name / "requests.json").read_text())
    text = next(r for r in recorded if r.get("purpose") == "compaction")["messages"][-1]["content"][0]["text"]
    assert isinstance(text, str)
    return text


def _run_plugged(turns: Sequence[Turn], plugin: CompactionPlugin) -> tuple[tuple[Event, ...], list[JsonObject]]:
    """Run the turns with compact-basic mounted; all model calls (loop and
    summarizer requests) in dispatch order, as ``requests.json`` lists them."""
    log: tuple[Event, ...] = ()
    instance = new_instance()
    calls: list[tuple[int, JsonObject]] = []
    for turn in turns:
        outcome = run_turn(log, instance, turn.agent, turn.script, hooks=compaction_hooks(plugin))
        assert not isinstance(outcome, Rejected), outcome
        log, instance = outcome.log, outcome.instance
        calls.extend((s.dispatch_len, request_to_json(s.request)) for s in outcome.requests)
        calls.extend((c.dispatch_len, c.request) for c in outcome.side_calls)
    return log, [request for _, request in sorted(calls, key=lambda call: call[0])]


def _assert_all_requests(name: str, calls: Sequence[JsonObject]) -> None:
    recorded = json.loads((GROUNDTRUTH / name / "requests.json").read_text())
    expected = [{k: v for k, v in r.items() if k != "sessionId"} for r in recorded]
    actual = [thaw(c) for c in calls]
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert got == want, f"{name}: request {index} differs"
        assert list(got) == list(want), f"{name}: request {index} key order differs"


def _tool(name: str, description: str, param: str, kind: str) -> Json:
    return freeze({"name": name, "description": description,
                   "parameters": {"type": "object", "properties": {param: {"type": kind}}}})


def _call(call_id: str, name: str, arguments: str, split: int, result: str, text: str = "") -> Reply:
    call = ToolCallSpec(call_id=call_id, name=name, arguments=arguments, result=result,
                        arguments_chunks=(arguments[:split], arguments[split:]))
    return Reply(kind=ReplyKind.TOOL_CALLS, text=text, text_chunks=(text,) if text else None, tool_calls=(call,),
                 usage=(10, 5))


def test_gt_j1_pressure_compaction_at_post_step() -> None:
    """CMP-6: two pressure compactions inside steps 4 and 6 (before step/end);
    the second re-summarises the first checkpoint at the surface head.  WIRE-4:
    the summarizer requests are side calls of the listener, not loop requests."""
    name = "j1-pressure-compaction"
    agent = AgentConfig(system=PERSONA, tools=(_tool("work", "does work", "i", "number"),),
                        contributors=(_pre("<system-reminder>prefix that must survive compaction</system-reminder>"),))
    summarize, calls = _fake_summarizer(name)
    plugin = CompactionPlugin(summarizer=summarize, instruction=_instruction(name), context_window=2000,
                              config=CompactConfig(threshold_ratio=0.5, retain_tokens=250, max_tokens=256,
                                                   compaction_retries=1))
    work = tuple(_call(f"call-j{i}", "work", f'{{"i":{i}}}', 5, f"result {i + 1}: " + "lorem ipsum dolor sit amet " * 30,
                       text=f"step {i} text") for i in range(6))
    log, requests = _run_plugged([_t(agent, "do a long multi-step task", *work, _text("all work done")),
                                  _t(agent, "anything else?", _text("follow-up turn answer"))], plugin)
    _assert_log(name, log)
    _assert_all_requests(name, requests)
    assert len(calls) == 2


def test_gt_j2_tool_result_prune_inside_pressure_compaction() -> None:
    """PRN-6/CMP-8: pressure after step 1 prunes the dump result; pruning alone
    clears pressure, so no summary compaction (and no summarizer call)."""
    name = "j2-tool-result-prune"
    agent = AgentConfig(system=PERSONA, tools=(_tool("dump", "dumps a large log", "what", "string"),),
                        contributors=(_pre("<system-reminder>prefix</system-reminder>"),))
    summarize, calls = _fake_summarizer(name)
    plugin = CompactionPlugin(summarizer=summarize, instruction="unused", context_window=800,
                              config=CompactConfig(threshold_ratio=0.25, retain_tokens=100),
                              prune=PruneConfig(threshold_chars=200, head_chars=60, tail_chars=30))
    dump = _call("call-p1", "dump", '{"what":"log"}', 5, "HEAD-" + "x" * 900 + "-TAIL")
    log, requests = _run_plugged([_t(agent, "dump the log", dump, _text("summarised the dump")),
                                  _t(agent, "thanks", _text("second turn answer"))], plugin)
    _assert_log(name, log)
    _assert_all_requests(name, requests)
    assert calls == []


def test_gt_j3_overflow_compaction_between_failed_step_and_retry() -> None:
    """CMP-7/LOOP-14: a thrown CONTEXT_WINDOW_EXCEEDED closes step 1; the
    request-error listener compacts outside any step and retries as step 2."""
    name = "j3-overflow-compaction-retry"
    agent = AgentConfig(system=PERSONA, contributors=(_pre("<system-reminder>overflow prefix</system-reminder>"),))
    summarize, calls = _fake_summarizer(name)
    plugin = CompactionPlugin(summarizer=summarize, instruction=_instruction(name), context_window=10**9,
                              config=CompactConfig(threshold_ratio=1, retain_tokens=30, max_tokens=64,
                                                   compaction_retries=0, max_overflow_retries=1))
    answer = "old answer " + "detail " * 60
    overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code="CONTEXT_WINDOW_EXCEEDED",
                     error_message="context window exceeded")
    log, requests = _run_plugged([
        _t(agent, "old question " + "context " * 60, Reply(text=answer, text_chunks=(answer,), usage=(10, 5))),
        _t(agent, "new question", overflow, _text("recovered after overflow compaction")),
    ], plugin)
    _assert_log(name, log)
    _assert_all_requests(name, requests)
    assert len(calls) == 1
