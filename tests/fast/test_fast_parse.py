"""The fast line parser (sessionspec.fast.parse) gives exactly what the model's decoder gives, and its
event decoder (``parse_event``) the event ``model.codec.decode_record`` makes of a plain event line.

The definition is ``model.codec.parse_value`` (lossless JSON: FMT-2 duplicate keys, LOG-4
``-0`` and unsafe integers, integral floats as integers).  Equality is checked on the
``repr`` of the result, which shows container types (JsonObject vs tuple), key order and
number types (``1`` vs ``1.0``); a rejection must name the same rule and failure kind.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.parse import MAX_DEPTH, TOO_DEEP, nesting_depth, parse_event, parse_line, row_events
from sessionspec.generate import write_log
from sessionspec.model.codec import ROW_TAGS, decode_record, expand_row, parse_value
from sessionspec.model.jsonval import MAX_SAFE_INTEGER, Json, JsonObject
from sessionspec.model.log import CORE_CLASSES, Event, OpaqueEvent
from sessionspec.model.rejected import Rejected

DATA = Path(__file__).parents[1] / "data"


def _same(raw: bytes) -> None:
    fast = parse_line(raw)
    try:
        exact: Json | Rejected = parse_value(raw.decode("utf-8"))
    except UnicodeDecodeError:
        assert isinstance(fast, Rejected) and fast.rule == "FMT-1"
        return
    if isinstance(exact, Rejected):
        assert isinstance(fast, Rejected), (raw, fast)
        assert (fast.rule, fast.kind) == (exact.rule, exact.kind), raw
    else:
        assert repr(fast) == repr(exact), raw


plain = st.recursive(
    st.none() | st.booleans() | st.text()
    | st.integers(min_value=-(2**70), max_value=2**70) | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 1.0, 1e21, 5e-324]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(plain, st.sampled_from(["msgspec", "compact", "spaced", "ascii"]))
def test_any_json_text_parses_as_the_model_parses_it(value: object, style: str) -> None:
    match style:
        case "msgspec":
            raw = msgspec.json.encode(value)
        case "compact":
            raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
        case "spaced":
            raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
        case _:
            raw = json.dumps(value).encode()
    _same(raw)


@given(st.dictionaries(st.sampled_from("abc"), st.integers(0, 3), min_size=1), st.sampled_from("abc"))
def test_a_duplicate_key_is_always_reported(value: dict[str, int], key: str) -> None:
    raw = msgspec.json.encode(value)[:-1] + f',"{key}":9}}'.encode()
    if key in value:
        assert isinstance(parse_line(raw), Rejected) and parse_line(raw).rule == "FMT-2"  # type: ignore[union-attr]
    _same(raw)


HOSTILE = [
    b'{"a":1,"a":1}', b"-0", b'{"x":-0}', b'{"x":-0.0}', b"[-0.0]", b"1.0", b'{"id":"call-0"}', b'{"n":-0e5}',
    str(MAX_SAFE_INTEGER).encode(), str(MAX_SAFE_INTEGER + 1).encode(), str(-MAX_SAFE_INTEGER - 1).encode(),
    b"12345678901234567890123", b"[1e400]", b"1E2", b'"\\ud800"', b'"\\u00e9"', b'"\xc3\xa9"', b'"\xff"', b' {"a":1}',
    b'{"a":1} ', b"NaN", b"[1,2,]", b"", b"{", b'"\\/"', b'"\x01"', b"[" * 5000 + b"]" * 5000, b"true", b"null",
    b'{"a":[1,{"b":[2.5,3]}]}', b'{"s":"\\n\\t\\u0001\\"\\\\"}', b'"\xe2\x80\xa8"',
]


def test_hostile_lines_parse_as_the_model_parses_them() -> None:
    for raw in HOSTILE:
        _same(raw)


def _same_event(raw: bytes) -> None:
    """parse_event: a plain event line gives decode_record's one event; any other line (or one it declines,
    such as keys in another order) what parse_value gives."""
    text = raw.decode("utf-8")
    fast, exact = parse_event(raw, text), parse_value(text)
    if isinstance(exact, Rejected):
        assert isinstance(fast, Rejected) and (fast.rule, fast.kind) == (exact.rule, exact.kind), raw
    elif isinstance(fast, Event):
        decoded = decode_record(exact)
        assert isinstance(decoded, tuple) and len(decoded) == 1, raw
        assert repr(fast) == repr(decoded[0]) and fast == decoded[0], raw
    else:
        assert repr(fast) == repr(exact), raw  # declined (the reader hands it to decode_record)


ENVELOPES = [
    b'{"type":"user/message","seq":3,"time":5,"data":{"content":"x"}}',
    b'{"type":"user/message","seq":3,"time":5,"data":{},"sourceEventSeqs":[1],"surfaceOp":"append"}',
    b'{"type":"user/message","seq":3,"time":5,"data":{},"surfaceOp":"append","sourceEventSeqs":[1]}',
    b'{"type":"user/message","seq":3,"time":5,"data":{},"surfaceOp":{"op":"replace","start":0,"end":2}}',
    b'{"type":"tool/result","seq":3,"time":5,"data":null,"sourceEventSeqs":[]}',
    b'{"seq":3,"type":"x/y","time":5,"data":1}', b'{"type":"x","seq":3,"time":5,"data":1,"extra":2}',
    b'{"type":"x","seq":-1,"time":5,"data":1}', b'{"type":"x","seq":true,"time":5,"data":1}',
    b'{"type":"x","seq":3,"time":9007199254740992,"data":1}', b'{"type":"x","seq":9007199254740991,"time":0,"data":1}',
    b'{"type":"x","seq":3,"time":5.5,"data":1}', b'{"type":"x","seq":3.0,"time":5,"data":1}', b'{"type":7,"seq":3,"time":5,"data":1}',
    b'{"type":"x","seq":3,"time":5,"data":{"n":12345678901234567890}}', b'{"type":"request/header-delta","seq":3,"time":5,"data":{}}',
    b'{"type":"session","seq":3,"time":5,"data":{}}', b'{"type":"session","version":1}',
    b'{"type":"text-chunks","seq0":3,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}',
    b'{"type":"x","seq":3,"time":5,"data":1,"data":2}', b'{"type":"x","seq":3,"time":5}', b'[1]', b'"type"',
]


def test_event_envelopes_decode_as_the_model_decodes_them() -> None:
    for raw in ENVELOPES:
        _same_event(raw)


def test_every_event_class_is_built_as_the_model_builds_it() -> None:
    """parse_event fills a core event's slots itself (not through make_event): each of the 13 core
    classes (LOG-9), with and without the surface keys and in both key orders, and a plugin type
    (LOG-10, OpaqueEvent), equal to decode_record's event, class and every field."""
    types = [*CORE_CLASSES, "compact/start", "session/title"]
    for type_name in types:
        for tail in ('', ',"sourceEventSeqs":[1,2]', ',"surfaceOp":"append"', ',"surfaceOp":{"op":"replace","start":0,"end":2},"sourceEventSeqs":[0]'):
            raw = f'{{"type":"{type_name}","seq":4,"time":9,"data":{{"k":[1,{{"a":null}}]}}{tail}}}'.encode()
            fast = parse_event(raw, raw.decode())
            assert type(fast) is CORE_CLASSES.get(type_name, OpaqueEvent), raw
            _same_event(raw)


@given(st.fixed_dictionaries({"type": st.sampled_from(["user/message", "assistant/chunk", "x/y", "session", "text-chunks"]),
                              "seq": st.integers(-2, 2**54) | st.booleans(), "time": st.integers(-2, 2**54) | st.floats(0, 10),
                              "data": plain}, optional={"sourceEventSeqs": plain, "surfaceOp": plain, "other": plain}),
       st.randoms())
def test_any_envelope_decodes_as_the_model_decodes_it(value: dict[str, object], rng: random.Random) -> None:
    keys = list(value)
    rng.shuffle(keys) if rng.random() < 0.3 else None
    _same_event(json.dumps({k: value[k] for k in keys}, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


def test_every_real_and_generated_line_parses_as_the_model_parses_it() -> None:
    lines: list[bytes] = []
    for path in sorted(DATA.rglob("*.jsonl")):
        lines += [line for line in path.read_bytes().splitlines() if line.strip()]
    generated = io.StringIO()
    write_log(generated, 3000, 7)
    lines += [line.encode() for line in generated.getvalue().splitlines() if line.strip()]
    assert len(lines) > 5000
    for raw in lines:
        _same(raw)
        _same_event(raw)


# ---------------------------------------------------------------- packed rows (CHK-5, CHK-6)

def _same_row(row: Json) -> None:
    """row_events gives expand_row's answer: the same events (class, fields, key order), or the same
    rejection (rule, seq, reason: the fast path hands every doubtful row to the model)."""
    assert isinstance(row, JsonObject)
    fast, exact = row_events(row), expand_row(row)
    if isinstance(exact, Rejected):
        assert fast == exact, row
    else:
        assert isinstance(fast, tuple) and repr(fast) == repr(exact) and fast == exact, row


def _rows_of(lines: list[bytes]) -> list[JsonObject]:
    values = [parse_value(raw.decode("utf-8")) for raw in lines]
    return [v for v in values if isinstance(v, JsonObject) and v.get("type") in ROW_TAGS]


def test_every_real_and_generated_row_expands_as_the_model_expands_it() -> None:
    lines = [line for path in sorted(DATA.rglob("*.jsonl")) for line in path.read_bytes().splitlines() if line.strip()]
    generated = io.StringIO()
    write_log(generated, 3000, 11)
    rows = _rows_of(lines + [line.encode() for line in generated.getvalue().splitlines() if line.strip()])
    assert len({row["type"] for row in rows}) == 3 and len(rows) > 100
    for row in rows:
        _same_row(row)


# Values a row's fields may wrongly hold: every JSON kind, the safe-integer edges, bool for a number.
_ODD_VALUES: list[Json] = [
    -1, 0, 3, MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER - 1, True, False, 1.5, 2.0, None, "7", "",
    (), (1,), (True,), (1.0,), (MAX_SAFE_INTEGER,), ("a",), ("a", "b"), ("a", 1), (0, 0, 0), JsonObject(), JsonObject({"a": 1}),
    # three long, as a default row's payload: each member's kind is checked, not only the length
    ("a", "b", None), ("a", True, "c"), (1.5, "b", "c"), ("a", "b", ("c",)), ("a", "b", JsonObject()), (0, 1), (0, True), (0, 2**53),
]
_ROW_KEYS = ["seq0", "time0", "data", "extra", "turn", "step", "index", "id", "name", "dt", "texts", "args"]


def _row(tag: str, size: int = 3, named: bool = True, seq0: int = 5, time0: int = 9, edits: dict[str, Json | None] | None = None) -> JsonObject:
    """A well-formed row of ``tag`` with ``size`` members, then ``edits``: a key set to a value, or
    dropped (None), in the envelope (``seq0``, ``time0``, ``data``, ``extra``) or in ``data``."""
    payload = tuple(f"p{k}" for k in range(size))
    data: dict[str, Json] = {"turn": 1, "step": 2, "index": 0}
    if tag == "tool-call-chunks":
        data |= {"id": "call-1", **({"name": "read"} if named else {}), "dt": tuple(range(size - 1)), "args": payload}
    else:
        data |= {"dt": tuple(range(size - 1)), "texts": payload}
    envelope: dict[str, Json] = {"type": tag, "seq0": seq0, "time0": time0, "data": None}
    for key, value in (edits or {}).items():
        where = envelope if key in ("seq0", "time0", "data", "extra") else data
        if value is None:
            where.pop(key, None)
        else:
            where[key] = value
    if envelope.get("data", ()) is None:
        envelope["data"] = JsonObject(data)  # not edited: the row's own data
    return JsonObject(envelope)


@pytest.mark.parametrize("tag", sorted(ROW_TAGS))
def test_every_single_edit_of_a_row_expands_as_the_model_expands_it(tag: str) -> None:
    """Each key of a well-formed row (with and without ``name``) dropped or given each odd value:
    the fast expansion agrees with the model's on every one (1,300 rows a tag)."""
    for named in (True, False):
        _same_row(_row(tag, named=named))
        for key in _ROW_KEYS:
            _same_row(_row(tag, named=named, edits={key: None}))
            for value in _ODD_VALUES:
                _same_row(_row(tag, named=named, edits={key: value}))


@given(st.sampled_from(sorted(ROW_TAGS)), st.integers(1, 6), st.booleans(), st.integers(0, MAX_SAFE_INTEGER),
       st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
       st.dictionaries(st.sampled_from(_ROW_KEYS), st.none() | st.sampled_from(_ODD_VALUES), max_size=3),
       st.lists(st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | st.sampled_from([2**53, 1.0]), max_size=6))
def test_any_row_expands_as_the_model_expands_it(tag: str, size: int, named: bool, seq0: int, time0: int,
                                                 edits: dict[str, Json | None], dt: list[Json]) -> None:
    """Rows of any size with seq and times up to the safe-integer edges (a running time may leave the
    range, CHK-5), and up to three edits at once."""
    _same_row(_row(tag, size, named, seq0, time0, edits))
    _same_row(_row(tag, size, named, seq0, time0, {"dt": tuple(dt)}))


# ---------------------------------------------------------------- the checker's depth limit

def _nested(depth: int, kind: str) -> bytes:
    """A line nested exactly ``depth`` levels deep, as ``kind``: arrays, objects, a plain event whose
    data nests (the envelope is a level), either canonical or with a space (the exact decoder's)."""
    if kind.startswith("event"):
        inner = b"[" * (depth - 1) + b"]" * (depth - 1)
        raw = b'{"type":"user/message","seq":0,"time":0,"data":' + inner + b"}"
    elif kind.startswith("object"):
        raw = b'{"a":' * depth + b"1" + b"}" * depth
    else:
        raw = b"[" * depth + b"]" * depth
    return raw.replace(b":", b": ", 1) if kind.endswith("spaced") else raw


@pytest.mark.parametrize("kind", ["array", "object", "event", "array spaced", "object spaced", "event spaced"])
def test_a_line_deeper_than_the_limit_is_too_deep_and_no_other(kind: str) -> None:
    """``parse_event`` gives TOO_DEEP exactly for a line nested deeper than MAX_DEPTH (as
    ``nesting_depth`` counts it), whichever path reads it: the freeze walk of a canonical line, the
    scan before the exact decoder; a line at the limit parses as the model parses it."""
    for depth in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 3 * MAX_DEPTH):
        raw = _nested(depth, kind)
        assert (nesting_depth(raw) > MAX_DEPTH) == (depth > MAX_DEPTH)
        answer = parse_event(raw, raw.decode())
        if depth > MAX_DEPTH:
            assert answer is TOO_DEEP, (kind, depth)
        else:
            _same_event(raw)
