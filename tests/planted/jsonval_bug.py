"""Planted bug in ``model.jsonval.is_safe_int``: forgets that JS ``true`` is not a number."""

from __future__ import annotations

from sessionspec.model.jsonval import MAX_SAFE_INTEGER, Absent, Json


def is_safe_int(v: Json | Absent) -> bool:
    """A non-negative safe integer (SURF-3, SURF-4); ``True`` is not an integer in JS.

    post: __return__ == (type(v) is int and 0 <= v <= MAX_SAFE_INTEGER)
    """
    # BUG: isinstance(True, int) holds in Python, so booleans slip through.
    return isinstance(v, int) and 0 <= v <= MAX_SAFE_INTEGER
