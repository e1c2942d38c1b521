"""Property predicates of RULES §16 for the surface (SURF): markers, replaces, positional ranges, the fold.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules it checks.  :data:`PROPERTY_PREDICATES`
maps each P-ID to its main predicate; ``tests/model/test_core_properties.py`` feeds them generated inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.jsonval import ABSENT, Json, JsonObject, deep_eq, obj
from sessionspec.model.log import Dialect, Event, make_event, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import SurfaceState, fold_surface, plan_surface_event
from sessionspec.spec.derivation_cache import CacheFactory


@implements("P-SURF-1")
def surface_marker_iff_eligible(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> str | None:
    """P-SURF-1 (SURF-2, SURF-3): in an accepted log, ``surfaceOp`` is present
    iff the type is surface-eligible, and ``sourceEventSeqs`` only on eligible types."""
    if isinstance(fold_surface(events, dialect), Rejected):
        return None
    eligible = surface_types(dialect)
    for event in events:
        if (event.surface_op is not ABSENT) != (event.type in eligible):
            return f"P-SURF-1: {event.type} at seq {event.seq} has surfaceOp iff it is not eligible"
        if event.source_event_seqs is not ABSENT and event.type not in eligible:
            return f"P-SURF-1: log-only {event.type} at seq {event.seq} carries sourceEventSeqs"
    return None


@implements("P-SURF-2")
def replaces_well_formed(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> str | None:
    """P-SURF-2 (SURF-4..6): every accepted replace has current endpoints in
    position order, and provenance that covers the shadowed seqs, is unique
    and cites only earlier seqs."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return None
    for r in fold.replacements:
        prov = events[r.seq].source_event_seqs
        if not isinstance(prov, tuple) or len(set(prov)) != len(prov):
            return f"P-SURF-2: the replace at seq {r.seq} has no unique provenance"
        if not all(isinstance(s, int) and 0 <= s < r.seq for s in prov):
            return f"P-SURF-2: the replace at seq {r.seq} cites a seq that is not earlier"
        if not set(r.shadowed) <= set(prov) or not r.shadowed:
            return f"P-SURF-2: the replace at seq {r.seq} does not cite every shadowed seq"
        if r.shadowed[0] != r.start or r.shadowed[-1] != r.end:
            return f"P-SURF-2: the replace at seq {r.seq} shadows a range other than start..end"
    return None


@implements("P-SURF-3")
def positional_range_accepted_iff_ordered(events: Sequence[Event], start: int, end: int) -> str | None:
    """P-SURF-3 (SURF-5, SURF-8): on the surface of an accepted log, a
    ``user/message`` replace ``{start, end}`` citing every node is accepted iff
    both seqs are current and ``index(start) <= index(end)`` — whatever the
    numeric order of the seqs."""
    fold = fold_surface(events)
    if isinstance(fold, Rejected):
        return None
    nodes = fold.state.nodes
    data = obj((("content", ()), ("source", obj((("kind", "user"),)))))
    op = obj((("op", "replace"), ("start", start), ("end", end)))
    candidate = make_event(
        "user/message", seq=len(events), time=0, data=data, source_event_seqs=tuple(nodes) or (0,), surface_op=op
    )
    plan = plan_surface_event(nodes, candidate, events)
    expected = start in nodes and end in nodes and nodes.index(start) <= nodes.index(end)
    accepted = not isinstance(plan, Rejected)
    if accepted != (expected and bool(nodes)):
        return f"P-SURF-3: replace {{start:{start}, end:{end}}} on surface {list(nodes)} accepted={accepted}"
    return None


def _without_content(data: Json) -> Json:
    if isinstance(data, JsonObject):
        return JsonObject((k, v) for k, v in data.items() if k != "content")
    return data


@implements("P-SURF-4")
def tool_result_replaces_single(events: Sequence[Event]) -> str | None:
    """P-SURF-4 (SURF-7): an accepted ``tool/result`` replace shadows exactly
    one current ``tool/result`` and changes only ``content``."""
    fold = fold_surface(events)
    if isinstance(fold, Rejected):
        return None
    for r in fold.replacements:
        event = events[r.seq]
        if event.type != "tool/result":
            continue
        if len(r.shadowed) != 1 or events[r.shadowed[0]].type != "tool/result":
            return f"P-SURF-4: the tool/result replace at seq {r.seq} does not shadow exactly one tool/result"
        if not deep_eq(_without_content(event.data), _without_content(events[r.shadowed[0]].data)):
            return f"P-SURF-4: the tool/result replace at seq {r.seq} changes more than content"
    return None


@implements("P-SURF-5")
def fold_equals_incremental(events: Sequence[Event], dialect: Dialect = Dialect.A55, *,
                            cache: CacheFactory) -> str | None:
    """P-SURF-5 (SURF-8, SURF-10): ``foldSurface`` equals the incremental
    manager after the same appends, and ``replaceGeneration`` is the number of
    accepted replaces."""
    fold = fold_surface(events, dialect)
    derivation = cache(dialect)
    for event in events:
        if derivation.append(event) is not None:
            return None if isinstance(fold, Rejected) else f"P-SURF-5: the incremental fold rejects seq {event.seq}, foldSurface accepts"
    if isinstance(fold, Rejected):
        return "P-SURF-5: foldSurface rejects a log the incremental fold accepts"
    replaces = sum(1 for e in events if isinstance(e.surface_op, JsonObject))
    if fold.state != SurfaceState(nodes=tuple(derivation.nodes), replace_generation=derivation.replace_generation):
        return "P-SURF-5: foldSurface and the incremental fold differ"
    if not fold.state.replace_generation == replaces == len(fold.replacements):
        return "P-SURF-5: replaceGeneration is not the number of accepted replaces"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-SURF-1": surface_marker_iff_eligible,
    "P-SURF-2": replaces_well_formed,
    "P-SURF-3": positional_range_accepted_iff_ordered,
    "P-SURF-4": tool_result_replaces_single,
    "P-SURF-5": fold_equals_incremental,
}
