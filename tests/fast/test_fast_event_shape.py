"""sessionspec.fast.event_shape's fast answer against the definitions it stands for (model.event_shape's
check_core_shape and check_type_shape): an event it passes has no finding, on the loop simulator's logs in both
dialects, the compaction transaction's bracket, the bundled real logs, and every change of an event's data drawn
near the rule book's tables; and it passes every event of a loop log but its compaction records and the turn ends
that carry more than a kind (or it would save nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.fast.event_shape import well_formed_event
from sessionspec.generate import generate_events
from sessionspec.model.codec import parse_event_line
from sessionspec.model.event_shape import check_core_shape, check_type_shape
from sessionspec.model.jsonval import freeze, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.log_only_shape import COMPACTION_TYPES
from sessionspec.model.loop import compaction_hooks
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.spec.machine_scripts import compaction_plugin
from tests.support import REAL, dump_turns


def _found(event: Event, dialect: Dialect) -> list[Rejected]:
    return [*check_core_shape(event, dialect), *check_type_shape(event, dialect)]


def _agrees(event: Event, dialect: Dialect) -> bool:
    """The fast answer only ever passes an event the definitions find nothing on."""
    return not well_formed_event(event, dialect) or _found(event, dialect) == []


def _loop_log(seed: int, events: int = 600) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def _real_events() -> Iterator[Event]:
    for path in sorted(REAL.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            parsed = parse_event_line(line)
            if not isinstance(parsed, Rejected):
                yield from parsed


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_the_loop_log_passes_but_its_headers_and_the_definitions_agree(seed: int) -> None:
    for dialect, log in ((Dialect.A55, _loop_log(seed)), (Dialect.D08, list(migrate_legacy(_loop_log(seed), "s")))):
        assert {e.type for e in log if not well_formed_event(e, dialect)} <= {"turn/end", *COMPACTION_TYPES}
        assert all(_agrees(e, dialect) for e in log)


def test_the_compaction_bracket_and_the_real_logs_agree() -> None:
    events = [*dump_turns(compaction_hooks(compaction_plugin(700, prune=True))), *_real_events()]
    assert len(events) > 1000
    for dialect in Dialect:
        assert [e.seq for e in events if not _agrees(e, dialect)] == []


_VALUES: list[Any] = [None, True, 0, 1, 1.5, "", "x", [], [{}], {}, {"kind": "user"}, {"kind": "completed"},
                      {"kind": "aborted"}, {"provider": "p", "model": "m"}, {"name": "n", "code": "c"}]
_KEYS = ["turn", "step", "kind", "source", "content", "meta", "envelope", "usage", "error", "extra"]


def _single_changes(data: Any, depth: int = 0) -> Iterator[Any]:
    """Every change of ``data`` at one place (to depth 3): a key dropped, added or moved to the front, or a value
    replaced by one of :data:`_VALUES` or changed itself."""
    yield from _VALUES
    if depth == 3:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            yield {k: v for k, v in data.items() if k != key}
            yield {key: value, **{k: v for k, v in data.items() if k != key}}
            for inner in _single_changes(value, depth + 1):
                yield {**data, key: inner}
        for key in _KEYS:
            for value in _VALUES:
                yield {**data, key: value}
    elif isinstance(data, list) and data:
        for inner in _single_changes(data[0], depth + 1):
            yield [inner, *data[1:]]


def _samples() -> list[Event]:
    """The first three events of each type of a loop log, with a steering message's and a tool result's error forms."""
    by_type: dict[str, list[Event]] = {}
    for event in _loop_log(3, 1500):
        by_type.setdefault(event.type, []).append(event)
    return [e for events in by_type.values() for e in events[:3]]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_every_single_change_the_fast_answer_passes_has_no_finding(dialect: Dialect) -> None:
    wrong = []
    for event in _samples():
        for changed in _single_changes(thaw(event.data)):
            mutated = make_event(event.type, seq=event.seq, time=event.time, data=freeze(changed))
            if not _agrees(mutated, dialect):
                wrong.append((event.type, changed))
    assert wrong == []
