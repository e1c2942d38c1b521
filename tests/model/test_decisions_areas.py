"""Decision outcomes of the zero-retention brackets, the nesting companion and the request points no other test
took (issue 43 item 1): CMP-9/DIA-20's rule of a bracket's range, LOG-13's relations with DIA-3's manual
brackets, and FMT-8's request points (a failed request is visible only through ``turn/end {kind:"error",
failure}``; a step open at the log's end is a point once it has a chunk).
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.compaction.zero_retention import BracketPlace, take_bracket_event, zero_retention_rule
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.nesting import D08_NESTING, Nesting, companion_veto, d08_inside_open_turn, replace_in_turn
from sessionspec.model.request_points import LoggedRequest, check_request_points, logged_requests, unreadable_event


def _events(*specs: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], Any]) -> list[Event]:
    out: list[Event] = []
    for spec in specs:
        type_name, data, op = (*spec, None) if len(spec) == 2 else spec  # type: ignore[misc]
        out.append(make_event(type_name, seq=len(out), time=0, data=freeze(data), **({} if op is None else {"surface_op": freeze(op)})))
    return out


# ---------------------------------------------------------------- CMP-9, DIA-20: the rule of a zero-retention range


def test_CMP_9_a_replaced_message_is_not_the_steps_message() -> None:
    """Only an appended ``assistant/message`` is the step's message; a replace (compaction's, a prune's) is not."""
    place = BracketPlace(dialect=Dialect.D08)
    for event in _events(("step/start", {"turn": 1, "step": 1}),
                         ("assistant/message", {"turn": 1, "step": 1}, {"op": "replace", "start": 0, "end": 0})):
        take_bracket_event(place, event)
    assert place.step_open and not place.message
    take_bracket_event(place, make_event("assistant/message", seq=2, time=0, data=freeze({}), surface_op="append"))
    assert place.message


def test_DIA_7_a_D08_bracket_with_an_owner_between_steps_is_a_pressure_bracket() -> None:
    """Not manual (an owner), not in a step after a failed attempt: no zero-retention rule (its retainTokens is not logged)."""
    place = BracketPlace(dialect=Dialect.D08)
    start = make_event("compaction/start", seq=3, time=0, data=freeze({"turn": 1}))
    assert zero_retention_rule(place, start) is None
    place.step_open, place.failed_attempt = True, True
    assert zero_retention_rule(place, start) == "CMP-9"


# ---------------------------------------------------------------- LOG-13 with DIA-3's manual brackets


def test_DIA_3_a_bracket_with_an_owner_opens_no_manual_bracket() -> None:
    nesting = Nesting()
    assert d08_inside_open_turn(nesting, make_event("compaction/start", seq=0, time=0, data=freeze({"turn": 4}))) is None
    assert not nesting.manual_bracket
    assert d08_inside_open_turn(nesting, make_event("compaction/end", seq=1, time=0, data=freeze({"turn": 4}))) is None
    assert not nesting.manual_bracket
    assert d08_inside_open_turn(nesting, make_event("user/message", seq=2, time=0, data=freeze({}))) == "user/message outside an open turn"


def test_DIA_3_a_prune_replace_in_a_manual_bracket_lies_in_no_turn() -> None:
    nesting = Nesting()
    replace = make_event("tool/result", seq=1, time=0, data=freeze({}), surface_op=freeze({"op": "replace", "start": 0, "end": 0}))
    assert replace_in_turn(nesting, replace) == "tool/result replace outside an open turn"
    d08_inside_open_turn(nesting, make_event("compaction/start", seq=0, time=0, data=freeze({"turn": None})))
    assert nesting.manual_bracket
    assert replace_in_turn(nesting, replace) is None


@pytest.mark.parametrize("call_id", [5, None], ids=["number", "absent"])
def test_LOG_13_a_call_without_a_string_id_is_never_pending(call_id: Any) -> None:
    """Only a string call id is registered: a result naming it answers no pending call."""
    call: dict[str, Any] = {"turn": 1, "step": 1, "name": "t", "arguments": "{}"}
    if call_id is not None:
        call["callId"] = call_id
    events = _events(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), ("tool/call", call),
                     ("tool/result", {"turn": 1, "step": 1, "callId": call_id, "content": []}, "append"))
    nesting = Nesting()
    found = [companion_veto(nesting, event, D08_NESTING) for event in events]
    assert found[:3] == [None, None, None] and nesting.pending == {}
    last = found[3]
    assert last is not None and last.rule == "LOG-13" and "which is not a pending call" in last.reason


# ---------------------------------------------------------------- FMT-8: request points


_HEADER = ("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
_CHUNK = ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}})


def test_FMT_8_an_empty_log_has_no_request_point_and_nothing_unreadable() -> None:
    assert logged_requests([]) == ()
    assert unreadable_event([], Dialect.A55) is None
    assert check_request_points([], Dialect.A55) == []


@pytest.mark.parametrize("reason", [{"kind": "error", "message": "m", "code": "X"}, "error", None], ids=["thrown", "not-object", "absent"])
def test_FMT_8_a_step_without_chunks_is_a_point_only_when_a_request_failure_ends_the_turn(reason: Any) -> None:
    """LOOP-14: a request failure ends the turn ``{kind:"error", failure}``; another end (a thrown error's
    ``{kind:"error", message, code}``, or none readable) does not show the step's request was dispatched."""
    end: dict[str, Any] = {"turn": 1}
    if reason is not None:
        end["reason"] = reason
    step = (("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), _HEADER, ("step/end", {"turn": 1, "step": 1}))
    assert logged_requests(_events(*step, ("turn/end", end))) == ()
    failure = {"kind": "error", "step": 1, "failure": {"message": "m", "code": "X"}}
    assert logged_requests(_events(*step, ("turn/end", {"turn": 1, "reason": failure}))) == (
        LoggedRequest(step_start_seq=1, first_chunk_seq=None, header_at=3),)


def test_FMT_8_a_step_open_at_the_end_is_a_point_once_it_has_a_chunk() -> None:
    opened = _events(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), _HEADER)
    assert logged_requests(opened) == ()
    streamed = _events(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), _HEADER, _CHUNK)
    assert logged_requests(streamed) == (LoggedRequest(step_start_seq=1, first_chunk_seq=3, header_at=3),)
    assert check_request_points(streamed, Dialect.A55) == []
