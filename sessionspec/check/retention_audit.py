"""The range a compaction with ``retainTokens = 0`` takes (CMP-9, CMP-11, DIA-20): a driver of
:mod:`sessionspec.model.compaction.zero_retention`.

The fold keeps the surface's nodes (the one splice, by each event's plan) and hands each event of the bracket
place's ``moved_by`` types to the model's :func:`take_bracket_event`, through its compiled twin
(:mod:`sessionspec.fast.zero_retention`); at a live summary of a bracket selected with ``retainTokens = 0`` it
runs :func:`check_zero_retention_summary` over the log before it (``before``: the surface events by seq, so the
fold reads it as each event comes).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import AuditFold
from sessionspec.fast.surface import splice

# The bracket place through its compiled twin (tied to the model by tests/fast/test_fast_zero_retention.py).
from sessionspec.fast.zero_retention import BracketPlace, take_bracket_event
from sessionspec.model.compaction.zero_retention import check_zero_retention_summary
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class ZeroRetentionAudit(AuditFold):
    """Every live overflow and manual compaction's summary, held to :func:`check_zero_retention_summary`."""

    # The retained range is a surface range: the fold reads the plans and the surface events before each event.
    NEEDS_SURFACE = True
    READS_BEFORE = True
    # A packed row's chunks come as one ChunkRun: deltas with no ``finish`` (CHK-6), so they move nothing here.
    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.nodes: list[int] = []
        self.place = BracketPlace(dialect)
        self.moved_by = self.place.moved_by
        self.found: list[Rejected] = []

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        # Only the events that move the place reach it: most (a chunk in A55, a tool call) do not.
        if event.type in self.moved_by:
            rule = take_bracket_event(self.place, event)
            if rule is not None and event.seq >= self.first_live_seq:
                bad = check_zero_retention_summary(event, rule, self.nodes, self.before, self.dialect)
                if bad is not None:
                    self.found.append(bad)
        if plan is not None:
            splice(self.nodes, plan, plan.seq)

    def step_run(self, run: ChunkRun) -> None:
        """A packed row's chunks mark nothing (no ``finish`` among them)."""

    def finish(self) -> list[Rejected]:
        return self.found


def audit_zero_retention(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ZeroRetentionAudit` run alone."""
    return run_alone(ZeroRetentionAudit, events, dialect, first_live_seq)
