"""The provenance definitions of ``model/provenance.py`` (SURF-13, MTR-9's cited chunks, INV-7's), for the checker's
one pass: the same findings, computed by a module the compiled wheel compiles (issue 44).

Interpreted, the model's functions and these cost the same; compiled, the model's stay interpreted, and a call
per chunk from compiled code into them cost 9 % of the whole check.  So the fold runs these, and
``tests/fast/test_fast_provenance.py`` holds them equal to the definitions, finding for finding, on the logs the
loop simulator writes, both dialects, and on every change of a message's or result's provenance the model
refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

from sessionspec.fast.constants import ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.provenance import CallKey
from sessionspec.model.provenance import call_key as key_by_definition
from sessionspec.model.rejected import Rejected

_CHUNK: Final = "assistant/chunk"
_OBJECT: Final = JsonObject


def call_key(call_id: Json) -> CallKey:
    """:func:`sessionspec.model.provenance.call_key`: a string is its own key (every call and result asks; compiled,
    a call into the interpreted model costs more than the answer), any other id the definition's."""
    if type(call_id) is str:
        assert isinstance(call_id, str)
        return call_id
    return key_by_definition(call_id)


def result_call_id(result: Event, dialect: Dialect) -> Json:
    """:func:`sessionspec.model.provenance.result_call_id` (DIA-10: D08's under ``message.source``)."""
    data = result.data
    value = get(get(get(data, "message"), "source"), "callId") if dialect is D08 else get(data, "callId")
    return None if value is ABSENT else value


@final
class StepStream:
    """:class:`sessionspec.model.provenance.StepStream`, as a native class."""

    __slots__ = ("chunks", "positions", "attempt", "calls")

    def __init__(self) -> None:
        self.chunks: dict[int, Event] = {}
        self.positions: dict[int, int] = {}
        self.attempt: list[int] = []
        self.calls: dict[CallKey, int] = {}


def take_chunks(stream: StepStream, chunks: Sequence[Event], dialect: Dialect) -> None:
    """:func:`sessionspec.model.provenance.take_chunks` (DIA-7's retry included)."""
    positions, by_seq, attempt = stream.positions, stream.chunks, stream.attempt
    d08 = dialect is D08
    for chunk in chunks:
        seq = chunk.seq
        positions[seq] = len(by_seq)
        by_seq[seq] = chunk
        attempt.append(seq)
        if d08:
            delta = get(chunk.data, "chunk")
            if get(delta, "type") == "finish" and get(get(delta, "reason"), "kind") == "error":
                attempt = stream.attempt = []


def take_call(stream: StepStream, call: Event) -> None:
    """:func:`sessionspec.model.provenance.take_call`."""
    call_id = get(call.data, "callId")
    stream.calls[call_key(None if isinstance(call_id, Absent) else call_id)] = call.seq


def _meter_refuses(event: Event, why: str) -> Rejected:
    return Rejected(rule="MTR-9", seq=event.seq, reason=f"token meter: {event.type} {why}")


def _cited_chunks(event: Event, by_seq: dict[int, Event]) -> list[int] | Rejected:
    """:func:`sessionspec.model.provenance.cited_stream` over the step's chunks: their seqs, or its refusal."""
    cited = event.source_event_seqs
    if not isinstance(cited, tuple):
        return _meter_refuses(event, "sourceEventSeqs is not an array")
    data = event.data
    turn, step, at = get(data, "turn"), get(data, "step"), event.seq
    seqs: list[int] = []
    seen: set[int] = set()
    for seq in cited:
        if type(seq) is not int or seq < 0 or seq >= at or seq in seen:
            return _meter_refuses(event, f"cites an invalid chunk seq {seq!r}")
        seen.add(seq)
        chunk = by_seq.get(seq)
        if chunk is None:
            return _meter_refuses(event, f"cites seq {seq}, which is not an assistant/chunk of its step")
        if chunk.type != _CHUNK:
            return _meter_refuses(event, f"cites seq {seq}, which is not an assistant/chunk")
        chunk_data = chunk.data
        # The fields read in place (a call per read was most of the cost of a cited chunk).
        if type(chunk_data) is _OBJECT:
            chunk_turn, chunk_step = chunk_data.get("turn", ABSENT), chunk_data.get("step", ABSENT)
        else:
            chunk_turn = chunk_step = ABSENT
        if chunk_turn != turn or chunk_step != step:
            return _meter_refuses(event, f"cites chunk seq {seq} of another turn or step")
        seqs.append(seq)
    return seqs


def check_stream_provenance(event: Event, stream: StepStream, dialect: Dialect) -> list[Rejected]:
    """:func:`sessionspec.model.provenance.check_stream_provenance`."""
    kind = event.type
    if kind == "assistant/message":
        return _message(event, stream)
    if kind == "tool/result":
        bad = _result(event, stream, dialect)
        return [] if bad is None else [bad]
    return []


def _cites_its_attempt(message: Event, stream: StepStream) -> bool:
    """Whether ``message`` cites exactly its request's chunks (the attempt), each once, in the order taken, each a chunk
    of its turn and step before it: the message's commonest form, on which :func:`_message` finds nothing (it
    would read each cited seq as ``_cited_chunks`` does, then their positions).  A position grows by one at each
    chunk of a new seq and not for a seq met before, so the attempt's positions run without a gap when its last
    is its first plus its length less one."""
    cited, attempt = message.source_event_seqs, stream.attempt
    if cited != tuple(attempt) or len(set(attempt)) != len(attempt):
        return False
    if not attempt:
        return True
    first, last = stream.positions.get(attempt[0]), stream.positions.get(attempt[-1])
    if first is None or last is None or last - first != len(attempt) - 1:
        return False
    data, at, by_seq = message.data, message.seq, stream.chunks
    if type(data) is not _OBJECT:
        return False
    turn, step = data.get("turn", ABSENT), data.get("step", ABSENT)
    for seq in cited:  # (the cited values: equal to the attempt's, but one may be ``true`` or ``1.0``)
        chunk = by_seq.get(seq)  # type: ignore[arg-type]  # an attempt's seq: hashable
        if type(seq) is not int or seq < 0 or seq >= at or chunk is None:
            return False
        chunk_data = chunk.data
        if (chunk.type != _CHUNK or type(chunk_data) is not _OBJECT
                or chunk_data.get("turn", ABSENT) != turn or chunk_data.get("step", ABSENT) != step):
            return False
    return True


def _message(message: Event, stream: StepStream) -> list[Rejected]:
    if type(message.source_event_seqs) is not tuple:
        return []
    if _cites_its_attempt(message, stream):
        return []
    seqs = _cited_chunks(message, stream.chunks)
    if isinstance(seqs, Rejected):
        return [seqs]
    positions = stream.positions
    found: list[Rejected] = []
    if seqs:
        first = positions[seqs[0]]
        in_turn = True
        for i, seq in enumerate(seqs):
            if positions[seq] != first + i:
                in_turn = False
                break
        if not in_turn:
            ordered = [positions[seq] for seq in seqs]
            order = "out of order" if ordered != sorted(ordered) else "skipping a chunk"
            found.append(Rejected(rule="SURF-13", seq=message.seq, reason=f"assistant/message cites its chunks {order} (its own stream, in order)"))
    attempt = stream.attempt
    if seqs != attempt:
        found.append(Rejected(rule="INV-7", seq=message.seq, reason=f"assistant/message cites {len(seqs)} chunk(s), but its request "
                              f"streamed {len(attempt)} (seqs {attempt[:1]}..{attempt[-1:]})"))
    return found


def _result(result: Event, stream: StepStream, dialect: Dialect) -> Rejected | None:
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
