"""Turn and step nesting and tool pairing as the session invariant companion vetoes them (LOG-13, with LOOP-2,
LOOP-15, LOOP-17, MTR-6, DIA-3, P-LOOP-4, P-LOOP-7, P-PRN-3): the fold that runs the model's definitions.

The definitions are :mod:`sessionspec.model.nesting`'s: a :class:`~sessionspec.model.nesting.Nesting` state that
:func:`~sessionspec.model.nesting.companion_veto` advances event by event.  The companion replays a created
session's seed through the same checks on ``session/created`` (``core/session/src/invariant.ts`` lines 196-210 at
``a55f148516``, ``seedSession``; QF-12), so this fold takes every event, the seed too, and says which findings are
the seed's.  It runs their compiled twin, :mod:`sessionspec.fast.nesting`, tied to them by
``tests/fast/test_fast_nesting.py`` (a packed row's chunks at once).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold

# The model's definitions (sessionspec.model.nesting), through their compiled twins (tied by tests/fast).
from sessionspec.fast.nesting import Nesting, chunk_row_vetoes, companion_veto
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


class NestingAudit(WalkFold):
    """LOG-13: the vetoes of the session invariant companion, for every event."""

    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect = self.dialect
        found: list[Rejected] = []
        nesting = Nesting()
        while (event := (yield)) is not None:
            if type(event) is ChunkRun:
                found += chunk_row_vetoes(nesting, event.members, event.last, dialect)
                continue
            bad = companion_veto(nesting, event, dialect)
            if bad is not None:
                found.append(bad)
        return _seed_named(found, self.first_live_seq)


def _seed_named(found: list[Rejected], first_live_seq: int) -> list[Rejected]:
    """The findings, those of the seed's events saying so."""
    if not found or not first_live_seq:
        return found
    return [Rejected(rule=bad.rule, seq=bad.seq, reason=f"{bad.reason} (in the seed)")
            if bad.seq is not None and bad.seq < first_live_seq else bad for bad in found]


def check_nesting(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`NestingAudit` run alone."""
    return run_alone(NestingAudit, events, dialect, first_live_seq)
