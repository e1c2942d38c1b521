"""The deployment's decisions over a log, run only when ``check`` is given the deployment's facts (issue 44).

A driver of :mod:`sessionspec.model.compaction.obligation`: it folds the token meter over the log (the model's
own fold, MTR-5..MTR-9, over the log's surface and reported usage), finds the points where ``compactIfNeeded``
runs (the dialect's :func:`sessionspec.model.compaction.trigger_points.point_rules`: CMP-6's post-step or DIA-6's
pre-step, CMP-7's overflow point or DIA-7's inside the failed step) and what the log shows there (the first compaction event, or none), and asks
the model whether that is what had to be written (and, where that was a bracket, whether its summary records the
range the retention walk selects at the deployment's retainTokens, CMP-12; and, after each of the point's writes,
whether another transaction follows as CMP-8's loop says, P-CMP-12); each prune
replacement and each prune pass is held to the configured thresholds (PRN-3, PRN-4), and a D08
``request/context`` to the context window the deployment declares for its model (CMP-8).  A point whose turn
ends interrupted is not judged for a compaction that did not run (CMP-6: none runs once the signal is
aborted, and where the abort landed is not logged), nor is a point whose measurement reads a placeholder
(FMT-6: a scrubbed header or node has no known price).  Live events only: the seed was judged where it was
written.  A surface or meter the model refuses ends the fold (the log-alone rules report that).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final, overload

from sessionspec.check.declines import INTERRUPTED, NOT_STATED, PLACEHOLDER, Declines, FileNotDecided
from sessionspec.check.folds import AuditFold
from sessionspec.check.surface_events import SurfaceEvents
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.obligation import (
    Action,
    Expectation,
    decide_logged_window,
    decide_overflow_point,
    decide_pressure_point,
    decide_prune_pass,
    decide_pruned_content,
    decide_retry,
    decide_selected_range,
    overflow_expectation,
    pressure_expectation,
    prunable_results,
    retry_expectation,
    transaction_failed,
)
from sessionspec.model.compaction.trigger_points import ABORTED_KINDS, OverflowTrack, point_rules
from sessionspec.model.deployment import Deployment
from sessionspec.model.header import header_holds_placeholder
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import MeterState, fold_meter_event
from sessionspec.model.placeholder import mentions_placeholder
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


@final
class _LogBefore(Sequence[Event]):
    """The log before the current event as the meter reads it: the surface events the loop keeps, and the
    open step's chunks (MTR-9 prices a message from the chunks it cites, all of its own step).  Its length is
    the events the fold has taken (the loop counts a packed row's chunks only after the row, CHK-6)."""

    __slots__ = ("surface", "chunks", "length")

    def __init__(self, surface: SurfaceEvents, chunks: dict[int, Event]) -> None:
        self.surface = surface
        self.chunks = chunks
        self.length = 0

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            raise TypeError("the log before an event is read one event at a time")
        chunk = self.chunks.get(index)
        return self.surface[index] if chunk is None else chunk


def _is_prune(event: Event) -> bool:
    """A prune replacement: a ``tool/result`` replacing a node (PRN-4, SURF-7)."""
    return event.type == "tool/result" and isinstance(event.surface_op, JsonObject) and get(event.surface_op, "op") == "replace"


class DeploymentFold(AuditFold):
    """The deployment's decisions as a fold of the checker's one loop (see the module docstring)."""

    NEEDS_SURFACE = True
    # The meter's fold reads the log before each event (a replace's endpoints, a message's chunks).
    READS_BEFORE = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int, deployment: Deployment) -> None:
        super().__init__(before, dialect, first_live_seq)
        assert isinstance(before, SurfaceEvents)
        self.deployment = deployment
        self.meter = MeterState(dialect=dialect)
        self.chunks: dict[int, Event] = {}
        self.view = _LogBefore(before, self.chunks)
        self.header: Event | None = None
        rules = rules_of(dialect)
        self.bracket_start = rules.event_type("start")
        self.bracket_summary = rules.event_type("summary")
        self.bracket_end = rules.event_type("end")
        # The expectation of a bracket a pressure point wrote, until that bracket's summary (CMP-12); and whether the
        # open point has written (its later brackets select their ranges on the surface its earlier writes left).
        self.range_due: Expectation | None = None
        self.acting = False
        # The open pressure point's loop (P-CMP-12): its expectation, the transactions it ran, and, when the event
        # before was its last write's, whether that was a failed transaction (None: no decision pending).
        self.loop: Expectation | None = None
        self.made = 0
        self.after_write: bool | None = None
        self.findings: list[Rejected] = []
        # Findings of a compaction that had to run, kept until the turn ends (dropped if it ends aborted).
        self.unran: list[Rejected] = []
        # The open trigger window: the point's first compaction event decides it, else its closing event.
        self.window = False
        # The open prune pass: the seqs due (None: not judged) and those replaced so far, and its first seq.
        self.due: tuple[int, ...] | None = None
        self.pruned: list[int] = []
        self.pass_seq = -1
        self.stopped = False
        self.refused: Rejected | None = None
        # Surface events holding a placeholder (FMT-6): their price, so any measurement over them, is unknown.
        self.scrubbed: set[int] = set()
        # Where compactIfNeeded runs in this dialect, and the overflow points so far (CMP-7).
        self.points = point_rules(dialect)
        self.overflow = OverflowTrack()
        self.declines = Declines()  # where a decision is declined (placeholder, interrupted turn, a fact not stated)

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        if self.stopped:
            return
        kind = event.type
        if event.seq >= self.first_live_seq:
            self.decide(event, kind)
        if plan is not None and mentions_placeholder(event.data):
            self.scrubbed.add(event.seq)
        if kind == "assistant/chunk":
            self.chunks[event.seq] = event
        bad = fold_meter_event(self.meter, event, self.view)
        self.view.length += 1
        if bad is not None:
            self.stopped = True
            self.refused = bad
            return
        if kind == "request/header":
            self.header = event
        elif kind in ("step/start", "step/end"):
            self.chunks.clear()

    def decide(self, event: Event, kind: str) -> None:
        """The decisions ``event`` closes or opens, on the state before it."""
        prune = _is_prune(event)
        if self.pass_seq >= 0 and not prune and kind != "compaction/prune":
            self.end_pass()
        if prune:
            self.prune(event)
        acted = Action.COMPACTION if kind == self.bracket_start else Action.PRUNE if prune or kind == "compaction/prune" else Action.NOTHING
        if acted is Action.COMPACTION:
            self.range_due = None  # the next summary is this bracket's: due only if its pressure point sets it below
        if self.loop is not None and self.after_write is not None and acted is not Action.PRUNE:
            self.next_transaction(event.seq, acted)
        self.overflow_point(event, acted)
        if self.window and acted is not Action.NOTHING:
            self.point(event, acted)
        elif self.window and kind == self.points.places.closes:
            self.point(event, Action.NOTHING)
        elif self.acting and acted is Action.COMPACTION:
            self.later_bracket()
        if self.loop is not None:
            self.track_loop(event, kind, acted)
        if kind == self.points.places.closes:
            self.acting, self.loop = False, None
        if kind == self.bracket_summary and self.range_due is not None:
            found = decide_selected_range(self.range_due, event)
            self.range_due = None
            if found is not None:
                self.findings.append(found)
        if kind == "request/context":
            found = decide_logged_window(event, self.deployment)
            if found is not None:
                self.findings.append(found)
        if kind == "turn/end":
            self.window, self.range_due, self.acting, self.loop = False, None, False, None
            if get(get(event.data, "reason"), "kind") not in ABORTED_KINDS:
                self.findings.extend(self.unran)
            elif self.unran:
                self.declines.add(self.points.places.rule, INTERRUPTED, "trigger point", self.unran[0].seq or event.seq)
            self.unran.clear()
        elif kind in self.points.places.opens:
            self.window = True

    def point(self, event: Event, acted: Action) -> None:
        """A trigger point decided: what the log shows there (``acted``) against what was due."""
        self.window = False
        if self.unknown_figure():
            return self.declines.add(self.points.places.rule if acted is Action.NOTHING else "CMP-8", PLACEHOLDER, "trigger point", event.seq)
        expected = pressure_expectation(self.meter, self.header, self.view, self.deployment, self.dialect)
        if expected is None:
            return self.declines.add(self.points.places.rule if acted is Action.NOTHING else "CMP-8", NOT_STATED, "trigger point", event.seq)
        found = decide_pressure_point(expected, acted, event.seq, self.dialect)
        self.acting = acted is not Action.NOTHING
        if acted is Action.COMPACTION and expected.action is Action.COMPACTION:
            self.range_due = expected
        if found is None and acted is not Action.NOTHING:
            self.loop, self.made, self.after_write = expected, 0, None
        if found is not None:
            (self.unran if acted is Action.NOTHING else self.findings).append(found)

    def later_bracket(self) -> None:
        """A bracket after the point's first write (a prune pass, or an earlier bracket of the retry loop): the
        harness measures again and selects the range on the surface those writes left (``compactIfNeeded``,
        compact-basic ``index.ts``), so the expectation is taken again here; a range is due only if a bracket is."""
        expected = None if self.unknown_figure() else pressure_expectation(self.meter, self.header, self.view, self.deployment, self.dialect)
        self.range_due = expected if expected is not None and expected.action is Action.COMPACTION else None

    def next_transaction(self, seq: int, acted: Action) -> None:
        """The event after the open pressure point's last write: another bracket there (``acted``) or none,
        against CMP-8's loop (P-CMP-12).  The loop stays open only while brackets follow as due."""
        assert self.loop is not None and self.after_write is not None
        due = None if self.unknown_figure() else retry_expectation(self.loop, self.meter, self.view, self.dialect, self.made, self.after_write)
        found = None if due is None else decide_retry(due, acted, seq, self.dialect)
        if found is not None:
            (self.unran if acted is Action.NOTHING else self.findings).append(found)
        if due is None or found is not None or acted is not Action.COMPACTION:
            self.loop = None

    def track_loop(self, event: Event, kind: str, acted: Action) -> None:
        """The open pressure point's writes: a bracket's end counts a transaction (and whether it failed), a
        prune event leaves the loop at its start; a decision is due at the event after either."""
        if kind == self.bracket_end:
            self.made += 1
            self.after_write = transaction_failed(event)
        elif acted is Action.PRUNE:
            self.after_write = False
        else:
            self.after_write = None

    def overflow_point(self, event: Event, acted: Action) -> None:
        """An overflow point the dialect's :class:`~sessionspec.model.compaction.trigger_points.PointRules` decides
        here (CMP-7; D08: DIA-7), judged unless what decides it is not stated or a figure is unknown."""
        point = self.points.overflow_step(self.overflow, event, acted is not Action.NOTHING)
        if point is None:
            return None
        self.acting, self.loop = False, None  # an overflow recovery's bracket keeps CMP-9's range, not the pressure point's
        if not point.stated:
            return self.declines.add(self.points.places.overflow_rule, NOT_STATED, "overflow point", point.seq)
        if self.unknown_figure():
            return self.declines.add(self.points.places.overflow_rule, PLACEHOLDER, "overflow point", point.seq)
        expected = overflow_expectation(self.meter, self.header, self.view, self.deployment, self.dialect, point.prior_overflows)
        if expected is None:
            return self.declines.add(self.points.places.overflow_rule, NOT_STATED, "overflow point", point.seq)
        found = decide_overflow_point(expected, acted, point.seq, self.dialect)
        if found is not None:
            self.findings.append(found)

    def unknown_figure(self) -> bool:
        """FMT-6: "no finding depends on" a placeholder; a scrubbed header or node makes the figure unknown."""
        return header_holds_placeholder(self.meter.header) or bool(self.scrubbed and any(seq in self.scrubbed for seq in self.meter.surface.seqs))

    def prune(self, event: Event) -> None:
        """PRN-3 for a prune replacement; the first of a pass fixes the results the pass had to prune (PRN-4)."""
        config = self.deployment.prune
        if config is None:
            return self.declines.add("PRN-3", NOT_STATED, "prune replacement", event.seq)
        start = get(event.surface_op, "start")
        if not isinstance(start, int) or not 0 <= start < len(self.view):
            return
        if self.pass_seq < 0:
            self.pass_seq = event.seq
            self.due = prunable_results(self.view, self.meter.surface.seqs, config, self.dialect)
        self.pruned.append(start)
        try:
            original = self.view[start]
        except KeyError:
            return  # not on the surface: SURF's finding, not a prune's
        found = decide_pruned_content(original, event, config, self.dialect)
        if found is not None:
            self.findings.append(found)

    def end_pass(self) -> None:
        if self.due is not None:
            found = decide_prune_pass(self.due, self.pruned, self.pass_seq)
            if found is not None:
                self.findings.append(found)
        self.due, self.pruned, self.pass_seq = None, [], -1

    def notes(self) -> list[str]:
        """Why the deployment's decisions stopped early, if they did: the meter refused the log (the rules of
        the log alone say what is wrong with it; the points after it were not judged)."""
        if self.refused is None:
            return []
        return [f"the deployment's decisions stopped at seq {self.refused.seq}: the token meter refuses the log there "
                f"({self.refused.rule}: {self.refused.reason}); later points were not judged"]

    def undecided(self) -> Sequence[FileNotDecided]:
        return self.declines.items()

    def finish(self) -> list[Rejected]:
        if self.pass_seq >= 0 and not self.stopped:
            self.end_pass()
        return self.findings

