"""The JSON value domain of the model (RULES §0.4, §0.6, LOG-4).

JSON payloads are immutable and keep key insertion order: objects are
:class:`JsonObject` (a read-only ``dict``), arrays are ``tuple``.  An absent key
is :data:`ABSENT`, never ``None`` (``None`` is JSON ``null``).

``js_stringify`` reproduces JS ``JSON.stringify`` (compact, insertion order,
literal non-ASCII, ``\\uXXXX`` for lone surrogates, JS number formatting), which
is what ``JSONEQ`` compares.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from enum import Enum
from typing import Final, TypeAlias, cast, final

from sessionspec.model.rules import decides, implements

MAX_SAFE_INTEGER: Final = 2**53 - 1


class Absent(Enum):
    """The one value of 'no key here' (distinct from JSON null)."""

    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = Absent.ABSENT


@final
class JsonObject(dict[str, "Json"]):
    """A JSON object: ordered, immutable after construction, hashable."""

    __slots__ = ()

    def _immutable(self, *args: object, **kwargs: object) -> None:
        raise TypeError("JsonObject is immutable")

    __setitem__ = _immutable  # type: ignore[assignment, unused-ignore]
    __delitem__ = _immutable  # type: ignore[assignment, unused-ignore]
    clear = _immutable  # type: ignore[assignment, unused-ignore]
    pop = _immutable  # type: ignore[assignment, unused-ignore]
    popitem = _immutable  # type: ignore[assignment, unused-ignore]
    setdefault = _immutable  # type: ignore[assignment, unused-ignore]
    update = _immutable  # type: ignore[assignment, unused-ignore]
    __ior__ = _immutable  # type: ignore[assignment, unused-ignore]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __repr__(self) -> str:
        return f"JsonObject({dict.__repr__(self)})"


Json: TypeAlias = None | bool | int | float | str | tuple["Json", ...] | JsonObject


def obj(pairs: Iterable[tuple[str, Json]] = ()) -> JsonObject:
    """Build a JsonObject from (key, value) pairs, in order."""
    return JsonObject(pairs)


def with_values(o: JsonObject, **changes: Json) -> JsonObject:
    """``o`` with new values for keys it already has, each keeping its place
    (key order is observable: JSONEQ compares JS text).  Other keys are not added."""
    return JsonObject((k, changes.get(k, v)) for k, v in o.items())


def without(o: JsonObject, key: str) -> JsonObject:
    return JsonObject((k, v) for k, v in o.items() if k != key)


def get(o: Json | Absent, key: str) -> Json | Absent:
    """``o[key]`` for an object that has the key, else ABSENT (total)."""
    if isinstance(o, JsonObject) and key in o:
        return o[key]
    return ABSENT


def freeze(v: object) -> Json:
    """Convert plain Python JSON data (dict/list) into the immutable domain.

    Raises ``TypeError`` for values outside the JSON domain; callers at the model
    boundary (the codec) use :func:`parse_json` instead, which is total.
    """
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    if isinstance(v, dict):
        return JsonObject((str(k), freeze(x)) for k, x in v.items())
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def thaw(v: Json) -> object:
    """The plain-Python (dict/list) form of a value, for json.dumps and reports."""
    if isinstance(v, tuple):
        return [thaw(x) for x in v]
    if isinstance(v, JsonObject):
        return {k: thaw(x) for k, x in v.items()}
    return v


# --------------------------------------------------------------------------- JS text


def js_number(x: int | float) -> str:
    """JS Number::toString for a finite number (ECMA-262 7.1.12.1)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))  # shortest round-trip digits, like JS
    mantissa, _, exp_text = r.partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    # value = 0.digits * 10**n ; whole has len(whole) integer digits
    n = len(whole) + exp - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        esign = "+" if e >= 0 else "-"
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + esign + str(abs(e))
    return sign + body


def _js_string(s: str) -> str:
    text = json.dumps(s, ensure_ascii=False)
    if not s.isascii():
        # JSON.stringify writes lone surrogates as lowercase \uXXXX escapes.
        if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
            text = "".join(
                f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text
            )
    return text


def js_stringify(v: Json) -> str:
    """``JS(v)``: the text JS ``JSON.stringify`` produces (RULES §0.4)."""
    parts: list[str] = []
    _emit(v, parts)
    return "".join(parts)


def _emit(v: Json, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_js_string(v))
    elif isinstance(v, (int, float)):
        out.append(js_number(v))
    elif isinstance(v, tuple):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _emit(x, out)
        out.append("]")
    else:
        out.append("{")
        first = True
        for k, x in v.items():
            if not first:
                out.append(",")
            first = False
            out.append(_js_string(k))
            out.append(":")
            _emit(x, out)
        out.append("}")


def json_eq(a: Json | Absent, b: Json | Absent) -> bool:
    """``JSONEQ``: equal JS text, hence sensitive to key order (RULES §0.4).

    post: __return__ == json_eq(b, a)
    post: a is not b or __return__
    """
    if a is ABSENT or b is ABSENT:
        return a is b
    return js_stringify(a) == js_stringify(b)


def deep_eq(a: Json, b: Json) -> bool:
    """``DEEPEQ``: structural equality; key order ignored, types exact.

    post: __return__ == deep_eq(b, a)
    """
    if isinstance(a, JsonObject):
        if not isinstance(b, JsonObject) or a.keys() != b.keys():
            return False
        return all(deep_eq(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            return False
        return all(deep_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return a == b


# --------------------------------------------------------------------------- measures


def u16(s: str) -> int:
    """``U16(s)``: length in UTF-16 code units (JS ``length``).

    The §0.4 definition is the contract; the body is the fast path.

    post: __return__ == len(s.encode("utf-16-le", "surrogatepass")) // 2
    post: len(s) <= __return__ <= 2 * len(s)
    """
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


def js_length(v: Json) -> int | None:
    """The JS ``length`` of a string or array, else None (no length)."""
    if isinstance(v, str):
        return u16(v)
    if isinstance(v, tuple):
        return len(v)
    return None


def is_safe_int(v: Json | Absent) -> bool:
    """A non-negative safe integer (SURF-3, SURF-4); ``True`` is not an integer in JS.

    post: __return__ == (type(v) is int and 0 <= v <= MAX_SAFE_INTEGER)
    """
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE_INTEGER


# --------------------------------------------------------------------------- parsing


@final
class JsonTextError(Exception):
    """Raised inside the parser hooks only; parse_json turns it into a value."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _parse_constant(name: str) -> float:
    raise JsonTextError("LOG-4", f"{name} is not JSON (non-finite number literal)")


def _parse_int(text: str) -> int:
    if text == "-0":
        raise JsonTextError("LOG-4", "textual -0 is not lossless JSON (JS keeps -0, the harness rejects it)")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise JsonTextError("LOG-4", f"integer {text[:40]} is beyond 2^53 and not exact in JS")
    return value


def number_from_float_text(text: str) -> float | int:
    """A JSON number written with a fraction or exponent, as JS reads it (LOG-4: finite, no textual -0)."""
    value = float(text)
    if not math.isfinite(value):
        raise JsonTextError("LOG-4", f"number {text[:40]} overflows to a non-finite value")
    if value == 0 and text.lstrip().startswith("-"):
        raise JsonTextError("LOG-4", "textual -0 is not lossless JSON (JS keeps -0, the harness rejects it)")
    if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        # JS has one number type: 1.0 and 1e2 are the integers 1 and 100.
        return int(value)
    return value


def _object_hook(pairs: list[tuple[str, object]]) -> JsonObject:
    # In place: only array values need converting (objects arrive converted).
    for i, (k, v) in enumerate(pairs):
        if type(v) is list:
            pairs[i] = (k, _arrays_to_tuples(v))
    o = JsonObject(cast(list[tuple[str, Json]], pairs))
    if len(o) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise JsonTextError("FMT-2", f"duplicate key {dup!r} in object")
    return o


def _arrays_to_tuples(v: object) -> Json:
    if isinstance(v, list):
        return tuple(_arrays_to_tuples(x) for x in v)
    return v  # type: ignore[return-value]


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_hook,
    parse_constant=_parse_constant,
    parse_int=_parse_int,
    parse_float=number_from_float_text,
)


@final
class JsonParseFailure:
    """Why a text is not a value of the JSON domain (rule id + reason)."""

    __slots__ = ("rule", "reason", "limit")

    def __init__(self, rule: str, reason: str, limit: bool = False) -> None:
        self.rule = rule
        self.reason = reason
        self.limit = limit

    def __repr__(self) -> str:
        return f"JsonParseFailure({self.rule!r}, {self.reason!r})"


@decides("LOG-4", "FMT-2", "P-LOG-3")
@implements("LOG-4", "FMT-2")
def parse_json(text: str) -> Json | JsonParseFailure:
    """FMT-2: "Event lines MUST be parsed with key order preserved (`json.loads(…, object_pairs_hook=…)`),
    duplicate keys reported, textual `-0` reported (LOG-4), and numbers kept as int when written without
    fraction/exponent."
    LOG-4: "Event `data` and the surface metadata MUST be lossless JSON."

    FMT-2: "Event lines MUST be parsed with key order preserved, duplicate keys reported,
    textual ``-0`` reported (LOG-4), and numbers kept as int when written without
    fraction/exponent."  LOG-4: data MUST be lossless JSON.  Total (never raises)."""
    try:
        value = _DECODER.decode(text)
    except JsonTextError as e:
        return JsonParseFailure(e.kind, str(e))
    except RecursionError:
        return JsonParseFailure("FMT-1", "nesting too deep for the checker", limit=True)
    except ValueError as e:
        return JsonParseFailure("FMT-1", f"invalid JSON: {e}")
    return _arrays_to_tuples(value)
