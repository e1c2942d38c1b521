"""The surface plan and the dialect markers of an event, for the checker's one pass (issue 26).

The definitions are ``model.surface.plan_surface_event`` (SURF-9), ``model.surface.splice``
(SURF-8) and ``model.migrate.with_markers`` (FMT-10).  The check asks them of nearly every event,
and most answers are the plain ones: an append whose provenance is well formed, the append of a
node, an event of a type that carries no dialect marker.  Those are answered here (natively, in
the compiled wheel); anything else goes to the definition, so a rejection, a replace and every
marker are the model's own.  ``tests/fast/test_fast_surface.py`` ties them to the definitions on
generated, real and mutated events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from model.jsonval import Json
from model.log import Dialect, Event, surface_types
from model.migrate import A55_ONLY_TYPES, D08_ONLY_TYPES, DialectEvidence
from model.migrate import with_markers as markers_by_definition
from model.rejected import Rejected
from model.surface import APPEND, SurfacePlan
from model.surface import plan_surface_event as plan_by_definition
from model.surface import splice as splice_by_definition
from sessionspec.fast.constants import ABSENT

T = TypeVar("T")

_ELIGIBLE: Final = {dialect: surface_types(dialect) for dialect in Dialect}


def plan_surface_event(nodes: Sequence[int], event: Event, events: Sequence[Event], dialect: Dialect) -> SurfacePlan | None | Rejected:
    """``model.surface.plan_surface_event``: SURF-9's checks in order, of which an append passes
    LOG-1 (its seq is the next), SURF-2 and SURF-3 (an eligible type marked ``"append"``) and
    SURF-4 (no ``sourceEventSeqs``, or a dense array of unique earlier non-negative safe integers,
    non-empty but on ``assistant/message``): its plan is the append."""
    op, seq = event.surface_op, event.seq
    if type(op) is str and op == "append" and seq == len(events) and event.type in _ELIGIBLE[dialect]:
        sources = event.source_event_seqs
        if sources is ABSENT or _earlier_unique_seqs(sources, seq, event.type == "assistant/message"):
            return SurfacePlan(seq=seq, op=APPEND)
    return plan_by_definition(nodes, event, events, dialect)


def splice(nodes: list[T], plan: SurfacePlan, node: T) -> list[T]:
    """``model.surface.splice`` (SURF-8: "An accepted append MUST push `seq` onto `nodes`"): an
    append pushes ``node`` and removes nothing; a replace is the definition's."""
    if plan.op is APPEND:
        nodes.append(node)
        return []
    return splice_by_definition(nodes, plan, node)


def _earlier_unique_seqs(sources: Json, seq: int, may_be_empty: bool) -> bool:
    if type(sources) is not tuple or not (sources or may_be_empty):
        return False
    for entry in sources:
        if type(entry) is not int or not 0 <= entry < seq:
            return False
    return len(set(sources)) == len(sources)


# FMT-10's markers are on these types only (``_d08_marker``, ``_a55_marker``: a type prefix, an only-type,
# or a shape of one of four types); an event of any other type leaves the evidence as it is.
_MARKER_PREFIXES: Final = ("compaction/", "compact/")
_MARKED_SHAPES: Final = frozenset({"assistant/message", "tool/result", "user/message", "request/header"})
_MAY_MARK: Final = D08_ONLY_TYPES | A55_ONLY_TYPES | _MARKED_SHAPES


def with_markers(evidence: DialectEvidence, event: Event) -> DialectEvidence:
    """``model.migrate.with_markers``: the evidence of the events before, and this event's markers
    where a dialect has none yet; an event of a type that carries none, or evidence that has both,
    is passed by."""
    kind = event.type  # first: most events are of a type that carries no marker
    if kind not in _MAY_MARK and not kind.startswith(_MARKER_PREFIXES):
        return evidence
    if evidence.a55_seq is not None and evidence.d08_seq is not None:
        return evidence
    return markers_by_definition(evidence, event)
