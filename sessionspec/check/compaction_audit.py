"""The compaction and prune audit of a log (FMT-7: P-CMP-1, -3, -5, -6, -7, P-PRN-2, CMP-25, DIA-2/16/18/19).

One fold over the log beside the priced surface (:class:`model.meter.PricedSurface`, kept as
:class:`sessionspec.fast.compaction.AuditSurface`):
brackets well formed (lock, owner turn, one summary, a successful end has a
summary and a checkpoint); summary fields equal the surface range of the
checkpoint replace, the token count recomputed by the meter (skipped when a
placeholder makes pricing unknown, FMT-6); checkpoint source, provenance
``[start, summary] ++ shadowed`` and framed content; the framed summary
strictly smaller (CMP-21); balanced edges (CMP-10); prunes single-node,
content-only, with ``[seq]`` provenance and content equal to ``pruneContent``
of the original.

:class:`CompactionAudit` audits A55; :class:`CompactionAuditD08` is the D08
audit written as overrides of the A55 methods it modifies ("Modified ``m``").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.folds import AuditFold
from sessionspec.fast.compaction import AuditSurface
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.derivation import header_of
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction import check_summary_smaller, frame_summary, is_checkpoint_source, rules_of
from sessionspec.model.header import EpochHeader, header_holds_placeholder
from sessionspec.model.jsonval import Absent, Json, JsonObject, is_safe_int
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.placeholder import mentions_placeholder
from sessionspec.model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, tool_result_content
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, plan_surface_event


@final
@dataclass(slots=True)
class Bracket:
    """An open compaction bracket as the audit has read it so far."""

    start: Event
    turn: Json | Absent
    compaction_id: Json | Absent
    summary: Event | None = None
    checkpoint: Event | None = None
    shadowed: tuple[int, ...] = ()


@dataclass(slots=True)
class CompactionAudit:
    """The A55 compaction audit: :meth:`run` folds a whole log."""

    dialect: Dialect = A55
    findings: list[Rejected] = field(default_factory=list)
    # The priced surface (MTR-7) with CMP-10's counter steps, each node projected once.
    surface: AuditSurface = field(init=False)
    header: EpochHeader | Absent = ABSENT
    open_turn: Json | Absent = ABSENT
    bracket: Bracket | None = None
    pending_prune: Event | None = None

    def __post_init__(self) -> None:
        self.surface = AuditSurface(self.dialect)

    def report(self, rule: str, event: Event, why: str) -> None:
        self.findings.append(Rejected(rule=rule, seq=event.seq, reason=why))

    def run(self, events: Sequence[Event], plans: Sequence[SurfacePlan | None] | None = None) -> tuple[Rejected, ...]:
        """Every finding of ``events``; a surface or header the meter cannot
        fold ends the audit with that rejection last.  ``plans``, when given,
        are the events' surface transitions already planned (the checker's one
        surface fold): the priced surface then prices and commits them without
        planning again (what ``PricedSurface.fold`` does after its plan)."""
        self.surface = AuditSurface(self.dialect)
        bracket_types = self.bracket_types()
        for index, event in enumerate(events):
            bad = self.advance(event, events, index, bracket_types, plans is not None, None if plans is None else plans[index])
            if bad is not None:
                return (*self.findings, bad)
        return tuple(self.findings)

    def bracket_types(self) -> tuple[str, str, str]:
        """CMP-1's bracket event names, looked up once per log instead of three times per event."""
        rules = rules_of(self.dialect)
        return rules.event_type("start"), rules.event_type("summary"), rules.event_type("end")

    def advance(
        self, event: Event, events: Sequence[Event], index: int, bracket_types: tuple[str, str, str], planned: bool, plan: SurfacePlan | None
    ) -> Rejected | None:
        """Audit ``events[index]``, then fold it into the priced surface (with its ``plan``
        when ``planned``); the surface's or the header's rejection, which ends the audit."""
        self.visit(event, events, index, bracket_types)
        # The surface before ``event`` was what the checks above saw.
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

    def visit(self, event: Event, events: Sequence[Event], index: int, bracket_types: tuple[str, str, str]) -> None:
        """One event, ``events[index]``; the checks that read the log before it get
        ``events[:index]`` as a view (made only for them: most events need none)."""
        kind = event.type
        start, summary, end = bracket_types
        if kind == "turn/start":
            self.turn_start(event)
        elif kind == "turn/end":
            self.turn_end(event)
        elif kind == "session/end-seed":
            self.bracket = None
        elif kind == start:
            self.start(event)
            self.bracket = Bracket(start=event, turn=get(event.data, "turn"), compaction_id=get(event.data, "compactionId"))
        elif kind == summary:
            if self.bracket is None:
                self.report("CMP-25", event, "summary without an open compaction start")
            else:
                self.summary(event, self.bracket, log_view(events, index))
        elif kind == end:
            if self.bracket is None:
                self.report("CMP-25", event, "end without an open compaction start")
            else:
                self.end(event, self.bracket)
            self.bracket = None
        elif kind == "user/message" and is_checkpoint_source(get(event.data, "source")) and isinstance(event.surface_op, JsonObject):
            self.checkpoint(event, self.bracket)
            if self.bracket is not None:
                self.bracket.checkpoint = event
        elif kind == "compaction/prune":
            self.pending_prune = event
        elif kind == "tool/result" and isinstance(event.surface_op, JsonObject):
            self.prune(event, log_view(events, index), self.pending_prune)
            self.pending_prune = None

    def turn_start(self, event: Event) -> None:
        self.open_turn = get(event.data, "turn")

    def turn_end(self, event: Event) -> None:
        """A turn's end closes it; Q-12: an orphan start never blocks a later turn."""
        self.open_turn = ABSENT
        self.bracket = None

    def start(self, event: Event) -> None:
        if self.bracket is not None:
            self.report("CMP-25", event, "compaction start while a bracket is open")
        self.check_owner(event)

    def check_owner(self, event: Event) -> None:
        """CMP-14: the bracket is owned by the open turn."""
        turn = get(event.data, "turn")
        if self.open_turn is ABSENT or turn != self.open_turn:
            self.report("CMP-14", event, "compaction bracket not owned by the open turn")

    def same_id(self, event: Event, bracket: Bracket) -> None:
        """A55 brackets carry no id."""

    def summary(self, event: Event, bracket: Bracket, before: Sequence[Event]) -> None:
        """CMP-15, CMP-10, CMP-25 against the surface before ``event``."""
        self.same_id(event, bracket)
        if bracket.summary is not None:
            self.report("CMP-25", event, "second summary in one bracket")
            return
        bracket.summary = event
        data = event.data
        seqs, rng, count = get(data, "shadowedSeqs"), get(data, "shadowedRange"), get(data, "shadowedTokenCount")
        start, end = get(rng, "start"), get(rng, "end")
        if not isinstance(seqs, tuple) or not seqs or start != seqs[0] or end != seqs[-1]:
            self.report("CMP-25", event, "shadowedSeqs/shadowedRange malformed")
            return
        if not is_safe_int(count) or not isinstance(count, int) or count < 0:
            self.report("CMP-25", event, "shadowedTokenCount is not a non-negative safe integer")
            return
        nodes = self.surface.seqs
        if start not in nodes or end not in nodes or nodes.index(start) > nodes.index(end):  # type: ignore[arg-type]
            self.report("CMP-15", event, "shadowedRange is not a range of the current surface")
            return
        i, j = nodes.index(start), nodes.index(end)  # type: ignore[arg-type]
        if tuple(nodes[i : j + 1]) != seqs:
            self.report("CMP-15", event, "shadowedSeqs differ from the surface range")
            return
        bracket.shadowed = tuple(nodes[i : j + 1])
        splits = self.surface.splits(i, j)
        if isinstance(splits, Rejected):
            self.findings.append(splits)
        elif splits:
            self.report("CMP-10", event, "compacted range splits a tool-call/result pair")
        # FMT-6: a scrubbed header or shadowed node makes the recorded price unknown, so a count the
        # meter disagrees with is not judged.  Asked only then: the walk reads every shadowed node,
        # and a count the meter agrees with is no finding whatever it finds.
        recomputed = self.surface.range_tokens(i, j)
        if recomputed != count and not (header_holds_placeholder(self.header) or any(mentions_placeholder(before[s].data) for s in bracket.shadowed)):
            self.report("CMP-15", event, f"shadowedTokenCount {count} != recomputed {recomputed}")

    def checkpoint(self, event: Event, bracket: Bracket | None) -> None:
        if bracket is None:
            # A checkpoint-sourced replace outside any bracket is not one the
            # compaction wrote (real snapshot fixtures plant such nodes, e.g.
            # acp-agent agent-instructions); the surface fold already validated it.
            return
        if bracket.summary is None:
            self.report("CMP-22", event, "checkpoint replace inside a bracket before its summary")
            return
        self.checkpoint_checks(event, bracket, bracket.summary)

    def checkpoint_checks(self, event: Event, bracket: Bracket, summary: Event) -> None:
        """CMP-22 (range, provenance), CMP-20 (framed content), CMP-21 (smaller)."""
        op = event.surface_op
        rng = get(summary.data, "shadowedRange")
        if get(op, "start") != get(rng, "start") or get(op, "end") != get(rng, "end"):
            self.report("CMP-22", event, "checkpoint replace range differs from shadowedRange")
        expected = (bracket.start.seq, summary.seq, *bracket.shadowed)
        if not same_json(event.source_event_seqs, expected):
            self.report("CMP-22", event, "checkpoint provenance is not [start, summary] ++ shadowed")
        content = get(event.data, "content")
        raw = get(summary.data, "summary")
        if not isinstance(raw, tuple) or not same_json(content, frame_summary(raw)):
            self.report("CMP-20", event, "checkpoint content is not the framed summary")
        count = get(summary.data, "shadowedTokenCount")
        if isinstance(count, int) and isinstance(content, tuple) and not isinstance(check_summary_smaller(content, count), int):
            self.report("CMP-21", event, "framed summary is not smaller than the shadowed content")

    def end(self, event: Event, bracket: Bracket) -> None:
        """CMP-25: the end names the start's turn; CMP-22: a successful end follows a summary and a checkpoint."""
        self.same_id(event, bracket)
        if get(event.data, "turn") != bracket.turn:
            self.report("CMP-25", event, "end turn differs from start turn")
        failed = get(event.data, "error") is not ABSENT
        if not failed and bracket.summary is None:
            self.report("CMP-25", event, "successful end without a summary")
        if not failed and bracket.checkpoint is None:
            self.report("CMP-22", event, "successful end without a checkpoint")

    def prune(self, event: Event, before: Sequence[Event], record: Event | None) -> None:
        """PRN-4: a prune replace is single-node with ``[seq]`` provenance."""
        op = event.surface_op
        seq = get(op, "start")
        if not isinstance(seq, int) or get(op, "end") != seq or not 0 <= seq < len(before):
            self.report("PRN-4", event, "prune replace is not single-node")
            return
        self.prune_checks(event, before, record, seq)

    def prune_checks(self, event: Event, before: Sequence[Event], record: Event | None, seq: int) -> None:
        """PRN-4 provenance; PRN-3: the content is ``pruneContent`` of the original."""
        if not same_json(event.source_event_seqs, (seq,)):
            self.report("PRN-4", event, "prune provenance is not [originalSeq]")
        original = tool_result_content(before[seq], self.dialect)
        after = tool_result_content(event, self.dialect)
        inferred = inferred_prune_config(after)
        expected = None if inferred is None else prune_content(original, inferred)
        if not isinstance(expected, tuple) or not same_json(after, expected):
            self.report("PRN-3", event, "pruned content is not pruneContent of the original")


@final
class CompactionAuditD08(CompactionAudit):
    """The D08 audit: the A55 audit with these methods modified (DIA-2, DIA-3,
    DIA-16, DIA-18, DIA-19); construct it with ``dialect=Dialect.D08``."""

    __slots__ = ()

    def turn_start(self, event: Event) -> None:
        """Modified :meth:`CompactionAudit.turn_start` (DIA-19): no turn boundary inside a bracket."""
        if self.bracket is not None:
            self.report("DIA-19", event, "turn/start while a compaction bracket is open")
        self.open_turn = get(event.data, "turn")

    def turn_end(self, event: Event) -> None:
        """Modified :meth:`CompactionAudit.turn_end` (DIA-19): no turn boundary
        inside a bracket, and the bracket stays open (D08 has no Q-12 reset)."""
        if self.bracket is not None:
            self.report("DIA-19", event, "turn/end while a compaction bracket is open")
        self.open_turn = ABSENT

    def check_owner(self, event: Event) -> None:
        """Modified :meth:`CompactionAudit.check_owner`: DIA-3, a ``turn: null``
        bracket is manual and needs an idle agent; DIA-19, a non-empty ``compactionId``."""
        if get(event.data, "turn") is not None:
            CompactionAudit.check_owner(self, event)
        elif self.open_turn is not ABSENT:
            self.report("DIA-19", event, "manual compaction (turn null) inside an open turn")
        cid = get(event.data, "compactionId")
        if not isinstance(cid, str) or not cid:
            self.report("DIA-19", event, "empty compactionId")

    def same_id(self, event: Event, bracket: Bracket) -> None:
        """Modified :meth:`CompactionAudit.same_id` (DIA-19): one ``compactionId`` per bracket."""
        if get(event.data, "compactionId") != bracket.compaction_id:
            self.report("DIA-19", event, "compactionId differs within the bracket")

    def checkpoint_checks(self, event: Event, bracket: Bracket, summary: Event) -> None:
        """Modified :meth:`CompactionAudit.checkpoint_checks`: DIA-19, the source
        names the bracket's ``compactionId``; DIA-16, adjacent to its summary."""
        CompactionAudit.checkpoint_checks(self, event, bracket, summary)
        if get(get(event.data, "source"), "compactionId") != bracket.compaction_id:
            self.report("DIA-19", event, "checkpoint does not name the open bracket's compactionId")
        if event.seq != summary.seq + 1:
            self.report("DIA-16", event, "checkpoint is not adjacent to its summary")

    def end(self, event: Event, bracket: Bracket) -> None:
        """Modified :meth:`CompactionAudit.end` (DIA-16): a successful end is adjacent to its checkpoint."""
        CompactionAudit.end(self, event, bracket)
        failed = get(event.data, "error") is not ABSENT
        if not failed and bracket.checkpoint is not None and event.seq != bracket.checkpoint.seq + 1:
            self.report("DIA-16", event, "end is not adjacent to its checkpoint")

    def prune_checks(self, event: Event, before: Sequence[Event], record: Event | None, seq: int) -> None:
        """Modified :meth:`CompactionAudit.prune_checks` (DIA-18): the replacement
        directly follows its ``compaction/prune`` record naming ``[seq]``."""
        CompactionAudit.prune_checks(self, event, before, record, seq)
        if record is None or record.seq != event.seq - 1 or get(record.data, "shadowedSeqs") != (seq,):
            self.report("DIA-18", event, "prune replacement without its compaction/prune record")


VISITED_TYPES: Final = frozenset({"turn/start", "turn/end", "session/end-seed", "user/message", "compaction/prune", "tool/result", "request/header"})


class CompactionFold(AuditFold):
    """FMT-7's compaction audit as a fold of the checker's one loop: the events' surface
    plans are priced and committed (MTR-7), never planned again; a surface or header the
    meter cannot fold ends it with that rejection last."""

    NEEDS_SURFACE = True
    TAKES_RUNS = True
    # A summary's and a prune's checks read the surface events before it.
    READS_BEFORE = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.audit = CompactionAudit() if dialect is A55 else CompactionAuditD08(dialect=D08)
        self.types = self.audit.bracket_types()
        # The types CompactionAudit.visit and advance read (with the bracket names of the dialect).
        self.read = frozenset({*self.types, *VISITED_TYPES})
        self.index = 0
        self.ended: Rejected | None = None

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        # An event that leaves the surface as it is, of a type neither ``visit`` nor the header
        # fold reads (a chunk, most often), changes nothing: it is counted, not audited.
        if self.ended is None and (plan is not None or event.type in self.read):
            self.ended = self.audit.advance(event, self.before, self.index, self.types, True, plan)
        self.index += 1

    def step_run(self, run: ChunkRun) -> None:
        """A packed row's chunks (CHK-6): log-only (SURF-11, no plan), of a type neither ``visit``
        nor the header fold reads, so each is counted, not audited (what ``step`` does with each)."""
        if run.type in self.read:
            for event in run.members:
                self.step(event, None)
        else:
            self.index += run.count

    def finish(self) -> list[Rejected]:
        return [*self.audit.findings, *([] if self.ended is None else [self.ended])]


audits("FMT-7", "CMP-25", "DIA-19", "CMP-10", "CMP-13", "CMP-14", "CMP-15", "CMP-20", "CMP-21", "PRN-3", "PRN-4", "PRN-5", "DIA-16", "DIA-18", "FMT-4", "P-CMP-1", "P-CMP-3", "P-CMP-6", "P-CMP-7", "P-PRN-2", "P-DIA-2")(CompactionFold)


def audit_compactions(events: Sequence[Event], dialect: Dialect, plans: Sequence[SurfacePlan | None] | None = None) -> tuple[Rejected, ...]:
    """FMT-7's compaction audit run alone: every finding of the log, empty for a valid log
    (``plans``: the events' surface transitions, when already planned; else it plans them)."""
    match dialect:
        case Dialect.A55:
            return CompactionAudit().run(events, plans)
        case Dialect.D08:
            return CompactionAuditD08(dialect=D08).run(events, plans)


def inferred_prune_config(content: Json) -> PruneConfig | None:
    """The head/tail a pruned content was cut with: code points before and after the marker."""
    if not isinstance(content, tuple):
        return None
    text = "".join(str(get(b, "text")) for b in content if get(b, "type") == "text" and isinstance(get(b, "text"), str))
    at = text.find(PRUNE_MARKER)
    if at < 0:
        return None
    head, tail = at, len(text) - at - len(PRUNE_MARKER)
    return PruneConfig(threshold_chars=content_chars(content), head_chars=head, tail_chars=tail)
