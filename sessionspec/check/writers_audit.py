"""The writer of each turn and the turns that mix the dialects (FMT-7 Writers), one fold (issue 26) driving
:mod:`sessionspec.model.writers`.

State: the open turn (:class:`sessionspec.model.writers.OpenTurn`: its first and last
events, counts, ``step/start`` seqs and dialect-marked events) and the session-API judge
of the open step (:class:`sessionspec.check.api_steps.ApiStepJudge`); each turn is judged
when it closes (every step of it has ended by then), and its writer kept for the report.
The fold reads the events as logged (``AS_LOGGED``): the D08 reader's migration would
hide a legacy event's shape (LEG-9).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.api_steps import ApiStepJudge
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.folds import AuditFold
from sessionspec.check.writers import Attribution, TurnWriter, turn_writer
from sessionspec.fast.writers import check_turn_dialects, shape_dialect
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan
from sessionspec.model.writers import SHAPED_TYPES, OpenTurn, dialect_writers


class TurnWritersAudit(AuditFold):
    """Per turn, its writer (:func:`sessionspec.check.writers.turn_writer`) and the events of
    the other dialect in a turn one loop wrote (:func:`sessionspec.model.writers.check_turn_dialects`)."""

    AS_LOGGED = True
    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.judge = ApiStepJudge()
        self.writers = dialect_writers(dialect)
        self.turn: OpenTurn | None = None
        self.turns: list[TurnWriter] = []
        self.found: list[Rejected] = []

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        kind = event.type
        if self.judge.pending is not None or kind == "step/start":
            self.judge.take(event)
        t = self.turn
        if kind == "turn/start":
            if t is not None:
                self._close(t)
            t = self.turn = OpenTurn(start=event, last=event)
        elif t is None:
            return
        else:
            t.last = event
            if kind == "turn/end":
                self.turn = None
            else:
                t.inner += 1
                if t.first_inner is None:
                    t.first_inner = event
                if kind == "step/start":
                    t.steps.append(event.seq)
        # Only a type shape_dialect has a case for can carry one dialect's shape.
        if kind in SHAPED_TYPES and (marked := shape_dialect(event)) is not None:
            t.marked.append((event, marked))
        if kind == "turn/end":
            self._close(t)

    def step_run(self, run: ChunkRun) -> None:
        """:meth:`step` of a packed row's chunks (CHK-6): the judge takes them while its step is
        pending (the first chunk decides it); in an open turn each is one more inner event and the
        last is the turn's last; a chunk has neither dialect's shape (``shape_dialect`` is None)."""
        judge = self.judge
        for event in run.members:
            if judge.pending is None:
                break
            judge.take(event)
        t = self.turn
        if t is not None:
            t.last = run.members[-1]
            t.inner += run.count
            if t.first_inner is None:
                t.first_inner = run.members[0]

    def _close(self, t: OpenTurn) -> None:
        self.turns.append(turn_writer(t, self.writers, self.first_live_seq, self.judge.built))
        self.found += check_turn_dialects(t, self.first_live_seq)

    def finish(self) -> list[Rejected]:
        self.judge.finish()
        if self.turn is not None:
            self._close(self.turn)
            self.turn = None
        return self.found

    def attribution(self) -> Attribution:
        """Per turn, the writer, after :meth:`finish`."""
        return Attribution(turns=tuple(self.turns), api_steps=frozenset(self.judge.built))


def attribute(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> Attribution:
    """:class:`TurnWritersAudit` run alone: the writer of each turn."""
    outcome = run_folds(events, dialect, first_live_seq, [TurnWritersAudit])
    return next(fold.attribution() for fold in outcome.folds if isinstance(fold, TurnWritersAudit))
