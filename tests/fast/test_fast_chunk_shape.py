"""sessionspec.fast.chunk_shape's fast answer against the definition it stands for (LOG-9,
model.event_shape.check_core_shape): a chunk it passes has no finding (the shape fold skips only an empty
answer), and every flaw it does not read is left to the definition."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.chunk_shape import well_formed_chunk
from sessionspec.model.event_shape import CHUNK_KEYS, check_core_shape
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.spec.log_strategies import well_formed_logs

_VALUES = st.sampled_from([0, 1, True, None, "t", 1.5, [], {}])


@st.composite
def _chunk_data(draw: st.DrawFn) -> dict[str, Any]:
    """An assistant/chunk's data near the table: a kind's keys (some dropped, some added, reordered), any values."""
    kind = draw(st.sampled_from([*CHUNK_KEYS, "text", 7]))
    keys = [name for name, _ in CHUNK_KEYS.get(kind, (("type", True), ("index", True)))] if isinstance(kind, str) else ["type"]
    keys = draw(st.permutations(keys)) if draw(st.booleans()) else keys
    keys = [k for k in keys if draw(st.integers(0, 9)) > 0] + draw(st.lists(st.sampled_from(["extra", "name", "id"]), max_size=1))
    chunk = {k: (kind if k == "type" else draw(_VALUES)) for k in keys}
    data: dict[str, Any] = {"turn": draw(st.sampled_from([1, True, "1"])), "step": draw(st.sampled_from([1, 2.5])),
                            "chunk": draw(st.sampled_from([chunk, "text"]))}
    order = draw(st.permutations(list(data))) if draw(st.integers(0, 4)) == 0 else list(data)
    return {k: data[k] for k in order}


def _chunk(data: dict[str, Any]) -> Event:
    return make_event("assistant/chunk", seq=0, time=0, data=freeze(data))


@given(well_formed_logs(), st.sampled_from(Dialect))
def test_a_chunk_the_fast_path_passes_in_a_log_has_no_shape_finding(events: tuple[Event, ...], dialect: Dialect) -> None:
    for event in events:
        if event.type == "assistant/chunk" and well_formed_chunk(event.data):
            assert check_core_shape(event, dialect) == []


@given(_chunk_data(), st.sampled_from(Dialect))
def test_the_fast_path_passes_exactly_the_chunks_without_a_finding(data: dict[str, Any], dialect: Dialect) -> None:
    """It reads the keys, turn, step and chunk kind only, and the definition finds nothing else on a chunk."""
    assert well_formed_chunk(freeze(data)) == (check_core_shape(_chunk(data), dialect) == [])


def test_the_chunk_fast_path_leaves_every_flaw_to_the_full_check() -> None:
    good = {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "hi"}}
    assert well_formed_chunk(freeze(good))
    flawed = [
        {"step": 1, "turn": 1, "chunk": good["chunk"]},  # keys out of order
        {**good, "turn": True},  # a boolean is no turn number
        {**good, "chunk": {"type": "text-delta", "text": "hi", "index": 0}},  # chunk keys out of order
        {**good, "chunk": {"type": "no-such-kind", "index": 0}},
        {**good, "chunk": "text"},
        {**good, "extra": 1},
    ]
    for data in flawed:
        assert not well_formed_chunk(freeze(data))
        assert check_core_shape(_chunk(data), Dialect.A55) != []
