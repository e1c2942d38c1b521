"""Derivation (DER): the messages projected from the surface.

A message is a :class:`~model.jsonval.JsonObject` with key order
``role, content, provenance?`` (DER-2), so that ``JSONEQ`` against a real
request is exact.  The session prefix is never part of a derivation (PFX-9): it
lives only on the request header.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.jsonval import ABSENT, Json, JsonObject, get
from model.log import Dialect, Event
from model.rejected import Rejected
from model.rules import implements
from model.surface import fold_surface


def _bad(event: Event, what: str) -> Rejected:
    return Rejected(rule="DER-1", seq=event.seq, reason=f"{event.type} {what}")


@implements("DER-1", "DER-2", "DER-3", "DER-5", "DER-6", "DER-8")
def project(event: Event, dialect: Dialect = Dialect.A55) -> JsonObject | None | Rejected:
    """DER-1: the message of one surface node, or None (no message).

    A55: user/steering -> ``{role:"user", content}``; assistant ->
    ``{role:"assistant", content, provenance}`` unless content is empty (DER-5);
    tool/result -> a user message with one ``tool-result`` block whose keys are
    ``type, toolCallId, content, isError`` (DER-2, DER-6).  Nothing else of
    ``data`` is projected (DER-3; ``envelope`` is display-only, DER-8).
    D08 (DIA-10): user -> ``data``; assistant -> ``data.message`` unless empty;
    tool/result -> ``data.message``.

    post: dialect is not Dialect.A55 or not isinstance(__return__, JsonObject) or list(__return__.keys())[:2] == ["role", "content"]
    post: dialect is not Dialect.A55 or not isinstance(__return__, JsonObject) or set(__return__.keys()) <= {"role", "content", "provenance"}
    post: event.type != "tool/result" or __return__ is not None
    """
    data = event.data
    if not isinstance(data, JsonObject):
        return _bad(event, "data is not an object")
    match dialect:
        case Dialect.A55:
            return _project_a55(event, data)
        case Dialect.D08:
            return _project_d08(event, data)


def _project_a55(event: Event, data: JsonObject) -> JsonObject | None | Rejected:
    content = get(data, "content")
    match event.type:
        case "user/message" | "steering/message":
            if content is ABSENT:
                return _bad(event, "has no content")
            return JsonObject((("role", "user"), ("content", content)))
        case "assistant/message":
            if content is ABSENT:
                return _bad(event, "has no content")
            if isinstance(content, tuple) and not content:
                return None
            provenance = get(data, "provenance")
            if provenance is ABSENT:
                return JsonObject((("role", "assistant"), ("content", content)))
            return JsonObject((("role", "assistant"), ("content", content), ("provenance", provenance)))
        case "tool/result":
            call_id, is_error = get(data, "callId"), get(data, "isError")
            if content is ABSENT or call_id is ABSENT or is_error is ABSENT:
                return _bad(event, "lacks callId, content or isError")
            block = JsonObject(
                (("type", "tool-result"), ("toolCallId", call_id), ("content", content), ("isError", is_error))
            )
            return JsonObject((("role", "user"), ("content", (block,))))
        case _:
            return None


def _project_d08(event: Event, data: JsonObject) -> JsonObject | None | Rejected:
    match event.type:
        case "user/message":
            return data
        case "assistant/message" | "tool/result":
            message = get(data, "message")
            if not isinstance(message, JsonObject):
                return _bad(event, "has no message object")
            content = get(message, "content")
            if event.type == "assistant/message" and isinstance(content, tuple) and not content:
                return None
            return message
        case _:
            return None


@implements("DER-4", "PFX-9")
def derive_nodes(
    nodes: Sequence[int], events: Sequence[Event], dialect: Dialect = Dialect.A55
) -> tuple[JsonObject, ...] | Rejected:
    """DER-4: the projections of ``nodes`` in surface order, no-message nodes dropped.

    pre: all(0 <= seq < len(events) for seq in nodes)
    post: isinstance(__return__, Rejected) or len(__return__) <= len(nodes)
    """
    messages: list[JsonObject] = []
    for seq in nodes:
        message = project(events[seq], dialect)
        if isinstance(message, Rejected):
            return message
        if message is not None:
            messages.append(message)
    return tuple(messages)


def derive(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> tuple[JsonObject, ...] | Rejected:
    """``derive(log)``: a pure function of the log, from scratch (the definition)."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return fold
    return derive_nodes(fold.state.nodes, events, dialect)


def message_of(role: str, content: Json) -> JsonObject:
    """A plain ``{role, content}`` message (key order of DER-2)."""
    return JsonObject((("role", role), ("content", content)))
