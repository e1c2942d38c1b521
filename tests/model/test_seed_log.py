"""A log's seed as the model decides it (model/seed_log.py): where the live events start (LOG-8, DIA-5), the
end-seed after a D08 seed (DIA-5) and a fork child's seed against its parent (FMT-11, LOG-15, P-LOG-7).

Both ways, over what the model writes: a fork child seeded by :func:`sessionspec.model.loop.instance.fork_seed`
(LOG-15) from the loop simulator's log, D08's with the constructor's ``session/end-seed``
(:func:`sessionspec.model.seed_log.end_seed`) after the seed.  Every child written so is accepted; each change the
rules forbid (a seed not copied, a boundary that is no ``turn/end``, a seed without its end-seed) is refused by
that rule.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop.instance import fork_seed
from sessionspec.model.migrate import as_read, migrate_legacy
from sessionspec.model.seed_log import check_end_seed, check_fork_child, check_seed_within, end_seed, first_live_seq


def loop_log(seed: int, events: int = 300) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def _renumbered(events: list[Event], start: int) -> list[Event]:
    return [replace(e, seq=start + i) for i, e in enumerate(events)]


def child_of(parent: list[Event], dialect: Dialect) -> tuple[list[Event], int]:
    """A fork child of ``parent``: its seed (LOG-15; D08 with the constructor's end-seed, DIA-5), then a turn of its
    own; and the seed's length (the header's ``seedLength``)."""
    seed = list(fork_seed(parent))
    begun = list(end_seed(seed, 0)) if dialect is Dialect.D08 else seed
    start = next(i for i, e in enumerate(parent) if e.type == "turn/start")
    end = next(i for i, e in enumerate(parent) if e.type == "turn/end")
    return [*begun, *_renumbered(parent[start:end + 1], len(begun))], len(seed)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(list(Dialect)))
def test_a_child_the_model_forks_is_accepted(seed: int, dialect: Dialect) -> None:
    parent = loop_log(seed)
    if dialect is Dialect.D08:
        parent = list(migrate_legacy(parent, "s"))
    child, seed_length = child_of(parent, dialect)
    assert 0 < seed_length < len(child)
    assert check_fork_child(child, parent, seed_length) == []
    assert check_end_seed(child, seed_length, dialect) == []
    # The end-seed counted into the seed is the other form DIA-5 allows.
    assert check_end_seed(child, seed_length + 1, dialect) == []


def test_a_seed_without_its_end_seed_is_refused_in_d08_alone() -> None:
    parent = loop_log(1)
    child, seed_length = child_of(parent, Dialect.D08)
    assert child[seed_length].type == "session/end-seed"
    dropped = [*child[:seed_length], *_renumbered(child[seed_length + 1:], seed_length)]
    found = check_end_seed(dropped, seed_length, Dialect.D08)
    assert [(f.rule, f.seq) for f in found] == [("DIA-5", seed_length - 1)]
    assert "followed by turn/start" in found[0].reason
    assert [f.reason for f in check_end_seed(dropped[:seed_length], seed_length, Dialect.D08)] == [
        f"the {seed_length}-event seed is followed by the end of the log, not session/end-seed"]
    assert check_end_seed(dropped, seed_length, Dialect.A55) == []
    # A seed shorter than written: an ordinary event follows it.
    assert [f.rule for f in check_end_seed(child, seed_length - 1, Dialect.D08)] == ["DIA-5"]
    # No seed, or one longer than the events (FMT-11's), is not DIA-5's.
    assert check_end_seed(dropped, 0, Dialect.D08) == check_end_seed(dropped[:3], 4, Dialect.D08) == []


def test_the_constructor_does_not_mark_a_seed_twice() -> None:
    seed = list(end_seed(loop_log(1)[:4], 0))
    assert end_seed(seed, 0) == tuple(seed)
    assert [e.type for e in end_seed((), 7)] == ["session/end-seed"]


def test_a_seed_not_copied_or_not_ending_a_turn_is_refused() -> None:
    parent = loop_log(1)
    child, seed_length = child_of(parent, Dialect.A55)
    assert check_fork_child(child, parent, 0) == []
    assert [f.rule for f in check_fork_child(child, parent[:seed_length - 1], seed_length)] == ["FMT-11"]
    assert [f.rule for f in check_fork_child(child[:seed_length - 1], parent, seed_length)] == ["FMT-11"]
    at = seed_length // 2
    changed = [*child[:at], replace(child[at], time=child[at].time + 1), *child[at + 1:]]
    assert [(f.rule, f.seq) for f in check_fork_child(changed, parent, seed_length)] == [("FMT-11", child[at].seq)]
    # A boundary inside a turn: the seed is copied, but no fork ends there (LOG-15: OPEN_TURN).
    inside = seed_length - 1
    assert parent[inside - 1].type != "turn/end"
    assert [(f.rule, f.seq) for f in check_fork_child(child, parent, inside)] == [("LOG-15", inside - 1)]


@pytest.mark.parametrize(("dialect", "seed_length", "last_end_seed", "live"), [
    (Dialect.A55, 5, 9, 5), (Dialect.D08, 5, -1, 5), (Dialect.D08, 5, 3, 5), (Dialect.D08, 5, 4, 5), (Dialect.D08, 5, 5, 6),
    (Dialect.D08, 0, 0, 1),
])
def test_the_live_events_start_after_the_seed_and_its_last_end_seed(dialect: Dialect, seed_length: int, last_end_seed: int, live: int) -> None:
    assert first_live_seq(dialect, seed_length, last_end_seed) == live


def test_an_end_seed_event_is_what_the_reader_takes() -> None:
    marker = make_event("session/end-seed", seq=0, time=0, data=freeze({}))
    assert end_seed([marker], 3) == (marker,)


def test_a_seed_length_names_no_more_events_than_the_log_holds() -> None:
    assert check_seed_within(4, 4) == check_seed_within(0, 0) == []
    assert [(f.rule, f.reason) for f in check_seed_within(5, 4)] == [("FMT-11", "seedLength 5 exceeds the log's 4 events")]


def test_a_parent_is_read_as_the_dialects_reader_reads_it() -> None:
    """FMT-11 compares the child's seed with the parent as the same reader gives it (D08: migrated, DIA-13)."""
    parent = loop_log(1)
    assert as_read(parent, Dialect.A55, "s") is parent
    assert as_read(parent, Dialect.D08, "s") == migrate_legacy(parent, "s") != tuple(parent)
    child, seed_length = child_of(list(migrate_legacy(parent, "s")), Dialect.D08)
    assert check_fork_child(child, as_read(parent, Dialect.D08, "s"), seed_length) == []
