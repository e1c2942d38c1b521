"""sessionspec/fast/loop_log.py against model/loop_log's definitions: ``take_chunk`` field for field of the step;
``open_turn``, ``open_step``, ``close_step``, ``record_message`` and ``take_user_message`` field for field of the
track and finding for finding.

On the logs the loop simulator writes (read as A55 and as D08: D08's failed attempt is retried in the step, DIA-7)
and on chunks of every kind and shape (no object, no chunk, empty text, a failed finish), each step's chunks taken by
both into their own step, compared after every chunk.  The loop fold (``sessionspec/check/loop_audit.py``) run once
with the twins and once with the definitions in their place, the two tracks compared after every event: on the
simulator's logs, the real logs under tests/data, and each single change of a field the twins read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from sessionspec.check import loop_audit
from sessionspec.check.logfile import read_path
from sessionspec.fast import loop_log as fast
from sessionspec.model.jsonval import ABSENT, freeze, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop_log import step as model
from sessionspec.model.loop_log.dialect import new_track
from sessionspec.model.loop_log.track import StepTrack
from sessionspec.simulate import simulate
from tests.loop_definitions import TWINNED, definitions


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


DATA = Path(__file__).parents[1] / "data"
def _track_state(audit: loop_audit.LoopAudit) -> tuple[object, ...]:
    s = audit.state
    turn = None if s.turn is None else tuple(getattr(s.turn, name) for name in type(s.turn).__slots__)
    step = None if s.step is None else _state(s.step)
    return turn, step, s.anchored, s.routed, s.step_api, list(s.found)


def _fold_tied(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> None:
    """Both folds over ``events``, compared after every event and at the end."""
    assert {name for name in TWINNED if getattr(loop_audit, name) is not TWINNED[name]} == set(TWINNED)
    by_twins = loop_audit.LoopAudit(events, dialect, first_live_seq)
    with definitions():
        by_model = loop_audit.LoopAudit(events, dialect, first_live_seq)
    for event in events:
        by_twins.step(event, None)
        with definitions():
            by_model.step(event, None)
        assert _track_state(by_twins) == _track_state(by_model), (dialect, event)
    found = by_twins.finish()
    with definitions():
        assert found == by_model.finish()


def _simulated(seed: int) -> list[Event]:
    return list(simulate(seed, 8, compaction=True, context_window=3000))


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
@pytest.mark.parametrize("seed", [0, 5])
def test_the_fold_with_the_twins_judges_the_simulators_logs_as_with_the_definitions(seed: int, dialect: Dialect) -> None:
    _fold_tied(_simulated(seed), dialect)


def test_the_fold_with_the_twins_judges_every_real_log_as_with_the_definitions() -> None:
    logs = 0
    for path in sorted(DATA.rglob("*.jsonl")):
        read = read_path(str(path))
        if read.events:
            logs += 1
            for dialect in Dialect:
                _fold_tied(read.events, dialect)
    assert logs > 10


def _changed(event: Event, key: str, value: object) -> Event:
    data = thaw(event.data)
    if not isinstance(data, dict):
        return event
    if value is ABSENT:
        data.pop(key, None)
    else:
        data[key] = value
    return replace(event, data=freeze(data))


# Each field a twin reads, by event type, and the values it is changed to one at a time.
_CHANGES: dict[str, dict[str, list[object]]] = {
    "turn/start": {"turn": [ABSENT, "1", True], "trigger": [ABSENT, {"kind": "message"}, {"kind": "tool"}, "message"]},
    "step/start": {"step": [ABSENT, True, "2", 0, 99], "turn": [ABSENT, 7]},
    "assistant/message": {"interrupted": [True, False], "provenance": [ABSENT, {}, {"provider": "other", "model": "m"}, "p"],
                          "usage": [ABSENT, {}, {"inputTokens": 1.0}, {"inputTokens": True}, 3],
                          "content": [ABSENT, "t", [{"type": "tool-call", "id": "x", "name": "n", "arguments": {}}], [7]]},
    "turn/end": {"reason": [ABSENT, {}, {"kind": "completed"}, {"kind": "max-tokens"}, {"kind": "error", "step": 1},
                            {"kind": "rejected", "reason": "r"}, {"kind": "interrupted"}, {"kind": "aborted"}, "completed"]},
    "tool/call": {"callId": [ABSENT, "other", 3], "name": [ABSENT, "other"], "arguments": [ABSENT, {}, {"x": 1}, "a"]},
    "tool/result": {"callId": [ABSENT, "other", 3, None]},
    "request/header": {"reason": ["initial", "resume", "compaction", ABSENT], "header": [ABSENT, {}, {"config": 3}, {"config": {}},
                       {"config": {"provider": "p"}}, {"config": {"provider": "{{p}}", "model": 2}}]},
    "user/message": {"envelope": [{}, {"prefixContexts": []}], "source": [{"kind": "plugin", "plugin": "compact"}, "s"],
                     "id": ["legacy-message:1", 3]},
}


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_the_fold_with_the_twins_judges_each_single_change_as_with_the_definitions(dialect: Dialect) -> None:
    log = _simulated(3)
    changes = 0
    for kind, fields in _CHANGES.items():
        # The first two events of the type (the first of a log and one later): each field changed one way at a time.
        for index in [i for i, e in enumerate(log) if e.type == kind][:2]:
            for key, values in fields.items():
                original = thaw(log[index].data).get(key) if isinstance(log[index].data, dict) else None
                # An object field also changed in one key at a time (the provider alone, the model alone).
                edits = [{**original, k: "other"} for k in original] if isinstance(original, dict) else []
                for value in [*values, *edits]:
                    changed = [*log[:index], _changed(log[index], key, value), *log[index + 1:]]
                    _fold_tied(changed, dialect)
                    changes += 1
            # Dropped, and repeated in place (a second message in a step, a second step/end, ...).
            _fold_tied([*log[:index], *log[index + 1:]], dialect)
            _fold_tied([*log[:index + 1], replace(log[index], seq=log[index].seq), *log[index + 1:]], dialect)
    assert changes > 60
