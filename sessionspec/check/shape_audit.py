"""Data shapes the harness writes (LOG-9..LOG-12, HDR-7, HDR-2, CMP-1, DIA-4, DIA-9): the fold that hands each live
event to the model's definitions, :func:`sessionspec.model.event_shape.check_core_shape` (the core table) and
:func:`~sessionspec.model.event_shape.check_type_shape` (each type's own shape).

One pass, no state beyond the current event.  Seed events were judged where they were written; a well-formed
event (most of a loop log) is passed by the compiled fast answers :func:`sessionspec.fast.event_shape.
well_formed_event` and, for a packed row of chunks, :func:`sessionspec.fast.chunk_shape.well_formed_chunk`, which
only ever skip an empty answer (tied to the definitions in ``tests/fast``).  Shapes are judged in the dialect's own form: a D08 log is audited
after the migrations (DIA-13), and the dialect's differences are the model's overlays.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import AuditFold
from sessionspec.fast.chunk_shape import well_formed_chunk
from sessionspec.fast.event_shape import well_formed_event
from sessionspec.model.event_shape import check_core_shape, check_type_shape
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class ShapeAudit(AuditFold):
    """Every live event held to the shape its writer gives it (see the module docstring).  No state beyond the
    current event."""

    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.found: list[Rejected] = []

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        if event.seq < self.first_live_seq or well_formed_event(event, self.dialect):
            return
        self.found += check_core_shape(event, self.dialect)
        self.found += check_type_shape(event, self.dialect)

    def step_run(self, run: ChunkRun) -> None:
        """``step`` of each member of a packed row.  CHK-6: the members differ only in seq, time and
        their text, which ``well_formed_chunk`` does not read: when the first passes, every member
        does, and a member in the seed is skipped anyway.  Else each member takes the full check."""
        if well_formed_chunk(run.members[0].data):
            return
        for event in run.members:
            self.step(event, None)

    def finish(self) -> list[Rejected]:
        return self.found


def audit_shapes(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ShapeAudit` run alone."""
    return run_alone(ShapeAudit, events, dialect, first_live_seq)
