"""Issue 26, first step: the checker folds the surface once and hands each event's
plan to the audits that fold it themselves.  These properties tie that shared fold to
the model's definition (SURF-10, :func:`model.surface.fold_surface`) and show that the
request points (DER-7, INV-5) and the compaction audit (MTR-7, CMP) give the same
answer from the shared plans as from their own planning, on well-formed logs, on the
same logs with one event's ``surfaceOp`` redrawn (mutated: often rejected), and in
both dialects."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check import audit  # noqa: F401  (imports every fold module)
from sessionspec.check.compaction_audit import CompactionFold, audit_compactions
from sessionspec.check.compaction_rules_audit import CompactionRulesAudit
from sessionspec.check.d08_audit import D08MessageShapeAudit, RetryAttemptAudit
from sessionspec.check.deployment_points import LISTINGS
from sessionspec.check.fold_loop import FoldLoop, run_alone, run_folds
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.header_audit import HeaderReasonAudit
from sessionspec.check.load_shape_audit import LoadShapeAudit
from sessionspec.check.loop_audit import LoopAudit
from sessionspec.check.nesting_audit import NestingAudit
from sessionspec.check.observations import PlaceholderNoteAudit, PreA55DesignAudit, QuirkAudit
from sessionspec.check.provenance_audit import ProvenanceAudit
from sessionspec.check.repair_audit import RepairAudit
from sessionspec.check.request_audit import RequestPointAudit, check_request_points
from sessionspec.check.retention_audit import ZeroRetentionAudit
from sessionspec.check.shape_audit import ShapeAudit
from sessionspec.check.surface_events import SurfaceEvents
from sessionspec.check.surface_pass import SurfaceTransitions, surface_transitions
from sessionspec.fast.request_points import RequestPointFold, request_points
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface, plan_surface_event
from sessionspec.spec.log_strategies import surface_ops, well_formed_logs


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


@given(_logs())
def test_the_planned_derivation_keeps_no_copy_of_the_log(drawn: tuple[tuple[Event, ...], Dialect]) -> None:
    """Issue 26: fed the shared plans, the request points' derivation holds no event (the log is
    not kept twice) and derives what the derivation that plans for itself derives."""
    events, dialect = drawn
    shared = surface_transitions(events, dialect)
    if isinstance(shared, Rejected):
        return
    planned, unplanned = (RequestPointFold(dialect=dialect, planned=p) for p in (True, False))
    for event, plan in zip(events, shared.plans, strict=True):
        planned.step(event, plan)
        unplanned.step(event, None)
    assert planned.derivation.events == []
    assert unplanned.derivation.events == list(events[: len(unplanned.derivation.events)])  # up to a rejection
    assert planned.rejected == unplanned.rejected
    assert planned.derivation.messages() == unplanned.derivation.messages()
    assert planned.points == unplanned.points



@given(_logs())
def test_the_one_loop_gives_what_each_audit_gives_alone(drawn: tuple[tuple[Event, ...], Dialect]) -> None:
    """Issue 26, step 2: the folds stepped together in one loop (``run_folds``: one surface
    fold, its plans handed on) find what each audit finds on its own walk of the log, and the
    loop's surface rejection is the shared fold's (so ``fold_surface``'s)."""
    events, dialect = drawn
    shared = _same_as_definition(events, dialect)
    folds = registered_folds()
    outcome = run_folds(events, dialect, 0, folds)
    found, rejected = outcome.findings, outcome.surface_rejected
    if isinstance(shared, Rejected):
        assert rejected == shared
        alone = [f for fold in folds if not fold.NEEDS_SURFACE and dialect in fold.DIALECTS for f in run_alone(fold, events, dialect)]
    else:
        assert rejected is None
        alone = [f for fold in folds if dialect in fold.DIALECTS for f in run_alone(fold, events, dialect)]
        assert list(audit_compactions(events, dialect)) == run_alone(CompactionFold, events, dialect)
        assert check_request_points(events, dialect) == run_alone(RequestPointAudit, events, dialect)
    assert sorted(found, key=repr) == sorted(alone, key=repr)


def test_every_fold_of_the_checker_runs_and_each_decides_something() -> None:
    """Issue 44: the folds are one list (fold_set.FOLDS), not registered by importing their modules.  Every fold
    class of sessionspec/check is in it, and each drives model definitions (a function of the model
    ``@decides``-linked, or its compiled twin, imported by the fold's module)."""
    import importlib
    import inspect
    import pkgutil

    import sessionspec.check
    from sessionspec.check.folds import AuditFold, WalkFold
    from sessionspec.spec.registry import deciders

    folds = registered_folds()
    assert {QuirkAudit, PlaceholderNoteAudit, PreA55DesignAudit, LoadShapeAudit, D08MessageShapeAudit, RetryAttemptAudit, CompactionFold, CompactionRulesAudit, ZeroRetentionAudit, HeaderReasonAudit, LoopAudit, NestingAudit, ProvenanceAudit, RepairAudit, RequestPointAudit, ShapeAudit} <= set(folds)
    defined = {cls for info in pkgutil.iter_modules(sessionspec.check.__path__)
               for _, cls in inspect.getmembers(importlib.import_module(f"sessionspec.check.{info.name}"), inspect.isclass)
               if issubclass(cls, AuditFold) and cls not in (AuditFold, WalkFold) and cls.__module__.startswith("sessionspec.check.")}
    # The deployment's folds are outside the list: its decisions run only when a deployment is given (check
    # --deployment); without one, DeploymentPoints lists the places they would judge (it decides nothing).
    from sessionspec.check.deployment_fold import DeploymentFold
    from sessionspec.check.deployment_points import LISTINGS, DeploymentPoints

    assert defined == {*folds, DeploymentFold, DeploymentPoints, *LISTINGS}
    linked = deciders()  # every model module loaded: a fold that imports only a twin still finds its definition
    deciding = {id(f) for functions in linked.values() for f in functions}
    # A compiled twin (sessionspec/fast) is named as its definition: fast.provenance.check_stream_provenance drives
    # model.provenance.check_stream_provenance (tests/fast ties the two).
    twinned = {f"{f.__module__.replace('sessionspec.model.', 'sessionspec.fast.', 1)}.{f.__qualname__}"
               for functions in linked.values() for f in functions}
    for fold in folds:
        module = importlib.import_module(fold.__module__)
        drives = any(id(value) in deciding or f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}" in twinned
                     for value in vars(module).values())
        assert drives, fold


@given(_logs())
def test_a_fold_is_not_called_only_for_events_it_does_not_read(drawn: tuple[tuple[Event, ...], Dialect]) -> None:
    """A fold declaring ``EVENT_TYPES`` finds the same when it is stepped with every event
    (the loop routes it only the events of those types)."""
    events, dialect = drawn
    for fold_class in registered_folds():
        if fold_class.EVENT_TYPES is None or dialect not in fold_class.DIALECTS:
            continue
        fold = fold_class(SurfaceEvents(), dialect, 0)
        for event in events:
            fold.step(event, None)
        assert list(fold.finish()) == run_alone(fold_class, events, dialect), fold_class
        assert not fold_class.NEEDS_SURFACE  # a fold reading the plans takes every event
    # The list of places the deployment would judge (sessionspec/check/deployment_points.py) reads a few types too.
    (listing,) = [fold(SurfaceEvents(), dialect, 0) for fold in LISTINGS if dialect in fold.DIALECTS]
    for event in events:
        listing.step(event, None)
    loop = FoldLoop(dialect, 0, [], lists_undecided=True)
    for event in events:
        loop.take(event, event)
    assert list(listing.undecided()) == loop.outcome().undecided


_TYPES = ["user/message", "assistant/message", "tool/result", "steering/message", "assistant/chunk", "step/start", "compact/summary", "x/y"]


@given(st.sampled_from(_TYPES), st.integers(0, 3), st.sampled_from(["absent", "append", "replace"]), st.booleans(), st.sampled_from(Dialect))
def test_an_event_the_loop_calls_log_only_is_one_the_surface_fold_plans_nothing_for(
        type_name: str, seq: int, op: str, provenance: bool, dialect: Dialect) -> None:
    """FoldLoop skips plan_surface_event for an event it deems log-only; the model plans nothing for it."""
    loop = FoldLoop(dialect, 0, [RequestPointAudit])
    for index in range(2):
        loop.take(make_event("step/start", seq=index, time=0, data=freeze({"turn": 1, "step": 1})),
                  make_event("step/start", seq=index, time=0, data=freeze({"turn": 1, "step": 1})))
    marker = {"absent": {}, "append": {"surface_op": "append"}, "replace": {"surface_op": freeze({"op": "replace", "start": 0, "end": 0})}}[op]
    event = make_event(type_name, seq=seq, time=0, data=freeze({}), **marker, **({"source_event_seqs": (0,)} if provenance else {}))  # type: ignore[arg-type]
    if loop._log_only(event, event.type):
        assert plan_surface_event(loop.nodes, event, loop.before, dialect) is None
    assert loop._log_only(event, event.type) == (seq == 2 and op == "absent" and not provenance and type_name not in surface_types(dialect))


def _outcome_flushed_every(events: tuple[Event, ...], dialect: Dialect, every: int) -> tuple[object, ...]:
    loop = FoldLoop(dialect, 0, registered_folds())
    for count, event in enumerate(events, 1):
        loop.take(event, event)
        if count % every == 0:
            loop.flush()
    done = loop.outcome()
    return (done.findings, done.quirks, done.notes, done.outside, done.surface_rejected)


@given(_logs(), st.integers(1, 7))
def test_the_folds_stepped_a_batch_at_a_time_find_what_they_find_event_by_event(drawn: tuple[tuple[Event, ...], Dialect], every: int) -> None:
    """FoldLoop steps the folds that do not read ``before`` one fold at a time over a batch
    (:meth:`FoldLoop.flush`); the outcome is the outcome of every fold stepped as each event is
    taken (every fold marked ``READS_BEFORE``), whatever the batch (one event, a few, the whole
    log), on well-formed logs and on logs whose surface is rejected midway."""
    events, dialect = drawn
    batched = _outcome_flushed_every(events, dialect, every)
    assert _outcome_flushed_every(events, dialect, len(events) + 1) == batched
    with _every_fold_stepped_as_taken():
        assert _outcome_flushed_every(events, dialect, every) == batched


@contextmanager
def _every_fold_stepped_as_taken() -> Iterator[None]:
    """Every fold marked as reading ``before`` (the folds that set it themselves keep it)."""
    marked = [fold for fold in registered_folds() if "READS_BEFORE" not in vars(fold)]
    for fold in marked:
        fold.READS_BEFORE = True
    try:
        yield
    finally:
        for fold in marked:
            del fold.READS_BEFORE
