"""Crash-repair closers (LOG-14): the fold that runs the model's definitions.

The definitions are :mod:`sessionspec.model.repair`'s: a :class:`~sessionspec.model.repair.CloserWatch` keeps
LOG-14's scan and the run of candidate closers; each ``turn/end {interrupted}`` is judged against the closers the
scan gives.  This fold only drives it: the events the scan reads, each with the event before it (a row's chunks
at once), and the findings of the live part of the log (a fork's seeded part was judged where it was written).
It runs their compiled twin, :mod:`sessionspec.fast.repair`, tied to them by ``tests/fast/test_fast_repair.py``.
Memory: the pending calls of the open step.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.repair import CloserWatch, watch_event
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import SCANNED_TYPES


class RepairAudit(WalkFold):
    """Every live ``turn/end {interrupted}`` ends the closers of LOG-14 (:func:`sessionspec.model.repair.watch_event`)."""

    # A packed row's chunks come as one ChunkRun: a chunk is no closer and the scan reads none.
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        first_live_seq = self.first_live_seq
        found: list[Rejected] = []
        watch = CloserWatch(self.dialect)
        previous: Event | None = None
        while (event := (yield)) is not None:
            if isinstance(event, ChunkRun):
                # Only the last of a row's chunks can be the event before a closer.
                event = event.members[-1]
            elif event.type in SCANNED_TYPES:
                bad = watch_event(watch, event, previous)
                if bad and event.seq >= first_live_seq:
                    found += bad
            previous = event
        return found


def audit_repair(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`RepairAudit` run alone."""
    return run_alone(RepairAudit, events, dialect, first_live_seq)
