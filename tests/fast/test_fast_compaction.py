"""The compaction audit's fast answers (sessionspec/fast/compaction.py) equal their definitions in model/:
the priced surface (MTR-7) and CMP-10's counter; the shared projection (DER-1) and header (HDR-1)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from model.compaction.retention import balanced_cuts, tool_call_delta
from model.derive import project
from model.header import header_of_event
from model.log import Dialect, Event, log_view
from model.meter import PricedSurface
from model.rejected import Rejected
from model.surface import plan_surface_event
from sessionspec.check.logfile import LineReader
from sessionspec.fast.compaction import AuditSurface
from sessionspec.fast.derivation import header_of, projected
from sessionspec.generate import write_log
from spec.log_strategies import well_formed_logs


@cache
def _log(events: int, seed: int) -> tuple[Event, ...]:
    out = io.StringIO()
    write_log(out, events, seed)
    return tuple(event for event, _ in LineReader("log.jsonl").events(io.BytesIO(out.getvalue().encode())))


def _same_surface(events: Sequence[Event], dialect: Dialect) -> Counter[str]:
    """The audit's surface against the model's priced surface and CMP-10 counter, after every event;
    what was compared (every range's split, rejections)."""
    seen: Counter[str] = Counter()
    model, fast = PricedSurface(dialect=dialect), AuditSurface(dialect)
    for index, event in enumerate(events):
        before = log_view(events, index)
        plan = plan_surface_event(fast.seqs, event, before, dialect)
        folded = model.fold(event, before)
        committed = plan if plan is None or isinstance(plan, Rejected) else fast.commit(event, plan)
        assert committed == folded
        if folded is not None:
            seen["rejected"] += 1
            return seen
        assert fast.seqs == model.seqs
        assert fast.prices == [node.tokens for node in model.nodes]
        assert fast.steps == [tool_call_delta(events[seq], dialect) for seq in fast.seqs]
        balanced = balanced_cuts(fast.seqs, events, dialect)
        for i in range(len(fast.seqs)):
            for j in range(i, len(fast.seqs)):
                assert fast.range_tokens(i, j) == model.range_tokens(i, j)
                split = fast.splits(i, j)
                if isinstance(balanced, Rejected):
                    assert split == balanced
                    seen["corrupt"] += 1
                else:
                    assert split == (not (balanced[i] and balanced[j + 1]))
                    seen[f"split {split}"] += 1
    return seen


@settings(max_examples=30, deadline=None)
@given(events=st.integers(20, 300), seed=st.integers(0, 2**10), dialect=st.sampled_from(Dialect))
def test_the_audit_surface_is_the_priced_surface_and_the_counter_on_generated_logs(events: int, seed: int, dialect: Dialect) -> None:
    _same_surface(_log(events, seed), dialect)


@given(well_formed_logs(), st.sampled_from(Dialect))
def test_the_audit_surface_is_the_priced_surface_and_the_counter_on_drawn_logs(events: tuple[Event, ...], dialect: Dialect) -> None:
    """Drawn logs: replaces, results without calls (a corrupt counter), projections rejected."""
    _same_surface(events, dialect)


@settings(max_examples=25, deadline=None)
@given(events=st.integers(20, 400), seed=st.integers(0, 2**10), dialect=st.sampled_from(Dialect))
def test_the_shared_answers_are_the_definitions(events: int, seed: int, dialect: Dialect) -> None:
    """Asked twice of an event (the answer kept), or of another dialect: the model's projection
    (DER-1) and header (HDR-1)."""
    other = Dialect.D08 if dialect is Dialect.A55 else Dialect.A55
    for event in _log(events, seed):
        for shared, definition in ((projected, project), (header_of, header_of_event)):
            assert shared(event, dialect) == definition(event, dialect)
            assert shared(event, dialect) == definition(event, dialect)
            assert shared(event, other) == definition(event, other)
