"""Property predicates of RULES §16.3 for the token meter (MTR): the total, the override, the nodes.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules checked.
``tests/model/test_compaction_properties.py`` feeds them generated logs and headers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.header import EpochHeader
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import estimate_header, measure, node_price
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface


@implements("P-MTR-1")
def total_is_header_plus_nodes(events: Sequence[Event], header: EpochHeader, dialect: Dialect = Dialect.A55) -> str | None:
    """P-MTR-1 (MTR-4, MTR-10): without a reusable anchor the total is
    ``estimateHeader(h) + Σ node tokens`` (the prefix counted via the header only)."""
    m = measure(events, dialect, override=header)
    if isinstance(m, Rejected):
        return None
    if m.baseline.kind.value == "usage" or m.surface_delta_tokens != 0:
        return None  # a reusable anchor: P-MTR-1 does not apply
    expected = estimate_header(header, dialect) + sum(n.tokens for n in m.nodes)
    return None if m.total_tokens == expected else f"P-MTR-1: total {m.total_tokens} != header + nodes {expected}"


@implements("P-MTR-2")
def override_keeps_nodes(events: Sequence[Event], header: EpochHeader, dialect: Dialect = Dialect.A55) -> str | None:
    """P-MTR-2 (MTR-10): an override never changes nodes or surfaceTokens."""
    a, b = measure(events, dialect), measure(events, dialect, override=header)
    if isinstance(a, Rejected) or isinstance(b, Rejected):
        return None if isinstance(a, Rejected) and isinstance(b, Rejected) else "P-MTR-2: an override changes whether the meter rejects"
    if a.nodes != b.nodes or a.surface_tokens != b.surface_tokens:
        return "P-MTR-2: an override changes nodes or surfaceTokens"
    return None


@implements("P-MTR-3")
def meter_nodes_are_surface(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> str | None:
    """P-MTR-3 (MTR-7): meter nodes equal surface nodes seq-for-seq with MTR-7 prices."""
    m, fold = measure(events, dialect), fold_surface(events, dialect)
    if isinstance(m, Rejected) or isinstance(fold, Rejected):
        return None
    if tuple(n.seq for n in m.nodes) != fold.state.nodes:
        return "P-MTR-3: the meter's nodes are not the surface nodes"
    wrong = next((n for n in m.nodes if node_price(events[n.seq], dialect) != n.tokens), None)
    if wrong is not None:
        return f"P-MTR-3: node {wrong.seq} is priced {wrong.tokens}, not its MTR-7 price"
    if m.surface_tokens != sum(n.tokens for n in m.nodes):
        return "P-MTR-3: surfaceTokens is not the sum of the node prices"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-MTR-1": total_is_header_plus_nodes,
    "P-MTR-2": override_keeps_nodes,
    "P-MTR-3": meter_nodes_are_surface,
}
