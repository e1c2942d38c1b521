"""CHK-2/CHK-3/CHK-5 at their edges (issue 43): what makes a chunk unpackable, one condition at a time, and the time step
between run members exactly at the safe-integer limit and one over.

CHK-2: "An event MUST be packable iff: type assistant/chunk; envelope key set exactly {type, seq, time, data}; ...;
data key set exactly {turn, step, chunk} with numeric turn/step; chunk.index numeric; and chunk key set exactly
{type, index, text} with string text for text-delta/reasoning-delta, or exactly {type, index, id, argumentsDelta} or
{type, index, id, name, argumentsDelta} with string id, argumentsDelta (and name) for tool-call-delta."
CHK-3: "... extend the current run iff ... time - prev.time is a safe integer ...".  CHK-4: a run of >= 3 is a row.
CHK-5: a malformed storage row is rejected "malformed <tag> storage row", naming the first check it fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionspec.model.codec import expand_row, pack_chunk_runs, parse_value
from sessionspec.model.jsonval import ABSENT, MAX_SAFE_INTEGER, JsonObject, freeze
from sessionspec.model.log import Event, make_event
from sessionspec.model.rejected import Rejected


def _chunk(seq: int, chunk: Any, time: int | None = None, data: Any = None, **envelope: Any) -> Event:
    body = {"turn": 1, "step": 1, "chunk": chunk} if data is None else data
    return make_event("assistant/chunk", seq=seq, time=seq if time is None else time, data=freeze(body), **envelope)


def _text(seq: int, text: Any = "x", **kw: Any) -> Event:
    return _chunk(seq, {"type": "text-delta", "index": 0, "text": text}, **kw)


def _rows(events: list[Event]) -> list[str]:
    return [str(row.get("type")) for row in pack_chunk_runs(events)]


def test_CHK_4_three_packable_chunks_are_one_row() -> None:
    assert _rows([_text(0), _text(1), _text(2)]) == ["text-chunks"]


@pytest.mark.parametrize("odd", [
    _text(1, surface_op="append"),                                   # an envelope with surfaceOp
    _chunk(1, None, data={"turn": 1, "step": 1}),                    # data keys
    _chunk(1, None, data="not an object"),                            # data not an object
    _chunk(1, {"type": "text-delta", "index": 0, "text": "x"}, data={"turn": "1", "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}),
    _chunk(1, {"type": "text-delta", "index": 0, "text": "x"}, data={"turn": 1, "step": None, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}),
    _chunk(1, None, data={"turn": 1, "step": 1, "chunk": "delta"}),  # chunk not an object
    _text(1, text=7),                                                 # text not a string
    _chunk(1, {"type": "tool-call-delta", "index": 0, "argumentsDelta": "{"}),              # keys: no id
    _chunk(1, {"type": "tool-call-delta", "index": 0, "id": 5, "argumentsDelta": "{"}),     # id not a string
    _chunk(1, {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": None}),  # argumentsDelta not a string
    _chunk(1, {"type": "tool-call-delta", "index": 0, "id": "c", "name": 3, "argumentsDelta": "{"}),  # name not a string
])
def test_CHK_2_an_unpackable_chunk_breaks_the_run_and_is_written_as_it_is(odd: Event) -> None:
    """Between two packable chunks an unpackable one: nothing reaches three members, every event stays verbatim."""
    events = [_text(0), odd, _text(2), _text(3)]
    assert _rows(events) == ["assistant/chunk"] * 4


def test_CHK_2_tool_call_deltas_with_and_without_a_name_are_packable() -> None:
    named = [_chunk(i, {"type": "tool-call-delta", "index": 0, "id": "c", "name": "echo", "argumentsDelta": "a"}) for i in range(3)]
    plain = [_chunk(i, {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "a"}) for i in range(3)]
    assert _rows(named) == _rows(plain) == ["tool-call-chunks"]
    assert "name" in pack_chunk_runs(named)[0]["data"] and "name" not in pack_chunk_runs(plain)[0]["data"]  # type: ignore[operator]


@pytest.mark.parametrize(("second", "third", "rows"), [
    (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER, ["text-chunks"]),                  # steps of exactly the limit: one run
    (MAX_SAFE_INTEGER, 0, ["text-chunks"]),                                 # back by the limit
    (-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER, ["assistant/chunk"] * 3),          # a step of twice the limit: the run breaks
])
def test_CHK_3_the_time_step_is_a_safe_integer_at_its_limit(second: int, third: int, rows: list[str]) -> None:
    events = [_text(0, time=0), _text(1, time=second), _text(2, time=third)]
    assert _rows(events) == rows


def test_CHK_4_a_lone_chunk_before_a_non_chunk_is_written_as_it_is() -> None:
    other = make_event("step/end", seq=1, time=1, data=freeze({"turn": 1, "step": 1}))
    assert _rows([_text(0), other]) == ["assistant/chunk", "step/end"]
    assert pack_chunk_runs([]) == () and ABSENT is not None


_ONE_TEXT = {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]}


def _row(**envelope: object) -> JsonObject:
    """A row value as a line would hold it (built by freeze: the JSON reader refuses integers past 2^53, LOG-4)."""
    value = freeze({"type": "text-chunks", "seq0": 0, "time0": 0, "data": _ONE_TEXT} | envelope)
    assert isinstance(value, JsonObject)
    return value


@pytest.mark.parametrize(("row", "why", "seq"), [
    # CHK-5 "`seq0` non-negative safe integer": negative, fractional, a string, past 2^53 - 1; checked before time0
    (_row(seq0=-1), "seq0", -1),
    (_row(seq0=1.5), "seq0", None),
    (_row(seq0="3"), "seq0", None),
    (_row(seq0=MAX_SAFE_INTEGER + 1), "seq0", MAX_SAFE_INTEGER + 1),
    (_row(seq0="3", time0=1.5), "seq0", None),
    # "`time0` safe integer" (a negative one is, CHK-5 asks no sign of it)
    (_row(time0=MAX_SAFE_INTEGER + 1), "time0", 0),
    (_row(x=1), "envelope keys", 0),
    (_row(data={**_ONE_TEXT, "name": "n"}), "data keys", 0),
    (_row(data=[1]), "data keys", 0),
    (_row(data={**_ONE_TEXT, "step": "1"}), "turn/step/index", 0),
    (_row(data={**_ONE_TEXT, "texts": []}), "payload must be a non-empty string array", 0),
    (_row(data={**_ONE_TEXT, "texts": "a"}), "payload must be a non-empty string array", 0),
])
def test_CHK_5_the_reason_names_the_first_check_the_row_fails(row: JsonObject, why: str, seq: int | None) -> None:
    """CHK-5: a malformed row is rejected "malformed <tag> storage row"; the reason then names the check that failed,
    in the order the real validateRow runs them (611615650f packages/core/session/src/chunk-rows.ts: envelope, seq0,
    time0, data keys, turn/step/index, payload, dt), and the finding carries seq0 when it is an integer."""
    refused = expand_row(row)
    assert isinstance(refused, Rejected)
    assert (refused.rule, refused.seq, refused.reason) == ("CHK-5", seq, f"malformed text-chunks storage row: {why}")


def test_CHK_5_a_negative_time0_is_a_safe_integer_and_expands() -> None:
    """CHK-5 asks `time0` to be a safe integer only (the real check is Number.isSafeInteger), so -5 expands."""
    events = expand_row(_row(time0=-5))
    assert not isinstance(events, Rejected) and [(e.seq, e.time) for e in events] == [(0, -5)]


def test_CHK_5_a_tool_call_row_needs_string_id_and_name() -> None:
    data = {"turn": 1, "step": 1, "index": 0, "id": "c", "name": "n", "dt": [], "args": ["{}"]}
    row = parse_value(json.dumps({"type": "tool-call-chunks", "seq0": 2, "time0": 0, "data": data}))
    assert isinstance(row, JsonObject) and not isinstance(expand_row(row), Rejected)
    for field in ("id", "name"):
        bad = parse_value(json.dumps({"type": "tool-call-chunks", "seq0": 2, "time0": 0, "data": {**data, field: 1}}))
        assert isinstance(bad, JsonObject)
        refused = expand_row(bad)
        assert isinstance(refused, Rejected) and refused.reason == "malformed tool-call-chunks storage row: id/name", field
