"""model.migrate: FMT-10 dialect detection and the D08 legacy migrations (DIA-13, DIA-14)."""

from __future__ import annotations

from typing import Any

from sessionspec.model.codec import event_from_json
from sessionspec.model.derive import derive
from sessionspec.model.jsonval import freeze, js_stringify, thaw
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import detect_dialect, dialect_evidence, migrate_legacy, migrate_turn_end_reason
from sessionspec.model.rejected import Rejected


def _event(seq: int, type_name: str, data: Any, **meta: Any) -> Event:
    envelope = {"type": type_name, "seq": seq, "time": 0, "data": data, **meta}
    event = event_from_json(freeze(envelope))
    assert not isinstance(event, Rejected)
    return event


USER_A55 = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
ASSISTANT_A55 = {"turn": 1, "step": 1, "content": [{"type": "text", "text": "ok"}], "provenance": {"provider": "p", "model": "m"}, "usage": {"inputTokens": 1, "outputTokens": 1}}
RESULT_A55 = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "r"}], "isError": False, "meta": {"x": 1}}


def test_FMT_10_detects_each_dialect() -> None:
    a55 = [_event(0, "assistant/message", ASSISTANT_A55)]
    d08 = [_event(0, "session/end-seed", {})]
    assert detect_dialect(a55) is Dialect.A55
    assert detect_dialect(d08) is Dialect.D08
    assert detect_dialect([_event(0, "compaction/start", {"turn": None})]) is Dialect.D08
    assert detect_dialect([_event(0, "compact/start", {"turn": 1})]) is Dialect.A55


def test_FMT_10_mixed_markers_are_reported() -> None:
    events = [_event(0, "steering/message", {**USER_A55, "turn": 1}), _event(1, "session/end-seed", {})]
    assert detect_dialect(events) is None
    evidence = dialect_evidence(events)
    assert evidence.mixed and evidence.a55_seq == 0 and evidence.d08_seq == 1


def test_FMT_10_no_marker_defaults_to_a55_and_header_origin_is_d08() -> None:
    plain = [_event(0, "approval/policy", {"policy": "never"})]
    assert detect_dialect(plain) is Dialect.A55
    assert detect_dialect(plain, freeze({"type": "session", "version": 0, "id": "s", "origin": "subagent"})) is Dialect.D08  # type: ignore[arg-type]


def test_DIA_13_user_message_gains_role_and_id() -> None:
    (out,) = migrate_legacy([_event(3, "user/message", USER_A55, surfaceOp="append")], "S")
    assert js_stringify(out.data) == js_stringify(freeze({**USER_A55, "role": "user", "id": "legacy-message:S:3"}))


def test_DIA_13_steering_becomes_user_message() -> None:
    (out,) = migrate_legacy([_event(0, "steering/message", {**USER_A55, "turn": 1}, surfaceOp="append")], "S")
    assert out.type == "user/message"
    assert thaw(out.data) == {**USER_A55, "role": "user", "id": "legacy-message:S:0"}


def test_DIA_13_assistant_message_gets_message_with_model_source() -> None:
    (out,) = migrate_legacy([_event(5, "assistant/message", ASSISTANT_A55, surfaceOp="append")], "S")
    expected = {
        "turn": 1,
        "step": 1,
        "message": {"id": "legacy-message:S:5", "role": "assistant", "content": ASSISTANT_A55["content"], "source": {"provider": "p", "model": "m", "kind": "model"}},
        "usage": ASSISTANT_A55["usage"],
    }
    assert js_stringify(out.data) == js_stringify(freeze(expected))


def test_DIA_13_assistant_message_without_content_is_not_migrated() -> None:
    """The D08 reader migrates an A55 ``assistant/message`` only when it has both ``content`` and
    ``provenance`` (DIA-13's ``{content, provenance, …}``; coordinator.ts 484-485 at 611615650f):
    one without ``content`` passes unchanged."""
    data = {k: v for k, v in ASSISTANT_A55.items() if k != "content"}
    event = _event(5, "assistant/message", data, surfaceOp="append")
    assert migrate_legacy([event], "S") == (event,)


def test_DIA_13_tool_result_gets_tool_result_block() -> None:
    (out,) = migrate_legacy([_event(7, "tool/result", RESULT_A55, surfaceOp="append")], "S")
    block = {"type": "tool-result", "toolCallId": "c1", "content": RESULT_A55["content"], "isError": False}
    expected = {
        "turn": 1,
        "step": 1,
        "message": {"id": "legacy-message:S:7", "role": "user", "content": [block], "source": {"kind": "tool", "callId": "c1"}},
        "meta": {"x": 1},
    }
    assert js_stringify(out.data) == js_stringify(freeze(expected))


def test_DIA_13_replace_inherits_the_replaced_id() -> None:
    pruned = {**RESULT_A55, "content": [{"type": "text", "text": "[pruned]"}]}
    events = [
        _event(0, "tool/result", RESULT_A55, surfaceOp="append"),
        _event(1, "tool/result", pruned, surfaceOp={"op": "replace", "start": 0, "end": 0}),
    ]
    first, second = migrate_legacy(events, "S")
    assert thaw(second.data)["message"]["id"] == "legacy-message:S:0"  # type: ignore[index,call-overload]
    assert thaw(first.data)["message"]["id"] == "legacy-message:S:0"  # type: ignore[index,call-overload]


def test_DIA_13_turn_start_drops_trigger() -> None:
    (out,) = migrate_legacy([_event(0, "turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})], "S")
    assert thaw(out.data) == {"turn": 1}


def test_DIA_13_migrated_log_derives_in_d08() -> None:
    events = [_event(0, "user/message", USER_A55, surfaceOp="append"), _event(1, "assistant/message", ASSISTANT_A55, surfaceOp="append")]
    messages = derive(migrate_legacy(events, "S"), Dialect.D08)
    assert not isinstance(messages, Rejected)
    assert [thaw(m)["role"] for m in messages] == ["user", "assistant"]  # type: ignore[call-overload]


def test_DIA_13_d08_shapes_pass_unchanged() -> None:
    events = [_event(0, "user/message", {**USER_A55, "role": "user", "id": "u1"}, surfaceOp="append")]
    assert migrate_legacy(events, "S") == tuple(events)


def test_DIA_14_turn_end_reasons() -> None:
    assert thaw(migrate_turn_end_reason(freeze({"kind": "aborted"}))) == {"kind": "aborted", "reason": {"kind": "legacy"}}
    assert thaw(migrate_turn_end_reason(freeze({"kind": "disposed"}))) == {"kind": "aborted", "reason": {"kind": "disposed"}}
    current = freeze({"kind": "aborted", "reason": {"kind": "user"}})
    assert migrate_turn_end_reason(current) is current
    (out,) = migrate_legacy([_event(9, "turn/end", {"turn": 1, "reason": {"kind": "aborted"}})], "S")
    assert thaw(out.data) == {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}
