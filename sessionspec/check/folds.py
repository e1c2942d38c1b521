"""The audits as incremental folds, driven by one loop over the events (issue 26).

An audit that walks the log is an :class:`AuditFold`: its state, :meth:`AuditFold.step`
for one event (with that event's surface transition), and :meth:`AuditFold.finish` for
its findings.  :func:`run_folds` is the one loop: it folds the surface once per event
(SURF-10, :func:`model.surface.fold_surface`'s own loop: ``plan_surface_event`` on the
nodes so far, then the one ``splice``) and hands the plan to every fold, so no audit
walks the event list again and none plans the surface again.

A fold is registered where it is defined, with the rule IDs it audits, by the same
``@audits`` decorator the per-event checks carry (:mod:`sessionspec.check.audits`): that
link is the one place saying which audit checks which rule (docs/check.md's table and
docs/SPEC.md read it, ``spec/status.py`` must agree), and the loop runs every registered
fold class (:func:`registered_folds`), so a fold cannot run unlisted, nor be listed and
not run.

A fold that needs a valid surface (``NEEDS_SURFACE``: it reads the plans, or judges what
only a foldable surface makes meaningful) stops at the surface's rejection and its
findings are dropped: the rejection is the finding, and a surface that cannot be folded
would only give knock-on noise (what the passes did before: they were not run).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import ClassVar, final

from model.log import Dialect, Event, log_view
from model.rejected import Rejected
from model.surface import SurfacePlan, plan_surface_event, splice
from sessionspec.check.audits import AUDITS

Step = Callable[[Event, SurfacePlan | None], None]
Send = Callable[[Event], object]
_Route = tuple[list[Step], list[Send]]


class AuditFold:
    """One audit as a fold over the log: construct it for a log (``events`` is the whole
    audited list, for the folds that read the log before an event), ``step`` every event
    in order, then ``finish`` once."""

    # Does the fold need a surface that folds (see the module docstring)?
    NEEDS_SURFACE: ClassVar[bool] = False
    # The dialects the fold audits (the D08-only shapes and retries run for D08 alone).
    DIALECTS: ClassVar[frozenset[Dialect]] = frozenset(Dialect)
    # The event types the fold reads (None: every event); the loop does not call it for the
    # others.  A fold reading the surface plans takes every event (any type may carry one).
    EVENT_TYPES: ClassVar[frozenset[str] | None] = None
    # Does the fold read the events as logged, before the D08 reader's migration (DIA-13)?  It
    # takes every event (a migrated event may change its type) and no surface plan.
    AS_LOGGED: ClassVar[bool] = False

    def __init__(self, events: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        self.events = events
        self.dialect = dialect
        self.first_live_seq = first_live_seq

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        """Fold one event; ``plan`` is its surface transition (None: the surface is
        unchanged, or the surface was rejected and the fold does not need it)."""
        raise NotImplementedError

    def finish(self) -> Sequence[Rejected]:
        """The fold's findings, after the last event."""
        raise NotImplementedError

    def stepper(self) -> Step:
        """What the loop calls for each event: ``step``, or the callable it would only pass
        the event on to (one call fewer per event)."""
        return self.step

    # What a fold says besides findings, read after ``finish`` (see :class:`FoldOutcome`).

    def quirks(self) -> Sequence[Rejected]:
        return ()

    def notes(self) -> Sequence[str]:
        return ()

    def outside(self) -> Sequence[str]:
        return ()


@final
@dataclass(frozen=True, slots=True)
class FoldOutcome:
    """What the folds of one loop found: findings; the §17 quirks the log shows (notes, or
    findings under ``--strict-quirks``); notes; why the log is outside the model (LEG-7); and
    the surface's rejection, if the surface could not be folded; the folds themselves, for
    what one keeps besides (the writer of each turn)."""

    findings: list[Rejected]
    quirks: list[Rejected]
    notes: list[str]
    outside: list[str]
    surface_rejected: Rejected | None
    folds: list[AuditFold]


class WalkFold(AuditFold):
    """A fold written as the audit's own walk, suspended at each event: :meth:`walk` is a
    generator whose locals are the fold's state; it takes each event from ``yield`` until
    ``yield`` gives None, then returns its findings.  The one loop sends it the events
    directly (a walk reads no surface plan)."""

    def __init__(self, events: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(events, dialect, first_live_seq)
        self.walking = self.walk()
        next(self.walking)

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        """``while (event := (yield)) is not None: ...``, then ``return`` the findings."""
        raise NotImplementedError

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        self.walking.send(event)

    def finish(self) -> list[Rejected]:
        try:
            self.walking.send(None)
        except StopIteration as done:
            found: list[Rejected] = done.value
            return found
        raise AssertionError(f"{type(self).__name__}.walk did not end at the end of the log")


def registered_folds() -> list[type[AuditFold]]:
    """Every fold class carrying an ``@audits`` link, in a fixed order (by module and name)."""
    folds = {f for linked in AUDITS.values() for f in linked if isinstance(f, type) and issubclass(f, AuditFold)}
    return sorted(folds, key=lambda f: (f.__module__, f.__qualname__))


def run_folds(events: Sequence[Event], dialect: Dialect, first_live_seq: int, folds: Sequence[type[AuditFold]],
              logged: Sequence[Event] | None = None) -> FoldOutcome:
    """One loop over ``events``: the surface folded once per event, every fold of ``folds``
    (of this dialect) stepped with the event's plan.  What the folds found, and the
    surface's rejection (then the folds that need the surface are left out).  The surface is
    folded only when some fold needs it; :func:`sessionspec.check.audit.audit_events` runs a
    fold that always does (the request points), so its rejection is always found.  The
    ``AS_LOGGED`` folds take ``logged`` (the same events before the D08 migration, one for one)."""
    seen = events if logged is None else logged
    assert len(seen) == len(events)
    made = [fold(seen if fold.AS_LOGGED else events, dialect, first_live_seq) for fold in folds if dialect in fold.DIALECTS]
    as_logged = [fold.stepper() for fold in made if fold.AS_LOGGED]
    free = [fold for fold in made if not fold.NEEDS_SURFACE and not fold.AS_LOGGED]
    active = [fold for fold in made if not fold.AS_LOGGED]
    # Who takes an event of each type (filled as the types are met): a fold declaring its
    # EVENT_TYPES is not called for the others.
    routes: dict[str, _Route] = {}
    nodes: list[int] = []
    rejected: Rejected | None = None
    # Without a fold that needs it (one fold run alone), the surface is not folded.
    surfaced = any(fold.NEEDS_SURFACE for fold in made)
    for index, event in enumerate(events):
        plan: SurfacePlan | None = None
        if surfaced and rejected is None:
            planned = plan_surface_event(nodes, event, log_view(events, index), dialect)
            if isinstance(planned, Rejected):
                rejected = planned
                active = free
                routes.clear()
            elif planned is not None:
                plan = planned
                splice(nodes, plan, plan.seq)
        route = routes.get(event.type)
        if route is None:
            route = routes[event.type] = _route(active, event.type)
        for step in route[0]:
            step(event, plan)
        for send in route[1]:
            send(event)
        for step in as_logged:
            step(seen[index], None)
    counted = made if rejected is None else [fold for fold in made if not fold.NEEDS_SURFACE]
    found = [finding for fold in counted for finding in fold.finish()]
    return FoldOutcome(
        findings=found,
        quirks=[quirk for fold in counted for quirk in fold.quirks()],
        notes=[note for fold in counted for note in fold.notes()],
        outside=[why for fold in counted for why in fold.outside()],
        surface_rejected=rejected,
        folds=made,
    )


def _route(folds: Sequence[AuditFold], event_type: str) -> _Route:
    """The folds taking an event of ``event_type``: their steps, and the walks' sends (a walk
    takes the event alone, sent straight to its generator, no call of ``step``)."""
    taking = [fold for fold in folds if fold.EVENT_TYPES is None or event_type in fold.EVENT_TYPES]
    return [fold.stepper() for fold in taking if not isinstance(fold, WalkFold)], [fold.walking.send for fold in taking if isinstance(fold, WalkFold)]


def run_alone(fold: type[AuditFold], events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """One fold's findings on its own (the tests and ``bench/check_passes`` call the audits one
    by one); a fold that needs the surface finds nothing where the surface is rejected."""
    return run_folds(events, dialect, first_live_seq, [fold]).findings
