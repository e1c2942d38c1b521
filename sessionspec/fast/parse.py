"""Parsing a log line at the speed of a C decoder, checked against the model's exact decoder.

The model's decoder (``model.jsonval.parse_json``) is the definition: lossless JSON with key
order kept, duplicate keys reported (FMT-2), textual ``-0`` and integers beyond 2^53 - 1
reported (LOG-4), integral floats read as integers (JS has one number type).  It runs Python
hooks for every object and number, which makes it several times slower than ``json.loads``.

The fast path decodes with msgspec (C), using the model's own float parser as its float hook,
and then **re-encodes canonically and compares with the raw bytes**.  Equal bytes mean the
line has no duplicate key (a duplicate collapses, so the text shrinks), no whitespace or escape
variant, no ``-0`` (re-encoded as ``0``) and no integral float written with a fraction (read
as an integer, re-encoded without it); the freeze walk then checks the integer range.  Any
other line (or any doubt) goes to the exact decoder, so the result is always the definition's;
``tests/fast/test_fast_parse.py`` checks that equivalence on generated, hostile and real lines.
"""

from __future__ import annotations

import re
from typing import Final, final

import msgspec

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import COMPILED, keys_are
from sessionspec.fast.slots import new_instance, plain_fields, slot_setter
from sessionspec.model.codec import ROW_TAGS, expand_row, parse_value
from sessionspec.model.jsonval import MAX_SAFE_INTEGER, Absent, Json, JsonObject, JsonTextError, number_from_float_text
from sessionspec.model.log import CORE_CLASSES, Event, make_event
from sessionspec.model.rejected import Rejected

# The bound method, not the decoder: compiled, ``_DECODER.decode(...)`` looks the method up at each line.
_decode: Final = msgspec.json.Decoder(float_hook=number_from_float_text).decode
_encode: Final = msgspec.json.encode


class _NotExact(Exception):
    """The fast path cannot vouch for this line; the exact decoder decides."""


class _TooDeep(Exception):
    """The line nests containers deeper than :data:`MAX_DEPTH`."""


# The deepest ``[``/``{`` nesting the checker reads (a limit of the checker, not of the harness: the
# exact decoder and the model's walks recurse once per level).
MAX_DEPTH: Final = 200


@final
class TooDeep:
    """What :func:`parse_event` gives for a line nested deeper than :data:`MAX_DEPTH`."""

    __slots__ = ()


TOO_DEEP: Final = TooDeep()
# No limit but the interpreter's own (a RecursionError hands the line to the exact decoder).
_ANY_DEPTH: Final = 1 << 62


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text nests ``[``/``{`` deeper than ``limit`` (strings
    skipped).  Texts with at most ``limit`` brackets cannot, and skip the scan."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return nesting_depth(raw) > limit


def nesting_depth(raw: bytes) -> int:
    """The deepest ``[``/``{`` nesting of a JSON text (strings skipped)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"')
_OPENERS: Final = frozenset(b"[{")
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")


def _frozen_object(value: dict[str, object], room: int) -> JsonObject:
    # The decoder's containers are fresh and ours: nested ones are replaced in place, then the dict is
    # copied once into a JsonObject.  Scalars are checked in place (a call per scalar would cost more
    # than the decode).  ``room``: the container levels the line may still open, this one included.
    if room <= 0:
        raise _TooDeep
    for key, item in value.items():
        kind = type(item)
        if kind is dict:
            value[key] = _frozen_object(item, room - 1)  # type: ignore[arg-type]
        elif kind is list:
            value[key] = _frozen_array(item, room - 1)  # type: ignore[arg-type]
        elif kind is int and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # type: ignore[operator]
            raise _NotExact
    return JsonObject(value)  # type: ignore[arg-type]


def _frozen_array(value: list[object], room: int) -> tuple[Json, ...]:
    if room <= 0:
        raise _TooDeep
    for i, item in enumerate(value):
        kind = type(item)
        if kind is dict:
            value[i] = _frozen_object(item, room - 1)  # type: ignore[arg-type]
        elif kind is list:
            value[i] = _frozen_array(item, room - 1)  # type: ignore[arg-type]
        elif kind is int and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # type: ignore[operator]
            raise _NotExact
    return tuple(value)  # type: ignore[arg-type]


def _frozen(value: object, room: int = MAX_DEPTH) -> Json:
    kind = type(value)
    if kind is dict:
        return _frozen_object(value, room)  # type: ignore[arg-type]
    if kind is list:
        return _frozen_array(value, room)  # type: ignore[arg-type]
    if kind is int and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:  # type: ignore[operator]
        raise _NotExact
    return value  # type: ignore[return-value]


def parse_line(raw: bytes) -> Json | Rejected:
    """``model.codec.parse_value`` of the line's text, fast when the line is canonical JSON.

    The UTF-8 check comes first: msgspec's view of invalid UTF-8 must not decide anything."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return Rejected(rule="FMT-1", reason=f"invalid UTF-8 at byte {error.start}")
    return parse_decoded(raw, text)


def parse_decoded(raw: bytes, text: str) -> Json | Rejected:
    """:func:`parse_line` for a line already known to be UTF-8 (``text == raw.decode()``)."""
    try:
        return _frozen(_canonical(raw), _ANY_DEPTH)
    except _NOT_CANONICAL:
        return parse_value(text)  # not canonical, or not JSON at all: the exact decoder says which


# What says the fast path cannot vouch for a line: the exact decoder decides.
_NOT_CANONICAL: Final = (msgspec.DecodeError, JsonTextError, _NotExact, RecursionError)


def _canonical(raw: bytes) -> object:
    """The C decoder's value of a line that re-encodes to its own bytes (else :class:`_NotExact`)."""
    value = _decode(raw)
    if _encode(value) != raw:
        raise _NotExact
    return value


# The envelope key orders of a plain event line (FMT-3: provenance before the op, or the op first).
_ENVELOPES: Final = {
    ("type", "seq", "time", "data"): (False, False, False),
    ("type", "seq", "time", "data", "sourceEventSeqs"): (True, False, False),
    ("type", "seq", "time", "data", "surfaceOp"): (False, True, False),
    ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"): (True, True, False),
    ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"): (True, True, True),
}
# The same, by key count, tested in turn without building the key tuple (:func:`keys_are`).
_ENVELOPES_BY_SIZE: Final = {size: tuple((keys, flags) for keys, flags in _ENVELOPES.items() if len(keys) == size) for size in (4, 5, 6)}
# Types the event decoder does not take as a plain event: the header, legacy deltas (LEG-1), rows (CHK-7).
_NOT_PLAIN: Final = frozenset({"session", "request/header-delta"}) | ROW_TAGS


def parse_event(raw: bytes, text: str) -> Event | Json | Rejected | TooDeep:
    """:func:`parse_decoded`, or, for a canonical line holding a plain event envelope, the event
    ``model.codec.decode_record`` makes of it (LOG-3: exactly ``type, seq, time, data`` and the
    surface keys; LOG-2: non-negative safe integers), built without freezing the envelope;
    :data:`TOO_DEEP` for a line nested deeper than :data:`MAX_DEPTH` (:func:`too_deep`: the freeze
    walk of a canonical line counts the levels itself, any other line is scanned before the exact
    decoder reads it).  ``tests/fast/test_fast_parse.py`` checks it against the model's decoder."""
    try:
        value = _canonical(raw)
        if type(value) is dict:
            if COMPILED:  # the key orders compared in place (compiled, building the tuple of keys costs more)
                for keys, (provenance, op, op_first) in _ENVELOPES_BY_SIZE.get(len(value), ()):
                    if keys_are(value, keys):
                        event = _plain_event(value, provenance, op, op_first)
                        if event is not None:
                            return event
                        break
            else:  # one lookup of the key tuple (interpreted, a loop and a call per order tried cost more)
                flags = _ENVELOPES.get(tuple(value))
                if flags is not None:
                    event = _plain_event(value, *flags)
                    if event is not None:
                        return event
        return _frozen(value)
    except _TooDeep:
        return TOO_DEEP
    except _NOT_CANONICAL:
        return TOO_DEEP if too_deep(raw) else parse_value(text)


def _plain_event(value: dict[str, object], provenance: bool, op: bool, op_first: bool) -> Event | None:
    type_name, seq, time = value["type"], value["seq"], value["time"]
    if type(type_name) is not str or type_name in _NOT_PLAIN:
        return None
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INTEGER or type(time) is not int or not 0 <= time <= MAX_SAFE_INTEGER:
        return None
    # One level is the envelope's.
    data = value["data"]
    data = _frozen_object(data, MAX_DEPTH - 1) if type(data) is dict else _frozen(data, MAX_DEPTH - 1)  # (most are objects: a call fewer)
    sources = _frozen(value["sourceEventSeqs"], MAX_DEPTH - 1) if provenance else ABSENT
    surface_op = _frozen(value["surfaceOp"], MAX_DEPTH - 1) if op else ABSENT
    cls = CORE_CLASSES.get(type_name)
    if cls is None:  # a plugin type (LOG-10): make_event's OpaqueEvent, which also keeps the type
        return make_event(type_name, seq=seq, time=time, data=data, source_event_seqs=sources, surface_op=surface_op, op_first=op_first)
    return _built(cls, seq, time, data, sources, surface_op, op_first)


# A core event is the frozen, slotted dataclass ``make_event`` builds (LOG-9); its fields are filled
# here through their slots (:mod:`sessionspec.fast.slots`), without the two keyword calls (a third of
# the cost of a plain line).  The slots are those of the envelope base every core class derives from
# directly, adding no slot of its own.  Checked here once, and the events compared with
# decode_record's in tests/fast/test_fast_parse.py.
_ENVELOPE_FIELDS: Final = ("seq", "time", "data", "source_event_seqs", "surface_op", "op_first")
_ENVELOPE: Final = CORE_CLASSES["turn/start"].__mro__[1]
# (``getattr``: mypyc types ``vars()`` as a dict, a class's is a mappingproxy.)
assert all(cls.__base__ is _ENVELOPE and all(getattr(cls, name) is getattr(_ENVELOPE, name) for name in _ENVELOPE_FIELDS)
           and plain_fields(cls, _ENVELOPE_FIELDS) for cls in CORE_CLASSES.values())
# One ``Final`` each: compiled code reads a constant directly, a plain module name through a dictionary.
_set_seq: Final = slot_setter(_ENVELOPE, "seq")
_set_time: Final = slot_setter(_ENVELOPE, "time")
_set_data: Final = slot_setter(_ENVELOPE, "data")
_set_sources: Final = slot_setter(_ENVELOPE, "source_event_seqs")
_set_surface_op: Final = slot_setter(_ENVELOPE, "surface_op")
_set_op_first: Final = slot_setter(_ENVELOPE, "op_first")


def _built(cls: type[Event], seq: int, time: int, data: Json, sources: Json | Absent, surface_op: Json | Absent, op_first: bool) -> Event:
    """A core event of class ``cls`` with these fields, set through the envelope's slots."""
    event: Event = new_instance(cls)
    _set_seq(event, seq)
    _set_time(event, time)
    _set_data(event, data)
    _set_sources(event, sources)
    _set_surface_op(event, surface_op)
    _set_op_first(event, op_first)
    return event


_CHUNK: Final = CORE_CLASSES["assistant/chunk"]
_ROW_ENVELOPE: Final = frozenset({"type", "seq0", "time0", "data"})
_DELTAS: Final = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


def row_events(row: JsonObject) -> tuple[Event, ...] | Rejected:
    """``model.codec.expand_row`` of a packed row (CHK-5, CHK-6): the same events, built here for a
    row every check of CHK-5 passes at a glance (exact key sets, exact types), and the model's own
    answer for any other row, so a rejection is always the definition's.  Tied to the model by
    ``tests/fast/test_fast_parse.py``."""
    tag, seq0, time0, data = row.get("type"), row.get("seq0"), row.get("time0"), row.get("data")
    if (row.keys() != _ROW_ENVELOPE or type(seq0) is not int or not 0 <= seq0 <= MAX_SAFE_INTEGER
            or type(time0) is not int or not -MAX_SAFE_INTEGER <= time0 <= MAX_SAFE_INTEGER or type(data) is not JsonObject):
        return expand_row(row)
    turn, step, index, dt = data.get("turn"), data.get("step"), data.get("index"), data.get("dt")
    delta = _DELTAS.get(tag)  # type: ignore[arg-type]
    if delta is not None:
        payload, shape = data.get("texts"), 5
    else:
        payload, shape = data.get("args"), (7 if "name" in data else 6)
        if tag != "tool-call-chunks" or type(data.get("id")) is not str or type(data.get("name", "")) is not str:
            return expand_row(row)
    if (len(data) != shape or type(turn) not in _NUMBER or type(step) not in _NUMBER or type(index) not in _NUMBER
            or type(payload) is not tuple or not payload or type(dt) is not tuple or len(dt) != len(payload) - 1
            or seq0 + len(payload) - 1 > MAX_SAFE_INTEGER):
        return expand_row(row)
    members: list[Event] = []
    time = time0
    for k, text in enumerate(payload):
        if k:
            gap = dt[k - 1]
            if type(gap) is not int:
                return expand_row(row)
            time += gap
            if not -MAX_SAFE_INTEGER <= gap <= MAX_SAFE_INTEGER or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
                return expand_row(row)
        if type(text) is not str:
            return expand_row(row)
        if delta is not None:
            chunk = JsonObject({"type": delta, "index": index, "text": text})
        elif shape == 7:
            chunk = JsonObject({"type": "tool-call-delta", "index": index, "id": data["id"], "name": data["name"], "argumentsDelta": text})
        else:
            chunk = JsonObject({"type": "tool-call-delta", "index": index, "id": data["id"], "argumentsDelta": text})
        members.append(_built(_CHUNK, seq0 + k, time, JsonObject({"turn": turn, "step": step, "chunk": chunk}), ABSENT, ABSENT, False))
    return tuple(members)


# CHK-5's "numbers" (a bool is not one; the decoder gives int and float only).
_NUMBER: Final = (int, float)
