"""``JSONEQ`` without writing JS text, for the checker's hot paths (issue 26).

The definition is ``model.jsonval.json_eq``: two values are equal when their ``JSON.stringify``
texts are (RULES §0.4), so key order counts.  Writing both texts costs a walk and a string per
value; this compares the values themselves where the answer is plainly the same: strings and
keys by equality (JS string text is one-to-one), objects key by key in order, arrays item by item,
``true``/``false`` and ``null`` by identity, two integers or two floats by equality (one value,
one text: ``-0.0`` and ``0.0`` both write ``0``).  Anything else (an integer against a float, whose
texts can differ where the numbers are equal: ``1e21``) is left to the definition.
``tests/fast/test_json_eq.py`` checks it against ``json_eq``.
"""

from __future__ import annotations

from sessionspec.model.jsonval import Absent, Json, JsonObject, json_eq


def same_json(a: Json | Absent, b: Json | Absent) -> bool:
    """``model.jsonval.json_eq(a, b)``."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return kind is not str and type(b) is not str and _mixed(a, b)
    if kind is str or kind is int or kind is float or kind is bool:
        return a == b
    if kind is JsonObject:
        assert isinstance(a, JsonObject) and isinstance(b, JsonObject)
        return len(a) == len(b) and all(ka == kb and same_json(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True))
    if kind is tuple:
        assert isinstance(a, tuple) and isinstance(b, tuple)
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return json_eq(a, b)


def _mixed(a: Json | Absent, b: Json | Absent) -> bool:
    # Values of two types: only numbers (an integer and a float) can still write the same text.
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool) and json_eq(a, b)
