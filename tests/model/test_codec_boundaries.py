"""CHK-2/CHK-3 at their edges (issue 43): what makes a chunk unpackable, one condition at a time, and the time step
between run members exactly at the safe-integer limit and one over.

CHK-2: "An event MUST be packable iff: type assistant/chunk; envelope key set exactly {type, seq, time, data}; ...;
data key set exactly {turn, step, chunk} with numeric turn/step; chunk.index numeric; and chunk key set exactly
{type, index, text} with string text for text-delta/reasoning-delta, or exactly {type, index, id, argumentsDelta} or
{type, index, id, name, argumentsDelta} with string id, argumentsDelta (and name) for tool-call-delta."
CHK-3: "... extend the current run iff ... time - prev.time is a safe integer ...".  CHK-4: a run of >= 3 is a row.
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.codec import pack_chunk_runs
from sessionspec.model.jsonval import ABSENT, MAX_SAFE_INTEGER, freeze
from sessionspec.model.log import Event, make_event


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
