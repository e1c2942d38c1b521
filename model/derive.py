"""Derivation (DER): the messages projected from the surface.

A message is a :class:`~model.jsonval.JsonObject` with key order
``role, content, provenance?`` (DER-2), so that ``JSONEQ`` against a real
request is exact.  The session prefix is never part of a derivation (PFX-9): it
lives only on the request header.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface


def _bad(event: Event, what: str) -> Rejected:
    return Rejected(rule="DER-1", seq=event.seq, reason=f"{event.type} {what}")


@implements("DER-2")
def message_of(role: str, content: Json, provenance: Json | Absent = ABSENT) -> JsonObject:
    """DER-2: "Projected messages MUST use the key order `role, content, provenance?`, and a tool-result block
    MUST use `type, toolCallId, content, isError`."

    Nested values are the logged values unchanged, with their logged key order."""
    if provenance is ABSENT:
        return JsonObject((("role", role), ("content", content)))
    return JsonObject((("role", role), ("content", content), ("provenance", provenance)))


@implements("DER-1")
def project(event: Event, dialect: Dialect = Dialect.A55) -> JsonObject | None | Rejected:
    """DER-1: "Each surface node MUST project as follows (A55): ``user/message`` and
    ``steering/message`` → ``{role:"user", content: data.content}``; ``assistant/message`` →
    ``{role:"assistant", content: data.content, provenance: data.provenance}`` if ``content`` is
    non-empty, else **no message**; ``tool/result`` → ``{role:"user", content:[{type:"tool-result",
    toolCallId: data.callId, content: data.content, isError: data.isError}]}``; any other type → no
    message."  D08 (DIA-10): user → ``data``; assistant → ``data.message`` unless empty;
    tool/result → ``data.message``.

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
    match event.type:
        case "user/message" | "steering/message":
            return project_prompt(event, data)
        case "assistant/message":
            return project_assistant(event, data)
        case "tool/result":
            return project_tool_result(event, data)
        case _:
            return None


@implements("DER-3", "DER-8")
def project_prompt(event: Event, data: JsonObject) -> JsonObject | Rejected:
    """DER-3: "Derivation MUST NOT project any of these fields: `source`, `meta`, `envelope`, steering `turn`,
    tool `error` and `meta`, assistant `usage`, `turn`, `step`."
    DER-8: "`envelope.displayContent` is for display only, (a display shows `displayContent` when present,
    else `content`)."  It MUST NOT enter the derivation.

    A prompt projects its ``content`` alone."""
    content = get(data, "content")
    if content is ABSENT:
        return _bad(event, "has no content")
    return message_of("user", content)


@implements("DER-5")
def project_assistant(event: Event, data: JsonObject) -> JsonObject | None | Rejected:
    """DER-5: "An `assistant/message` with empty `content` MUST stay a surface node, MUST produce no message,
    and is priced at 0 by MTR-7."

    Otherwise its content and provenance, never ``usage``, ``turn`` or ``step`` (DER-3)."""
    content = get(data, "content")
    if content is ABSENT:
        return _bad(event, "has no content")
    if isinstance(content, tuple) and not content:
        return None
    return message_of("assistant", content, get(data, "provenance"))


@implements("DER-6")
def project_tool_result(event: Event, data: JsonObject) -> JsonObject | Rejected:
    """DER-6: "Every ``tool/result`` node MUST become its own user message."  Its one block keeps
    DER-2's key order ``type, toolCallId, content, isError``, ``isError`` always present; the
    result's ``error`` and ``meta`` are not projected (DER-3)."""
    content, call_id, is_error = get(data, "content"), get(data, "callId"), get(data, "isError")
    if content is ABSENT or call_id is ABSENT or is_error is ABSENT:
        return _bad(event, "lacks callId, content or isError")
    block = JsonObject((("type", "tool-result"), ("toolCallId", call_id), ("content", content), ("isError", is_error)))
    return message_of("user", (block,))


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
    """DER-4: "`derive(log)` MUST be the projections of the nodes, in surface order, with the no-message nodes
    dropped."

    DER-4: the projections of ``nodes`` in surface order, no-message nodes dropped.
    PFX-9: "The prefix MUST NOT be session history."

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
