"""sessionspec.fast.zero_retention gives what the model's bracket place (model/compaction/zero_retention.py) gives,
event for event: the same place after each event and the same rule at each summary, on the logs the loop simulator
writes with an overflow recovery appended inside an A55 turn and a manual compaction appended to an idle D08 log, and
on D08 error finishes (DIA-7)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.fast import zero_retention as fast
from sessionspec.generate import generate_events
from sessionspec.model.compaction import zero_retention as model
from sessionspec.model.compaction.records import Trigger
from sessionspec.model.compaction.run import compact_if_needed
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from tests.support import short


def _same(events: Sequence[Event], dialect: Dialect) -> int:
    """Both places folded over ``events`` (each event of their ``moved_by`` types); how many rules were given."""
    ours, theirs = fast.BracketPlace(dialect), model.BracketPlace(dialect)
    assert ours.moved_by == theirs.moved_by
    rules = 0
    for event in events:
        if event.type not in theirs.moved_by:
            continue
        rule = fast.take_bracket_event(ours, event)
        assert rule == model.take_bracket_event(theirs, event), event
        assert (ours.step_open, ours.message, ours.failed_attempt, ours.rule) == \
               (theirs.step_open, theirs.message, theirs.failed_attempt, theirs.rule), event
        rules += rule is not None
    return rules


def _with_compaction(log: list[Event], trigger: Trigger, dialect: Dialect, boundary: str, which: int) -> list[Event]:
    cuts = [i + 1 for i, e in enumerate(log) if e.type == boundary]
    cut = cuts[which % len(cuts)]
    run = compact_if_needed(log[:cut], short, trigger=trigger, dialect=dialect)
    assert not isinstance(run, Rejected), run
    return [*log[:cut], *run.events, *log[cut:]]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 1000))
def test_the_fast_place_is_the_models(seed: int, which: int) -> None:
    log = [event for block in generate_events(400, seed, 2) for event in block]
    _same(_with_compaction(log, Trigger.CONTEXT_OVERFLOW, Dialect.A55, "step/end", which), Dialect.A55)
    d08 = list(migrate_legacy(log, "s"))
    _same(_with_compaction(d08, Trigger.MANUAL, Dialect.D08, "turn/end", which), Dialect.D08)


def test_a_d08_error_finish_marks_a_failed_attempt_in_both() -> None:
    """DIA-7: a bracket inside a D08 step after its attempt finished with an error, before any message, is the
    overflow recovery's (CMP-9); after a finish without an error it is a pressure bracket (no rule)."""
    for reason, rule in (({"kind": "error"}, "CMP-9"), ({"kind": "stop"}, None)):
        events = [
            make_event("step/start", seq=0, time=0, data=freeze({"turn": 1, "step": 1})),
            make_event("assistant/chunk", seq=1, time=1, data=freeze({"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": reason}})),
            make_event("compaction/start", seq=2, time=2, data=freeze({"compactionId": "c", "turn": 1})),
        ]
        ours, theirs = fast.BracketPlace(Dialect.D08), model.BracketPlace(Dialect.D08)
        for event in events:
            fast.take_bracket_event(ours, event)
            model.take_bracket_event(theirs, event)
        assert ours.rule == theirs.rule == rule
