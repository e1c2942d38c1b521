"""What a strict load refuses, as the model decides it in a log (model/load_shape.py): LOG-8's per-event checks,
LEG-2, LEG-3, LEG-4, LOG-11's kinds, HDR-8, P-LOG-4, and D08's aborted reasons (DIA-14) as the overlay.

Both ways, over what the model writes: the loop simulator's logs (``sessionspec.generate``) and the D08 reader's
migration of them (DIA-13).  Every event loads; each change a load refuses is refused by its rule (and one the
other dialect allows is not).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.load_shape import LOAD_CHECKED_TYPES, load_refusals, load_shapes
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.model.seed import validate_seed
from tests.support import with_data


def judged(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """The load refusals over ``events``, as the checker's fold runs them on each event of the types a load checks."""
    shapes = load_shapes(dialect)
    return [r for e in events if e.type in LOAD_CHECKED_TYPES for r in load_refusals(e, shapes)]


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def written(dialect: Dialect, seed: int = 1) -> list[Event]:
    log = loop_log(seed)
    return log if dialect is Dialect.A55 else list(migrate_legacy(log, "s"))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_loads(seed: int) -> None:
    log = loop_log(seed)
    assert {e.type for e in log} >= {"request/header", "assistant/message", "turn/end"}
    assert judged(log, Dialect.A55) == []
    assert judged(migrate_legacy(log, "s"), Dialect.D08) == []
    # The seed's own validation (LOG-8's definition) loads it too.
    assert validate_seed(log) is None


def _changed(log: list[Event], type_name: str, **data: object) -> tuple[list[Event], int]:
    index = next(i for i, e in enumerate(log) if e.type == type_name)
    changed = list(log)
    changed[index] = with_data(log[index], **data)
    return changed, log[index].seq


A55_ENDS = [
    ({"kind": "aborted"}, None), ({"kind": "aborted", "reason": {"kind": "user"}}, "LEG-4"), ({"kind": "rejected", "reason": "r"}, None),
    ({"kind": "cancelled"}, "LOG-11"), ({"kind": 3}, "LOG-11"), ({"reason": "no kind"}, "LOG-11"), ({"kind": "blocked"}, "LOG-11"),
]


@pytest.mark.parametrize(("reason", "rule"), A55_ENDS)
def test_an_a55_turn_end_loads_with_an_a55_kind_and_a_bare_aborted(reason: dict[str, object], rule: str | None) -> None:
    log, seq = _changed(written(Dialect.A55), "turn/end", reason=reason)
    assert {(f.rule, f.seq) for f in judged(log, Dialect.A55)} == (set() if rule is None else {(rule, seq)})


D08_ENDS = [
    ({"kind": "aborted", "reason": {"kind": "user"}}, None), ({"kind": "aborted", "reason": {"kind": "legacy"}}, None),
    ({"kind": "aborted"}, "DIA-14"), ({"kind": "aborted", "reason": "user"}, "DIA-14"), ({"kind": "cancelled"}, None),
    ({"kind": "blocked"}, None),
]


@pytest.mark.parametrize(("reason", "rule"), D08_ENDS)
def test_a_d08_turn_end_loads_with_a_dia_14_abort(reason: dict[str, object], rule: str | None) -> None:
    """D08 overrides LOG-11 and LEG-4 (DIA-14): the load knows its aborted reasons; an unknown kind is LOG-11's
    shape check in D08 (:func:`sessionspec.model.turn_end_reason.d08_reason_flaw`), not the load's."""
    log, seq = _changed(written(Dialect.D08), "turn/end", reason=reason)
    assert {(f.rule, f.seq) for f in judged(log, Dialect.D08)} == (set() if rule is None else {(rule, seq)})


@pytest.mark.parametrize("dialect", list(Dialect))
def test_a_fallback_header_or_one_without_its_provider_does_not_load(dialect: Dialect) -> None:
    log, seq = _changed(written(dialect), "request/header", reason="fallback")
    assert {(f.rule, f.seq) for f in judged(log, dialect)} == {("LEG-2", seq)}
    header = get(log[next(i for i, e in enumerate(log) if e.seq == seq)].data, "header")
    assert isinstance(header, JsonObject)
    bare = {"config": {"provider": "", "model": "m"}}
    log, seq = _changed(written(dialect), "request/header", header=bare)
    assert {(f.rule, f.seq) for f in judged(log, dialect)} == {("HDR-8", seq)}
    log, seq = _changed(written(dialect), "request/header", header={"config": {"provider": "p", "model": "m", "reasoningEffort": ""}})
    assert {(f.rule, f.seq) for f in judged(log, dialect)} == {("LEG-6", seq)}
    log, seq = _changed(written(dialect), "request/header", header={"config": {"provider": "p", "model": "m"}, "system": 3})
    assert {(f.rule, f.seq) for f in judged(log, dialect)} == {("HDR-1" if dialect is Dialect.A55 else "DIA-8", seq)}


def test_an_a55_assistant_message_loads_with_its_provenance_and_a_d08_one_without() -> None:
    """HDR-8 reads A55 provenance; a D08 message carries its provider in ``message.source`` (DIA-10's)."""
    log, seq = _changed(written(Dialect.A55), "assistant/message", provenance={"provider": "p", "model": ""})
    assert {(f.rule, f.seq) for f in judged(log, Dialect.A55)} == {("HDR-8", seq)}
    assert judged(log, Dialect.D08) == []


@pytest.mark.parametrize("dialect", list(Dialect))
def test_mode_set_does_not_load(dialect: Dialect) -> None:
    log = written(dialect)
    mode = make_event("mode/set", seq=len(log), time=0, data=freeze({"mode": "plan"}))
    assert [(f.rule, f.seq, f.reason) for f in judged([*log, mode], dialect)] == [("LEG-3", len(log), "mode/set is rejected at persistence load")]
