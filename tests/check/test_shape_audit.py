"""LOG-9's field types as ShapeAudit tells them: every typed field of a core event that has the wrong type
is named, in the order of the rule book's table (the keys first), and a data that is not an object reads
every field absent.  Written out by hand, so a rewrite of the checks (issue 26) keeps the reports."""

from __future__ import annotations

import pytest

from sessionspec.check.shape_audit import check_core_shape
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, make_event

WRONG = [
    ("step/end", {"turn": "1", "step": True}, ["turn is not an integer", "step is not an integer"]),
    ("turn/end", {"turn": 1.5, "reason": {"kind": "completed"}}, ["turn is not an integer"]),
    ("turn/start", {"turn": None, "trigger": {"kind": "message", "source": {}}}, ["turn is not an integer"]),
    ("turn/start", {"turn": 1, "trigger": {"kind": "timer", "source": {}}},
     ['trigger {"kind":"timer","source":{}} is not {kind: message|injection, source}']),
    ("tool/call", {"turn": 1, "step": 1, "callId": 7, "name": None, "arguments": {}},
     ["callId is not a string", "name is not a string", "arguments is not a string"]),
    ("tool/result", {"turn": True, "step": 1, "callId": "c", "content": "x", "isError": "false", "error": {"code": 1}},
     ["turn is not an integer", "content is not a list", "isError is not a boolean", "error is not {name, code}"]),
    ("assistant/message", {"turn": 1, "step": 1, "content": [1], "provenance": {"model": "m"}, "usage": []},
     ["content is not a list of objects", "provenance is not {provider, model, replayState?}", "usage is not an object"]),
    ("prompt/blocked", {"content": {}, "source": [], "reason": 1},
     ["content is not a list", "source is not an object", "reason is not a string"]),
    ("todo/write", {"todos": [{"content": "c", "status": "done"}]},
     ["todos is not a list of {content, status: pending|in_progress|completed}"]),
]


@pytest.mark.parametrize(("kind", "data", "flaws"), WRONG, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(WRONG)])
def test_every_wrongly_typed_field_is_told_in_the_table_order(kind: str, data: dict[str, object], flaws: list[str]) -> None:
    event = make_event(kind, seq=3, time=0, data=freeze(data))
    found = check_core_shape(event, Dialect.A55)
    assert [f.reason for f in found] == [f"{kind} {why}" for why in flaws]
    assert {(f.rule, f.seq) for f in found} == {("LOG-9", 3)}


def test_a_data_that_is_not_an_object_lacks_every_field() -> None:
    event = make_event("tool/result", seq=0, time=0, data=freeze([1]))
    assert [f.reason for f in check_core_shape(event, Dialect.A55)] == [
        "tool/result data is not an object", "tool/result turn is not an integer", "tool/result step is not an integer",
        "tool/result callId is not a string", "tool/result content is not a list", "tool/result isError is not a boolean",
    ]


def test_the_key_flaw_comes_before_the_type_flaws() -> None:
    event = make_event("step/start", seq=0, time=0, data=freeze({"step": 1, "turn": "1"}))
    reasons = [f.reason for f in check_core_shape(event, Dialect.D08)]
    assert reasons[1:] == ["step/start turn is not an integer"]
    assert reasons[0].startswith("step/start data has its keys out of order")
