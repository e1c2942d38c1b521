"""What a persistence load refuses of one event, decided event by event over a whole log (LOG-8, LOG-17): the
legacy ``fallback`` reason (LEG-2), ``mode/set`` (LEG-3), the LLM shape (HDR-8, LEG-5, LEG-6), the header field
types (HDR-1, DIA-8, FMT-6) and the ``turn/end`` shape the load knows: A55's reason-bearing ``aborted`` (LEG-4)
and its reason kinds (LOG-11), or D08's aborted reasons (DIA-14, an overlay: :func:`load_shapes`).

:func:`sessionspec.model.seed.validate_seed` (LOG-8's definition) stops at the first failing check of the first
failing entry, as the harness's constructor throws; ``sessionspec check`` reports every refusal, so it runs
:func:`load_refusals` on each event of these types (``sessionspec/check/load_shape_audit.py``).
``tests/model/test_load_shape.py`` holds it against the loop simulator's logs, both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.d08_shapes import check_aborted_turn_end
from sessionspec.model.header_log import check_header_types
from sessionspec.model.jsonval import ABSENT, get, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides
from sessionspec.model.seed import check_not_fallback, check_not_mode_set, check_turn_end_shape, llm_shape_check
from sessionspec.model.turn_end_reason import BARE_END_KINDS

# LOG-11's reason kinds: the bare ones, and aborted (LEG-4), error and rejected with their fields.
A55_END_KINDS: Final = BARE_END_KINDS | {"aborted", "error", "rejected"}
# The types :func:`load_refusals` reads (it refuses nothing of any other).
LOAD_CHECKED_TYPES: Final = frozenset({"request/header", "mode/set", "assistant/message", "turn/end"})
NONE: Final[tuple[Rejected, ...]] = ()


def check_a55_end_kind(event: Event) -> Rejected | None:
    """LOG-11's kinds (its definition, with the quote, is :func:`sessionspec.model.turn_end_reason.
    check_turn_end_reason`): an A55 ``turn/end`` reason whose kind is none of them does not load."""
    kind = get(get(event.data, "reason"), "kind")
    if isinstance(kind, str) and kind in A55_END_KINDS:
        return None
    return Rejected(rule="LOG-11", seq=event.seq, reason=f"turn/end reason kind {js_stringify(kind if kind is not ABSENT else None)} is not an A55 kind")


def _a55_turn_end(event: Event) -> Rejected | None:
    """LEG-4's reason-bearing ``aborted``, then LOG-11's kinds."""
    return check_turn_end_shape(event) or check_a55_end_kind(event)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadShapes:
    """What a dialect changes in what a load refuses (:func:`load_shapes`)."""

    dialect: Dialect
    llm_shape: Callable[[Event], Rejected | None]
    turn_end: Callable[[Event], Rejected | None]


A55_LOAD: Final = LoadShapes(dialect=Dialect.A55, llm_shape=llm_shape_check(Dialect.A55), turn_end=_a55_turn_end)
D08_LOAD: Final = LoadShapes(dialect=Dialect.D08, llm_shape=llm_shape_check(Dialect.D08), turn_end=check_aborted_turn_end)


def load_shapes(dialect: Dialect) -> LoadShapes:
    """The one place the load's checks are selected by dialect: A55's ``turn/end`` is LEG-4's and LOG-11's kinds,
    D08's DIA-14's aborted reasons (D08 overrides LOG-11 and LEG-4); the LLM shape is
    :func:`sessionspec.model.seed.llm_shape_check`'s (DIA-10: a D08 message's provider is in its source)."""
    match dialect:
        case Dialect.A55:
            return A55_LOAD
        case Dialect.D08:
            return D08_LOAD


@decides("LOG-8", "LEG-2", "LEG-3", "LEG-4", "LOG-11", "P-LOG-4")
def load_refusals(event: Event, shapes: LoadShapes) -> Sequence[Rejected]:
    """Every refusal a strict load (LOG-8's seed validation, LOG-17's load) makes of ``event`` in the dialect of
    ``shapes`` (:func:`load_shapes`): LEG-2, LEG-3 (the load's), the LLM shape (HDR-8, LEG-5, LEG-6), the header
    field types (HDR-1, DIA-8, FMT-6) and the ``turn/end`` shape.  Each check is independent, so all are told, not
    the first (the order is the seed's, :func:`sessionspec.model.seed.validate_seed`)."""
    bad: Rejected | None
    match event.type:  # the most frequent type first
        case "assistant/message":
            bad = shapes.llm_shape(event)
        case "turn/end":
            bad = shapes.turn_end(event)
        case "request/header":
            found = [r for r in (shapes.llm_shape(event), check_not_fallback(event)) if r is not None]
            return found + check_header_types(event, shapes.dialect)
        case "mode/set":
            bad = check_not_mode_set(event)
        case _:
            bad = None
    return NONE if bad is None else (bad,)
