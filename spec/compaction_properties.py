"""Property predicates of RULES §16.3 for compaction, the token meter and the prune.

Each predicate is a pure, total function returning ``True`` when the property
holds for its input; ``tests/test_compaction_properties.py`` feeds them
generated surfaces and logs.  Docstrings name the P-ID and the rules checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from model.compaction import (
    CompactConfig,
    CompactionRun,
    Range,
    RegionOutcome,
    audit_compactions,
    balanced_cuts,
    compact_spec,
    is_checkpoint_source,
    routed_target,
    select_range,
    target_policy,
)
from model.derive import derive
from model.header import EpochHeader
from model.jsonval import ABSENT, Json, JsonObject, get
from model.log import Dialect, Event
from model.meter import estimate_header, measure, node_price
from model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, prune_session
from model.rejected import Rejected
from model.surface import fold_surface


def success_bracket_well_formed(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-1 (CMP-15, CMP-22): start, summary, checkpoint replace, end;
    shadowedSeqs are the positional range; provenance ``[start, summary] ++ shadowed``."""
    if outcome.result is None:
        return True
    prefix = "compact/" if dialect is Dialect.A55 else "compaction/"
    types = [e.type for e in outcome.events]
    if types != [prefix + "start", prefix + "summary", "user/message", prefix + "end"]:
        return False
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return False
    nodes = fold.state.nodes
    r = outcome.result
    i, j = nodes.index(r.shadowed_range.start), nodes.index(r.shadowed_range.end)
    start, summary, checkpoint, _ = outcome.events
    return (
        r.shadowed_seqs == nodes[i : j + 1]
        and get(summary.data, "shadowedSeqs") == r.shadowed_seqs
        and checkpoint.source_event_seqs == (start.seq, summary.seq, *r.shadowed_seqs)
        and is_checkpoint_source(get(checkpoint.data, "source"))
    )


def failure_leaves_surface(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-2 (CMP-23): a failed transaction ends with an error end and the surface is unchanged."""
    if outcome.error is None:
        return True
    before, after = fold_surface(events, dialect), fold_surface([*events, *outcome.events], dialect)
    if isinstance(before, Rejected) or isinstance(after, Rejected) or not outcome.events:
        return not outcome.events
    return after.state == before.state and get(outcome.events[-1].data, "error") is not ABSENT


def range_balanced(events: Sequence[Event], chosen: Range, dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-3 (CMP-10, CMP-11, CMP-13): both edges of a range are balanced cuts."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return False
    nodes = fold.state.nodes
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return False
    return balanced[nodes.index(chosen.start)] and balanced[nodes.index(chosen.end) + 1]


def retention_minimal(
    priced: Sequence[tuple[int, int]], nodes: Sequence[int], events: Sequence[Event], retain: int, dialect: Dialect = Dialect.A55
) -> bool:
    """P-CMP-4 (CMP-11, CMP-12): head-anchored; never the whole surface; the
    retained tail is the shortest reaching ``retain``, rounded head-ward to the
    nearest balanced cut."""
    chosen = select_range(priced, nodes, events, retain, dialect)
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(chosen, Rejected) or isinstance(balanced, Rejected):
        return isinstance(chosen, Rejected) and isinstance(balanced, Rejected)
    tokens = [t for _, t in priced]
    # The unrounded cut: the largest k whose tail sum reaches retain (k < n).
    raw = next((k for k in range(len(nodes) - 1, -1, -1) if sum(tokens[k:]) >= retain), 0)
    expected = next((k for k in range(raw, 0, -1) if balanced[k]), 0)
    if chosen is None:
        return expected == 0
    return chosen.start == nodes[0] and chosen.end == nodes[expected - 1]


def surface_shrinks(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-6 (CMP-21): a committed summary compaction strictly lowers ``surfaceTokens``."""
    if outcome.result is None:
        return True
    before, after = measure(events, dialect), measure([*events, *outcome.events], dialect)
    if isinstance(before, Rejected) or isinstance(after, Rejected):
        return False
    return after.surface_tokens < before.surface_tokens


def audit_clean(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-7 (CMP-14, CMP-25) and P-DIA-2: the compaction audit finds nothing."""
    return audit_compactions(events, dialect) == ()


def pressure_gated(events: Sequence[Event], run: CompactionRun, config: CompactConfig, context_window: int,
                   dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-9 (CMP-5, CMP-8): no events without a routed header or below the threshold."""
    target = routed_target(events, dialect)
    if target is None:
        return run.events == ()
    spec = compact_spec(target_policy(config, target.provider, target.model), context_window, "t")
    m = measure(events, dialect)
    if isinstance(spec, Rejected) or isinstance(m, Rejected):
        return True
    return m.total_tokens >= spec.threshold_tokens or run.events == ()


def bounded_transactions(run: CompactionRun, config: CompactConfig, dialect: Dialect = Dialect.A55) -> bool:
    """P-CMP-12 (CMP-8): at most ``compactionRetries + 1`` transactions per call."""
    start = "compact/start" if dialect is Dialect.A55 else "compaction/start"
    return sum(1 for e in run.events if e.type == start) <= config.compaction_retries + 1


def total_is_header_plus_nodes(events: Sequence[Event], header: EpochHeader, dialect: Dialect = Dialect.A55) -> bool:
    """P-MTR-1 (MTR-4, MTR-10): without a reusable anchor the total is
    ``estimateHeader(h) + Σ node tokens`` (the prefix counted via the header only)."""
    m = measure(events, dialect, override=header)
    if isinstance(m, Rejected):
        return True
    if m.baseline.kind.value == "usage" or m.surface_delta_tokens != 0:
        return True  # a reusable anchor: P-MTR-1 does not apply
    return m.total_tokens == estimate_header(header, dialect) + sum(n.tokens for n in m.nodes)


def override_keeps_nodes(events: Sequence[Event], header: EpochHeader, dialect: Dialect = Dialect.A55) -> bool:
    """P-MTR-2 (MTR-10): an override never changes nodes or surfaceTokens."""
    a, b = measure(events, dialect), measure(events, dialect, override=header)
    if isinstance(a, Rejected) or isinstance(b, Rejected):
        return isinstance(a, Rejected) and isinstance(b, Rejected)
    return a.nodes == b.nodes and a.surface_tokens == b.surface_tokens


def meter_nodes_are_surface(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> bool:
    """P-MTR-3 (MTR-7): meter nodes equal surface nodes seq-for-seq with MTR-7 prices."""
    m, fold = measure(events, dialect), fold_surface(events, dialect)
    if isinstance(m, Rejected) or isinstance(fold, Rejected):
        return True
    return tuple(n.seq for n in m.nodes) == fold.state.nodes and all(
        node_price(events[n.seq], dialect) == n.tokens for n in m.nodes
    ) and m.surface_tokens == sum(n.tokens for n in m.nodes)


def prune_content_bounds(blocks: Json, config: PruneConfig) -> bool:
    """P-PRN-1 (PRN-2, PRN-3): CP ≤ threshold and < input, one marker, head and
    tail preserved, non-text blocks kept in order."""
    out = prune_content(blocks, config)
    if out is None:
        return content_chars(blocks) <= config.threshold_chars
    if isinstance(out, Rejected) or not isinstance(blocks, tuple):
        return False
    before, after = _text(blocks), _text(out)
    non_text_in = [b for b in blocks if get(b, "type") != "text"]
    non_text_out = [b for b in out if get(b, "type") != "text"]
    head, tail = before[: config.head_chars], before[len(before) - config.tail_chars :] if config.tail_chars else ""
    return (
        content_chars(out) <= config.threshold_chars
        and content_chars(out) < content_chars(blocks)
        and after.count(PRUNE_MARKER) >= 1
        and after == head + PRUNE_MARKER + tail
        and non_text_in == non_text_out
    )


def _text(blocks: Sequence[Json]) -> str:
    return "".join(str(get(b, "text")) for b in blocks if get(b, "type") == "text" and isinstance(get(b, "text"), str))


def prune_idempotent(events: Sequence[Event], config: PruneConfig, dialect: Dialect = Dialect.A55) -> bool:
    """P-PRN-2 (PRN-4, PRN-5): single-node replaces citing ``[seq]``; a second
    pass is empty; replay reproduces the derivation and generation."""
    first = prune_session(events, config, dialect=dialect)
    if isinstance(first, Rejected):
        return True
    log = [*events, *first]
    for event in first:
        op = event.surface_op
        if event.type == "tool/result" and not (
            isinstance(op, JsonObject) and op["start"] == op["end"] and event.source_event_seqs == (op["start"],)
        ):
            return False
    again = prune_session(log, config, dialect=dialect)
    fold_a, fold_b = fold_surface(log, dialect), fold_surface(list(log), dialect)
    return (
        again == ()
        and not isinstance(fold_a, Rejected)
        and not isinstance(fold_b, Rejected)
        and fold_a.state == fold_b.state
        and derive(log, dialect) == derive(list(log), dialect)
    )


def d08_bracket_adjacent(events: Sequence[Event]) -> bool:
    """P-DIA-2 (DIA-2, DIA-16): D08 checkpoint/end adjacency and matching ids."""
    return not any(f.rule in ("DIA-16", "DIA-19") for f in audit_compactions(events, Dialect.D08))


PROPERTY_PREDICATES: Final[dict[str, Callable[..., bool]]] = {
    "P-CMP-1": success_bracket_well_formed,
    "P-CMP-2": failure_leaves_surface,
    "P-CMP-3": range_balanced,
    "P-CMP-4": retention_minimal,
    "P-CMP-6": surface_shrinks,
    "P-CMP-7": audit_clean,
    "P-CMP-9": pressure_gated,
    "P-CMP-12": bounded_transactions,
    "P-MTR-1": total_is_header_plus_nodes,
    "P-MTR-2": override_keeps_nodes,
    "P-MTR-3": meter_nodes_are_surface,
    "P-PRN-1": prune_content_bounds,
    "P-PRN-2": prune_idempotent,
    "P-DIA-2": d08_bracket_adjacent,
}
