"""The data shapes of the events the loop writes, decided event by event: the core vocabulary's ``data`` keys and
their types (LOG-9), prompt data (LOG-12), and the walk that hands each event to its shape's definition.

Each writer of the harness builds an event's ``data`` as an object literal, so its keys come in the table's
order and its fields have the table's types.  The loader does not check these (LOG-8 validates envelopes, LLM
shape and the ``aborted`` form only): a log breaking them loads, but no writer could have written it.  D08 is an
overlay (:class:`EventShapes`): its reader reshapes the messages and ``turn/start`` (DIA-10, DIA-13), so only
the types it did not reshape keep the A55 table, and its ``turn/end`` reasons are DIA-14's.

``sessionspec check`` runs :func:`check_core_shape` and :func:`check_type_shape` over a log's live events (``sessionspec/check/
shape_audit.py``); ``tests/model/test_event_shape.py`` holds these definitions against the loop simulator's
logs, both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.header_log import check_canonical_header, check_header_data
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.log_only_shape import COMPACTION_TYPES, PLUGIN_TYPES, check_compaction_shape, check_plugin_shape
from sessionspec.model.record_keys import Keys, key_flaw, valid_orders
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements
from sessionspec.model.turn_end_reason import check_turn_end_reason

TURN_STEP: Final[Keys] = (("turn", True), ("step", True))
# LOG-9's table: each core A55 type's data keys in the logged order (key, required?).
A55_DATA_KEYS: Final[dict[str, Keys]] = {
    "turn/start": (("turn", True), ("trigger", True)),
    "turn/end": (("turn", True), ("reason", True)),
    "step/start": TURN_STEP,
    "step/end": TURN_STEP,
    "prompt/blocked": (("content", True), ("source", True), ("reason", True)),
    "assistant/chunk": (("turn", True), ("step", True), ("chunk", True)),
    "assistant/message": (("turn", True), ("step", True), ("content", True), ("provenance", True), ("usage", False)),
    "tool/call": (("turn", True), ("step", True), ("callId", True), ("name", True), ("arguments", True)),
    "tool/result": (("turn", True), ("step", True), ("callId", True), ("content", True), ("isError", True), ("error", False), ("meta", False)),
    "todo/write": (("todos", True),),
}
# D08 keeps these shapes (DIA-10 and DIA-13 reshape the messages and turn/start).
D08_DATA_KEYS: Final[dict[str, Keys]] = {
    name: A55_DATA_KEYS[name] for name in ("turn/end", "step/start", "step/end", "assistant/chunk", "tool/call", "todo/write")
}
# Every key order each type's table allows, asked before key_flaw (which tells why an order is not one of them).
DATA_ORDERS: Final = {name: valid_orders(keys) for name, keys in A55_DATA_KEYS.items()}

# LOG-9's chunk kinds and their keys.
CHUNK_KEYS: Final[dict[str, Keys]] = {
    "block-start": (("type", True), ("index", True), ("blockType", True)),
    "text-delta": (("type", True), ("index", True), ("text", True)),
    "reasoning-delta": (("type", True), ("index", True), ("text", True)),
    "tool-call-delta": (("type", True), ("index", True), ("id", True), ("name", False), ("argumentsDelta", True)),
    "block-end": (("type", True), ("index", True), ("block", True)),
    "usage": (("type", True), ("usage", True)),
    "finish": (("type", True), ("reason", True), ("replayState", False)),
}

TRIGGER_KINDS: Final = frozenset({"message", "injection"})
TODO_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
ERROR_KEYS: Final[Keys] = (("name", True), ("code", True))
PROVENANCE_KEYS: Final[Keys] = (("provider", True), ("model", True), ("replayState", False))
TODO_KEYS: Final[Keys] = (("content", True), ("status", True))
TRIGGER_KEYS: Final[Keys] = (("kind", True), ("source", True))
PROMPT_KEYS: Final[Keys] = (("content", True), ("source", True), ("envelope", False), ("meta", False))
ENVELOPE_KEYS: Final[Keys] = (("displayContent", True), ("prefixContexts", True))
PREFIX_CONTEXT_KEYS: Final[Keys] = (("source", True), ("meta", False))


def _is_int(v: Json | Absent) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str(v: Json | Absent) -> bool:
    return isinstance(v, str)


def _is_list(v: Json | Absent) -> bool:
    return isinstance(v, tuple)


def _is_object(v: Json | Absent) -> bool:
    return isinstance(v, JsonObject)


def _is_list_of_objects(v: Json | Absent) -> bool:
    return isinstance(v, tuple) and all(isinstance(b, JsonObject) for b in v)


NO_FIELDS: Final = JsonObject()
# A field's LOG-9 type: its key, the test its value passes, what it is said not to be.
Field = tuple[str, Callable[[Json | Absent], bool], str]
TURN: Final[Field] = ("turn", _is_int, "an integer")
TURN_STEP_INTS: Final[tuple[Field, ...]] = (TURN, ("step", _is_int, "an integer"))
# The typed fields of each core A55 type but turn/start and todo/write, in the order their flaws are told.
FIELD_TYPES: Final[dict[str, tuple[Field, ...]]] = {
    "turn/end": (TURN,),
    "step/start": TURN_STEP_INTS,
    "step/end": TURN_STEP_INTS,
    "assistant/chunk": TURN_STEP_INTS,
    "prompt/blocked": (("content", _is_list, "a list"), ("source", _is_object, "an object"), ("reason", _is_str, "a string")),
    "tool/call": (*TURN_STEP_INTS, ("callId", _is_str, "a string"), ("name", _is_str, "a string"), ("arguments", _is_str, "a string")),
    "tool/result": (
        *TURN_STEP_INTS, ("callId", _is_str, "a string"), ("content", _is_list, "a list"),
        ("isError", lambda v: isinstance(v, bool), "a boolean"),
        ("error", lambda v: v is ABSENT or key_flaw(v, ERROR_KEYS) is None, "{name, code}"),
    ),
    "assistant/message": (
        # A block that is not an object is no ContentBlock (the file load's repair walk reads block.type and
        # throws on it, QF-13).
        *TURN_STEP_INTS, ("content", _is_list_of_objects, "a list of objects"),
        ("provenance", lambda v: key_flaw(v, PROVENANCE_KEYS) is None, "{provider, model, replayState?}"),
        ("usage", lambda v: v is ABSENT or _is_object(v), "an object"),
    ),
}


def field_type_flaws(event: Event) -> list[str]:
    """LOG-9's field types of a core A55 type: ``trigger = {kind:"message"|"injection", source}``, ``todos: [{content,
    status: pending|in_progress|completed}]``, and each typed field of :data:`FIELD_TYPES`, in the table's order."""
    data = event.data
    match event.type:
        case "turn/start":
            trigger = get(data, "trigger")
            if key_flaw(trigger, TRIGGER_KEYS) is not None or get(trigger, "kind") not in TRIGGER_KINDS or not _is_object(get(trigger, "source")):
                return [f"trigger {js_stringify(trigger if trigger is not ABSENT else None)[:60]} is not {{kind: message|injection, source}}"]
            return [] if _is_int(get(data, "turn")) else ["turn is not an integer"]
        case "todo/write":
            todos = get(data, "todos")
            ok = isinstance(todos, tuple) and all(key_flaw(t, TODO_KEYS) is None and get(t, "status") in TODO_STATUSES for t in todos)
            return [] if ok else ["todos is not a list of {content, status: pending|in_progress|completed}"]
        case kind:
            # Every field is absent from a data that is no object.
            values = data if isinstance(data, JsonObject) else NO_FIELDS
            return [f"{key} is not {what}" for key, ok_type, what in FIELD_TYPES.get(kind, ()) if not ok_type(values.get(key, ABSENT))]


def chunk_flaw(event: Event) -> str | None:
    """LOG-9's chunk: one of the kinds of :data:`CHUNK_KEYS`, with its keys in the table's order."""
    chunk = get(event.data, "chunk")
    kind = get(chunk, "type")
    if not isinstance(kind, str) or kind not in CHUNK_KEYS:
        return f"chunk type {js_stringify(kind if kind is not ABSENT else None)} is not one of {', '.join(CHUNK_KEYS)}"
    flaw = key_flaw(chunk, CHUNK_KEYS[kind])
    return None if flaw is None else f"{kind} chunk {flaw}"


@decides("LOG-9")
def check_core_shape(event: Event, dialect: Dialect) -> list[Rejected]:
    """LOG-9's table (its definition, with the quote, is the vocabulary of :func:`sessionspec.model.log.make_event`):
    a core type's ``data`` keys in the logged order (the dialect's table), then its field types and its chunk.
    A type outside the dialect's table is not LOG-9's."""
    kind = event.type
    keys = event_shapes(dialect).data_keys.get(kind)
    if keys is None:
        return []
    flaws = field_type_flaws(event)
    data = event.data
    flaw = None if isinstance(data, JsonObject) and tuple(data) in DATA_ORDERS[kind] else key_flaw(data, keys)
    if flaw is not None:
        flaws.insert(0, f"data {flaw}")
    if kind == "assistant/chunk" and (chunk := chunk_flaw(event)) is not None:
        flaws.append(chunk)
    return [Rejected(rule="LOG-9", seq=event.seq, reason=f"{kind} {why}") for why in flaws]


@decides("LOG-12")
@implements("LOG-12")
def check_prompt_shape(event: Event) -> list[Rejected]:
    """LOG-12: "Prompt data (`user/message`, and `steering/message` without its `turn`) MUST be `{content, source,
    envelope?, meta?}`: `content` is exactly what the model sees; `envelope = {displayContent, prefixContexts:
    [{source, meta?}]}` is display-only data (DER-8); `meta` is durable and never projected."

    ``content`` a list, ``source`` a ``MessageSource`` (an object with a string ``kind``, LOG-9); a steering
    message's data starts with its ``turn``."""
    data = event.data
    if event.type == "steering/message":
        if not isinstance(data, JsonObject) or next(iter(data), None) != "turn":
            return [Rejected(rule="LOG-12", seq=event.seq, reason="steering/message data does not start with its turn")]
        data = JsonObject((k, v) for k, v in data.items() if k != "turn")
    flaws: list[str] = []
    flaw = key_flaw(data, PROMPT_KEYS)
    if flaw is not None:
        flaws.append(f"data {flaw}")
    if not isinstance(get(data, "content"), tuple):
        flaws.append("content is not a list")
    if not isinstance(get(get(data, "source"), "kind"), str):
        flaws.append("source is not an object with a kind")
    envelope = get(data, "envelope")
    if envelope is not ABSENT:
        contexts = get(envelope, "prefixContexts")
        if key_flaw(envelope, ENVELOPE_KEYS) is not None or not (
            isinstance(contexts, tuple) and all(key_flaw(c, PREFIX_CONTEXT_KEYS) is None for c in contexts)
        ):
            flaws.append("envelope is not {displayContent, prefixContexts: [{source, meta?}]}")
    return [Rejected(rule="LOG-12", seq=event.seq, reason=f"{event.type} {why}") for why in flaws]


@decides("LOG-9")
def check_d08_prompt_source(event: Event) -> list[Rejected]:
    """DIA-10 gives a D08 ``user/message`` its identity shape (:func:`sessionspec.model.d08_shapes.
    check_message_identity`); LOG-9's ``MessageSource`` still holds of its ``source``: an object with a string
    ``kind``.  A D08 log has no ``steering/message`` (DIA-11: steering is a ``user/message``)."""
    if event.type == "user/message" and not isinstance(get(get(event.data, "source"), "kind"), str):
        return [Rejected(rule="LOG-9", seq=event.seq, reason="user/message source is not a MessageSource {kind, ...}")]
    return []


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EventShapes:
    """What a dialect changes in the loop's event shapes (:func:`event_shapes`)."""

    dialect: Dialect
    data_keys: Mapping[str, Keys]
    prompt: Callable[[Event], list[Rejected]]


A55_SHAPES: Final = EventShapes(dialect=Dialect.A55, data_keys=A55_DATA_KEYS, prompt=check_prompt_shape)
D08_SHAPES: Final = EventShapes(dialect=Dialect.D08, data_keys=D08_DATA_KEYS, prompt=check_d08_prompt_source)


def event_shapes(dialect: Dialect) -> EventShapes:
    """The one place the loop's event shapes are selected by dialect: DIA-10 and DIA-13 reshape the messages and
    ``turn/start`` (only the other types keep LOG-9's table), and the prompt's data is DIA-10's."""
    match dialect:
        case Dialect.A55:
            return A55_SHAPES
        case Dialect.D08:
            return D08_SHAPES


def check_type_shape(event: Event, dialect: Dialect) -> list[Rejected]:
    """An event held to its type's own shape rule, beside the core table (:func:`check_core_shape`): a ``turn/end``'s
    reason (LOG-11), prompt data (LOG-12), a ``request/header``'s data and canonical header (HDR-7, HDR-2), a plugin
    event's shape (LOG-10, DIA-9) and a compaction event's (CMP-1, DIA-4)."""
    kind = event.type
    match kind:
        case "turn/end":
            end = check_turn_end_reason(event, dialect)
            return [] if end is None else [end]
        case "user/message" | "steering/message":
            return event_shapes(dialect).prompt(event)
        case "request/header":
            data = check_header_data(event)
            return [*([] if data is None else [data]), *check_canonical_header(event, dialect)]
        case _ if kind in PLUGIN_TYPES:
            plugin = check_plugin_shape(event)
            return [] if plugin is None else [plugin]
        case _ if kind in COMPACTION_TYPES:
            shape = check_compaction_shape(event, dialect)
            return [] if shape is None else [shape]
        case _:
            return []
