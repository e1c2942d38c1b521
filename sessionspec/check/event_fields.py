"""Reading the fields the writers' audits share, in either dialect's shape.

A55 keeps a message's content and provenance at ``data``; D08 (after the
migrations, DIA-13) under ``data.message`` with ``source``.  Each reader
returns ``ABSENT`` for a missing field; the audits report shapes elsewhere.
"""

from __future__ import annotations

from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, js_stringify
from sessionspec.model.log import Dialect, Event

ToolBlock = tuple[Json | Absent, Json | Absent, Json | Absent]


def show(v: Json | Absent) -> str:
    """A short JSON rendering for a finding's reason."""
    return js_stringify(None if v is ABSENT else v)[:40]


def message_content(event: Event, dialect: Dialect) -> Json | Absent:
    data = event.data
    return get(data, "content") if dialect is A55 else get(get(data, "message"), "content")


def message_route(event: Event, dialect: Dialect) -> tuple[Json | Absent, Json | Absent]:
    """``(provider, model)`` of an assistant message (A55 provenance, D08 message source)."""
    source = get(event.data, "provenance") if dialect is A55 else get(get(event.data, "message"), "source")
    return get(source, "provider"), get(source, "model")


def result_call_id(event: Event, dialect: Dialect) -> Json | Absent:
    if dialect is D08:
        return get(get(get(event.data, "message"), "source"), "callId")
    return get(event.data, "callId")


def tool_blocks(content: Json | Absent) -> list[ToolBlock]:
    """``(id, name, arguments)`` of each ``tool-call`` block, in content order."""
    if not isinstance(content, tuple):
        return []
    return [(get(b, "id"), get(b, "name"), get(b, "arguments")) for b in content if get(b, "type") == "tool-call"]
