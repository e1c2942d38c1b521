"""The loop's own rules a log shows (LOOP-3..LOOP-16, LOG-11's precedence, LOG-16, DIA-12, DIA-15): the fold that
runs the model's definitions.

The definitions are :mod:`sessionspec.model.loop_log`'s: a :class:`~sessionspec.model.loop_log.track.LoopTrack`
(the open turn, the open step, the instance's anchor) that each event advances, the dialect's differences an
overlay there (:func:`~sessionspec.model.loop_log.dialect.loop_shapes`).  This fold only drives it: which events
reach which definition (only live events, seq >= firstLiveSeq: a fork's seed was judged where it was written; a
step's first chunk is its request; a packed row's chunks at once), how many events a turn holds, and which steps
the session API wrote (FMT-7 Writers, :class:`ApiStepJudge`).  A chunk, a turn's start and end, a step's start,
request and end, a message, a user message, a tool call and its result, and a header's config are taken by the
compiled twins of their definitions (``sessionspec/fast/loop_log.py``, tied by ``tests/fast/test_fast_loop_log.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.api_steps import ApiStepJudge
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import AuditFold
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.fast.loop_log import (
    close_step,
    close_turn,
    open_step,
    open_turn,
    record_message,
    take_chunk,
    take_config,
    take_request,
    take_tool_call,
    take_tool_result,
    take_user_message,
)
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop_log.dialect import new_track
from sessionspec.model.loop_log.step import take_deltas
from sessionspec.model.loop_log.turn import block_prompt, take_anchor, take_steering
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class LoopAudit(AuditFold):
    """The loop rules a log shows (module docstring).  Which steps the session API wrote (FMT-7 Writers) is known
    only at their end: a step's events are held until its judge decides it (:class:`ApiStepJudge`), then folded
    in order."""

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.state = new_track(dialect)
        self.judge = ApiStepJudge()

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        judge = self.judge
        if judge.pending is None and event.type != "step/start":
            self._fold(event)
            return
        for taken in judge.take(event):
            self._fold(taken)

    TAKES_RUNS = True

    def step_run(self, run: ChunkRun) -> None:
        """:meth:`step` of each chunk of a packed row, at once once the step is judged (no held events) and the
        run is live: a chunk is no turn/step boundary and carries no surfaceOp, so each only counts as the turn's
        inner event and streams (:func:`~sessionspec.model.loop_log.step.take_deltas`)."""
        if self.judge.pending is not None or run.seq < self.first_live_seq:
            for event in run.members:
                self.step(event, None)
            return
        s = self.state
        if s.turn is not None:
            s.turn.inner += run.count
        st = s.step
        if st is None:
            return
        if not st.requested:
            take_request(s, st, run.members[0])
        take_deltas(st, run.kind != "tool-call-delta" and run.any_text())

    def _fold(self, event: Event) -> None:
        s = self.state
        kind = event.type  # read once (compiled, each read of an event's field is a generic attribute read)
        if kind == "assistant/chunk":
            # The most common event, first: what the general path below does with it, each field read once.
            if event.seq < self.first_live_seq:
                return
            t, st = s.turn, s.step
            if t is not None:
                t.inner += 1
                if not t.inner_surface and event.surface_op is not ABSENT:
                    t.inner_surface = True
            if st is not None:
                if not st.requested:
                    take_request(s, st, event)
                take_chunk(s, st, event)
            return
        if kind == "step/start":
            s.step_api = self.judge.api
        if kind == "request/header":
            take_config(s, get(get(event.data, "header"), "config"))
        if event.seq < self.first_live_seq:
            return
        if s.turn is not None and kind not in ("turn/start", "turn/end"):
            s.turn.inner += 1
            s.turn.inner_surface = s.turn.inner_surface or event.surface_op is not ABSENT
        match kind:
            case "turn/start":
                open_turn(s, event)
            case "turn/end":
                close_turn(s, event)
            case "step/start":
                open_step(s, event)
            case "step/end":
                close_step(s, event)
            case "prompt/blocked" if s.turn is not None:
                block_prompt(s, s.turn, event)
            case "user/message" if event.surface_op == "append":
                take_user_message(s, event)
            case "steering/message":
                take_steering(s, event)
            case "assistant/chunk" if s.step is not None:
                if not s.step.requested:
                    take_request(s, s.step, event)
                take_chunk(s, s.step, event)
            case "assistant/message" if event.surface_op == "append":
                record_message(s, event)
            case "tool/call":
                take_tool_call(s, event)
            case "tool/result" if event.surface_op == "append":
                take_tool_result(s, event)
            case "request/header":
                take_anchor(s, event)
            case "request/context":
                s.shapes.request_context(s, event)
            case _:
                pass

    def finish(self) -> list[Rejected]:
        for taken in self.judge.finish():
            self._fold(taken)
        return self.state.found


def audit_loop(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`LoopAudit` run alone."""
    return run_alone(LoopAudit, events, dialect, first_live_seq)
