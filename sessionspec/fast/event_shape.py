"""The fast answer for the loop's well-formed events: the model's shape definitions
(:func:`sessionspec.model.event_shape.check_core_shape` and :func:`~sessionspec.model.event_shape.check_type_shape`)
have nothing to find on them.

The shape fold calls the definitions for every live event; interpreted in a compiled build, that costs about a tenth
of a compiled ``check`` (docs/performance.md).  Here the commonest events of a loop log (steps, messages, tool calls
and results, turn ends with a bare or aborted reason, prompts without an envelope, header records with a canonical
header) are recognised as well formed by key order
and type tests alone, and the types no shape rule reads are passed; anything else (``None``: no answer) goes to the
definitions, which give the findings.  So this never finds anything itself and only ever skips an empty answer.
``tests/fast/test_fast_event_shape.py`` ties it to the definitions on the loop simulator's logs in both dialects
and on every single change the model's property tests make.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.chunk_shape import well_formed_chunk
from sessionspec.fast.constants import ABSENT, D08
from sessionspec.fast.jsonget import keys_are, keys_in
from sessionspec.model.event_shape import A55_DATA_KEYS, D08_DATA_KEYS
from sessionspec.model.header_log import A55_HEADERS, D08_HEADERS
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.log_only_shape import COMPACTION_TYPES, PLUGIN_TYPES
from sessionspec.model.record_keys import valid_orders
from sessionspec.model.turn_end_reason import BARE_END_KINDS

_OBJECT: Final = JsonObject
TURN_STEP: Final = ("turn", "step")
TURN_REASON: Final = ("turn", "reason")
TURN_TRIGGER: Final = ("turn", "trigger")
KIND: Final = ("kind",)
KIND_SOURCE: Final = ("kind", "source")
TRIGGER_KINDS: Final = frozenset({"message", "injection"})
TOOL_CALL: Final = ("turn", "step", "callId", "name", "arguments")
MESSAGE_ORDERS: Final = tuple(sorted(valid_orders(A55_DATA_KEYS["assistant/message"])))
RESULT_ORDERS: Final = tuple(sorted(valid_orders(A55_DATA_KEYS["tool/result"])))
PROVENANCE_ORDERS: Final = (("provider", "model"), ("provider", "model", "replayState"))
ERROR: Final = ("name", "code")
# A prompt without an envelope (an envelope goes to the definition); a steering message starts with its turn.
PROMPT_ORDERS: Final = (("content", "source"), ("content", "source", "meta"))
STEERING_ORDERS: Final = (("turn", "content", "source"), ("turn", "content", "source", "meta"))
# The types some shape rule reads beside the core table (check_type_shape's cases).
# HDR-7's record and HDR-2's canonical key orders (DIA-8's for D08).
HEADER_RECORD: Final = ("header", "reason")
A55_HEADER_ORDER: Final = A55_HEADERS.canonical_keys
D08_HEADER_ORDER: Final = D08_HEADERS.canonical_keys
TYPE_SHAPED: Final = frozenset({"turn/end", "user/message", "steering/message", "request/header", *PLUGIN_TYPES, *COMPACTION_TYPES})
# The types no definition reads, per dialect: neither in its table nor type-shaped.
A55_CORE: Final = frozenset(A55_DATA_KEYS)
D08_CORE: Final = frozenset(D08_DATA_KEYS)
assert "assistant/chunk" in A55_CORE & D08_CORE


def _turn_step(data: JsonObject) -> bool:
    return type(data["turn"]) is int and type(data["step"]) is int


def _prompt(data: JsonObject) -> bool:
    """``content`` a list and ``source`` a MessageSource (an object with a string ``kind``)."""
    source = data["source"]
    return type(data["content"]) is tuple and type(source) is _OBJECT and type(source.get("kind")) is str


def _a55_message(data: JsonObject) -> bool:
    if not keys_in(data, MESSAGE_ORDERS) or not _turn_step(data):
        return False
    content = data["content"]
    provenance = data["provenance"]
    usage = data.get("usage", ABSENT)
    return (type(content) is tuple and all(type(block) is _OBJECT for block in content)
            and type(provenance) is _OBJECT and keys_in(provenance, PROVENANCE_ORDERS)
            and (usage is ABSENT or type(usage) is _OBJECT))


def _a55_result(data: JsonObject) -> bool:
    if not keys_in(data, RESULT_ORDERS) or not _turn_step(data):
        return False
    error = data.get("error", ABSENT)
    return (type(data["callId"]) is str and type(data["content"]) is tuple and type(data["isError"]) is bool
            and (error is ABSENT or (type(error) is _OBJECT and keys_are(error, ERROR))))


def well_formed_event(event: Event, dialect: Dialect) -> bool:
    """True only when the shape definitions find nothing on ``event`` (False: ask them)."""
    kind = event.type
    data = event.data
    if kind == "assistant/chunk":  # the commonest event, in both dialects' core tables: first
        return well_formed_chunk(data)
    d08 = dialect is D08
    if kind not in (D08_CORE if d08 else A55_CORE) and kind not in TYPE_SHAPED:
        return True  # no shape rule reads it (D08 reshapes the messages and turn/start: DIA-10, DIA-13)
    if type(data) is not _OBJECT:
        return False
    if kind == "step/start" or kind == "step/end":
        return keys_are(data, TURN_STEP) and _turn_step(data)
    if kind == "tool/call":
        return keys_are(data, TOOL_CALL) and _turn_step(data) and type(data["callId"]) is str and type(data["name"]) is str and type(data["arguments"]) is str
    if kind == "turn/end":
        if not keys_are(data, TURN_REASON):
            return False
        reason = data["reason"]
        if type(data["turn"]) is not int or type(reason) is not _OBJECT:
            return False
        # An aborted reason is LOG-8's load check (A55, LEG-4) or DIA-14's (D08), never LOG-11's.
        return reason.get("kind") == "aborted" or (keys_are(reason, KIND) and reason["kind"] in BARE_END_KINDS)
    if kind == "request/header":
        return keys_are(data, HEADER_RECORD) and _canonical_header(data["header"], D08_HEADER_ORDER if d08 else A55_HEADER_ORDER)
    if d08:
        # D08's user/message is DIA-10's, but for its source (LOG-9); a steering message is a user/message (DIA-11).
        if kind == "user/message":
            source = data.get("source", ABSENT)
            return type(source) is _OBJECT and type(source.get("kind")) is str
        return kind == "steering/message"
    if kind == "assistant/message":
        return _a55_message(data)
    if kind == "tool/result":
        return _a55_result(data)
    if kind == "user/message":
        return keys_in(data, PROMPT_ORDERS) and _prompt(data)
    if kind == "steering/message":
        return keys_in(data, STEERING_ORDERS) and _prompt(data)
    if kind == "turn/start":
        if not keys_are(data, TURN_TRIGGER):
            return False
        trigger = data["trigger"]
        return (type(data["turn"]) is int and type(trigger) is _OBJECT and keys_are(trigger, KIND_SOURCE)
                and trigger["kind"] in TRIGGER_KINDS and type(trigger["source"]) is _OBJECT)
    return False


def _canonical_header(header: object, order: tuple[str, ...]) -> bool:
    """HDR-2's canonical header (``check_canonical_header``): an object of the dialect's keys in their order, its
    ``system`` a non-empty string and its ``tools`` and ``messagePrefix`` non-empty lists when present (any other
    value, a placeholder's length among them, is the definition's to weigh)."""
    if type(header) is not _OBJECT:
        return False
    assert isinstance(header, JsonObject)
    at = -1
    for key in header:
        if key not in order:
            return False
        index = order.index(key)
        if index <= at:
            return False
        at = index
    system, tools, prefix = header.get("system", ABSENT), header.get("tools", ABSENT), header.get("messagePrefix", ABSENT)
    return ((system is ABSENT or (type(system) is str and len(system) > 0))
            and (tools is ABSENT or (type(tools) is tuple and len(tools) > 0))
            and (prefix is ABSENT or (type(prefix) is tuple and len(prefix) > 0)))
