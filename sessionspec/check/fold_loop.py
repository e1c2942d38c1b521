"""The one loop over a log's events that steps every audit fold (issue 26): :class:`FoldLoop`.

It folds the surface once per event and hands each event, with its surface plan, to the folds of
:mod:`sessionspec.check.folds` that take it: at once for a fold that reads the log before the
event (``READS_BEFORE``), a batch at a time for the others (each fold's code stays in the caches).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Final, cast, final

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.deployment_points import LISTINGS
from sessionspec.check.folds import CHUNK, AuditFold, FoldOutcome, Send, Step, WalkFold
from sessionspec.check.surface_events import SurfaceEvents
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.surface import plan_surface_event, splice
from sessionspec.model.deployment import Deployment
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan

_Route = tuple[list[Step], list[Send]]


@final
class FoldLoop:
    """The one loop over a log, an event at a time: the surface folded once per event and
    every fold of ``folds`` (of this dialect) stepped with the event's plan.  Events are
    taken in order (:meth:`take`) and need not be kept by the caller; :meth:`outcome` after the
    last.  The surface is folded only when some fold needs it; the ``AS_LOGGED`` folds take
    the event as logged (before the D08 migration)."""

    def __init__(self, dialect: Dialect, first_live_seq: int, folds: Sequence[type[AuditFold]], deployment: Deployment | None = None,
                 *, lists_undecided: bool = False) -> None:
        self.dialect = dialect
        self.before = SurfaceEvents()
        self.made = [fold(self.before, dialect, first_live_seq) for fold in folds if dialect in fold.DIALECTS]
        # The deployment's decisions run only when its facts are given: without them, their modules are not even
        # imported, and (``lists_undecided``: check's own pass) a small fold lists the places they would judge.
        if deployment is not None:
            from sessionspec.check.deployment_fold import DeploymentFold  # noqa: PLC0415

            self.made.append(DeploymentFold(self.before, dialect, first_live_seq, deployment))
        elif lists_undecided:
            self.made += [listing(self.before, dialect, first_live_seq) for listing in LISTINGS if dialect in listing.DIALECTS]
        # Fold by fold over a batch (each fold's code stays in the instruction cache), but for the folds
        # reading ``before`` at their event.  Each fold still takes the events in order, with the same plans.
        self.deferred = [fold for fold in self.made if not fold.READS_BEFORE]
        self.runners = [_batch_runner(fold) for fold in self.deferred]
        # The batch taken since the last flush, for the deferred folds: each event as judged (a packed row's
        # chunks as their ChunkRun), its surface plan, the same as logged (kept apart only when a deferred
        # fold reads the log as logged and the dialect migrates), and where the surface was rejected.
        self.items: list[Event | ChunkRun] = []
        self.kinds: list[str] = []
        self.plans: list[SurfacePlan | None] = []
        self.keeps_logged = any(fold.AS_LOGGED for fold in self.deferred)
        self.logged_items: list[Event | ChunkRun] = []
        self.stop_at = 0
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
            if self.rejected is None:
                self.stop_at += 1
            self.items.append(event)
            self.kinds.append(kind)
            self.plans.append(plan)
            if self.keeps_logged:
                self.logged_items.append(logged)
        if self.surfaced:
            if plan is None:  # nothing joined or left the surface (nothing is removed without a plan)
                self.before.taken += 1
            else:
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
            if self.rejected is None:
                self.stop_at += 1
            self.items.append(run)
            self.kinds.append(RUN)
            self.plans.append(None)
            if self.keeps_logged:
                self.logged_items.append(run)
        if self.surfaced:
            self.before.taken += run.count

    def flush(self) -> None:
        """Step each deferred fold over the events taken since the last flush, as :meth:`take` would
        have stepped it (:func:`_batch_runner`)."""
        if not self.items:
            return
        logged = self.logged_items if self.keeps_logged else self.items
        for runner in self.runners:
            runner(self.items, self.kinds, self.plans, logged, self.stop_at)
        self.items.clear()
        self.kinds.clear()
        self.plans.clear()
        self.logged_items.clear()
        self.stop_at = 0

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
            undecided=[item for fold in counted for item in fold.undecided()],
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


Runner = Callable[[list[Event | ChunkRun], list[str], list[SurfacePlan | None], list[Event | ChunkRun], int], None]
# The kind of a batch item that is a packed row's ChunkRun (compared by identity: no event type is this object).
RUN: Final = "assistant/chunk (a packed row)"


def _batch_runner(fold: AuditFold) -> Runner:
    """How a deferred fold takes a batch: ``(items, kinds, plans, logged, stop)``, the events as judged (a
    row's chunks as one ChunkRun, of kind :data:`RUN`), their types, their plans, the same as logged, and
    how many were taken before the surface was rejected.  The same events, in the same order, with the same
    plans as :meth:`FoldLoop.take` would give it: the logged ones for an ``AS_LOGGED`` fold, none from
    ``stop`` on for a fold that needs the surface, only its ``EVENT_TYPES``, a row's chunks at once or one
    by one (:func:`_run_route`).  Chosen once per fold, so the loop over a batch tests nothing the fold's
    flags already answer (interpreted, those tests per event and fold were about 7 % of a check), and the
    types are read from ``kinds`` (compiled, an event's attribute is a generic attribute read)."""
    run_route = _run_route([fold])
    take_run = run_route[0] if run_route else None
    takes = fold.EVENT_TYPES
    stops = fold.NEEDS_SURFACE and not fold.AS_LOGGED
    if fold.AS_LOGGED:
        step = fold.stepper()

        def as_logged(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                      logged: list[Event | ChunkRun], stop: int) -> None:
            for item in logged:
                if type(item) is ChunkRun:
                    if take_run is not None:
                        take_run(item)
                else:
                    step(item, None)
        return as_logged
    if takes is not None and take_run is None:
        return _few_types_runner(fold, takes, stops)
    if isinstance(fold, WalkFold):
        send = cast(Callable[[Event | ChunkRun], object], fold.walking.send)  # a walk taking runs reads a ChunkRun too
        if takes is None and fold.TAKES_RUNS:
            def walk_all(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                         logged: list[Event | ChunkRun], stop: int) -> None:
                deque(map(send, items[:stop] if stops and stop < len(items) else items), 0)
            return walk_all

        def walk(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                 logged: list[Event | ChunkRun], stop: int) -> None:
            for at in range(stop if stops else len(items)):
                kind = kinds[at]
                if kind is RUN:
                    if take_run is not None:
                        take_run(items[at])  # type: ignore[arg-type]  # kind RUN: a ChunkRun (no cast: interpreted, a call per item)
                elif takes is None or kind in takes:
                    send(items[at])
        return walk
    step = fold.stepper()

    def stepped(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                logged: list[Event | ChunkRun], stop: int) -> None:
        for at in range(stop if stops else len(items)):
            kind = kinds[at]
            if kind is RUN:
                if take_run is not None:
                    take_run(items[at])  # type: ignore[arg-type]  # kind RUN: a ChunkRun
            elif takes is None or kind in takes:
                step(items[at], plans[at])  # type: ignore[arg-type]  # not RUN: an Event
    return stepped


def _few_types_runner(fold: AuditFold, takes: frozenset[str], stops: bool) -> Runner:
    """The runner of a fold that reads a few event types and no packed row (no chunk): the positions of
    its types picked from ``kinds`` in one comprehension, then only those stepped, in order (most folds
    of this kind read one to four rare types: the batch loop tested every item of the batch for them)."""
    if isinstance(fold, WalkFold):
        send = fold.walking.send

        def walk_few(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                     logged: list[Event | ChunkRun], stop: int) -> None:
            end = stop if stops else len(items)
            for at in [at for at, kind in enumerate(kinds) if kind in takes]:
                if at >= end:
                    return
                send(items[at])  # type: ignore[arg-type]  # of one of its types: an Event
        return walk_few
    step = fold.stepper()

    def step_few(items: list[Event | ChunkRun], kinds: list[str], plans: list[SurfacePlan | None],
                 logged: list[Event | ChunkRun], stop: int) -> None:
        end = stop if stops else len(items)
        for at in [at for at, kind in enumerate(kinds) if kind in takes]:
            if at >= end:
                return
            step(items[at], plans[at])  # type: ignore[arg-type]  # of one of its types: an Event
    return step_few


def run_alone(fold: type[AuditFold], events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """One fold's findings on its own (the tests and ``bench/check_passes`` call the audits one
    by one); a fold that needs the surface finds nothing where the surface is rejected."""
    return run_folds(events, dialect, first_live_seq, [fold]).findings
