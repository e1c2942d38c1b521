"""Provenance the loop writes (SURF-13, MTR-9, INV-7), one fold.

State: the chunk seqs of the open step (all of them, and those of the
current attempt) and the seq of each ``tool/call`` of the open step, keyed
by call id.  Replaces are the compaction audit's (checkpoint and prune
provenance); only live appends are judged here.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from sessionspec.check.api_steps import ApiStepJudge
from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.constants import ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


@dataclass(slots=True)
class _StepChunks:
    chunks: list[int] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)
    attempt: list[int] = field(default_factory=list)
    calls: dict[str | tuple[str], int] = field(default_factory=dict)

    def add_chunk(self, seq: int) -> None:
        """The step streamed a chunk: the step's next one, and the attempt's."""
        self.index[seq] = len(self.chunks)
        self.chunks.append(seq)
        self.attempt.append(seq)


def call_key(call_id: Json) -> str | tuple[str]:
    """A call id as a dict key, two keys equal exactly when the ids' JS texts are (the harness keys
    its calls by ``JS(id)``).  A string is its own key (``JS`` is injective on strings: one text per
    string), saving its encoding on every call and result; any other id is its JS text in a tuple,
    which no string equals (as no string's JS text equals a non-string's)."""
    return call_id if isinstance(call_id, str) else (js_stringify(call_id),)


def _result_call_id(event: Event, dialect: Dialect) -> Json:
    value = get(get(get(event.data, "message"), "source"), "callId") if dialect is D08 else get(event.data, "callId")
    return None if value is ABSENT else value


def _error_code(event: Event) -> Json:
    code = get(get(event.data, "error"), "code")
    return None if code is ABSENT else code


@audits("SURF-13", "MTR-9", "INV-7")
def check_message_provenance(event: Event, st: _StepChunks) -> list[Rejected]:
    """SURF-13: "``assistant/message`` cites the chunk seqs of its own stream,
    in order"; MTR-9: every cited seq is an earlier ``assistant/chunk`` of the
    same turn and step, unique (else the meter refuses the replay); INV-7:
    the chunks of the request are exactly the ones the message cites (A55:
    every chunk of the step, LOOP-11; D08: of the attempt, DIA-7).  An absent
    field is LOOP-11's finding."""
    cited = event.source_event_seqs
    if not isinstance(cited, tuple):
        return []
    seqs = [s for s in cited if isinstance(s, int) and not isinstance(s, bool)]
    index = st.index
    positions = [index.get(s, -1) for s in seqs]  # -1: not a chunk of this step
    if -1 in positions or len(set(seqs)) != len(seqs) or len(seqs) != len(cited):
        foreign = [s for s, at in zip(seqs, positions, strict=True) if at < 0]
        what = f"seq {foreign[0]}, not a chunk of this step" if foreign else "a seq twice"
        return [Rejected(rule="MTR-9", seq=event.seq, reason=f"assistant/message cites {what} (the meter replays only the step's own chunks)")]
    found: list[Rejected] = []
    if positions and positions != list(range(positions[0], positions[0] + len(positions))):
        order = "out of order" if positions != sorted(positions) else "skipping a chunk"
        found.append(Rejected(rule="SURF-13", seq=event.seq, reason=f"assistant/message cites its chunks {order} (its own stream, in order)"))
    if seqs != st.attempt:
        found.append(Rejected(rule="INV-7", seq=event.seq, reason=f"assistant/message cites {len(seqs)} chunk(s), but its request streamed {len(st.attempt)} (seqs {st.attempt[:1]}..{st.attempt[-1:]})"))
    return found


@audits("SURF-13")
def check_result_provenance(event: Event, st: _StepChunks, dialect: Dialect) -> Rejected | None:
    """SURF-13: "``tool/result`` cites ``[callSeq]``" -- the seq of its own
    ``tool/call``.  A synthetic ``TOOL_NOT_STARTED`` result answers a call that
    never started and cites nothing (LOG-14)."""
    call_seq = st.calls.get(call_key(_result_call_id(event, dialect)))
    cited = event.source_event_seqs
    if call_seq is None:
        if _error_code(event) == "TOOL_NOT_STARTED" and cited is ABSENT:
            return None
        if cited is ABSENT:
            return Rejected(rule="SURF-13", seq=event.seq, reason="tool/result without a tool/call and without sourceEventSeqs is not a TOOL_NOT_STARTED closer")
        return Rejected(rule="SURF-13", seq=event.seq, reason=f"tool/result cites {js_stringify(cited)[:40]}, but its call has no tool/call in this step")
    if cited != (call_seq,):
        shown = "nothing" if cited is ABSENT else js_stringify(cited)[:40]
        return Rejected(rule="SURF-13", seq=event.seq, reason=f"tool/result cites {shown}, not [{call_seq}] (its tool/call)")
    return None


class ProvenanceAudit(WalkFold):
    """Provenance of live assistant messages and tool results, one fold."""

    EVENT_TYPES = frozenset({"step/start", "step/end", "turn/end", "turn/start", "assistant/chunk", "assistant/message", "tool/call", "tool/result"})
    # A packed row's chunks come as one ChunkRun: its first member is taken as an event (it may
    # decide the step, FMT-7), the others only join the step's chunks.
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        st: _StepChunks | None = None
        # FMT-7 Writers: a step's events are held until its judge decides who wrote it.
        judge = ApiStepJudge()
        while True:
            came = yield
            rest = 0
            if isinstance(came, ChunkRun):
                # The judge releases every chunk after the first as it comes (a chunk decides the
                # step), and a row's chunks are deltas (CHK-6), no finish: the rest only join the
                # step's chunks, after the first (their seqs are the next ones, CHK-6).
                rest, came = came.count - 1, came.members[0]
            if came is None:
                taken = judge.finish()
            elif judge.pending is None and came.type != "step/start":
                taken = (came,)
            else:
                taken = judge.take(came)
            for event in taken:
                # The cases by how often they come (chunks first); one event matches one type.
                match event.type:
                    case "assistant/chunk" if st is not None:
                        st.add_chunk(event.seq)
                        if dialect is D08:
                            chunk = get(event.data, "chunk")
                            if get(chunk, "type") == "finish" and get(get(chunk, "reason"), "kind") == "error":
                                st.attempt = []  # DIA-7: the retry's message cites only the retry's chunks
                    case "step/start" if judge.api:
                        st = None  # FMT-7 Writers: not written by the loop, which alone cites its stream
                    case "step/start":
                        st = _StepChunks()
                    case "step/end" | "turn/end" | "turn/start":
                        st = None
                    case "assistant/message" if st is not None and event.seq >= first_live_seq and event.surface_op == "append":
                        found += check_message_provenance(event, st)
                    case "tool/call" if st is not None:
                        call_id = get(event.data, "callId")
                        st.calls[call_key(None if isinstance(call_id, Absent) else call_id)] = event.seq
                    case "tool/result" if st is not None and event.seq >= first_live_seq and event.surface_op == "append":
                        bad = check_result_provenance(event, st, dialect)
                        found += [bad] if bad is not None else []
                    case _:
                        pass
            if came is None:
                return found
            if rest and st is not None:
                for seq in range(came.seq + 1, came.seq + 1 + rest):
                    st.add_chunk(seq)


audits("SURF-13", "MTR-9", "INV-7")(ProvenanceAudit)


def audit_provenance(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ProvenanceAudit` run alone."""
    return run_alone(ProvenanceAudit, events, dialect, first_live_seq)
