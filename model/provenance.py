"""The provenance the loop writes for its own stream (SURF-13), as a log shows it, decided event by event.

SURF-13's first two clauses are the loop's (``loop.ts``): an ``assistant/message`` cites the chunks it was
assembled from, a ``tool/result`` its call.  What "its own stream" is, is what the step's events so far show:
the ``assistant/chunk`` seqs since its ``step/start`` (the attempt's alone after a D08 error finish, DIA-7)
and each ``tool/call``'s seq by call id.  :class:`StepStream` keeps that; the deciding functions judge a
message or result against it.  A step the loop did not write (FMT-7 Writers: the session API's) is not
judged, and provenance on a replace (checkpoints, prunes) is compaction's (CMP-22, PRN-4).

``sessionspec check`` runs these definitions over a log (``sessionspec/check/provenance_audit.py`` keeps a
StepStream per open step); the loop writes the provenance they accept (``model/loop/streaming.py``;
``tests/model/test_provenance.py`` holds the two together both ways).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sessionspec.model.jsonval import ABSENT, Absent, Json, get, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.message_shape import result_call_id
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

CallKey = str | tuple[str]


def call_key(call_id: Json) -> CallKey:
    """A call id as a dict key, two keys equal exactly when the ids' JS texts are (the harness keys its calls
    by ``JS(id)``).  A string is its own key (``JS`` is injective on strings), saving its encoding on every
    call and result; any other id is its JS text in a tuple, which no string equals."""
    return call_id if isinstance(call_id, str) else (js_stringify(call_id),)


@dataclass(slots=True)
class StepStream:
    """What an open step has streamed so far: its chunks (by seq, in order, with their position), those of
    the current attempt, and its tool calls' seqs by :func:`call_key`.  Mutable, like a loop ``Turn``: one
    per open step, owned by whoever folds the log, never shared."""

    chunks: dict[int, Event] = field(default_factory=dict)
    positions: dict[int, int] = field(default_factory=dict)
    attempt: list[int] = field(default_factory=list)
    calls: dict[CallKey, int] = field(default_factory=dict)


def take_chunks(stream: StepStream, chunks: Sequence[Event], dialect: Dialect) -> None:
    """The step's next chunks, in order (one, or a packed row's): each the step's next one, and the attempt's.
    DIA-7: in D08 a finish chunk with an error ends the attempt; the retry's message cites only the retry's chunks."""
    positions, by_seq, attempt = stream.positions, stream.chunks, stream.attempt
    for chunk in chunks:
        seq = chunk.seq
        positions[seq] = len(by_seq)
        by_seq[seq] = chunk
        attempt.append(seq)
        if dialect is Dialect.D08:  # DIA-7
            delta = get(chunk.data, "chunk")
            if get(delta, "type") == "finish" and get(get(delta, "reason"), "kind") == "error":
                attempt = stream.attempt = []


def take_call(stream: StepStream, call: Event) -> None:
    """A ``tool/call`` of the step, by its call id (an absent id keys as ``null``)."""
    call_id = get(call.data, "callId")
    stream.calls[call_key(None if isinstance(call_id, Absent) else call_id)] = call.seq


@decides("MTR-9")
def cited_stream(event: Event, chunk_at: Callable[[int], Event | None]) -> tuple[Event, ...] | Rejected:
    """MTR-9's check of the cited chunks (its definition is the meter's price of a message,
    :func:`sessionspec.model.meter.provider_output_price`, which runs this): "every cited seq MUST be `< event.seq`,
    unique, an `assistant/chunk` of the same turn and step (else reject)".  ``chunk_at(seq)``: the logged event of ``seq``, or None where the reader keeps none (the checker keeps
    only the open step's chunks: any other seq is not a chunk of this step).  ``sourceEventSeqs`` must be present."""
    cited = event.source_event_seqs
    if not isinstance(cited, tuple):
        return _meter_refuses(event, "sourceEventSeqs is not an array")
    turn, step = get(event.data, "turn"), get(event.data, "step")
    seen: set[int] = set()
    chunks: list[Event] = []
    for seq in cited:
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or seq >= event.seq or seq in seen:
            return _meter_refuses(event, f"cites an invalid chunk seq {seq!r}")
        seen.add(seq)
        chunk_event = chunk_at(seq)
        if chunk_event is None:
            return _meter_refuses(event, f"cites seq {seq}, which is not an assistant/chunk of its step")
        if chunk_event.type != "assistant/chunk":
            return _meter_refuses(event, f"cites seq {seq}, which is not an assistant/chunk")
        if get(chunk_event.data, "turn") != turn or get(chunk_event.data, "step") != step:
            return _meter_refuses(event, f"cites chunk seq {seq} of another turn or step")
        chunks.append(chunk_event)
    return tuple(chunks)


def _meter_refuses(event: Event, why: str) -> Rejected:
    return Rejected(rule="MTR-9", seq=event.seq, reason=f"token meter: {event.type} {why}")


@decides("INV-7")
def check_message_stream(message: Event, stream: StepStream) -> list[Rejected]:
    """SURF-13's message clause (:func:`check_stream_provenance`), with the checks it rests on.  The cited seqs are first
    MTR-9's (:func:`cited_stream`: earlier, unique chunks of this turn and step);
    then in order, with none skipped; then INV-7's: exactly the chunks of the request the message answers
    (A55: every chunk of the step, LOOP-11; D08: the attempt's, DIA-7).  An absent field is LOOP-11's."""
    cited = message.source_event_seqs
    if not isinstance(cited, tuple):
        return []
    chunks = cited_stream(message, stream.chunks.get)
    if isinstance(chunks, Rejected):
        return [chunks]
    seqs = [chunk.seq for chunk in chunks]
    positions = [stream.positions[seq] for seq in seqs]
    found: list[Rejected] = []
    if positions and positions != list(range(positions[0], positions[0] + len(positions))):
        order = "out of order" if positions != sorted(positions) else "skipping a chunk"
        found.append(Rejected(rule="SURF-13", seq=message.seq, reason=f"assistant/message cites its chunks {order} (its own stream, in order)"))
    if seqs != stream.attempt:
        found.append(Rejected(rule="INV-7", seq=message.seq, reason=f"assistant/message cites {len(seqs)} chunk(s), but its request "
                              f"streamed {len(stream.attempt)} (seqs {stream.attempt[:1]}..{stream.attempt[-1:]})"))
    return found


def check_result_stream(result: Event, stream: StepStream, dialect: Dialect) -> Rejected | None:
    """SURF-13's result clause (:func:`check_stream_provenance`): the seq of its own ``tool/call`` in this step (the
    call :func:`sessionspec.model.message_shape.result_call_id` reads).  LOG-14: a
    synthetic ``TOOL_NOT_STARTED`` result answers a call that never started, and cites nothing."""
    call_seq = stream.calls.get(call_key(result_call_id(result, dialect)))
    cited = result.source_event_seqs
    if call_seq is None:
        if get(get(result.data, "error"), "code") == "TOOL_NOT_STARTED" and cited is ABSENT:
            return None
        if cited is ABSENT:
            return Rejected(rule="SURF-13", seq=result.seq, reason="tool/result without a tool/call and without sourceEventSeqs is not a TOOL_NOT_STARTED closer")
        return Rejected(rule="SURF-13", seq=result.seq, reason=f"tool/result cites {js_stringify(cited)[:40]}, but its call has no tool/call in this step")
    if cited != (call_seq,):
        shown = "nothing" if cited is ABSENT else js_stringify(cited)[:40]
        return Rejected(rule="SURF-13", seq=result.seq, reason=f"tool/result cites {shown}, not [{call_seq}] (its tool/call)")
    return None


@decides("SURF-13")
@implements("SURF-13")
def check_stream_provenance(event: Event, stream: StepStream, dialect: Dialect) -> list[Rejected]:
    """SURF-13: "Provenance that the harness itself writes MUST have this meaning:

    - `assistant/message` cites the chunk seqs of its own stream, in order. An explicit `[]` means a known empty
      stream; an absent field means the source was not recorded.
    - `tool/result` cites `[callSeq]`.
    - The compaction checkpoint cites `[startSeq, summarySeq]` followed by the shadowed seqs, which is not sorted.
    - A prune replacement cites `[originalSeq]`."

    The loop's clauses, for a live append of the step ``stream`` shows: :func:`check_message_stream` and
    :func:`check_result_stream`.  The checkpoint's and the prune's are compaction's (CMP-22, PRN-4)."""
    match event.type:
        case "assistant/message":
            return check_message_stream(event, stream)
        case "tool/result":
            bad = check_result_stream(event, stream, dialect)
            return [] if bad is None else [bad]
        case _:
            return []
