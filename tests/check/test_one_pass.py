"""Issue 26, first step: the checker folds the surface once and hands each event's
plan to the audits that fold it themselves.  These properties tie that shared fold to
the model's definition (SURF-10, :func:`model.surface.fold_surface`) and show that the
request points (DER-7, INV-5) and the compaction audit (MTR-7, CMP) give the same
answer from the shared plans as from their own planning, on well-formed logs, on the
same logs with one event's ``surfaceOp`` redrawn (mutated: often rejected), and in
both dialects."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from model.log import Dialect, Event
from model.rejected import Rejected
from model.surface import fold_surface
from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.check.surface_pass import SurfaceTransitions, surface_transitions
from sessionspec.fast.request_points import request_points
from spec.strategies import surface_ops, well_formed_logs


@st.composite
def _logs(draw: st.DrawFn) -> tuple[tuple[Event, ...], Dialect]:
    """A well-formed log, or the same log with one event's surfaceOp redrawn, and a dialect."""
    events = draw(well_formed_logs())
    if draw(st.booleans()):
        at = draw(st.integers(0, len(events) - 1))
        events = (*events[:at], replace(events[at], surface_op=draw(surface_ops(len(events)))), *events[at + 1 :])
    return events, draw(st.sampled_from(Dialect))


def _same_as_definition(events: tuple[Event, ...], dialect: Dialect) -> SurfaceTransitions | Rejected:
    shared = surface_transitions(events, dialect)
    definition = fold_surface(events, dialect)
    if isinstance(definition, Rejected):
        assert shared == definition
    else:
        assert isinstance(shared, SurfaceTransitions)
        assert shared.nodes == definition.state.nodes
        assert len(shared.plans) == len(events)
        assert sum(1 for p in shared.plans if p is not None and p.is_replace) == len(definition.replacements)
    return shared


@given(_logs())
def test_the_shared_fold_is_the_definitions_fold(drawn: tuple[tuple[Event, ...], Dialect]) -> None:
    _same_as_definition(*drawn)


@given(_logs())
def test_audits_give_the_same_answer_from_the_shared_plans(drawn: tuple[tuple[Event, ...], Dialect]) -> None:
    events, dialect = drawn
    shared = _same_as_definition(events, dialect)
    if isinstance(shared, Rejected):
        return  # the checker then runs neither audit (the surface rejection is the finding)
    assert request_points(events, dialect, 0, shared.plans) == request_points(events, dialect)
    assert audit_compactions(events, dialect, shared.plans) == audit_compactions(events, dialect)

