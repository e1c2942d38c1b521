"""The stage orders of LOOP-5 (a step), LOOP-7 (runStep), LOOP-10 (the
stream), the failure shapes of LOOP-16/LOOP-17, and PFX-13 (composition does
not validate), each asserted on the log the loop model writes.

Expected orders are read off the rule text; the loop model is
``model.loop.run_turn``."""

from __future__ import annotations

from dataclasses import replace

from sessionspec.model.header import header_to_json
from sessionspec.model.jsonval import JsonObject, freeze, get, js_stringify
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import (
    AgentConfig,
    Interrupt,
    LoopInstance,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    Window,
    new_instance,
    prompt_message_data,
    run_turn,
    text_content,
)
from sessionspec.model.loop.errors import interruption_reason
from sessionspec.model.loop.events import Draft
from sessionspec.model.loop.script import InterruptKind
from sessionspec.model.loop.state import APPEND, log_writer
from sessionspec.model.prefix import NOT_COMPOSED, Contributor, Idiom, prefix_message
from sessionspec.model.rejected import Rejected
from sessionspec.simulate import ECHO_TOOL, PERSONA

INJECT = JsonObject((("content", text_content("from composition")), ("source", freeze({"kind": "plugin", "plugin": "c"}))))
AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,),
                    contributors=(Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<pfx>"),), inject=INJECT),))


def _turn(log: tuple[Event, ...] = (), instance: LoopInstance | None = None, agent: AgentConfig = AGENT,
          **kw: object) -> TurnOutcome:
    script = TurnScript(prompt=Prompt(content=text_content("hi")), **kw)  # type: ignore[arg-type]
    out = run_turn(log, instance or new_instance(), agent, script)
    assert not isinstance(out, Rejected), out
    return out


def _types(out: TurnOutcome) -> list[str]:
    return [e.type for e in out.log]


def test_LOOP_5_steering_then_composition_then_step_start() -> None:
    """(2) drain steering, (6) compose (its inject is history), (10) step/start, then runStep's header and stream."""
    out = _turn(steering=(Steering(content=text_content("steer")),))
    types = _types(out)
    assert types[:6] == ["turn/start", "user/message", "steering/message", "user/message", "step/start", "request/header"]
    assert get(out.log[3].data, "content") == text_content("from composition")


def test_LOOP_5_checkpoint_after_pre_step_comes_before_step_start() -> None:
    """(8) the checkpoint after pre-step precedes (9)-(10): cancelling there writes no step/start
    but the composition (6) has already happened."""
    out = _turn(interrupt=Interrupt(window=Window.AFTER_PRE_STEP))
    assert "step/start" not in _types(out) and out.compositions == 1
    assert out.instance.prefix is not NOT_COMPOSED


def test_LOOP_5_checkpoint_after_assembly_comes_before_composition() -> None:
    """(4) the checkpoint after assembly precedes (6): cancelling there composes nothing."""
    out = _turn(interrupt=Interrupt(window=Window.AFTER_ASSEMBLY))
    assert out.compositions == 0 and out.instance.prefix is NOT_COMPOSED
    assert "step/start" not in _types(out)


def test_LOOP_7_missing_model_is_a_turn_error_after_step_start_without_header() -> None:
    """(4) provider or model empty raises a turn error, before the header is recorded (7)."""
    out = _turn(agent=replace(AGENT, model=""))
    assert _types(out)[-3:] == ["step/start", "step/end", "turn/end"]
    assert "request/header" not in _types(out) and out.requests == ()
    assert get(out.end_reason, "kind") == "error"


def test_LOOP_7_cancel_after_request_waterfall_records_no_header() -> None:
    """(3) the checkpoint after the agent/request waterfall precedes the header (7) and the request (8)."""
    out = _turn(interrupt=Interrupt(window=Window.AFTER_REQUEST))
    assert "request/header" not in _types(out) and out.requests == ()
    assert get(out.end_reason, "kind") == "aborted"


def test_LOOP_7_header_is_recorded_after_step_start_and_before_the_stream() -> None:
    out = _turn()
    types = _types(out)
    assert types.index("step/start") < types.index("request/header") < types.index("assistant/chunk")
    header = get(out.log[types.index("request/header")].data, "header")
    assert js_stringify(get(header, "config")) == '{"provider":"mock","model":"mock-1"}'


def test_LOOP_10_every_chunk_is_appended_and_cited_by_the_message() -> None:
    out = _turn(replies=(Reply(text="abc", text_chunks=("a", "bc")),))
    chunks = [e for e in out.log if e.type == "assistant/chunk"]
    assert len(chunks) >= 2
    assert all(isinstance(c.data, JsonObject) and list(c.data.keys()) == ["turn", "step", "chunk"] for c in chunks)
    message = next(e for e in out.log if e.type == "assistant/message")
    assert message.source_event_seqs == tuple(c.seq for c in chunks)


def test_LOOP_10_in_band_error_keeps_its_chunks_and_writes_no_message() -> None:
    """A finish of kind error is a request error: no assistant/message, the chunks stay."""
    out = _turn(replies=(Reply(kind=ReplyKind.ERROR_IN_BAND),))
    types = _types(out)
    assert "assistant/chunk" in types and "assistant/message" not in types
    assert get(out.end_reason, "kind") == "error" and get(out.end_reason, "failure") is not None


def test_LOOP_16_pre_step_failure_names_the_pending_step_and_never_opens_it() -> None:
    out = _turn(pre_step_error="hook failed")
    assert js_stringify(out.end_reason) == '{"kind":"error","step":1,"message":"hook failed"}'
    assert "step/start" not in _types(out)


def test_LOOP_16_provider_failure_uses_failure_not_message() -> None:
    out = _turn(replies=(Reply(kind=ReplyKind.ERROR_THROWN, error_message="overloaded"),))
    assert list(out.end_reason.keys()) == ["kind", "step", "failure"]


def test_LOOP_17_turn_end_is_last_and_an_open_step_is_closed_first() -> None:
    tools = Reply(kind=ReplyKind.TOOL_CALLS, text="x",
                  tool_calls=(ToolCallSpec(call_id="c", name="echo", arguments="{}", result="r"),))
    out = _turn(replies=(tools, Reply()), interrupt=Interrupt(window=Window.AFTER_STEP_START, step=2))
    types = _types(out)
    assert types[-1] == "turn/end" and types[-2] == "step/end"
    assert types.count("step/start") == types.count("step/end") == 2


def test_PFX_13_composition_does_not_validate_content() -> None:
    """Prefix content that is not a well-formed message (no role, a bare
    string content) is composed and cached as given: the model never checks it."""
    odd = freeze({"content": "not blocks", "extra": 1})
    assert isinstance(odd, JsonObject)
    agent = replace(AGENT, contributors=(Contributor(idiom=Idiom.PREPEND, content=(odd,)),))
    out = _turn(agent=agent)
    assert out.compositions == 1 and out.instance.prefix == (odd,)
    assert out.requests[0].request.messages[0] == odd


# ---------------------------------------------------------------- LOOP-15 reason, LOOP-4 envelope, the D08 writer


def test_LOOP_15_a_foreign_abort_ends_as_an_error_naming_the_step() -> None:
    """Q-30: a foreign abort reason ends ``{kind:"error", step, message:"turn interrupted"}``."""
    assert interruption_reason(InterruptKind.FOREIGN, 3) == freeze({"kind": "error", "step": 3, "message": "turn interrupted"})
    assert interruption_reason(InterruptKind.CANCEL, 3) == freeze({"kind": "aborted"})


def test_LOOP_4_the_envelope_lists_each_prefix_context_with_its_source_and_meta() -> None:
    """LOOP-4: ``envelope = {displayContent, prefixContexts:[{source, meta?}]}``."""
    source = freeze({"kind": "plugin", "plugin": "memory"})
    context = PromptContext(content=(freeze({"type": "text", "text": "C"}),), source=source,
                            placement=Placement.PROMPT_PREFIX, meta=freeze({"k": 1}))
    prompt_content = (freeze({"type": "text", "text": "P"}),)
    data = prompt_message_data(Prompt(content=prompt_content, contexts=(context,)))
    assert get(data, "envelope") == freeze({"displayContent": [{"type": "text", "text": "P"}],
                                            "prefixContexts": [{"source": {"kind": "plugin", "plugin": "memory"}, "meta": {"k": 1}}]})


def test_DIA_10_a_d08_session_writer_validates_an_append_by_the_d08_projection() -> None:
    """DIA-10: a D08 assistant/message projects as ``data.message``; the writer of a D08 session accepts it
    and the boundary is that message (the A55 projection would find no ``data.content`` and refuse it)."""
    writer = log_writer([], Dialect.D08)
    assert not isinstance(writer, Rejected)
    message = {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "model"}}
    seq = writer.append(Draft(type_name="assistant/message", data=freeze({"turn": 1, "step": 1, "message": message}),
                              surface_op=APPEND))
    assert seq == 0 and writer.boundary() == (freeze(message),)


def test_DIA_10_a_d08_session_over_a_d08_log_folds_it_by_d08() -> None:
    """DIA-10: a session opened over a D08 log reads it as D08: the header keeps ``adapterDefaults`` (DIA-9) and an
    assistant/message projects as ``data.message``, so the writer opens and its boundary is that message."""
    header = {"config": {"provider": "p", "model": "m"}, "adapterDefaults": {"temperature": 1}}
    message = {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "model"}}
    log = [make_event("request/header", seq=0, time=0, data=freeze({"header": header, "reason": "initial"})),
           make_event("assistant/message", seq=1, time=0, data=freeze({"turn": 1, "step": 1, "message": message}),
                      surface_op=APPEND)]
    writer = log_writer(log, Dialect.D08)
    assert not isinstance(writer, Rejected) and writer.boundary() == (freeze(message),)
    assert not isinstance(writer.header, Rejected) and writer.header is not None
    assert get(header_to_json(writer.header), "adapterDefaults") == freeze({"temperature": 1})  # type: ignore[arg-type]
