"""sessionspec/fast/loop_log.py against model/loop_log/step.py's ``take_chunk``, field for field of the step.

On the logs the loop simulator writes (read as A55 and as D08: D08's failed attempt is retried in the step, DIA-7)
and on chunks of every kind and shape (no object, no chunk, empty text, a failed finish), each step's chunks taken by
both into their own step, compared after every chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sessionspec.fast import loop_log as fast
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop_log import step as model
from sessionspec.model.loop_log.dialect import new_track
from sessionspec.model.loop_log.track import StepTrack
from sessionspec.simulate import simulate


def _state(st: StepTrack) -> tuple[object, ...]:
    return tuple(getattr(st, name) for name in StepTrack.__slots__)


def _tied(chunks: Sequence[Event], dialect: Dialect) -> None:
    track = new_track(dialect)
    by_model, by_twin = StepTrack(turn=1, step=1), StepTrack(turn=1, step=1)
    for chunk in chunks:
        if chunk.type == "step/start":
            by_model, by_twin = StepTrack(turn=1, step=1), StepTrack(turn=1, step=1)
            continue
        model.take_chunk(track, by_model, chunk)
        fast.take_chunk(track, by_twin, chunk)
        assert _state(by_twin) == _state(by_model), chunk


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
@pytest.mark.parametrize("seed", [0, 3, 7])
def test_the_twin_takes_the_simulators_chunks_as_the_definition(seed: int, dialect: Dialect) -> None:
    log = simulate(seed, 10, compaction=True, context_window=3000)
    chunks = [e for e in log if e.type in ("assistant/chunk", "step/start")]
    assert any(e.type == "assistant/chunk" for e in chunks)
    _tied(chunks, dialect)


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_the_twin_takes_every_kind_of_chunk_as_the_definition(dialect: Dialect) -> None:
    shapes: list[object] = [
        7, {}, {"chunk": 5}, {"chunk": {}}, {"chunk": {"type": "usage", "usage": {"inputTokens": 1}}}, {"chunk": {"type": "usage"}},
        {"chunk": {"type": "text-delta", "text": ""}}, {"chunk": {"type": "text-delta", "text": "a"}},
        {"chunk": {"type": "reasoning-delta", "text": "r"}}, {"chunk": {"type": "text-delta"}}, {"chunk": {"type": "tool-call-delta", "id": "c"}},
        {"chunk": {"type": "finish", "reason": {"kind": "stop"}}}, {"chunk": {"type": "finish", "reason": {"kind": "error"}}},
        {"chunk": {"type": "usage", "usage": {"inputTokens": 2}}}, {"chunk": {"type": "finish", "reason": {"kind": "aborted"}}},
        {"chunk": {"type": "finish"}}, {"chunk": {"type": "block-start", "index": 0}},
    ]
    _tied([make_event("assistant/chunk", seq=i, time=i, data=freeze(data)) for i, data in enumerate(shapes)], dialect)
