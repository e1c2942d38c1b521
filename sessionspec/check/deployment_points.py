"""Without ``--deployment``: the places of a log the deployment's decisions would judge, listed as not decided (issue 44).

``check --deployment FILE`` runs :class:`sessionspec.check.deployment_fold.DeploymentFold`; without the file it does
not run, and this fold lists, per rule, the places of this log it would have judged: the pressure trigger points
(the dialect's :func:`sessionspec.model.compaction.point_places.point_places`: a window that opens after one of
its ``opens`` events and is decided by its first compaction event, CMP-8, else at its ``closes`` event, CMP-6 or
DIA-6), the places where the dialect's overflow point opens (A55: a failed step's ``step/end``, CMP-7; D08: a failed
attempt's ``CONTEXT_WINDOW_EXCEEDED`` finish, DIA-7; CMP-9 when compaction ran there), each prune replacement (PRN-3,
PRN-4) and each ``request/context`` (CMP-8).  Live events only, as the deployment's fold: the seed was judged where
it was written.  A log with none of these lists none of those rules.
It reads a few event types (a tool result only when it replaces a node), its state a generator's locals: the events
it does not read cost it nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Final

from sessionspec.check.declines import NO_DEPLOYMENT, Declines, FileNotDecided
from sessionspec.check.folds import WalkFold
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.point_places import point_places
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


def read_types(dialect: Dialect) -> frozenset[str]:
    """The types the listing reads in ``dialect``: its trigger points' places (:func:`point_places`: D08's overflow
    point opens at a chunk), the step's message and end, the compaction events and ``request/context`` (a tool result
    only to find a prune replacement)."""
    points = point_places(dialect)
    return frozenset({"assistant/message", "step/end", "request/context", "tool/result", "compaction/prune",
                      rules_of(dialect).event_type("start"), *points.opens, points.closes, points.overflow_opens})


class DeploymentPoints(WalkFold):
    """See the module docstring.  A walk: its state is the generator's locals (read on every event it takes); one
    subclass per dialect, so each reads its own trigger points' types and no more."""

    # Stepped as each event is taken, by the loop's route for its type (it reads no ``before``): a fold reading a few
    # types then costs only their events, where a batch's runner passes over every type of the batch (bench/cachegrind.py,
    # the 10k bench log: +0.72 % of a check's instructions as a batch fold, +0.39 % stepped so).
    READS_BEFORE = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        self.declines = Declines()
        super().__init__(before, dialect, first_live_seq)

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        live, add, points = self.first_live_seq, self.declines.add, point_places(self.dialect)
        opens, closes, rule = points.opens, points.closes, points.rule
        overflow_rule, overflow_what, overflow_opens, opens_overflow = points.overflow_rule, points.overflow_what, points.overflow_opens, points.opens_overflow
        point = points.where.split(" (")[0] + " point"
        bracket_start = rules_of(self.dialect).event_type("start")
        # The pressure window is open; the step recorded its message; an overflow point is open (the model's
        # ``OverflowTrack.open``: from where ``opens_overflow`` says, until the next message, pressure window, event of
        # its opening type or compaction event; as two flags here, not by stepping the model's track, whose failure
        # codes and budget only the judgement reads, so the A55 listing reads no step/start and no chunk).
        window = answered = failed = False
        while (event := (yield)) is not None:
            kind = event.type
            prune = False
            if kind == "tool/result":
                op = event.surface_op
                if not isinstance(op, JsonObject) or get(op, "op") != "replace":
                    continue  # a tool result as the loop wrote it: nothing of these rules reads it
                prune = True
            seq = event.seq
            if seq < live:
                continue
            if prune or kind == bracket_start or kind == "compaction/prune":
                if failed:
                    add("CMP-9", NO_DEPLOYMENT, f"compaction after a {overflow_what}", seq)
                    failed = False
                if prune:
                    add("PRN-3", NO_DEPLOYMENT, "prune replacement", seq)
                    add("PRN-4", NO_DEPLOYMENT, "prune replacement", seq)
                if window:
                    window = False
                    add("CMP-8", NO_DEPLOYMENT, f"compaction at a {point}", seq)
                continue
            if window and kind == closes:
                window = False
                add(rule, NO_DEPLOYMENT, point, seq)
            if kind == overflow_opens:
                failed = opens_overflow(event, answered)
                if failed:
                    add(overflow_rule, NO_DEPLOYMENT, overflow_what, seq)
            if kind == "step/end":
                answered = False
            elif kind == "assistant/message":
                answered, failed = True, False
            elif kind == "request/context":
                add("CMP-8", NO_DEPLOYMENT, "request/context", seq)
            if kind in opens:
                window, failed = True, False
        return []

    def undecided(self) -> Sequence[FileNotDecided]:
        return self.declines.items()


class A55DeploymentPoints(DeploymentPoints):
    DIALECTS = frozenset({Dialect.A55})
    EVENT_TYPES = read_types(Dialect.A55)


class D08DeploymentPoints(DeploymentPoints):
    DIALECTS = frozenset({Dialect.D08})
    EVENT_TYPES = read_types(Dialect.D08)


# The listing of each dialect; FoldLoop runs the one of the log's dialect (as it picks its folds, by DIALECTS).
LISTINGS: Final[tuple[type[DeploymentPoints], ...]] = (A55DeploymentPoints, D08DeploymentPoints)
