"""FMT-7 Writers as a fold of the one loop (issue 26): the writer of each turn is judged on the
events as logged, which the loop hands to the ``AS_LOGGED`` folds beside the migrated events
(DIA-13: the D08 reader's migration would hide a legacy turn's A55 shape, LEG-9)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check.audit import audit_events
from sessionspec.check.writers_audit import attribute
from sessionspec.model.jsonval import Json, freeze
from sessionspec.model.log import Dialect, Event, EventKind, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.writers import SHAPED_TYPES, shape_dialect
from sessionspec.spec.json_strategies import json_values


def _legacy_turn() -> tuple[Event, ...]:
    """An A55 turn (``turn/start`` with its ``trigger``, LEG-9) that ends completed."""
    return (
        make_event("turn/start", seq=0, time=0, data=freeze({"turn": 1, "trigger": {"kind": "message"}})),
        make_event("turn/end", seq=1, time=0, data=freeze({"turn": 1, "reason": {"kind": "completed"}})),
    )


def test_the_writer_is_judged_on_the_events_as_logged() -> None:
    logged = _legacy_turn()
    migrated = migrate_legacy(logged, "s")
    assert migrated[0].data == freeze({"turn": 1})
    # Handed the logged events beside the migrated ones, the fold sees the A55 shape the log holds.
    turns = audit_events(migrated, Dialect.D08, 0, logged).writers.turns
    assert [(t.turn, t.first_seq, t.last_seq, t.kind) for t in turns] == [(1, 0, 1, "a55-loop-legacy")]
    # The migrated events alone show a D08 turn: the migration hides the writer.
    assert [t.kind for t in audit_events(migrated, Dialect.D08, 0).writers.turns] == ["d08-loop"]
    assert attribute(logged, Dialect.D08).turns == turns


def test_an_open_turn_is_judged_at_the_end_of_the_log() -> None:
    turns = attribute(_legacy_turn()[:1], Dialect.A55).turns
    assert [(t.kind, t.writer) for t in turns] == [("a55-loop", "A55 loop, still open at the end of the log")]


_TYPES = [kind.value for kind in EventKind] + ["steering/message", "prompt/blocked", "agent/inbox/spliced", "compact/start", "plugin/x"]


@given(st.sampled_from(_TYPES), json_values() | st.dictionaries(st.sampled_from(["trigger", "reason", "role", "id", "message", "provenance", "callId", "x"]),
                                                                  json_values(max_leaves=3), max_size=4).map(freeze))
def test_only_the_shaped_types_carry_a_dialect(kind: str, data: Json) -> None:
    """The fold asks shape_dialect only of SHAPED_TYPES: any other type has none."""
    if kind not in SHAPED_TYPES:
        assert shape_dialect(make_event(kind, seq=0, time=0, data=data)) is None


def test_every_shaped_type_can_carry_a_dialect() -> None:
    """SHAPED_TYPES is no wider than shape_dialect's cases."""
    shapes = {"trigger": 1, "reason": {"kind": "blocked"}, "role": "user", "message": {}}
    assert all(shape_dialect(make_event(kind, seq=0, time=0, data=freeze(shapes))) is not None for kind in SHAPED_TYPES)
