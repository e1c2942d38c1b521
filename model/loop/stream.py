"""The mock provider's stream: the chunks, usage, failure and content of a
scripted :class:`~model.loop.script.Reply`, in the shapes the real adapter
streams (``block-start`` / deltas / ``block-end``, ``usage``, ``finish``)."""

from __future__ import annotations

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.loop.script import Reply, ReplyKind, obj


def reply_chunks(reply: Reply) -> tuple[JsonObject, ...]:
    """The streamed chunks of a reply, in the mock adapter's shape."""
    chunks: list[JsonObject] = []
    index = 0
    if reply.kind is ReplyKind.ERROR_IN_BAND:
        failure = failure_of(reply)
        return (obj(("type", "finish"), ("reason", obj(("kind", "error"), ("failure", failure)))),)
    if reply.kind is ReplyKind.EMPTY:
        return (obj(("type", "finish"), ("reason", obj(("kind", "stop")))),)
    if reply.reasoning is not None:
        chunks.append(obj(("type", "block-start"), ("index", index), ("blockType", "reasoning")))
        chunks.append(obj(("type", "reasoning-delta"), ("index", index), ("text", reply.reasoning)))
        block = obj(("type", "reasoning"), ("text", reply.reasoning))
        chunks.append(obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    if reply.text:
        chunks.append(obj(("type", "block-start"), ("index", index), ("blockType", "text")))
        for piece in reply.text_chunks if reply.text_chunks is not None else tuple(reply.text):
            chunks.append(obj(("type", "text-delta"), ("index", index), ("text", piece)))
        block = obj(("type", "text"), ("text", reply.text))
        chunks.append(obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    for call in reply.tool_calls:
        chunks.append(obj(("type", "block-start"), ("index", index), ("blockType", "tool-call")))
        pieces = call.arguments_chunks if call.arguments_chunks is not None else (call.arguments,)
        for n, piece in enumerate(pieces):
            # Only the first delta names the tool.
            name: Json | Absent = call.name if n == 0 else ABSENT
            chunks.append(obj(("type", "tool-call-delta"), ("index", index), ("id", call.call_id), ("name", name),
                               ("argumentsDelta", piece)))
        block = obj(("type", "tool-call"), ("id", call.call_id), ("name", call.name), ("arguments", call.arguments))
        chunks.append(obj(("type", "block-end"), ("index", index), ("block", block)))
        index += 1
    if reply.usage is not None:
        chunks.append(obj(("type", "usage"), ("usage", usage_json(reply.usage))))
    finish = "max-tokens" if reply.max_tokens else "tool-calls" if reply.tool_calls else "stop"
    chunks.append(obj(("type", "finish"), ("reason", obj(("kind", finish)))))
    return tuple(chunks)


def usage_json(usage: tuple[int, int]) -> JsonObject:
    return obj(("inputTokens", usage[0]), ("outputTokens", usage[1]))


def failure_of(reply: Reply) -> JsonObject:
    status: Json | Absent = ABSENT if reply.error_status is None else reply.error_status
    return obj(("message", reply.error_message), ("code", reply.error_code), ("status", status))


def reply_content(reply: Reply) -> tuple[Json, ...]:
    blocks: list[Json] = []
    if reply.kind is ReplyKind.EMPTY:
        return ()
    if reply.reasoning is not None:
        blocks.append(obj(("type", "reasoning"), ("text", reply.reasoning)))
    if reply.text:
        blocks.append(obj(("type", "text"), ("text", reply.text)))
    for call in reply.executed_calls:
        blocks.append(obj(("type", "tool-call"), ("id", call.call_id), ("name", call.name), ("arguments", call.arguments)))
    return tuple(blocks)
