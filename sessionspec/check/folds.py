"""The audits as incremental folds, driven by one loop over the events (issue 26).

An audit that walks the log is an :class:`AuditFold`: its state, :meth:`AuditFold.step`
for one event (with that event's surface transition), and :meth:`AuditFold.finish` for
its findings.  :func:`sessionspec.check.fold_loop.run_folds` is the one loop: it folds the surface once per event
(SURF-10, :func:`model.surface.fold_surface`'s own loop: ``plan_surface_event`` on the
nodes so far, then the one ``splice``) and hands the plan to every fold, so no audit
walks the event list again and none plans the surface again.

The folds ``check`` runs are one list, :data:`sessionspec.check.fold_set.FOLDS`.  A fold drives the model's
definitions of its rules (``@decides`` in ``model/``, issue 44): which events reach which definition, and
nothing of a rule's own.  No fold class carries a decorator (mypyc compiles a decorated class as a plain
Python class, whose attribute reads and method calls go through dictionaries: 9 % slower, measured).

A fold that needs a valid surface (``NEEDS_SURFACE``: it reads the plans, or judges what
only a foldable surface makes meaningful) stops at the surface's rejection and its
findings are dropped: the rejection is the finding, and a surface that cannot be folded
would only give knock-on noise (what the passes did before: they were not run).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final, final

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.declines import FileNotDecided
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan

CHUNK: Final = "assistant/chunk"

Step = Callable[[Event, SurfacePlan | None], None]
Send = Callable[[Event], object]


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

    def undecided(self) -> Sequence[FileNotDecided]:
        """The rules the fold declined to decide in this log, and why (sessionspec/check/undecided.py)."""
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
    undecided: list[FileNotDecided] = field(default_factory=list)


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
