"""The audits as incremental folds, driven by one loop over the events (issue 26).

An audit that walks the log is an :class:`AuditFold`: its state, :meth:`AuditFold.step`
for one event (with that event's surface transition), and :meth:`AuditFold.finish` for
its findings.  :func:`run_folds` is the one loop: it folds the surface once per event
(SURF-10, :func:`model.surface.fold_surface`'s own loop: ``plan_surface_event`` on the
nodes so far, then the one ``splice``) and hands the plan to every fold, so no audit
walks the event list again and none plans the surface again.

A fold is registered where it is defined, with the rule IDs it audits, by the same
``audits`` link the per-event checks carry (:mod:`sessionspec.check.audits`), called on the
class right after its body rather than written as a class decorator (mypyc compiles a
decorated class as a plain Python class, whose attribute reads and method calls go through
dictionaries: the compiled build is 9 % slower with decorators).  That link is the one place
saying which audit checks which rule (docs/check.md's table and
docs/SPEC.md read it, ``spec/status.py`` must agree), and the loop runs every registered
fold class (:func:`registered_folds`), so a fold cannot run unlisted, nor be listed and
not run.

A fold that needs a valid surface (``NEEDS_SURFACE``: it reads the plans, or judges what
only a foldable surface makes meaningful) stops at the surface's rejection and its
findings are dropped: the rejection is the finding, and a surface that cannot be folded
would only give knock-on noise (what the passes did before: they were not run).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, cast, final

from sessionspec.check.audits import AUDITS
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.surface_events import SurfaceEvents
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.surface import plan_surface_event, splice
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan

CHUNK: Final = "assistant/chunk"

Step = Callable[[Event, SurfacePlan | None], None]
Send = Callable[[Event], object]
_Route = tuple[list[Step], list[Send]]


class AuditFold:
    """One audit as a fold over the log: construct it for a log (``before`` is the log before
    the current event, :class:`SurfaceEvents`: its surface events by seq, for the folds that
    read them), ``step`` every event in order, then ``finish`` once."""

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
    # Does the fold take a packed row's chunks in one step (:meth:`step_run`; a walk is sent the
    # :class:`ChunkRun`)?  Else it takes them one by one.
    TAKES_RUNS: ClassVar[bool] = False
    # Does the fold read ``before`` (the log before the current event) at each step?  Such a fold
    # steps as each event is taken; the others step over a batch at a time (:meth:`FoldLoop.flush`).
    READS_BEFORE: ClassVar[bool] = False

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        self.before = before
        self.dialect = dialect
        self.first_live_seq = first_live_seq

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        """Fold one event; ``plan`` is its surface transition (None: the surface is
        unchanged, or the surface was rejected and the fold does not need it)."""
        raise NotImplementedError

    def finish(self) -> Sequence[Rejected]:
        """The fold's findings, after the last event."""
        raise NotImplementedError

    def step_run(self, run: ChunkRun) -> None:
        """For a fold that ``TAKES_RUNS``: ``step`` of each of the run's chunks (no surface plan:
        a chunk is log-only), in one step."""
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

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
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
    """Every fold class carrying an ``audits`` link, in a fixed order (by module and name)."""
    folds = {f for linked in AUDITS.values() for f in linked if isinstance(f, type) and issubclass(f, AuditFold)}
    return sorted(folds, key=_declared_name)


def _declared_name(fold: type) -> tuple[str, str]:
    # A function on ``type``, not a lambda on ``type[AuditFold]``: mypyc reads ``__module__``
    # only through the metaclass.
    return fold.__module__, fold.__qualname__


@final
class FoldLoop:
    """The one loop over a log, an event at a time: the surface folded once per event and
    every fold of ``folds`` (of this dialect) stepped with the event's plan.  Events are
    taken in order (:meth:`take`) and need not be kept by the caller; :meth:`outcome` after the
    last.  The surface is folded only when some fold needs it; the ``AS_LOGGED`` folds take
    the event as logged (before the D08 migration)."""

    def __init__(self, dialect: Dialect, first_live_seq: int, folds: Sequence[type[AuditFold]]) -> None:
        self.dialect = dialect
        self.before = SurfaceEvents()
        self.made = [fold(self.before, dialect, first_live_seq) for fold in folds if dialect in fold.DIALECTS]
        # Fold by fold over a batch (each fold's code stays in the instruction cache), but for the folds
        # reading ``before`` at their event.  Each fold still takes the events in order, with the same plans.
        self.deferred = [fold for fold in self.made if not fold.READS_BEFORE]
        self.pending: list[_Taken] = []
        immediate = [fold for fold in self.made if fold.READS_BEFORE]
        self.as_logged_folds = [fold for fold in immediate if fold.AS_LOGGED]
        self.as_logged = [fold.stepper() for fold in self.as_logged_folds]
        self.free = [fold for fold in immediate if not fold.NEEDS_SURFACE and not fold.AS_LOGGED]
        self.active = [fold for fold in immediate if not fold.AS_LOGGED]
        # Who takes an event of each type (filled as the types are met): a fold declaring its
        # EVENT_TYPES is not called for the others.
        self.routes: dict[str, _Route] = {}
        self.run_route: list[Callable[[ChunkRun], object]] | None = None
        # A chunk is log-only in both dialects (SURF-11), so a run's members have no surface plan.
        self.eligible = surface_types(dialect)
        self.chunks_log_only = CHUNK not in self.eligible
        self.nodes: list[int] = []
        self.rejected: Rejected | None = None
        # Without a fold that needs it (one fold run alone), the surface is not folded.
        self.surfaced = any(fold.NEEDS_SURFACE for fold in self.made)

    def take(self, event: Event, logged: Event) -> None:
        """Fold one event (``logged``: the same event as logged)."""
        plan: SurfacePlan | None = None
        removed: Sequence[int] = ()
        kind = event.type  # read once: compiled, an event's attribute is a generic attribute read
        if self.surfaced and self.rejected is None and not self._log_only(event, kind):
            planned = plan_surface_event(self.nodes, event, self.before, self.dialect)
            if isinstance(planned, Rejected):
                self.rejected = planned
                self.active = self.free
                self.routes.clear()
                self.run_route = None
                self.surfaced = False
            elif planned is not None:
                plan = planned
                removed = splice(self.nodes, plan, plan.seq)
        route = self.routes.get(kind)
        if route is None:
            route = self.routes[kind] = _route(self.active, kind)
        for step in route[0]:
            step(event, plan)
        for send in route[1]:
            send(event)
        for step in self.as_logged:
            step(logged, None)
        if self.deferred:
            self.pending.append(_Taken(kind, event, logged, plan, None, self.rejected is None))
        if self.surfaced:
            self.before.commit(event, plan, removed)

    def _log_only(self, event: Event, kind: str) -> bool:
        """Whether ``plan_surface_event`` plans nothing for ``event`` (of type ``kind``) without looking
        further (SURF-9: its seq is the next, LOG-1; SURF-2: a type that is not surface-eligible with
        neither surface marker is log-only): most events, so most skip the call."""
        return (kind not in self.eligible and event.seq == self.before.taken
                and event.surface_op is ABSENT and event.source_event_seqs is ABSENT)

    def take_run(self, run: ChunkRun) -> None:
        """:meth:`take` of each of a packed row's chunks (as logged: DIA-13 migrates no chunk): the
        surface is unchanged by each (log-only, SURF-11, once its seq is the next: LOG-1) and a
        fold that ``TAKES_RUNS`` steps once."""
        if not self.chunks_log_only or (self.surfaced and self.rejected is None and run.seq != self.before.taken):
            for event in run.members:
                self.take(event, event)
            return
        route = self.run_route
        if route is None:
            route = self.run_route = _run_route([*self.active, *self.as_logged_folds])
        for step in route:
            step(run)
        if self.deferred:
            self.pending.append(_Taken(CHUNK, None, None, None, run, self.rejected is None))
        if self.surfaced:
            self.before.taken += run.count

    def flush(self) -> None:
        """Step each deferred fold over the events taken since the last flush, as :meth:`take` would
        have stepped it (:func:`_fold_over`)."""
        for fold in self.deferred:
            _fold_over(fold, self.pending)
        self.pending.clear()

    def outcome(self) -> FoldOutcome:
        """What the folds found, after the last event."""
        self.flush()
        counted = self.made if self.rejected is None else [fold for fold in self.made if not fold.NEEDS_SURFACE]
        found = [finding for fold in counted for finding in fold.finish()]
        return FoldOutcome(
            findings=found,
            quirks=[quirk for fold in counted for quirk in fold.quirks()],
            notes=[note for fold in counted for note in fold.notes()],
            outside=[why for fold in counted for why in fold.outside()],
            surface_rejected=self.rejected,
            folds=self.made,
        )


def run_folds(events: Iterable[Event], dialect: Dialect, first_live_seq: int, folds: Sequence[type[AuditFold]],
              logged: Iterable[Event] | None = None) -> FoldOutcome:
    """:class:`FoldLoop` over ``events``: what the folds found, and the surface's rejection (then
    the folds that need the surface are left out).  :func:`sessionspec.check.audit.audit_events`
    runs a fold that always needs the surface (the request points), so its rejection is always
    found.  The ``AS_LOGGED`` folds take ``logged`` (the same events before the D08 migration,
    one for one)."""
    loop = FoldLoop(dialect, first_live_seq, folds)
    if logged is None:
        for event in events:
            loop.take(event, event)
    else:
        for event, as_logged in zip(events, logged, strict=True):
            loop.take(event, as_logged)
    return loop.outcome()


def _route(folds: Sequence[AuditFold], event_type: str) -> _Route:
    """The folds taking an event of ``event_type``: their steps, and the walks' sends (a walk
    takes the event alone, sent straight to its generator, no call of ``step``)."""
    taking = [fold for fold in folds if fold.EVENT_TYPES is None or event_type in fold.EVENT_TYPES]
    return [fold.stepper() for fold in taking if not isinstance(fold, WalkFold)], [fold.walking.send for fold in taking if isinstance(fold, WalkFold)]


def _run_route(folds: Sequence[AuditFold]) -> list[Callable[[ChunkRun], object]]:
    """The folds taking a packed row's chunks: a run at once where the fold ``TAKES_RUNS``, else
    its chunks one by one."""
    route: list[Callable[[ChunkRun], object]] = []
    for fold in folds:
        if fold.EVENT_TYPES is not None and CHUNK not in fold.EVENT_TYPES and not fold.AS_LOGGED:
            continue
        if fold.TAKES_RUNS:
            # A walk taking runs is sent them (its ``walk`` reads a ChunkRun as well as an Event).
            route.append(cast("Generator[None, ChunkRun, object]", fold.walking).send if isinstance(fold, WalkFold) else fold.step_run)
        else:
            route.append(_each_sent(fold.walking.send) if isinstance(fold, WalkFold) else _each_stepped(fold.stepper()))
    return route


def _each_stepped(step: Step) -> Callable[[ChunkRun], None]:
    def each(run: ChunkRun) -> None:
        for event in run.members:
            step(event, None)
    return each


def _each_sent(send: Send) -> Callable[[ChunkRun], None]:
    def each(run: ChunkRun) -> None:
        for event in run.members:
            send(event)
    return each


@final
class _Taken:
    """An event (or a row's chunks) taken, for a deferred fold: its type, plan, and whether the surface still folded."""

    __slots__ = ("kind", "event", "logged", "plan", "run", "surfaced")

    def __init__(self, kind: str, event: Event | None, logged: Event | None, plan: SurfacePlan | None, run: ChunkRun | None, surfaced: bool) -> None:
        self.kind, self.event, self.logged, self.plan, self.run, self.surfaced = kind, event, logged, plan, run, surfaced


def _fold_over(fold: AuditFold, pending: Sequence[_Taken]) -> None:
    """The same plan, the event as logged for an ``AS_LOGGED`` fold, nothing after the surface's
    rejection for a fold that needs the surface, a row's chunks at once or one by one (:func:`_run_route`)."""
    # The walk's ``send`` bound once (compiled, ``walking.send(...)`` looks the method up at each call).
    send = fold.walking.send if isinstance(fold, WalkFold) else None
    step = fold.stepper()
    takes = fold.EVENT_TYPES
    as_logged = fold.AS_LOGGED
    stops = fold.NEEDS_SURFACE and not as_logged
    run_route = _run_route([fold])
    take_run = run_route[0] if run_route else None
    for item in pending:
        if stops and not item.surfaced:
            continue
        run = item.run
        if run is not None:
            if take_run is not None:
                take_run(run)
        elif as_logged:
            step(cast(Event, item.logged), None)
        elif takes is None or item.kind in takes:
            event = cast(Event, item.event)
            if send is not None:
                send(event)
            else:
                step(event, item.plan)


def run_alone(fold: type[AuditFold], events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """One fold's findings on its own (the tests and ``bench/check_passes`` call the audits one
    by one); a fold that needs the surface finds nothing where the surface is rejected."""
    return run_folds(events, dialect, first_live_seq, [fold]).findings
