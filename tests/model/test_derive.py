"""Derivation (DER-1..9) of model.derive."""

from __future__ import annotations

import pytest
from hypothesis import given

from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.model.derive import derive, message_of, project
from sessionspec.model.jsonval import Json, JsonObject, freeze, js_stringify, obj
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.spec.log_builder import LogBuilder, replace_op
from sessionspec.spec.log_strategies import well_formed_logs

TEXT = (obj((("type", "text"), ("text", "hi"))),)
PROVENANCE = obj((("provider", "mock"), ("model", "m"), ("replayState", obj((("k", 1),)))))


def _derive(events: list[Event]) -> tuple[JsonObject, ...]:
    messages = derive(events)
    assert not isinstance(messages, Rejected), messages
    return messages


def _texts(events: list[Event]) -> list[str]:
    return [js_stringify(m) for m in _derive(events)]


def test_DER_1_user_and_steering_project_to_user_messages() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("a")
    b.steering("b")
    assert _texts(b.events) == [
        '{"role":"user","content":[{"type":"text","text":"a"}]}',
        '{"role":"user","content":[{"type":"text","text":"b"}]}',
    ]


def test_DER_1_assistant_projects_content_and_provenance() -> None:
    data = obj((("turn", 1), ("step", 1), ("content", TEXT), ("provenance", PROVENANCE), ("usage", obj((("inputTokens", 1),)))))
    event = make_event("assistant/message", seq=0, time=0, data=data, surface_op="append", source_event_seqs=())
    assert _texts([event]) == [
        '{"role":"assistant","content":[{"type":"text","text":"hi"}],"provenance":{"provider":"mock","model":"m","replayState":{"k":1}}}'
    ]


def test_DER_1_tool_result_projects_a_tool_result_block() -> None:
    b = LogBuilder()
    b.turn_start()
    b.step_start()
    b.tool_call("c9", "read")
    b.tool_result("c9", 2, "out", is_error=True)
    assert _texts(b.events) == [
        '{"role":"user","content":[{"type":"tool-result","toolCallId":"c9","content":[{"type":"text","text":"out"}],"isError":true}]}'
    ]


def test_DER_1_other_types_project_to_no_message() -> None:
    for type_name in ("turn/start", "tool/call", "request/header", "compact/summary", "prompt/blocked"):
        assert project(make_event(type_name, seq=0, time=0, data=obj((("content", TEXT),)))) is None


def test_DER_2_key_order_and_is_error_false_present() -> None:
    # Data written in a non-canonical key order still projects in DER-2 order.
    data = obj((("isError", False), ("content", "x"), ("callId", "c"), ("turn", 1), ("step", 1)))
    message = project(make_event("tool/result", seq=1, time=0, data=data, surface_op="append", source_event_seqs=(0,)))
    assert isinstance(message, JsonObject)
    assert js_stringify(message) == '{"role":"user","content":[{"type":"tool-result","toolCallId":"c","content":"x","isError":false}]}'


def test_DER_2_nested_values_keep_their_logged_key_order() -> None:
    content = (obj((("text", "t"), ("type", "text"))),)
    event = make_event("user/message", seq=0, time=0, data=obj((("source", obj()), ("content", content))), surface_op="append")
    assert _texts([event]) == ['{"role":"user","content":[{"text":"t","type":"text"}]}']


def test_DER_3_does_not_project_source_meta_envelope_turn_step_usage_error() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("a", meta=True)
    b.steering("s")
    b.step_start()
    b.tool_call("c", "read")
    result = obj(
        (
            ("turn", 1), ("step", 1), ("callId", "c"), ("content", ()), ("isError", True),
            ("error", obj((("name", "E"), ("code", "X")))), ("meta", obj((("m", 1),))),
        )
    )
    b.events.append(make_event("tool/result", seq=5, time=0, data=result, surface_op="append", source_event_seqs=(4,)))
    text = "".join(_texts(b.events))
    for key in ("source", "meta", "envelope", "displayContent", "turn", "step", "error", "usage"):
        assert f'"{key}"' not in text, key


def test_DER_4_projections_in_surface_order_after_replace() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("one")  # 1
    b.user_message("two")  # 2
    b.user_message("three")  # 3
    data = obj((("content", "merged"), ("source", obj())))
    b.events.append(make_event("user/message", seq=4, time=0, data=data, surface_op=replace_op(1, 2), source_event_seqs=(1, 2)))
    assert _texts(b.events) == [
        '{"role":"user","content":"merged"}',
        '{"role":"user","content":[{"type":"text","text":"three"}]}',
    ]


def test_DER_5_empty_assistant_stays_a_node_without_a_message() -> None:
    b = LogBuilder()
    b.turn_start()
    b.step_start()
    seq = b.assistant_message((), [])
    assert _derive(b.events) == ()
    derivation = IncrementalDerivation()
    for event in b.events:
        assert derivation.append(event) is None
    assert derivation.nodes == (seq,)


def test_DER_6_adjacent_tool_results_are_separate_user_messages() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("u")
    b.step_start()
    for call in ("a", "b"):
        call_seq = b.tool_call(call, "read")
        b.tool_result(call, call_seq, call)
    messages = _derive(b.events)
    assert [m["role"] for m in messages] == ["user", "user", "user"]
    assert len(messages) == 3


@given(well_formed_logs())
def test_DER_7_incremental_equals_scratch_after_every_append(events: tuple[Event, ...]) -> None:
    derivation = IncrementalDerivation()
    held = []
    for index, event in enumerate(events):
        assert derivation.append(event) is None
        messages = derivation.messages()
        assert js_stringify(messages) == js_stringify(_derive(list(events[: index + 1])))
        held.append((messages, len(messages)))
    assert all(len(m) == n for m, n in held)  # a held list never grows


def test_DER_7_replace_forces_a_rebuild() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("a")
    b.user_message("b")
    derivation = IncrementalDerivation()
    for event in b.events:
        derivation.append(event)
    first = derivation.messages()
    data = obj((("content", "c"), ("source", obj())))
    assert derivation.append(make_event("user/message", seq=3, time=0, data=data, surface_op=replace_op(1, 1), source_event_seqs=(1,))) is None
    assert [js_stringify(m) for m in derivation.messages()] == [
        '{"role":"user","content":"c"}',
        '{"role":"user","content":[{"type":"text","text":"b"}]}',
    ]
    assert len(first) == 2 and first[0]["content"] != "c"  # the earlier result is unaffected


def test_DER_8_display_content_never_enters_the_derivation() -> None:
    envelope = obj((("displayContent", "DISPLAY"), ("prefixContexts", ())))
    data = obj((("content", "MODEL"), ("source", obj()), ("envelope", envelope)))
    event = make_event("user/message", seq=0, time=0, data=data, surface_op="append")
    assert _texts([event]) == ['{"role":"user","content":"MODEL"}']


def test_DER_9_derived_messages_are_immutable() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("a")
    (message,) = _derive(b.events)
    with pytest.raises(TypeError):
        message["role"] = "assistant"
    content = message["content"]
    assert isinstance(content, tuple)
    with pytest.raises(TypeError):
        content[0]["text"] = "b"  # type: ignore[index]
    assert _texts(b.events) == ['{"role":"user","content":[{"type":"text","text":"a"}]}']


def test_DER_1_d08_projects_the_stored_message() -> None:
    message = obj((("role", "assistant"), ("content", ())))
    event = make_event("assistant/message", seq=0, time=0, data=obj((("message", message),)), surface_op="append")
    assert project(event, Dialect.D08) is None


def test_LOG_12_meta_and_envelope_stay_durable_in_the_event() -> None:
    b = LogBuilder()
    b.turn_start()
    seq = b.user_message("a", meta=True)
    _derive(b.events)
    data = b.events[seq].data
    assert isinstance(data, JsonObject)
    assert list(data.keys()) == ["content", "source", "envelope", "meta"]


# ---------------------------------------------------------------- DER-1 rejections, the D08 projection (DIA-10)


def _node_event(type_name: str, data: object, seq: int = 7) -> Event:
    return make_event(type_name, seq=seq, time=0, data=freeze(data), surface_op="append")


def _json_text(result: object) -> str:
    """The JSON text of a projected message (JSON.stringify key order)."""
    assert isinstance(result, JsonObject), result
    return js_stringify(result)


def _rejection(result: object) -> Rejected:
    assert isinstance(result, Rejected), result
    return result


@pytest.mark.parametrize(
    "type_name,data,what",
    [
        ("user/message", {"source": {"kind": "user"}}, "has no content"),
        ("steering/message", {}, "has no content"),
        ("assistant/message", {"provenance": {"provider": "p", "model": "m"}}, "has no content"),
        ("tool/result", {"content": "r", "isError": False}, "lacks callId, content or isError"),
        ("tool/result", {"callId": "c", "isError": False}, "lacks callId, content or isError"),
        ("tool/result", {"callId": "c", "content": "r"}, "lacks callId, content or isError"),
    ],
)
def test_DER_1_a55_node_without_its_projected_fields_is_rejected(type_name: str, data: object, what: str) -> None:
    found = _rejection(project(_node_event(type_name, data), Dialect.A55))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, f"{type_name} {what}")


@pytest.mark.parametrize("dialect", list(Dialect))
def test_DER_1_data_that_is_not_an_object_is_rejected(dialect: Dialect) -> None:
    found = _rejection(project(_node_event("user/message", "text"), dialect))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, "user/message data is not an object")


@pytest.mark.parametrize("type_name", ["assistant/message", "tool/result"])
@pytest.mark.parametrize("message", [None, "m", ["x"]])
def test_DER_1_d08_node_without_a_message_object_is_rejected(type_name: str, message: object) -> None:
    data = {"turn": 1, "step": 1} if message is None else {"turn": 1, "message": message}
    found = _rejection(project(_node_event(type_name, data), Dialect.D08))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, f"{type_name} has no message object")


def test_DIA_10_d08_user_message_projects_its_whole_data() -> None:
    data = {"role": "user", "content": [{"type": "text", "text": "hi"}], "id": "u1"}
    assert _json_text(project(_node_event("user/message", data), Dialect.D08)) == js_stringify(freeze(data))


def test_DIA_10_d08_assistant_projects_its_message_unless_empty() -> None:
    message = {"role": "assistant", "content": [{"type": "text", "text": "a"}], "id": "a1"}
    projected = project(_node_event("assistant/message", {"turn": 1, "step": 1, "message": message}), Dialect.D08)
    assert _json_text(projected) == js_stringify(freeze(message))
    empty = {"role": "assistant", "content": [], "id": "a2"}
    assert project(_node_event("assistant/message", {"turn": 1, "step": 1, "message": empty}), Dialect.D08) is None


def test_DIA_10_d08_tool_result_projects_its_message_even_when_empty() -> None:
    """Only the assistant's empty message is dropped (DER-5); a tool/result
    always answers its call."""
    message = {"role": "user", "content": [], "id": "t1"}
    projected = project(_node_event("tool/result", {"turn": 1, "step": 1, "message": message}), Dialect.D08)
    assert _json_text(projected) == js_stringify(freeze(message))


def test_DIA_10_d08_assistant_with_non_array_content_is_projected() -> None:
    message = {"role": "assistant", "content": "", "id": "a3"}
    projected = project(_node_event("assistant/message", {"message": message}), Dialect.D08)
    assert _json_text(projected) == js_stringify(freeze(message))


@pytest.mark.parametrize("type_name", ["steering/message", "turn/start", "plugin/x"])
def test_DIA_10_d08_other_types_project_no_message(type_name: str) -> None:
    assert project(_node_event(type_name, {"message": {"role": "user", "content": "x"}}), Dialect.D08) is None


def test_DER_2_message_of_has_role_then_content() -> None:
    content: Json = freeze([{"type": "text", "text": "x"}])
    assert js_stringify(message_of("user", content)) == '{"role":"user","content":[{"type":"text","text":"x"}]}'
    assert js_stringify(message_of("assistant", "y")) == '{"role":"assistant","content":"y"}'


def test_DIA_11_derive_folds_the_surface_in_the_given_dialect() -> None:
    """A D08 tool/result prune (only ``message.content[0].content`` changes)
    is a valid replace in D08 and a SURF-7 rejection under A55 rules: derive
    must fold in the dialect it is given."""
    from sessionspec.model.derive import derive

    message = {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c", "content": "long", "isError": False}]}
    pruned = {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c", "content": "[pruned]", "isError": False}]}
    events = [
        make_event("tool/result", seq=0, time=0, data=freeze({"message": message}), surface_op="append"),
        make_event("tool/result", seq=1, time=0, data=freeze({"message": pruned}), surface_op=freeze({"op": "replace", "start": 0, "end": 0}), source_event_seqs=freeze([0])),
    ]
    derived = derive(events, Dialect.D08)
    assert isinstance(derived, tuple) and [_json_text(m) for m in derived] == [js_stringify(freeze(pruned))]
    refused = derive(events, Dialect.A55)
    assert isinstance(refused, Rejected) and refused.rule == "SURF-7"
