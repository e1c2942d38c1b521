"""Property predicates of RULES §16.3 for compaction: a region's bracket, the range, retention, the run.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules checked.
``tests/model/test_compaction_properties.py`` feeds them generated surfaces and logs.  What the loop writes
when it compacts is checked by ``spec/loop_compaction_properties.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.compaction import (
    CompactConfig,
    CompactionRun,
    Range,
    RegionOutcome,
    balanced_cuts,
    compact_spec,
    is_checkpoint_source,
    routed_target,
    select_range,
    target_policy,
)
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import measure
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface

# A log audit under test (the checker's compaction audit is one): every finding of a log in a
# dialect, empty for a valid log.  P-CMP-7 and P-DIA-2 are stated against the audit passed in,
# so spec/ needs no checker.
LogAudit = Callable[[Sequence[Event], Dialect], Sequence[Rejected]]


@implements("P-CMP-1")
def success_bracket_well_formed(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-1 (CMP-15, CMP-22): start, summary, checkpoint replace, end;
    shadowedSeqs are the positional range; provenance ``[start, summary] ++ shadowed``."""
    if outcome.result is None:
        return None
    prefix = "compact/" if dialect is Dialect.A55 else "compaction/"
    types = [e.type for e in outcome.events]
    if types != [prefix + "start", prefix + "summary", "user/message", prefix + "end"]:
        return f"P-CMP-1: a success appends {types}"
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return f"P-CMP-1: the log before the bracket has no surface: {fold}"
    nodes = fold.state.nodes
    r = outcome.result
    i, j = nodes.index(r.shadowed_range.start), nodes.index(r.shadowed_range.end)
    start, summary, checkpoint, _ = outcome.events
    if r.shadowed_seqs != nodes[i : j + 1] or get(summary.data, "shadowedSeqs") != r.shadowed_seqs:
        return "P-CMP-1: shadowedSeqs are not the positional range of the surface"
    if checkpoint.source_event_seqs != (start.seq, summary.seq, *r.shadowed_seqs):
        return "P-CMP-1: the checkpoint provenance is not [start, summary] ++ shadowed"
    if not is_checkpoint_source(get(checkpoint.data, "source")):
        return "P-CMP-1: the checkpoint source is not the compaction's"
    return None


@implements("P-CMP-2")
def failure_leaves_surface(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-2 (CMP-23): a failed transaction ends with an error end and the surface is unchanged."""
    if outcome.error is None or not outcome.events:
        return None
    before, after = fold_surface(events, dialect), fold_surface([*events, *outcome.events], dialect)
    if isinstance(before, Rejected) or isinstance(after, Rejected):
        return "P-CMP-2: a failed transaction appended events to a log without a surface"
    if after.state != before.state:
        return "P-CMP-2: a failed transaction changed the surface"
    if get(outcome.events[-1].data, "error") is ABSENT:
        return "P-CMP-2: a failed transaction does not end with an error end"
    return None


@implements("P-CMP-3")
def range_balanced(events: Sequence[Event], chosen: Range, dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-3 (CMP-10, CMP-11, CMP-13): both edges of a range are balanced cuts."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return f"P-CMP-3: the log has no surface: {fold}"
    nodes = fold.state.nodes
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return f"P-CMP-3: the surface is not balanced: {balanced}"
    if not (balanced[nodes.index(chosen.start)] and balanced[nodes.index(chosen.end) + 1]):
        return f"P-CMP-3: the range {chosen.start}..{chosen.end} splits a tool call from its result"
    return None


@implements("P-CMP-4")
def retention_minimal(
    priced: Sequence[tuple[int, int]], nodes: Sequence[int], events: Sequence[Event], retain: int, dialect: Dialect = Dialect.A55
) -> str | None:
    """P-CMP-4 (CMP-11, CMP-12): head-anchored; never the whole surface; the
    retained tail is the shortest reaching ``retain``, rounded head-ward to the
    nearest balanced cut."""
    chosen = select_range(priced, nodes, events, retain, dialect)
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(chosen, Rejected) or isinstance(balanced, Rejected):
        if isinstance(chosen, Rejected) and isinstance(balanced, Rejected):
            return None
        return "P-CMP-4: the selection and the balance counter disagree on rejecting the surface"
    tokens = [t for _, t in priced]
    # The unrounded cut: the largest k whose tail sum reaches retain (k < n).
    raw = next((k for k in range(len(nodes) - 1, -1, -1) if sum(tokens[k:]) >= retain), 0)
    expected = next((k for k in range(raw, 0, -1) if balanced[k]), 0)
    if chosen is None:
        return None if expected == 0 else f"P-CMP-4: no range selected, expected the head up to index {expected - 1}"
    if chosen.start != nodes[0] or expected == 0 or chosen.end != nodes[expected - 1]:
        return f"P-CMP-4: selected {chosen.start}..{chosen.end}, expected the head up to index {expected - 1}"
    return None


@implements("P-CMP-6")
def surface_shrinks(events: Sequence[Event], outcome: RegionOutcome, dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-6 (CMP-21): a committed summary compaction strictly lowers ``surfaceTokens``."""
    if outcome.result is None:
        return None
    before, after = measure(events, dialect), measure([*events, *outcome.events], dialect)
    if isinstance(before, Rejected) or isinstance(after, Rejected):
        return "P-CMP-6: the meter rejects the log around the compaction"
    if after.surface_tokens >= before.surface_tokens:
        return f"P-CMP-6: surfaceTokens went from {before.surface_tokens} to {after.surface_tokens}"
    return None


@implements("P-CMP-7")
def audit_clean(events: Sequence[Event], dialect: Dialect = Dialect.A55, *, audit: LogAudit) -> str | None:
    """P-CMP-7 (CMP-14, CMP-25) and P-DIA-2: the compaction audit finds nothing."""
    findings = audit(events, dialect)
    return f"P-CMP-7: the compaction audit finds {findings[0]}" if findings else None


@implements("P-CMP-9")
def pressure_gated(events: Sequence[Event], run: CompactionRun, config: CompactConfig, context_window: int,
                   dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-9 (CMP-5, CMP-8): no events without a routed header or below the threshold."""
    target = routed_target(events, dialect)
    if target is None:
        return None if run.events == () else "P-CMP-9: compaction wrote events without a routed header"
    spec = compact_spec(target_policy(config, target.provider, target.model), context_window, "t")
    m = measure(events, dialect)
    if isinstance(spec, Rejected) or isinstance(m, Rejected):
        return None
    if m.total_tokens < spec.threshold_tokens and run.events != ():
        return f"P-CMP-9: compaction wrote events at {m.total_tokens} tokens, below the threshold {spec.threshold_tokens}"
    return None


@implements("P-CMP-12")
def bounded_transactions(run: CompactionRun, config: CompactConfig, dialect: Dialect = Dialect.A55) -> str | None:
    """P-CMP-12 (CMP-8): at most ``compactionRetries + 1`` transactions per call."""
    start = "compact/start" if dialect is Dialect.A55 else "compaction/start"
    count = sum(1 for e in run.events if e.type == start)
    if count > config.compaction_retries + 1:
        return f"P-CMP-12: {count} transactions with compactionRetries {config.compaction_retries}"
    return None


@implements("P-DIA-2")
def d08_bracket_adjacent(events: Sequence[Event], *, audit: LogAudit) -> str | None:
    """P-DIA-2 (DIA-2, DIA-16): D08 checkpoint/end adjacency and matching ids."""
    found = next((f for f in audit(events, Dialect.D08) if f.rule in ("DIA-16", "DIA-19")), None)
    return None if found is None else f"P-DIA-2: {found}"


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-CMP-1": success_bracket_well_formed,
    "P-CMP-2": failure_leaves_surface,
    "P-CMP-3": range_balanced,
    "P-CMP-4": retention_minimal,
    "P-CMP-6": surface_shrinks,
    "P-CMP-7": audit_clean,
    "P-CMP-9": pressure_gated,
    "P-CMP-12": bounded_transactions,
    "P-DIA-2": d08_bracket_adjacent,
}
