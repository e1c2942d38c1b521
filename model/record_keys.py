"""An object's keys as a writer gives them: exactly the listed keys, the required ones present, in the listed
order (the rule book's data tables: LOG-9 and the shapes after it, CMP-1, DIA-4).

A writer of the harness builds each record as an object literal, so its keys come in the literal's order
(``JSON.stringify`` keeps insertion order) and an optional key is left out, never written ``undefined``.
"""

from __future__ import annotations

from functools import cache

from sessionspec.model.jsonval import Absent, Json, JsonObject

# key, required?  (the logged order is the order listed)
Keys = tuple[tuple[str, bool], ...]


@cache
def valid_orders(keys: Keys) -> frozenset[tuple[str, ...]]:
    """Every key tuple ``keys`` allows: the required keys, any subset of the optional ones, in the listed order
    (cached: a table's orders are asked for at every event of its type)."""
    orders: list[tuple[str, ...]] = [()]
    for name, required in keys:
        orders = [(*o, name) for o in orders] + ([] if required else orders)
    return frozenset(orders)


def key_flaw(value: Json | Absent, keys: Keys) -> str | None:
    """Why ``value`` is not an object with exactly ``keys`` (the required ones present) in the listed order; None
    when it is."""
    if not isinstance(value, JsonObject):
        return "is not an object"
    if tuple(value) in valid_orders(keys):
        return None
    order = [name for name, _ in keys]
    extra = [k for k in value if k not in order]
    if extra:
        return f"has the unexpected key {extra[0]!r}"
    missing = [name for name, required in keys if required and name not in value]
    if missing:
        return f"lacks {missing[0]!r}"
    positions = [order.index(k) for k in value]
    if positions != sorted(positions):
        return f"has its keys out of order ({', '.join(value)}; expected {', '.join(k for k in order if k in value)})"
    return None
