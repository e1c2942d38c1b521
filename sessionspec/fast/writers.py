"""The compiled twin of :func:`sessionspec.model.writers.shape_dialect` (FMT-7 Writers), which the writers' fold asks
of every event of ``SHAPED_TYPES``: the definition is interpreted in every build, and this body is the model's,
read with the compiled layer's constants and ``get``.  ``tests/fast/test_fast_writers.py`` ties the two."""

from __future__ import annotations

from sessionspec.fast.constants import A55, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.writers import A55_LOOP_TYPES, D08_LOOP_TYPES


def _turn_end_dialect(reason: Json | Absent) -> Dialect | None:
    kind = get(reason, "kind")
    if kind in ("rejected", "disposed"):
        return A55
    if kind == "blocked":
        return D08
    if kind == "aborted" and isinstance(reason, JsonObject):
        return D08 if "reason" in reason else A55
    if kind == "error" and isinstance(reason, JsonObject):
        return D08 if "error" in reason else A55
    return None


def shape_dialect(event: Event) -> Dialect | None:
    """:func:`sessionspec.model.writers.shape_dialect`."""
    kind = event.type
    if kind in A55_LOOP_TYPES:
        return A55
    if kind in D08_LOOP_TYPES:
        return D08
    data = event.data
    if not isinstance(data, JsonObject):
        return None
    if kind == "turn/start":
        return A55 if "trigger" in data else D08
    if kind == "turn/end":
        return _turn_end_dialect(get(data, "reason"))
    if kind == "user/message":
        return D08 if "role" in data or "id" in data else A55
    if kind == "assistant/message":
        return D08 if "message" in data else (A55 if "provenance" in data else None)
    if kind == "tool/result":
        return D08 if "message" in data else (A55 if "callId" in data else None)
    return None
