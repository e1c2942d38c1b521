"""The compiled twins of :func:`sessionspec.model.writers.shape_dialect` (FMT-7 Writers), which the writers' fold asks
of every event of ``SHAPED_TYPES``, and of ``turn_writer_kind`` and ``check_turn_dialects``, asked at every turn's
close: the definitions are interpreted in every build.  ``shape_dialect``'s body is the model's, read with the
compiled layer's constants and ``get``; the other two answer a turn one loop wrote and leave every other turn to
the definition.  ``tests/fast/test_fast_writers.py`` ties them, finding for finding and writer for writer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.writers import A55_LOOP_TYPES, D08_LOOP_TYPES, DialectWriters, OpenTurn
from sessionspec.model.writers import check_turn_dialects as dialects_by_definition
from sessionspec.model.writers import turn_writer_kind as kind_by_definition

_OBJECT: Final = JsonObject
_D08_LOOP: Final = ("d08-loop", "D08 loop")


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


def turn_writer_kind(t: OpenTurn, writers: DialectWriters, first_live_seq: int, built: Sequence[int]) -> tuple[str, str]:
    """:func:`sessionspec.model.writers.turn_writer_kind`: answered here for a live turn one loop wrote, closed by a
    ``turn/end`` that is no out-of-band append's nor a crash repair's, no step of it the session API's; else the
    definition's."""
    first, last = t.start, t.last
    data = last.data
    reason = data.get("reason", ABSENT) if last.type == "turn/end" and type(data) is _OBJECT else ABSENT
    kind = reason.get("kind", ABSENT) if type(reason) is _OBJECT else ABSENT
    if first.seq < first_live_seq or built or last.type != "turn/end" or kind == "interrupted" or (
            writers.out_of_band and kind == "completed" and t.inner == 1):
        return kind_by_definition(t, writers, first_live_seq, built)
    return writers.a55_turn if shape_dialect(first) is A55 else _D08_LOOP


def check_turn_dialects(t: OpenTurn, first_live_seq: int) -> list[Rejected]:
    """:func:`sessionspec.model.writers.check_turn_dialects`: answered here for a turn whose marked events show one
    dialect (the turn's events that mix them are the definition's to tell)."""
    marked = t.marked
    if not marked or t.start.seq < first_live_seq:
        return []
    one = marked[0][1]
    for _, dialect in marked:
        if dialect is not one:
            return dialects_by_definition(t, first_live_seq)
    return []
