"""Property predicates of RULES §16.3 for compaction, the token meter and the prune.

Each predicate is a pure, total function named after what it protects,
carries ``@implements`` with its property ID, and returns ``None`` when the
property holds for its input, else the violation in words (starting with the
P-ID).  ``tests/model/test_compaction_properties.py`` feeds them generated surfaces
and logs; the loop's state machines feed them the loop's logs.  Docstrings name
the P-ID and the rules checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final, final

from model.compaction import (
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
from model.derive import derive, derive_nodes, project
from model.header import EpochHeader, latest_header, prefix_messages
from model.jsonval import ABSENT, Json, JsonObject, get, js_stringify
from model.log import Dialect, Event
from model.loop import SentRequest
from model.meter import estimate_header, measure, node_price
from model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, prune_session
from model.rejected import Rejected
from model.rules import implements
from model.surface import fold_surface

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


@implements("P-PRN-1")
def prune_content_bounds(blocks: Json, config: PruneConfig) -> str | None:
    """P-PRN-1 (PRN-2, PRN-3): CP ≤ threshold and < input, one marker, head and
    tail preserved, non-text blocks kept in order."""
    out = prune_content(blocks, config)
    if out is None:
        return None if content_chars(blocks) <= config.threshold_chars else "P-PRN-1: content above the threshold is not pruned"
    if isinstance(out, Rejected) or not isinstance(blocks, tuple):
        return f"P-PRN-1: pruneContent rejects or prunes a non-list: {out}"
    before, after = _text(blocks), _text(out)
    non_text_in = [b for b in blocks if get(b, "type") != "text"]
    non_text_out = [b for b in out if get(b, "type") != "text"]
    head, tail = before[: config.head_chars], before[len(before) - config.tail_chars :] if config.tail_chars else ""
    if content_chars(out) > config.threshold_chars or content_chars(out) >= content_chars(blocks):
        return "P-PRN-1: the pruned content is not below the threshold and the input"
    if after.count(PRUNE_MARKER) < 1 or after != head + PRUNE_MARKER + tail:
        return "P-PRN-1: the pruned text is not head ++ marker ++ tail"
    if non_text_in != non_text_out:
        return "P-PRN-1: the non-text blocks changed"
    return None


def _text(blocks: Sequence[Json]) -> str:
    return "".join(str(get(b, "text")) for b in blocks if get(b, "type") == "text" and isinstance(get(b, "text"), str))


@implements("P-PRN-2")
def prune_idempotent(events: Sequence[Event], config: PruneConfig, dialect: Dialect = Dialect.A55) -> str | None:
    """P-PRN-2 (PRN-4, PRN-5): single-node replaces citing ``[seq]``; a second
    pass is empty; replay reproduces the derivation and generation."""
    first = prune_session(events, config, dialect=dialect)
    if isinstance(first, Rejected):
        return None
    log = [*events, *first]
    for event in first:
        op = event.surface_op
        if event.type == "tool/result" and not (
            isinstance(op, JsonObject) and op["start"] == op["end"] and event.source_event_seqs == (op["start"],)
        ):
            return f"P-PRN-2: the prune at seq {event.seq} is not a single-node replace citing [seq]"
    again = prune_session(log, config, dialect=dialect)
    fold_a, fold_b = fold_surface(log, dialect), fold_surface(list(log), dialect)
    if isinstance(again, Rejected):
        return f"P-PRN-2: a second pass rejects the pruned log: {again}"
    if again != ():
        return f"P-PRN-2: a second pass prunes {len(again)} more events"
    if isinstance(fold_a, Rejected) or isinstance(fold_b, Rejected) or fold_a.state != fold_b.state:
        return "P-PRN-2: replay does not reproduce the surface"
    if derive(log, dialect) != derive(list(log), dialect):
        return "P-PRN-2: replay does not reproduce the derivation"
    return None


@implements("P-DIA-2")
def d08_bracket_adjacent(events: Sequence[Event], *, audit: LogAudit) -> str | None:
    """P-DIA-2 (DIA-2, DIA-16): D08 checkpoint/end adjacency and matching ids."""
    found = next((f for f in audit(events, Dialect.D08) if f.rule in ("DIA-16", "DIA-19")), None)
    return None if found is None else f"P-DIA-2: {found}"


# ---------------------------------------------------------------- compaction on the loop (the machines)
#
# These take what the loop model wrote (an A55 log, the loop requests and the
# summarizer calls); the state machines assert on them.


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Bracket:
    """Indexes of one ``compact/*`` bracket in the log (None: not written)."""

    start: int
    summary: int | None = None
    checkpoint: int | None = None
    end: int | None = None


def brackets(log: Sequence[Event]) -> tuple[Bracket, ...]:
    """Every A55 bracket in log order (CMP-1, CMP-22)."""
    found: list[Bracket] = []
    for index, event in enumerate(log):
        if event.type == "compact/start":
            found.append(Bracket(start=index))
        elif not found or found[-1].end is not None:
            continue
        elif event.type == "compact/summary":
            found[-1] = replace(found[-1], summary=index)
        elif event.type == "user/message" and is_checkpoint_source(get(event.data, "source")):
            found[-1] = replace(found[-1], checkpoint=index)
        elif event.type == "compact/end":
            found[-1] = replace(found[-1], end=index)
    return tuple(found)


def is_compaction_event(event: Event) -> bool:
    """A ``compact/*`` event or a replace (checkpoint or prune): only compaction rewrites the surface."""
    return event.type.startswith("compact/") or isinstance(event.surface_op, JsonObject)


def _shadowed(log: Sequence[Event], b: Bracket) -> tuple[int, ...]:
    seqs = get(log[b.summary].data, "shadowedSeqs") if b.summary is not None else ()
    return tuple(s for s in seqs if isinstance(s, int)) if isinstance(seqs, tuple) else ()


def _js(value: Json | Rejected) -> str:
    return repr(value) if isinstance(value, Rejected) else js_stringify(value)


def _prefix(log: Sequence[Event]) -> tuple[Json, ...]:
    """``messagePrefix or []`` of the latest header of ``log``."""
    header = latest_header(log)
    return () if isinstance(header, Rejected) else prefix_messages(header)


@implements("P-CMP-5")
def compaction_leaves_envelope(log: Sequence[Event], requests: Sequence[SentRequest] = (), since: int = 0) -> str | None:
    """P-CMP-5 (CMP-16, CMP-24, PFX-9): compaction never touches prefix, system,
    tools or config — no header event inside a bracket; the history right after a
    committed bracket is ``[checkpoint, retained…]`` (the shadowed head replaced
    by the one checkpoint, the retained tail unchanged); and every later request
    is ``prefix ++ [checkpoint, …]``: the logged prefix first, the checkpoint right after it.
    Brackets starting before ``since`` are taken as already checked."""
    committed: list[Bracket] = []
    for b in brackets(log):
        if b.start < since:
            if b.checkpoint is not None:
                committed.append(b)
            continue
        stop = len(log) if b.end is None else b.end + 1
        if any(e.type == "request/header" for e in log[b.start:stop]):
            return f"P-CMP-5: a request/header inside the compaction bracket at seq {b.start}"
        if b.checkpoint is None:
            continue
        committed.append(b)
        before, after = derive(log[: b.start]), derive(log[: b.checkpoint + 1])
        gone = derive_nodes(_shadowed(log, b), log)
        checkpoint = project(log[b.checkpoint])
        if isinstance(before, Rejected) or isinstance(after, Rejected) or isinstance(gone, Rejected) or \
                not isinstance(checkpoint, JsonObject):
            return f"P-CMP-5: the log around the bracket at seq {b.start} does not derive"
        if _js(after) != _js((checkpoint, *before[len(gone):])):
            return f"P-CMP-5: the history after the bracket at seq {b.start} is not [checkpoint, retained...]"
    for sent in requests:
        prefix = _prefix(log[: sent.dispatch_len])
        messages = sent.request.messages
        if _js(tuple(messages[: len(prefix)])) != _js(prefix):
            return f"P-CMP-5: request of turn {sent.turn} step {sent.step} does not start with its prefix"
        if not any(b.end is not None and b.end < sent.step_start_seq for b in committed):
            continue
        fold = fold_surface(log[: sent.step_start_seq])
        if isinstance(fold, Rejected) or not fold.state.nodes:
            return f"P-CMP-5: no surface before the request of turn {sent.turn} step {sent.step}"
        head = log[fold.state.nodes[0]]
        checkpoint = project(head)
        if not is_checkpoint_source(get(head.data, "source")) or len(messages) <= len(prefix) or \
                isinstance(checkpoint, Rejected) or _js(messages[len(prefix)]) != _js(checkpoint):
            return f"P-CMP-5: request of turn {sent.turn} step {sent.step} is not prefix ++ [checkpoint, ...]"
    return None


@implements("P-CMP-3")
def compactions_keep_tool_pairs(log: Sequence[Event], since: int = 0) -> str | None:
    """P-CMP-3 (CMP-10, CMP-11, CMP-13) on the loop's log: every compacted range
    (of a bracket starting at or after ``since``) is balanced on both edges at
    the time it was summarised — no tool call is ever compacted away from its result."""
    for b in brackets(log):
        if b.summary is None or b.start < since:
            continue
        rng = get(log[b.summary].data, "shadowedRange")
        start, end = get(rng, "start"), get(rng, "end")
        if not isinstance(start, int) or not isinstance(end, int):
            return f"P-CMP-3: malformed shadowedRange at seq {b.summary}"
        nodes = fold_surface(log[: b.summary])
        if isinstance(nodes, Rejected) or start not in nodes.state.nodes or end not in nodes.state.nodes:
            return f"P-CMP-3: the range at seq {b.summary} is not on the surface"
        if range_balanced(log[: b.summary], Range(start=start, end=end)) is not None:
            return f"P-CMP-3: the compaction at seq {b.start} splits a tool call from its result"
    return None


@implements("P-CMP-4")
def compactions_resummarize_head(log: Sequence[Event], summarizer_requests: Sequence[tuple[int, JsonObject]] = (),
                                 since: int = 0) -> str | None:
    """P-CMP-4 (CMP-11, CMP-12, CMP-16) on the loop's log: every range is the
    head of the surface, so a re-compaction re-summarises the previous checkpoint
    (it is the first shadowed node); each summarizer request (``(dispatch length,
    request)``) is ``prefix ++ derive(shadowed) ++ [instruction]``.  Brackets
    starting before ``since`` are taken as already checked."""
    sent = dict(summarizer_requests)
    previous: int | None = None
    for b in brackets(log):
        shadowed = _shadowed(log, b)
        if b.summary is not None and b.start >= since:
            fold = fold_surface(log[: b.start])
            if isinstance(fold, Rejected) or fold.state.nodes[: len(shadowed)] != shadowed:
                return f"P-CMP-4: the range at seq {b.start} is not the head of the surface"
            if previous is not None and previous in fold.state.nodes and shadowed[:1] != (previous,):
                return f"P-CMP-4: the compaction at seq {b.start} does not re-summarise the checkpoint {previous}"
            request = sent.get(b.start + 1)
            if request is not None:
                expected = (*_prefix(log[: b.start]), *_ok(derive_nodes(shadowed, log)))
                messages = get(request, "messages")
                if not isinstance(messages, tuple) or _js(messages[:-1]) != _js(expected):
                    return f"P-CMP-4: the summarizer request at seq {b.start} is not prefix ++ the shadowed messages"
        if b.checkpoint is not None:
            previous = b.checkpoint
    return None


def _ok(messages: tuple[JsonObject, ...] | Rejected) -> tuple[JsonObject, ...]:
    return () if isinstance(messages, Rejected) else messages


def _step_of(log: Sequence[Event], end_index: int) -> tuple[int, bool]:
    """The ``step/start`` index of the step closed at ``end_index`` and whether it succeeded."""
    for index in range(end_index - 1, -1, -1):
        if log[index].type == "step/start":
            return index, any(e.type == "assistant/message" for e in log[index:end_index])
    return -1, False


@implements("P-CMP-10")
def overflow_retry_iff_compacted(log: Sequence[Event]) -> str | None:
    """P-CMP-10 (CMP-7, LOOP-14): compaction outside a step happens only between a
    failed step's ``step/end`` and the next ``step/start``/``turn/end``; with the
    default decision ``fail``, the turn retries (a new ``step/start``) iff that
    recovery advanced the replace generation (a replace landed)."""
    index = 0
    while index < len(log):
        if log[index].type != "step/end":
            index += 1
            continue
        after = index + 1
        while after < len(log) and is_compaction_event(log[after]):
            after += 1
        window = log[index + 1: after]
        if window:
            _, succeeded = _step_of(log, index)
            if succeeded:
                return f"P-CMP-10: compaction after the successful step closed at seq {index}"
            retried = after < len(log) and log[after].type == "step/start"
            advanced = any(isinstance(e.surface_op, JsonObject) for e in window)
            if retried != advanced:
                return f"P-CMP-10: after the overflow at seq {index} retry={retried} but replace generation advanced={advanced}"
        index = after
    open_step = False
    for event in log:
        if event.type in ("step/start", "step/end"):
            open_step = event.type == "step/start"
        elif is_compaction_event(event) and not open_step and not _in_overflow_window(log, event.seq):
            return f"P-CMP-10: compaction at seq {event.seq} outside any step and not after a failed step"
    return None


def _in_overflow_window(log: Sequence[Event], seq: int) -> bool:
    index = seq - 1
    while index >= 0 and is_compaction_event(log[index]):
        index -= 1
    return index >= 0 and log[index].type == "step/end" and not _step_of(log, index)[1]


@implements("P-CMP-11")
def pressure_compaction_closes_step(log: Sequence[Event]) -> str | None:
    """P-CMP-11 (CMP-6, LOOP-13): a compaction inside a step (pressure, or a
    manual post-step request) lies after the step's assistant message and its
    tool results and before its ``step/end``: nothing of the step follows it."""
    in_step = False
    compacted = False
    answered = False
    for event in log:
        if event.type == "step/start":
            in_step, compacted, answered = True, False, False
        elif event.type == "step/end":
            in_step = False
        elif in_step and is_compaction_event(event):
            if not answered:
                return f"P-CMP-11: compaction at seq {event.seq} before the step's assistant message"
            compacted = True
        elif in_step:
            answered = answered or event.type == "assistant/message"
            if compacted:
                return f"P-CMP-11: {event.type} at seq {event.seq} follows a compaction inside its step"
    return None


@implements("P-PRN-3")
def prunes_only_under_pressure(log: Sequence[Event], since: int = 0) -> str | None:
    """P-PRN-3 (PRN-6) on the loop's log: prunes (content-only ``tool/result``
    replaces) happen only inside an open turn, at a step's post-step (pressure)
    or after a failed step (overflow); and a prune changes only the pruned
    content: ``derive`` before and after differ in that one message's ``content``.
    Prunes before ``since`` are taken as already checked."""
    open_turn = False
    for index, event in enumerate(log):
        if event.type in ("turn/start", "turn/end"):
            open_turn = event.type == "turn/start"
        if event.type != "tool/result" or not isinstance(event.surface_op, JsonObject) or index < since:
            continue
        if not open_turn:
            return f"P-PRN-3: prune at seq {event.seq} outside an open turn"
        before, after = derive(log[:index]), derive(log[: index + 1])
        if isinstance(before, Rejected) or isinstance(after, Rejected) or len(before) != len(after):
            return f"P-PRN-3: the prune at seq {event.seq} changes the shape of the history"
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if _js(a) != _js(b)]
        if len(changed) != 1:
            return f"P-PRN-3: the prune at seq {event.seq} changes {len(changed)} messages"
        a, b = before[changed[0]], after[changed[0]]
        if _js(JsonObject((k, v) for k, v in a.items() if k != "content")) != \
                _js(JsonObject((k, v) for k, v in b.items() if k != "content")):
            return f"P-PRN-3: the prune at seq {event.seq} changes more than the content"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
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
    "P-CMP-5": compaction_leaves_envelope,
    "P-CMP-10": overflow_retry_iff_compacted,
    "P-CMP-11": pressure_compaction_closes_step,
    "P-PRN-3": prunes_only_under_pressure,
}
