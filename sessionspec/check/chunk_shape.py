"""The shape of an ``assistant/chunk`` (LOG-9: the chunk kinds and their keys), with the fast
answer for a well-formed one, the commonest event of a log."""

from __future__ import annotations

from typing import Final

from sessionspec.check.shape_keys import Keys, key_flaw, valid_orders
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import get, keys_are, keys_in
from sessionspec.model.jsonval import Json, JsonObject, js_stringify
from sessionspec.model.log import Event

CHUNK_KEYS: Final[dict[str, Keys]] = {
    "block-start": (("type", True), ("index", True), ("blockType", True)),
    "text-delta": (("type", True), ("index", True), ("text", True)),
    "reasoning-delta": (("type", True), ("index", True), ("text", True)),
    "tool-call-delta": (("type", True), ("index", True), ("id", True), ("name", False), ("argumentsDelta", True)),
    "block-end": (("type", True), ("index", True), ("block", True)),
    "usage": (("type", True), ("usage", True)),
    "finish": (("type", True), ("reason", True), ("replayState", False)),
}


def chunk_flaw(event: Event) -> str | None:
    chunk = get(event.data, "chunk")
    kind = get(chunk, "type")
    if not isinstance(kind, str) or kind not in CHUNK_KEYS:
        return f"chunk type {js_stringify(kind if kind is not ABSENT else None)} is not one of {', '.join(CHUNK_KEYS)}"
    flaw = key_flaw(chunk, CHUNK_KEYS[kind])
    return None if flaw is None else f"{kind} chunk {flaw}"


# An assistant/chunk's data keys in the one order LOG-9 allows (all three required), and each
# chunk kind's allowed key orders (CHUNK_KEYS).
CHUNK_DATA_ORDER: Final = ("turn", "step", "chunk")
CHUNK_ORDERS: Final = {kind: tuple(sorted(valid_orders(keys))) for kind, keys in CHUNK_KEYS.items()}


def well_formed_chunk(data: Json) -> bool:
    """An ``assistant/chunk`` with nothing for LOG-9 to find (the data keys in order, integer turn
    and step, a known chunk kind with its keys in order): :func:`check_core_shape`'s answer for
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
