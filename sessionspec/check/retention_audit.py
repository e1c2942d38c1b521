"""The range a compaction with ``retainTokens = 0`` takes (CMP-9, CMP-11, DIA-20), one fold.

An overflow recovery (CMP-9: "select a range with ``retainTokens = 0``") and a
D08 manual compaction (DIA-20) need no token counts: the retention walk
(CMP-11) keeps exactly the last node, then rounds the cut head-ward to the
nearest balanced cut (CMP-10's counter), so the range is the surface head up
to the node before the last balanced cut.  The fold keeps the surface nodes
with their events; their CMP-10 deltas are read and the balance summed only at
such a summary, over a surface that the compaction then shrinks to its
retained tail (amortized linear).  Pressure ranges depend on ``retainTokens`` (not logged) and are not
judged here (CMP-12 judges their anchoring).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import CHUNK, WalkFold
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction import compaction_type
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.rejected import Rejected


@dataclass(slots=True)
class _Surface:
    """Surface nodes in order with their events (whose CMP-10 deltas only a zero-retention summary
    reads: :meth:`deltas`); positions rebuilt lazily."""

    nodes: list[int] = field(default_factory=list)
    events: dict[int, Event] = field(default_factory=dict)
    pos: dict[int, int] | None = None

    def deltas(self, dialect: Dialect) -> dict[int, int]:
        """Each node's CMP-10 delta."""
        return {seq: _delta(event, dialect) for seq, event in self.events.items()}

    def index(self, seq: Json | Absent) -> int | None:
        if self.pos is None:
            self.pos = {s: i for i, s in enumerate(self.nodes)}
        return self.pos.get(seq) if isinstance(seq, int) else None

    def apply(self, event: Event) -> None:
        op = event.surface_op
        if op == "append":
            self.nodes.append(event.seq)
            if self.pos is not None:
                self.pos[event.seq] = len(self.nodes) - 1
        elif isinstance(op, JsonObject):
            i, j = self.index(get(op, "start")), self.index(get(op, "end"))
            if i is None or j is None or i > j:
                return  # SURF-5's finding
            # A shadowed node is never read again: dropped, so memory follows the surface.
            for shadowed in self.nodes[i : j + 1]:
                self.events.pop(shadowed, None)
            if i == j and self.pos is not None:
                del self.pos[self.nodes[i]]
                self.pos[event.seq] = i
                self.nodes[i] = event.seq
            else:
                self.nodes[i : j + 1] = [event.seq]
                self.pos = None
        else:
            return
        self.events[event.seq] = event


def _delta(event: Event, dialect: Dialect) -> int:
    """CMP-10: tool-call blocks of an assistant message, -1 for a tool result, else 0."""
    if event.type == "tool/result":
        return -1
    if event.type != "assistant/message":
        return 0
    content = get(event.data, "content") if dialect is A55 else get(get(event.data, "message"), "content")
    return sum(1 for b in content if get(b, "type") == "tool-call") if isinstance(content, tuple) else 0


def zero_retention_end(nodes: Sequence[int], delta: dict[int, int]) -> int | None:
    """CMP-11 with ``R = 0``: ``keep`` starts at the last node and is rounded
    head-ward while the cut before it is unbalanced; the range ends at the
    node before ``keep`` (None: no range)."""
    running, best = 0, None
    for cut in range(1, len(nodes)):
        running += delta.get(nodes[cut - 1], 0)
        if running == 0:
            best = cut
    return None if best is None else nodes[best - 1]


@audits("CMP-9", "CMP-11", "DIA-20")
def check_zero_retention_range(event: Event, surface: _Surface, rule: str, dialect: Dialect) -> Rejected | None:
    """CMP-9 (overflow) / DIA-20 (manual): the range selected with
    ``retainTokens = 0`` (CMP-11) ends at the node before the last balanced
    cut of the surface."""
    end = get(get(event.data, "shadowedRange"), "end")
    want = zero_retention_end(surface.nodes, surface.deltas(dialect))
    if end is ABSENT or end == want:
        return None
    what = "no range (every cut before the last node splits a tool pair)" if want is None else f"a range ending at seq {want}"
    return Rejected(rule=rule, seq=event.seq, reason=f"a compaction selected with retainTokens 0 ends at seq {end!r}; the retention walk gives {what}")


@dataclass(slots=True)
class _Step:
    open: bool = False
    message: bool = False
    failed_attempt: bool = False


class ZeroRetentionAudit(WalkFold):
    """Every live overflow (A55: a bracket outside a step; D08: inside a step
    after a failed attempt) and manual (D08: owner ``null``) compaction takes
    the range of :func:`zero_retention_end`."""

    # Run only on a surface that folds (the retained range is a surface range).
    NEEDS_SURFACE = True
    # A packed row's chunks come as one ChunkRun, which moves nothing here (see the walk).
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        surface = _Surface()
        step = _Step()  # the one step state, reset in place at each boundary
        eligible = surface_types(dialect)
        start_t, summary_t = compaction_type(dialect, "start"), compaction_type(dialect, "summary")
        # A chunk is log-only (SURF-11) and no bracket event: it can only mark a failed attempt,
        # so the walk is done with it there; only D08's rule reads that mark (_zero_retention_rule).
        assert CHUNK not in eligible and CHUNK not in (start_t, summary_t)
        d08 = dialect is D08
        rule: str | None = None
        while (event := (yield)) is not None:
            if isinstance(event, ChunkRun):
                continue  # CHK-6: a row's chunks are deltas, no ``finish``, so they mark nothing
            kind = event.type
            match kind:
                case "assistant/chunk":
                    if d08:
                        chunk = get(event.data, "chunk")
                        if get(chunk, "type") == "finish":
                            # DIA-7: a finish with an error ends a failed attempt; an overflow
                            # recovery follows it inside the step.
                            step.failed_attempt = get(get(chunk, "reason"), "kind") == "error"
                    continue
                case "step/start":
                    step.open, step.message, step.failed_attempt = True, False, False
                case "step/end" | "turn/end" | "turn/start":
                    step.open, step.message, step.failed_attempt = False, False, False
                case "assistant/message" if event.surface_op == "append":
                    step.message = True
                case _:
                    pass
            if kind == start_t:
                rule = _zero_retention_rule(event, step, dialect)
            elif kind == summary_t and rule is not None and event.seq >= first_live_seq:
                bad = check_zero_retention_range(event, surface, rule, dialect)
                found += [bad] if bad is not None else []
                rule = None
            if kind in eligible and event.surface_op is not ABSENT:
                surface.apply(event)
        return found


audits("CMP-9", "DIA-20")(ZeroRetentionAudit)


def audit_zero_retention(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ZeroRetentionAudit` run alone."""
    return run_alone(ZeroRetentionAudit, events, dialect, first_live_seq)


def _zero_retention_rule(event: Event, step: _Step, dialect: Dialect) -> str | None:
    """The rule a bracket's range answers to when it is selected with retainTokens 0."""
    if dialect is A55:
        return None if step.open else "CMP-9"
    if get(event.data, "turn") is None:
        return "DIA-20"
    return "CMP-9" if step.open and step.failed_attempt and not step.message else None
