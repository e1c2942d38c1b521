"""Derivation rules that mutation testing found unpinned (issue 9, docs/quality.md).

DER-1 rejections (a surface node that cannot be projected) and the D08
projection of DIA-10: user -> ``data``; assistant -> ``data.message`` unless its
content is empty; tool/result -> ``data.message`` (even when empty).
"""

from __future__ import annotations

import pytest

from model.derive import message_of, project
from model.jsonval import Json, JsonObject, freeze, js_stringify
from model.log import Dialect, Event, make_event
from model.rejected import Rejected


def _event(type_name: str, data: object, seq: int = 7) -> Event:
    return make_event(type_name, seq=seq, time=0, data=freeze(data), surface_op="append")


def _text(result: object) -> str:
    """The JSON text of a projected message (JSON.stringify key order)."""
    assert isinstance(result, JsonObject), result
    return js_stringify(result)


def _rejected(result: object) -> Rejected:
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
    found = _rejected(project(_event(type_name, data), Dialect.A55))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, f"{type_name} {what}")


@pytest.mark.parametrize("dialect", list(Dialect))
def test_DER_1_data_that_is_not_an_object_is_rejected(dialect: Dialect) -> None:
    found = _rejected(project(_event("user/message", "text"), dialect))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, "user/message data is not an object")


@pytest.mark.parametrize("type_name", ["assistant/message", "tool/result"])
@pytest.mark.parametrize("message", [None, "m", ["x"]])
def test_DER_1_d08_node_without_a_message_object_is_rejected(type_name: str, message: object) -> None:
    data = {"turn": 1, "step": 1} if message is None else {"turn": 1, "message": message}
    found = _rejected(project(_event(type_name, data), Dialect.D08))
    assert (found.rule, found.seq, found.reason) == ("DER-1", 7, f"{type_name} has no message object")


def test_DIA_10_d08_user_message_projects_its_whole_data() -> None:
    data = {"role": "user", "content": [{"type": "text", "text": "hi"}], "id": "u1"}
    assert _text(project(_event("user/message", data), Dialect.D08)) == js_stringify(freeze(data))


def test_DIA_10_d08_assistant_projects_its_message_unless_empty() -> None:
    message = {"role": "assistant", "content": [{"type": "text", "text": "a"}], "id": "a1"}
    projected = project(_event("assistant/message", {"turn": 1, "step": 1, "message": message}), Dialect.D08)
    assert _text(projected) == js_stringify(freeze(message))
    empty = {"role": "assistant", "content": [], "id": "a2"}
    assert project(_event("assistant/message", {"turn": 1, "step": 1, "message": empty}), Dialect.D08) is None


def test_DIA_10_d08_tool_result_projects_its_message_even_when_empty() -> None:
    """Only the assistant's empty message is dropped (DER-5); a tool/result
    always answers its call."""
    message = {"role": "user", "content": [], "id": "t1"}
    projected = project(_event("tool/result", {"turn": 1, "step": 1, "message": message}), Dialect.D08)
    assert _text(projected) == js_stringify(freeze(message))


def test_DIA_10_d08_assistant_with_non_array_content_is_projected() -> None:
    message = {"role": "assistant", "content": "", "id": "a3"}
    projected = project(_event("assistant/message", {"message": message}), Dialect.D08)
    assert _text(projected) == js_stringify(freeze(message))


@pytest.mark.parametrize("type_name", ["steering/message", "turn/start", "plugin/x"])
def test_DIA_10_d08_other_types_project_no_message(type_name: str) -> None:
    assert project(_event(type_name, {"message": {"role": "user", "content": "x"}}), Dialect.D08) is None


def test_DER_2_message_of_has_role_then_content() -> None:
    content: Json = freeze([{"type": "text", "text": "x"}])
    assert js_stringify(message_of("user", content)) == '{"role":"user","content":[{"type":"text","text":"x"}]}'
    assert js_stringify(message_of("assistant", "y")) == '{"role":"assistant","content":"y"}'


def test_DIA_11_derive_folds_the_surface_in_the_given_dialect() -> None:
    """A D08 tool/result prune (only ``message.content[0].content`` changes)
    is a valid replace in D08 and a SURF-7 rejection under A55 rules: derive
    must fold in the dialect it is given."""
    from model.derive import derive

    message = {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c", "content": "long", "isError": False}]}
    pruned = {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c", "content": "[pruned]", "isError": False}]}
    events = [
        make_event("tool/result", seq=0, time=0, data=freeze({"message": message}), surface_op="append"),
        make_event("tool/result", seq=1, time=0, data=freeze({"message": pruned}), surface_op=freeze({"op": "replace", "start": 0, "end": 0}), source_event_seqs=freeze([0])),
    ]
    derived = derive(events, Dialect.D08)
    assert isinstance(derived, tuple) and [_text(m) for m in derived] == [js_stringify(freeze(pruned))]
    refused = derive(events, Dialect.A55)
    assert isinstance(refused, Rejected) and refused.rule == "SURF-7"
