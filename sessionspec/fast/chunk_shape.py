"""The fast answer for a well-formed ``assistant/chunk``, the commonest event of a log: LOG-9's shape check
(:func:`sessionspec.model.event_shape.check_core_shape`) has nothing to find on it.

``tests/fast/test_fast_chunk_shape.py`` ties it to the definition: a chunk it passes has no finding, and every
flaw it does not read reaches the definition.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.jsonget import keys_are, keys_in
from sessionspec.model.event_shape import CHUNK_KEYS
from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.record_keys import valid_orders

# An assistant/chunk's data keys in the one order LOG-9 allows (all three required), and each
# chunk kind's allowed key orders (CHUNK_KEYS).
CHUNK_DATA_ORDER: Final = ("turn", "step", "chunk")
CHUNK_ORDERS: Final = {kind: tuple(sorted(valid_orders(keys))) for kind, keys in CHUNK_KEYS.items()}


def well_formed_chunk(data: Json) -> bool:
    """An ``assistant/chunk`` with nothing for LOG-9 to find (the data keys in order, integer turn
    and step, a known chunk kind with its keys in order): ``check_core_shape``'s answer for
    the commonest event without its lists and messages (issue 26; any other chunk takes the full
    check, so this only ever skips an empty answer).  It reads the keys, turn, step and chunk kind,
    never a delta's text: a packed row's members (CHK-6) all get the first one's answer."""
    if not isinstance(data, JsonObject) or not keys_are(data, CHUNK_DATA_ORDER):
        return False
    # ``type(...) is int``: a JSON integer, never a boolean (bool subclasses int); anything else takes
    # the full check.
    chunk = data["chunk"]
    if type(data["turn"]) is not int or type(data["step"]) is not int or not isinstance(chunk, JsonObject):
        return False
    orders = CHUNK_ORDERS.get(chunk.get("type"))  # type: ignore[arg-type]
    return orders is not None and keys_in(chunk, orders)
