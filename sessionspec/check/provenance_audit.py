"""The provenance the loop writes (SURF-13, MTR-9, INV-7): the fold that runs the model's definitions.

The definitions are :mod:`sessionspec.model.provenance`'s: a :class:`~sessionspec.model.provenance.StepStream`
per open step, fed its chunks and calls, against which each live ``assistant/message`` and ``tool/result``
append is judged; the fold runs them through :mod:`sessionspec.fast.provenance`, their compiled twins (the same
findings: ``tests/fast/test_fast_provenance.py``).  This fold only drives them: it opens and closes the step's stream at its boundaries,
hands a packed row's chunks over at once, and leaves out the steps the session API wrote (FMT-7 Writers,
:class:`~sessionspec.check.api_steps.ApiStepJudge`).  Replaces are the compaction audit's (checkpoint and
prune provenance).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.api_steps import ApiStepJudge
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold

# The model's definitions (sessionspec.model.provenance), through their compiled twins (tied by tests/fast).
from sessionspec.fast.provenance import StepStream, check_stream_provenance, take_call, take_chunks
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


class ProvenanceAudit(WalkFold):
    """Provenance of live assistant messages and tool results, one fold."""

    EVENT_TYPES = frozenset({"step/start", "step/end", "turn/end", "turn/start", "assistant/chunk", "assistant/message", "tool/call", "tool/result"})
    # A packed row's chunks come as one ChunkRun: its first member is taken as an event (it may
    # decide the step, FMT-7), then the others.
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        stream: StepStream | None = None
        # FMT-7 Writers: a step's events are held until its judge decides who wrote it.
        judge = ApiStepJudge()
        while True:
            came = yield
            rest: tuple[Event, ...] = ()
            if isinstance(came, ChunkRun):
                # The judge releases every chunk after the first as it comes (a chunk decides the step).
                rest, came = came.members[1:], came.members[0]
            if came is None:
                taken = judge.finish()
            elif judge.pending is None and came.type != "step/start":
                taken = (came,)
            else:
                taken = judge.take(came)
            for event in taken:
                # The cases by how often they come (chunks first); one event matches one type.
                match event.type:
                    case "assistant/chunk" if stream is not None:
                        take_chunks(stream, (event,), dialect)
                    case "step/start" if judge.api:
                        stream = None  # FMT-7 Writers: not written by the loop, which alone cites its stream
                    case "step/start":
                        stream = StepStream()
                    case "step/end" | "turn/end" | "turn/start":
                        stream = None
                    case "tool/call" if stream is not None:
                        take_call(stream, event)
                    case "assistant/message" | "tool/result" if stream is not None and event.seq >= first_live_seq and event.surface_op == "append":
                        found += check_stream_provenance(event, stream, dialect)
                    case _:
                        pass
            if came is None:
                return found
            if stream is not None and rest:
                take_chunks(stream, rest, dialect)


def audit_provenance(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ProvenanceAudit` run alone."""
    return run_alone(ProvenanceAudit, events, dialect, first_live_seq)
