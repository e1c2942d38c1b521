"""sessionspec.fast.trigger_place moves the model's TriggerPlace as the model's acceptor does
(model/compaction/bracket_contents.py ``take_event``), event for event: the same place after each event and the same
findings, on the logs the loop simulator writes with a compaction the model appends where a trigger runs and where
none does (inside a step before its message, between steps, after the turn), with its end dropped or failed, in
both dialects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.fast import trigger_place as fast
from sessionspec.generate import generate_events
from sessionspec.model.compaction.bracket_contents import take_event
from sessionspec.model.compaction.records import Ids, Trigger
from sessionspec.model.compaction.run import compact_if_needed
from sessionspec.model.compaction.trigger_place import TriggerPlace
from sessionspec.model.jsonval import ABSENT, freeze, thaw
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from tests.support import short


def _same(events: Sequence[Event], dialect: Dialect) -> int:
    """Both acceptors folded over ``events`` (the twin by the fold's dispatch); how many findings they made."""
    ours, theirs = TriggerPlace(dialect), TriggerPlace(dialect)
    ours_found: list[Rejected] = []
    theirs_found: list[Rejected] = []
    for event in events:
        live = event.seq % 7 != 0  # a few events before the seed's end too: they move the place and find nothing
        if event.type == "assistant/chunk" and event.surface_op is ABSENT:
            fast.take_chunk(ours, event)
        else:
            if event.type in ours.boundaries:
                fast.take_boundary(ours, event, live, ours_found)
            if event.surface_op is not ABSENT:
                fast.take_surface(ours, event, live, ours_found)
        take_event(theirs, event, live, theirs_found)
        assert ours == theirs, event
        assert ours_found == theirs_found, event
    return len(theirs_found)


def _ids(attempt: int) -> Ids:
    return Ids(compaction_id=f"c{attempt}")


def _with_compaction(log: list[Event], cut: int, dialect: Dialect, trigger: Trigger) -> list[Event]:
    run = compact_if_needed(log[:cut], short, trigger=trigger, dialect=dialect, context_window=2000, ids=_ids)
    assert not isinstance(run, Rejected), run
    return [*log[:cut], *run.events, *log[cut:]]


def _end_failed(events: list[Event]) -> list[Event]:
    ends = [i for i, e in enumerate(events) if e.type.endswith("/end") and e.type.startswith("compact")]
    if not ends:
        return events
    data = thaw(events[ends[0]].data)
    assert isinstance(data, dict)
    data["error"] = {"message": "x"}
    return [*events[:ends[0]], replace(events[ends[0]], data=freeze(data)), *events[ends[0] + 1:]]


def _end_dropped(events: list[Event]) -> list[Event]:
    return [e for e in events if not (e.type.endswith("/end") and e.type.startswith("compact"))]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 1000), st.sampled_from(list(Trigger)))
def test_the_fast_acceptor_is_the_models(seed: int, which: int, trigger: Trigger) -> None:
    log = [event for block in generate_events(400, seed, 2) for event in block]
    d08 = list(migrate_legacy(log, "s"))
    for events, dialect in ((log, Dialect.A55), (d08, Dialect.D08)):
        cut = which % len(events)
        written = _with_compaction(events, cut, dialect, trigger) if trigger is not Trigger.MANUAL or dialect is Dialect.D08 else events
        for variant in (written, _end_failed(written), _end_dropped(written)):
            _same(variant, dialect)


def test_the_fast_acceptor_finds_what_the_model_finds() -> None:
    """Brackets written at every step boundary of a loop log: most lie where no trigger runs, so both find."""
    log = [event for block in generate_events(400, 3, 2) for event in block]
    found = 0
    for cut in [i for i, e in enumerate(log) if e.type in ("step/start", "step/end")][20:40]:
        found += _same(_with_compaction(log, cut + 1, Dialect.A55, Trigger.PRESSURE), Dialect.A55)
    assert found > 0
