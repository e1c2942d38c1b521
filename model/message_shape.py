"""Where a logged message keeps its content, its route and the call it answers (DIA-10): the one accessor.

A55 keeps an ``assistant/message``'s content and provenance, and a ``tool/result``'s content and call id, at
``data``.  DIA-10 moves them under ``data.message``: an assistant message's ``content`` and its route in
``source {kind:"model", provider, model}``, a tool result's call id in ``source {kind:"tool", callId}`` and its
content in its one tool-result block (``message.content[0].content``, the path DIA-18 prunes).  A D08
``user/message`` keeps its content at ``data`` (DIA-10), so these readers are for the other two types.

:data:`A55` lists A55's readers; :data:`D08` is A55 with DIA-10's.  Every reader of these fields, in the model
and in ``sessionspec check``, calls them; only :func:`message_shape` selects them by dialect.  A missing field
reads ``ABSENT`` (the shape rules say what is wrong with it, DIA-10's :mod:`sessionspec.model.d08_shapes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, with_values
from sessionspec.model.log import Dialect, Event

Route = tuple[Json | Absent, Json | Absent]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class MessageShape:
    """The readers a dialect modifies (each field names the A55 function), all over an event's ``data``."""

    content: Callable[[Json], Json | Absent]
    route: Callable[[Json], Route]
    call_id: Callable[[Json], Json | Absent]
    result_content: Callable[[Json], Json | Absent]
    with_result_content: Callable[[JsonObject, Json], JsonObject]


def a55_content(data: Json) -> Json | Absent:
    """A message's content: ``data.content``."""
    return get(data, "content")


def d08_content(data: Json) -> Json | Absent:
    """DIA-10: ``data.message.content``."""
    return get(get(data, "message"), "content")


def a55_route(data: Json) -> Route:
    """An assistant message's ``(provider, model)``: its ``data.provenance`` (LOOP-11)."""
    provenance = get(data, "provenance")
    return get(provenance, "provider"), get(provenance, "model")


def d08_route(data: Json) -> Route:
    """DIA-10: the message's ``source {kind:"model", provider, model}``."""
    source = get(get(data, "message"), "source")
    return get(source, "provider"), get(source, "model")


def a55_call_id(data: Json) -> Json | Absent:
    """The call a tool result answers: ``data.callId``."""
    return get(data, "callId")


def d08_call_id(data: Json) -> Json | Absent:
    """DIA-10: the result message's ``source {kind:"tool", callId}``."""
    return get(get(get(data, "message"), "source"), "callId")


def d08_result_content(data: Json) -> Json | Absent:
    """DIA-10, DIA-18: the content of the result message's first (its one) tool-result block."""
    blocks = d08_content(data)
    return get(blocks[0], "content") if isinstance(blocks, tuple) and blocks else ABSENT


def a55_with_result_content(data: JsonObject, content: Json) -> JsonObject:
    """``data`` (same keys, same order) with only the result's content swapped (PRN-4)."""
    return with_values(data, content=content)


def d08_with_result_content(data: JsonObject, content: Json) -> JsonObject:
    """DIA-18: the swap at ``message.content[0].content``, every other key and block kept in place.  ``data`` is a
    D08 tool result's, whose first block :func:`d08_result_content` read."""
    message = data["message"]
    assert isinstance(message, JsonObject)
    blocks = message["content"]
    assert isinstance(blocks, tuple) and isinstance(blocks[0], JsonObject)
    first = with_values(blocks[0], content=content)
    return with_values(data, message=with_values(message, content=(first, *blocks[1:])))


A55: Final = MessageShape(content=a55_content, route=a55_route, call_id=a55_call_id, result_content=a55_content,
                          with_result_content=a55_with_result_content)

D08: Final = replace(A55, content=d08_content, route=d08_route, call_id=d08_call_id, result_content=d08_result_content,
                     with_result_content=d08_with_result_content)


def message_shape(dialect: Dialect) -> MessageShape:
    """The dialect's message readers: A55's, or D08's overlay (DIA-10)."""
    match dialect:
        case Dialect.A55:
            return A55
        case Dialect.D08:
            return D08


def message_content(event: Event, dialect: Dialect) -> Json | Absent:
    """The content of an ``assistant/message`` (or a result's blocks) in a ``dialect`` log (DIA-10)."""
    return message_shape(dialect).content(event.data)


def result_call_id(result: Event, dialect: Dialect) -> Json:
    """The call a ``tool/result`` answers (DIA-10); a missing id reads as ``null``, as
    :func:`sessionspec.model.provenance.take_call` keys a call without one."""
    value = message_shape(dialect).call_id(result.data)
    return None if value is ABSENT else value
