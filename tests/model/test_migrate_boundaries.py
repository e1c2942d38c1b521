"""DIA-13/DIA-14 on A55 shapes with keys missing (issue 43): each key of the migration present and absent, a
replace that inherits an id, reasons of every shape.

DIA-13: "user/message {content, source} gains id:"legacy-message:<sessionId>:<seq>", role:"user"; assistant/message
{content, provenance, ...} -> message:{id, role:"assistant", content, source} where source is the provenance fields
followed by kind:"model"; tool/result {callId, content, isError, ...} -> message:{...}; (a replace inherits the
replaced node's id); turn/start {turn, trigger} -> {turn}; steering/message -> user/message."  DIA-14: "coarse legacy
records read as reason:{kind:"legacy"}; disposal is aborted with reason disposed".
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.codec import parse_event_line, serialize_event
from sessionspec.model.jsonval import freeze, js_stringify
from sessionspec.model.log import Event, make_event
from sessionspec.model.migrate import migrate_event, migrate_turn_end_reason
from sessionspec.model.rejected import Rejected


def _event(type_name: str, data: Any, seq: int = 3, **envelope: Any) -> Event:
    return make_event(type_name, seq=seq, time=0, data=freeze(data), **envelope)


def _migrated(event: Event, ids: dict[int, str] | None = None) -> Event:
    return migrate_event(event, "s", {} if ids is None else ids)


def test_DIA_13_a_prompt_without_source_gains_role_and_id_in_order() -> None:
    out = _migrated(_event("user/message", {"content": [], "meta": {"k": 1}}))
    assert js_stringify(out.data) == '{"content":[],"role":"user","id":"legacy-message:s:3","meta":{"k":1}}'


def test_DIA_13_steering_becomes_a_user_message() -> None:
    out = _migrated(_event("steering/message", {"turn": 1, "content": [], "source": {"kind": "user"}}))
    assert out.type == "user/message" and js_stringify(out.data) == '{"content":[],"source":{"kind":"user"},"role":"user","id":"legacy-message:s:3"}'


def test_DIA_13_provenance_fields_then_kind_model_and_a_kind_of_its_own_is_dropped() -> None:
    out = _migrated(_event("assistant/message", {"content": [], "provenance": {"kind": "x", "provider": "p", "model": "m"}}))
    assert js_stringify(out.data) == ('{"message":{"id":"legacy-message:s:3","role":"assistant","content":[],'
                                      '"source":{"provider":"p","model":"m","kind":"model"}}}')
    odd = _migrated(_event("assistant/message", {"turn": 1, "content": [], "provenance": "p"}))
    assert js_stringify(odd.data) == '{"turn":1,"message":{"id":"legacy-message:s:3","role":"assistant","content":[],"source":{"kind":"model"}}}'


@pytest.mark.parametrize("data", [{"turn": 1, "content": []}, {"turn": 1, "provenance": {}}, {"message": {}, "content": [], "provenance": {}}])
def test_DIA_13_an_assistant_message_lacking_content_or_provenance_or_already_d08_is_not_migrated(data: dict[str, Any]) -> None:
    event = _event("assistant/message", data)
    assert _migrated(event) is event


def test_DIA_13_a_tool_result_without_turn_or_step_and_a_replace_inherits_the_id() -> None:
    out = _migrated(_event("tool/result", {"callId": "c", "content": [], "isError": False}))
    assert js_stringify(out.data).startswith('{"message":{"id":"legacy-message:s:3","role":"user"')
    ids = {1: "legacy-message:s:1"}
    replace_op = {"op": "replace", "start": 1, "end": 1}
    replaced = _migrated(_event("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False}, seq=9,
                                surface_op=freeze(replace_op)), ids)
    assert '"id":"legacy-message:s:1"' in js_stringify(replaced.data)
    # an append, or a replace whose start is not an integer, takes a fresh id
    for op in ("append", {"op": "replace", "start": True, "end": 1}):
        fresh = _migrated(_event("tool/result", {"callId": "c", "content": [], "isError": False}, seq=9, surface_op=freeze(op)), ids)
        assert '"id":"legacy-message:s:9"' in js_stringify(fresh.data)
    assert _migrated(_event("tool/result", {"content": []})).data == freeze({"content": []})  # no callId: not migrated


@pytest.mark.parametrize(("reason", "read"), [
    ({"kind": "aborted"}, {"kind": "aborted", "reason": {"kind": "legacy"}}),
    ({"kind": "disposed"}, {"kind": "aborted", "reason": {"kind": "disposed"}}),
    ({"kind": "disposed", "extra": 1}, {"kind": "disposed", "extra": 1}),
    ({"kind": "completed"}, {"kind": "completed"}),
    ("aborted", "aborted"),
])
def test_DIA_14_turn_end_reasons(reason: Any, read: Any) -> None:
    assert migrate_turn_end_reason(freeze(reason)) == freeze(read)


def test_DIA_13_events_that_are_not_objects_or_already_d08_pass_unchanged() -> None:
    for event in (_event("user/message", "text"), _event("turn/end", {"turn": 1}), _event("turn/start", {"turn": 1}),
                  _event("user/message", {"role": "user", "content": []}), _event("user/message", {"source": {"kind": "user"}})):
        assert _migrated(event) is event


_RESULT = '"data":{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"r"}],"isError":true}'


@pytest.mark.parametrize(("meta", "order"), [
    ('"surfaceOp":"append","sourceEventSeqs":[2]', '"surfaceOp":"append","sourceEventSeqs":[2]'),  # a repair closer (FMT-3)
    ('"sourceEventSeqs":[2],"surfaceOp":"append"', '"sourceEventSeqs":[2],"surfaceOp":"append"'),  # any other writer
])
def test_DIA_13_a_migrated_result_keeps_its_envelope_and_its_key_order(meta: str, order: str) -> None:
    """DIA-13 reshapes a legacy record's data only: the migrated tool/result keeps seq, time, provenance, op and the
    envelope key order it was written in (FMT-3: a crash-repair closer writes ``surfaceOp`` before
    ``sourceEventSeqs``, LOG-14), so writing the migrated event back puts them where the line had them."""
    line = f'{{"type":"tool/result","seq":3,"time":9,{_RESULT},{meta}}}'
    events = parse_event_line(line)
    assert not isinstance(events, Rejected)
    (event,) = events
    out = _migrated(event)
    assert out is not event and '"message":{"id":"legacy-message:s:3","role":"user"' in js_stringify(out.data)
    assert (out.seq, out.time, out.source_event_seqs, out.surface_op) == (3, 9, freeze([2]), "append")
    assert serialize_event(out) == f'{{"type":"tool/result","seq":3,"time":9,"data":{js_stringify(out.data)},{order}}}'
