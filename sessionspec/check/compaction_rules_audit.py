"""Where compaction runs and what its bracket holds (CMP-2, CMP-5..7, CMP-19, CMP-22,
CMP-23, DIA-2, DIA-6, PRN-6): a driver of :mod:`sessionspec.model.compaction.bracket_contents`.

The fold keeps one :class:`~sessionspec.model.compaction.trigger_place.TriggerPlace` and runs the model's acceptor
over it (:func:`~sessionspec.model.compaction.bracket_contents.take_event`, its dispatch inlined, through the compiled
twins of :mod:`sessionspec.fast.trigger_place`): a boundary reaches ``take_boundary``, a surface event
``take_surface``; a chunk without a surface op only the attempt's state (``take_chunk``), and a packed row's chunks
(deltas, CHK-6) nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Final

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import CHUNK, WalkFold
from sessionspec.fast.constants import ABSENT

# The acceptor through its compiled twin (tied to the model by tests/fast/test_fast_trigger_place.py).
from sessionspec.fast.trigger_place import take_boundary, take_chunk, take_surface
from sessionspec.model.compaction.bracket_contents import check_bracket_body, check_checkpoint_source
from sessionspec.model.compaction.trigger_place import (
    TriggerPlace,
    check_bracket_closed,
    check_bracket_placement,
    check_overflow_retry,
    check_prune_placement,
)
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

# The model's deciding functions the acceptor runs for this fold (the one pass's links name a fold by what it drives).
DRIVES: Final = (check_bracket_placement, check_prune_placement, check_bracket_closed, check_overflow_retry,
                 check_checkpoint_source, check_bracket_body)


class CompactionRulesAudit(WalkFold):
    """Trigger placement and bracket contents of every live bracket, decided by the model."""

    # Run only on a surface that folds (the brackets' ranges are surface ranges).
    NEEDS_SURFACE = True
    # A packed row's chunks come as one ChunkRun, which moves nothing here (see the walk).
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        first_live_seq = self.first_live_seq
        found: list[Rejected] = []
        place = TriggerPlace(self.dialect)
        boundaries = place.boundaries
        while (event := (yield)) is not None:
            if isinstance(event, ChunkRun):
                continue  # CHK-6: a row's chunks are deltas, no ``finish``, and carry no surfaceOp
            if event.type == CHUNK and event.surface_op is ABSENT:
                # A chunk only moves the step's attempt state; no decision reads it (issue 26).
                take_chunk(place, event)
                continue
            # The acceptor's dispatch (take_event): only a boundary or a surface event moves the place or is judged.
            if event.type in boundaries:
                take_boundary(place, event, event.seq >= first_live_seq, found)
            if event.surface_op is not ABSENT:
                take_surface(place, event, event.seq >= first_live_seq, found)
        return found


def audit_compaction_rules(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`CompactionRulesAudit` run alone."""
    return run_alone(CompactionRulesAudit, events, dialect, first_live_seq)
