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

from model.codec import parse_event_line, serialize_event
from model.jsonval import JsonObject, freeze, thaw
from model.log import Event
from model.loop import (
    ECHO_TOOL,
    PERSONA,
    AgentConfig,
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
    new_instance,
    run_turn,
    text_content,
)
from model.prefix import Contributor, Idiom, prefix_message
from model.rejected import Rejected
from model.wire import request_to_json
from tests.conftest import GROUNDTRUTH

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
