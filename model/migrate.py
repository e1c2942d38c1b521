"""Dialect detection (FMT-10) and the D08 reader's legacy migrations (DIA-13, DIA-14, LEG-9).

The A55 model never migrates (LEG-9).  A D08 reader loads A55-shaped events by
rewriting them into D08 shapes before folding; the checker in D08 mode applies
the same rewrite.  Both functions are pure and total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Json, JsonObject, get, with_values
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rules import decides, implements

D08_ONLY_TYPES: Final = frozenset({"session/end-seed", "agent/inbox/spliced", "request/context"})
A55_ONLY_TYPES: Final = frozenset({"steering/message"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DialectEvidence:
    """The first seq showing each dialect's markers (FMT-10), None if none does."""

    a55_seq: int | None
    a55_reason: str
    d08_seq: int | None
    d08_reason: str

    @property
    def mixed(self) -> bool:
        return self.a55_seq is not None and self.d08_seq is not None


NO_EVIDENCE: Final = DialectEvidence(a55_seq=None, a55_reason="", d08_seq=None, d08_reason="")


def _d08_marker(event: Event) -> str | None:
    data = event.data
    if event.type.startswith("compaction/"):
        return f"{event.type} event"
    if event.type in D08_ONLY_TYPES:
        return f"{event.type} event"
    if event.type in ("assistant/message", "tool/result") and isinstance(get(data, "message"), JsonObject):
        return f"message-shaped {event.type}"
    if event.type == "user/message" and get(data, "role") == "user" and get(data, "id") is not ABSENT:
        return "user/message with role and id"
    if event.type == "request/header" and get(get(data, "header"), "adapterDefaults") is not ABSENT:
        return "request/header with adapterDefaults"
    return None


def _a55_marker(event: Event) -> str | None:
    data = event.data
    if event.type.startswith("compact/"):
        return f"{event.type} event"
    if event.type in A55_ONLY_TYPES:
        return f"{event.type} event"
    if event.type == "assistant/message" and get(data, "provenance") is not ABSENT:
        return "provenance-shaped assistant/message"
    if event.type == "request/header":
        prefix = get(get(data, "header"), "messagePrefix")
        # A placeholder prefix ("{{messagePrefix}}" entries) is real content
        # only in A55 files: D08 has no prefix at all (DIA-8).
        if isinstance(prefix, tuple) and prefix:
            return "request/header with messagePrefix"
    return None


@decides("DIA-1", "FMT-10")
@implements("FMT-10")
def dialect_evidence(events: Sequence[Event], session_header: JsonObject | None = None) -> DialectEvidence:
    """FMT-10: "Dialect detection (MAY): `compaction/*`, `session/end-seed`, `agent/inbox/spliced`,
    `message`-shaped data, or `adapterDefaults` ⇒ D08; `compact/*`, `steering/message`, `messagePrefix` with
    real content, `provenance`-shaped assistant data ⇒ A55; mixed ⇒ report."
    """
    evidence = NO_EVIDENCE
    if session_header is not None and "origin" in session_header:
        # DIA-21: only D08 session headers carry ``origin`` (seq -1: the header line).
        evidence = DialectEvidence(a55_seq=None, a55_reason="", d08_seq=-1, d08_reason="session header with origin")
    for event in events:
        evidence = with_markers(evidence, event)
        if evidence.mixed:
            break
    return evidence


def with_markers(evidence: DialectEvidence, event: Event) -> DialectEvidence:
    """:func:`dialect_evidence` one event at a time (a reader that streams the log): the evidence
    of the events before, and this event's markers where a dialect has none yet."""
    d08 = _d08_marker(event) if evidence.d08_seq is None else None
    a55 = _a55_marker(event) if evidence.a55_seq is None else None
    if d08 is None and a55 is None:
        return evidence
    return DialectEvidence(
        a55_seq=evidence.a55_seq if a55 is None else event.seq,
        a55_reason=evidence.a55_reason if a55 is None else a55,
        d08_seq=evidence.d08_seq if d08 is None else event.seq,
        d08_reason=evidence.d08_reason if d08 is None else d08,
    )


def detect_dialect(events: Sequence[Event], session_header: JsonObject | None = None) -> Dialect | None:
    """FMT-10: the dialect the markers show (DIA-1's names, DIA-10's shapes); A55 (the primary target,
    §0.2) when there is no marker at all; None when the markers are mixed."""
    evidence = dialect_evidence(events, session_header)
    if evidence.mixed:
        return None
    return Dialect.D08 if evidence.d08_seq is not None else Dialect.A55


def legacy_message_id(session_id: str, seq: int) -> str:
    """DIA-13: the id a migrated legacy message gets."""
    return f"legacy-message:{session_id}:{seq}"


def _without(o: JsonObject, keys: frozenset[str]) -> list[tuple[str, Json]]:
    return [(k, v) for k, v in o.items() if k not in keys]


def _migrate_user(data: JsonObject, message_id: str) -> JsonObject:
    """``{content, source, ...}`` gains ``role:"user"`` and ``id`` (in the D08
    order ``content, source, role, id``); other keys (envelope, meta) follow."""
    pairs: list[tuple[str, Json]] = [(k, data[k]) for k in ("content", "source") if k in data]
    pairs += [("role", "user"), ("id", message_id)]
    pairs += _without(data, frozenset({"content", "source", "role", "id", "turn"}))
    return JsonObject(pairs)


def _migrate_assistant(data: JsonObject, message_id: str) -> JsonObject:
    """``{turn, step, content, provenance, usage?}`` -> ``{turn, step,
    message:{id, role:"assistant", content, source}, usage?}``; source is the
    provenance fields followed by ``kind:"model"``."""
    provenance = get(data, "provenance")
    source_pairs = list(provenance.items()) if isinstance(provenance, JsonObject) else []
    source = JsonObject([(k, v) for k, v in source_pairs if k != "kind"] + [("kind", "model")])
    message = JsonObject((("id", message_id), ("role", "assistant"), ("content", data.get("content", ())), ("source", source)))
    pairs: list[tuple[str, Json]] = [(k, data[k]) for k in ("turn", "step") if k in data]
    pairs.append(("message", message))
    pairs += _without(data, frozenset({"turn", "step", "content", "provenance", "message"}))
    return JsonObject(pairs)


def _migrate_tool_result(data: JsonObject, message_id: str) -> JsonObject:
    """``{turn, step, callId, content, isError, error?, meta?}`` ->
    ``{turn, step, message:{id, role:"user", content:[tool-result], source:{kind:"tool", callId}}, error?, meta?}``."""
    call_id = data.get("callId")
    block = JsonObject(
        (("type", "tool-result"), ("toolCallId", call_id), ("content", data.get("content")), ("isError", data.get("isError")))
    )
    source = JsonObject((("kind", "tool"), ("callId", call_id)))
    message = JsonObject((("id", message_id), ("role", "user"), ("content", (block,)), ("source", source)))
    pairs: list[tuple[str, Json]] = [(k, data[k]) for k in ("turn", "step") if k in data]
    pairs.append(("message", message))
    pairs += _without(data, frozenset({"turn", "step", "callId", "content", "isError", "message"}))
    return JsonObject(pairs)


@implements("DIA-14")
def migrate_turn_end_reason(reason: Json) -> Json:
    """DIA-14: "`turn/end` aborted MUST be `{kind:"aborted", reason:{kind:"user"|"parent"|"hook"|"disposed"}}`;
    disposal is aborted with reason `disposed`; coarse legacy records read as `reason:{kind:"legacy"}`."

    DIA-14: a coarse ``{kind:"aborted"}`` reads as ``reason:{kind:"legacy"}``;
    A55 ``{kind:"disposed"}`` is an abort with reason ``disposed``."""
    if not isinstance(reason, JsonObject):
        return reason
    kind = get(reason, "kind")
    if kind == "aborted" and "reason" not in reason:
        return JsonObject((("kind", "aborted"), ("reason", JsonObject((("kind", "legacy"),)))))
    if kind == "disposed" and len(reason) == 1:
        return JsonObject((("kind", "aborted"), ("reason", JsonObject((("kind", "disposed"),)))))
    return reason


def _replaced_id(event: Event, ids: dict[int, str]) -> str | None:
    """A replace inherits the id of the node it replaces (its range start)."""
    op = event.surface_op
    start = get(op, "start") if isinstance(op, JsonObject) and get(op, "op") == "replace" else ABSENT
    return ids.get(start) if isinstance(start, int) and not isinstance(start, bool) else None


@implements("DIA-13", "LEG-9")
def migrate_legacy(events: Sequence[Event], session_id: str) -> tuple[Event, ...]:
    """DIA-13: "The D08 reader MUST migrate A55 shapes on load: `user/message {content, source}` gains
    `id:"legacy-message:<sessionId>:<seq>"`, `role:"user"`; `assistant/message {content, provenance, …}` →
    `message:{id, role:"assistant", content, source}` where `source` is the provenance fields followed by
    `kind:"model"`; `tool/result {callId, content, isError, …}` → `message:{id, role:"user",
    content:[{type:"tool-result", toolCallId, content, isError}], source:{kind:"tool", callId}}` (a replace
    inherits the replaced node's id); `turn/start {turn, trigger}` → `{turn}`; `steering/message` →
    `user/message`."
    LEG-9: "In A55 the native shapes are: prompt `{content, source, …}`, assistant `{turn, step, content,
    provenance, usage?}`, tool result `{turn, step, callId, content, isError, …}`, `turn/start` with
    `trigger`, coarse `aborted`, `disposed`."

    ``turn/end`` reasons follow DIA-14.  Events already in D08 shape pass unchanged.  The result
    is the A55 -> D08 view only; the A55 model never calls this (LEG-9).
    """
    ids: dict[int, str] = {}
    return tuple(migrate_event(event, session_id, ids) for event in events)


def migrate_event(event: Event, session_id: str, ids: dict[int, str]) -> Event:
    """:func:`migrate_legacy` one event at a time (a reader that streams the log): ``ids`` is the fold's
    state, the message id of each earlier node by seq (a replace inherits the id of the node it
    replaces), updated with this event's."""
    data = event.data
    migrated: Json = data
    type_name = event.type
    if isinstance(data, JsonObject):
        fresh = _replaced_id(event, ids) or legacy_message_id(session_id, event.seq)
        match event.type:
            case "user/message" | "steering/message" if "role" not in data and "content" in data:
                migrated, type_name = _migrate_user(data, fresh), "user/message"
            case "assistant/message" if "message" not in data and "content" in data and "provenance" in data:
                migrated = _migrate_assistant(data, fresh)
            case "tool/result" if "message" not in data and "callId" in data:
                migrated = _migrate_tool_result(data, fresh)
            case "turn/start" if "trigger" in data:
                migrated = JsonObject((k, v) for k, v in data.items() if k != "trigger")
            case "turn/end" if "reason" in data:
                reason = migrate_turn_end_reason(data["reason"])
                migrated = with_values(data, reason=reason)
            case _:
                pass
        message = get(migrated, "message")
        own_id = get(message, "id") if isinstance(message, JsonObject) else get(migrated, "id")
        if isinstance(own_id, str) and type_name in ("user/message", "assistant/message", "tool/result"):
            ids[event.seq] = own_id
    if migrated is data and type_name == event.type:
        return event
    return make_event(
        type_name,
        seq=event.seq,
        time=event.time,
        data=migrated,
        source_event_seqs=event.source_event_seqs,
        surface_op=event.surface_op,
        op_first=event.op_first,
    )


def as_read(events: Sequence[Event], dialect: Dialect, session_id: str) -> Sequence[Event]:
    """The events as ``dialect``'s reader gives them: A55's as logged; the D08 reader migrates the legacy shapes on
    load (DIA-13, :func:`migrate_legacy`)."""
    match dialect:
        case Dialect.A55:
            return events
        case Dialect.D08:
            return migrate_legacy(events, session_id)
