"""The compaction and prune audit of a log: the fold that runs the model's definitions.

The definitions are :mod:`sessionspec.model.compaction.companion`'s (a bracket's lifecycle, its summary against
the surface, its checkpoint, its end: CMP-25, CMP-14, CMP-15, CMP-10, CMP-20..22, D08's DIA-16 and DIA-19 by the
overlay :mod:`sessionspec.model.compaction.companion_dialect` selects) and :mod:`sessionspec.model.prune_check`'s
(a prune replacement: PRN-3, PRN-4, DIA-18), and a summary's range against the retention walk
(CMP-12, :func:`sessionspec.model.compaction.bracket_contents.check_range_selectable`); the two that compare JSON values and the three asked at every turn
and user message run as their twins,
:mod:`sessionspec.fast.companion` (tied in ``tests/fast/test_fast_companion.py``).  This fold only drives them:
which events reach which definition, the priced surface before each event
(:class:`sessionspec.fast.compaction.AuditSurface`, the compiled-friendly twin of
:class:`model.meter.PricedSurface`, tied by ``tests/fast/test_fast_compaction.py``), the latest header, and the
log before a summary or a prune as a view (made only for them: most events need none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.declines import PLACEHOLDER, Declines, FileNotDecided
from sessionspec.check.folds import AuditFold
from sessionspec.fast.compaction import AuditSurface
from sessionspec.fast.companion import check_checkpoint, check_prune_replacement, is_logged_checkpoint, on_turn_end, on_turn_start
from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.derivation import header_of
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction.bracket_contents import check_range_selectable
from sessionspec.model.compaction.companion import (
    BracketWatch,
    check_end,
    check_start,
    check_summary,
    clear_bracket,
)
from sessionspec.model.compaction.companion_dialect import bracket_watch
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import Absent
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.prune_check import PruneWatch, is_prune_replacement, take_prune_record
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, plan_surface_event


@dataclass(slots=True)
class CompactionAudit:
    """The compaction audit of one log of ``dialect``: :meth:`run` folds a whole log."""

    dialect: Dialect = A55
    # The first seq after the seed: a summary's range is judged only where it was written (the seed was judged then).
    first_live_seq: int = 0
    findings: list[Rejected] = field(default_factory=list)
    # The priced surface (MTR-7) with CMP-10's counter steps, each node projected once.
    surface: AuditSurface = field(init=False)
    header: EpochHeader | Absent = ABSENT
    watch: BracketWatch = field(init=False)
    prunes: PruneWatch = field(init=False)
    # CMP-15's counts the companion could not judge (FMT-6: a scrubbed header or shadowed node has no known price).
    declines: Declines = field(default_factory=Declines)

    def __post_init__(self) -> None:
        self.surface = AuditSurface(self.dialect)
        self.watch = bracket_watch(self.dialect)
        self.prunes = PruneWatch(self.dialect)

    def run(self, events: Sequence[Event], plans: Sequence[SurfacePlan | None] | None = None) -> tuple[Rejected, ...]:
        """Every finding of ``events``; a surface or header the meter cannot
        fold ends the audit with that rejection last.  ``plans``, when given,
        are the events' surface transitions already planned (the checker's one
        surface fold): the priced surface then prices and commits them without
        planning again (what ``PricedSurface.fold`` does after its plan)."""
        self.surface = AuditSurface(self.dialect)
        for index, event in enumerate(events):
            bad = self.advance(event, events, index, plans is not None, None if plans is None else plans[index])
            if bad is not None:
                return (*self.findings, bad)
        return tuple(self.findings)

    def advance(self, event: Event, events: Sequence[Event], index: int, planned: bool, plan: SurfacePlan | None) -> Rejected | None:
        """Audit ``events[index]``, then fold it into the priced surface (with its ``plan``
        when ``planned``); the surface's or the header's rejection, which ends the audit."""
        self.visit(event, events, index)
        # The surface before ``event`` was what the definitions above saw.
        if planned:
            bad = self.commit_planned(event, plan)
        else:
            # What ``PricedSurface.fold`` does: plan (SURF-9, on the nodes so far), then commit.
            planning = plan_surface_event(self.surface.seqs, event, log_view(events, index), self.dialect)
            bad = planning if isinstance(planning, Rejected) else self.commit_planned(event, planning)
        if bad is None and event.type == "request/header":
            header = header_of(event, self.dialect)
            bad, self.header = (header, self.header) if isinstance(header, Rejected) else (None, header)
        return bad

    def commit_planned(self, event: Event, plan: SurfacePlan | None) -> Rejected | None:
        """``PricedSurface.fold`` after its plan (MTR-7): price the node, commit the splice (a
        projection's rejection is the price's: it ends the audit)."""
        return None if plan is None else self.surface.commit(event, plan)

    def visit(self, event: Event, events: Sequence[Event], index: int) -> None:
        """Hand ``events[index]`` to the definition that reads its type, if any."""
        kind, watch = event.type, self.watch
        start, summary, end = watch.types
        if kind == "turn/start":
            found = on_turn_start(watch, event)
        elif kind == "turn/end":
            found = on_turn_end(watch, event)
        elif kind == "session/end-seed":
            found = clear_bracket(watch)
        elif kind == start:
            found = check_start(watch, event)
        elif kind == summary:
            found = check_summary(watch, event, self.surface, self.header, log_view(events, index))
            self.unpriced(event, found)
            bracket = watch.bracket
            if (event.seq >= self.first_live_seq and bracket is not None and bracket.summary is event and bracket.shadowed
                    and not any(f.rule == "CMP-10" for f in found)):
                # The range is a well-formed range of a surface that is not corrupt: could a retainTokens select it (CMP-12)?
                surface = self.surface
                bad = check_range_selectable(event, surface.seqs, surface.prices, surface.balanced(), self.header, log_view(events, index))
                found += () if bad is None else (bad,)
        elif kind == end:
            found = check_end(watch, event)
        elif kind == "user/message" and is_logged_checkpoint(event):
            found = check_checkpoint(watch, event)
        elif kind == "compaction/prune":
            take_prune_record(self.prunes, event)
            return
        elif kind == "tool/result" and is_prune_replacement(event):
            found = check_prune_replacement(self.prunes, event, log_view(events, index))
        else:
            return
        if found:
            self.findings += found

    def unpriced(self, summary: Event, found: Sequence[Rejected]) -> None:
        """After :func:`check_summary` reached CMP-15's count (the bracket's ``shadowed`` set): a count the priced sum
        disagrees with and no CMP-15 finding for it is one the definition declined, a scrubbed header or shadowed
        node (FMT-6) leaving the price unknown.  Asked from its outcome, not again of the placeholders (a walk of
        every shadowed node per summary, which the definition itself makes only when the sum disagrees)."""
        bracket = self.watch.bracket
        if bracket is None or bracket.summary is not summary or not bracket.shadowed:
            return
        first = self.surface.seqs.index(bracket.shadowed[0])
        priced = self.surface.range_tokens(first, first + len(bracket.shadowed) - 1)
        if priced != get(summary.data, "shadowedTokenCount") and not any(f.rule == "CMP-15" for f in found):
            self.declines.add("CMP-15", PLACEHOLDER, "shadowedTokenCount", summary.seq)


VISITED_TYPES: Final = frozenset({"turn/start", "turn/end", "session/end-seed", "user/message", "compaction/prune", "tool/result", "request/header"})


class CompactionFold(AuditFold):
    """The compaction audit as a fold of the checker's one loop: the events' surface
    plans are priced and committed (MTR-7), never planned again; a surface or header the
    meter cannot fold ends it with that rejection last."""

    NEEDS_SURFACE = True
    TAKES_RUNS = True
    # A summary's and a prune's checks read the surface events before it.
    READS_BEFORE = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.audit = CompactionAudit(dialect=dialect, first_live_seq=first_live_seq)
        # The types CompactionAudit.visit and advance read (with the bracket names of the dialect).
        self.read = frozenset({*self.audit.watch.types, *VISITED_TYPES})
        self.index = 0
        self.ended: Rejected | None = None

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        # An event that leaves the surface as it is, of a type neither ``visit`` nor the header
        # fold reads (a chunk, most often), changes nothing: it is counted, not audited.
        if self.ended is None and (plan is not None or event.type in self.read):
            self.ended = self.audit.advance(event, self.before, self.index, True, plan)
        self.index += 1

    def step_run(self, run: ChunkRun) -> None:
        """A packed row's chunks (CHK-6): log-only (SURF-11, no plan), of a type neither ``visit``
        nor the header fold reads, so each is counted, not audited (what ``step`` does with each)."""
        if run.type in self.read:
            for event in run.members:
                self.step(event, None)
        else:
            self.index += run.count

    def undecided(self) -> Sequence[FileNotDecided]:
        return self.audit.declines.items()

    def finish(self) -> list[Rejected]:
        return [*self.audit.findings, *([] if self.ended is None else [self.ended])]


def audit_compactions(events: Sequence[Event], dialect: Dialect, plans: Sequence[SurfacePlan | None] | None = None) -> tuple[Rejected, ...]:
    """The compaction audit run alone: every finding of the log, empty for a valid log
    (``plans``: the events' surface transitions, when already planned; else it plans them)."""
    return CompactionAudit(dialect=dialect).run(events, plans)
