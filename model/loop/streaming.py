"""LOOP-7 (9..11): stream the reply (LOOP-10), record the assistant message
(LOOP-11), run the tools (LOOP-12)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.loop.errors import request_error
from sessionspec.model.loop.events import Draft
from sessionspec.model.loop.script import Reply, ReplyKind, Window, obj, text_content
from sessionspec.model.loop.state import APPEND, Interrupted, StepEnd, Turn, TurnFailed
from sessionspec.model.loop.stream import reply_chunks, reply_content, usage_json
from sessionspec.model.loop_records import message_provenance
from sessionspec.model.rules import implements


@implements("LOOP-10")
def stream(t: Turn, reply: Reply, header: EpochHeader, prior_failures: list[JsonObject]) -> StepEnd:
    """LOOP-10: "Every streamed chunk MUST pass an interruption checkpoint and then
    be appended as ``assistant/chunk {turn, step, chunk}``."  "After the stream:
    interruption checkpoint.  A ``finish`` with kind ``error`` or ``aborted`` is
    also a request error.  A request error produces no ``assistant/message``."
    Then the step result (LOOP-11) and the tools (LOOP-12)."""
    chunk_seqs: list[Json] = []
    chunks = () if reply.kind is ReplyKind.ERROR_THROWN else reply_chunks(reply)
    for index, chunk in enumerate(chunks):
        t.checkpoint(Window.BEFORE_CHUNK, index)
        chunk_seqs.append(t.append(Draft(type_name="assistant/chunk",
                                         data=obj(("turn", t.number), ("step", t.step), ("chunk", chunk)))))
    after_stream(t, reply)
    if reply.kind in (ReplyKind.ERROR_THROWN, ReplyKind.ERROR_IN_BAND):
        return request_error(t, reply, prior_failures)
    step_result(t, header, reply, chunk_seqs)
    run_tools(t, reply)
    return StepEnd.DONE


def after_stream(t: Turn, reply: Reply) -> None:
    """LOOP-10: "After the stream: interruption checkpoint."  QF-7: only a stream
    that ends (normally or with an in-band ``finish`` error) reaches it; a
    stream that throws goes straight to the request-error path (LOOP-14), so an
    abort landing there is not observed here: the request-error path decides
    (it honours agent interrupts, not foreign abort reasons)."""
    if reply.kind is ReplyKind.ERROR_THROWN:
        t.signal(Window.AFTER_STREAM)
    else:
        t.checkpoint(Window.AFTER_STREAM)


@implements("LOOP-11")
def step_result(t: Turn, header: EpochHeader, reply: Reply, chunk_seqs: Sequence[Json]) -> None:
    """LOOP-11: "A successful stream MUST append `assistant/message {turn, step, content, provenance:{provider,
    model, replayState?}, usage?}` with `sourceEventSeqs: <all chunk seqs of this step>` (explicitly `[]`
    for an empty stream) and `surfaceOp:"append"`."

    LOOP-11: "``content`` is the message after the ``agent/step-result``
    waterfall ... If ``agent/step-result`` throws, an ``assistant/message`` with
    ``content: []`` and no replayState is recorded, and the turn then fails."
    QF-3: the checkpoint after step-result sits inside the same try block, so an
    interruption observed there is caught the same way: ``assistant/message``
    with ``content: []`` (usage kept), then the turn ends aborted / disposed
    (LOOP-15)."""
    if reply.step_result_error is not None:
        record_assistant(t, header, reply, (), chunk_seqs)
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", reply.step_result_error)))
    t.signal(Window.AFTER_STEP_RESULT)
    if t.aborted is not None:
        record_assistant(t, header, reply, (), chunk_seqs)
        raise Interrupted(t.aborted)
    record_assistant(t, header, reply, reply_content(reply), chunk_seqs)


def record_assistant(t: Turn, header: EpochHeader, reply: Reply, content: tuple[Json, ...],
                     chunk_seqs: Sequence[Json]) -> None:
    """LOOP-11: "A successful stream MUST append ``assistant/message {turn, step,
    content, provenance:{provider, model, replayState?}, usage?}`` with
    ``sourceEventSeqs: <all chunk seqs of this step>`` (explicitly ``[]`` for an
    empty stream) and ``surfaceOp:"append"``."  ``provenance`` comes from the
    header config; ``usage`` is the last ``usage`` chunk."""
    provenance = message_provenance(header.config)
    usage: Json | Absent = ABSENT if reply.usage is None or reply.kind is ReplyKind.EMPTY else usage_json(reply.usage)
    t.append(Draft(type_name="assistant/message",
                   data=obj(("turn", t.number), ("step", t.step), ("content", content),
                            ("provenance", provenance), ("usage", usage)),
                   source_event_seqs=tuple(chunk_seqs), surface_op=APPEND))


@implements("LOOP-12")
def run_tools(t: Turn, reply: Reply) -> None:
    """LOOP-12: "For each ``tool-call`` block in the content, the loop MUST append
    ``tool/call {turn, step, callId, name, arguments}``, then ``tool/result
    {turn, step, callId, content, isError, error?, meta?}`` with
    ``sourceEventSeqs:[callSeq]`` and ``surfaceOp:"append"``.  Results keep model
    order; context that tools defer is appended after **all** results of the
    batch."  A tool may change the system prompt or the tools for the next step."""
    for call in reply.executed_calls:
        call_seq = t.append(Draft(type_name="tool/call",
                                  data=obj(("turn", t.number), ("step", t.step), ("callId", call.call_id),
                                           ("name", call.name), ("arguments", call.arguments))))
        t.append(Draft(type_name="tool/result",
                       data=obj(("turn", t.number), ("step", t.step), ("callId", call.call_id),
                                ("content", text_content(call.result)), ("isError", call.is_error)),
                       source_event_seqs=(call_seq,), surface_op=APPEND))
    for call in reply.executed_calls:
        for context in call.deferred:
            t.append(Draft(type_name="user/message", data=context, surface_op=APPEND))
    if reply.system_after is not None:
        t.agent = replace(t.agent, system=reply.system_after)
    if reply.tools_after is not None:
        t.agent = replace(t.agent, tools=reply.tools_after)
