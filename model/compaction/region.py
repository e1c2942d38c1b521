"""The region transaction (CMP-13..CMP-25, DIA-16): one bracket, as the events it appends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sessionspec.model.compaction.cancellation import AbortPoint, stops_when_aborted
from sessionspec.model.compaction.contracts import region_holds  # noqa: F401 - the post: line reads it
from sessionspec.model.compaction.dialect import CompactionRules, rules_of
from sessionspec.model.compaction.policy import Target, routed_target
from sessionspec.model.compaction.records import (
    NO_IDS,
    Ids,
    Range,
    RegionOutcome,
    RegionResult,
    Summarizer,
    SummarizerOutput,
    SummaryCall,
)
from sessionspec.model.compaction.retention import balanced_cuts
from sessionspec.model.compaction.summary import check_summary_smaller, frame_summary, summary_text_blocks
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.meter import Measurement, measure
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface


@implements("CMP-19", "CMP-24")
def compact_region(
    events: Sequence[Event],
    start: int,
    end: int,
    summarizer: Summarizer,
    *,
    dialect: Dialect = Dialect.A55,
    max_tokens: int = 8192,
    summarization_target: Target | None = None,
    ids: Ids = NO_IDS,
    manual: bool = False,
    time: int = 0,
    aborted: bool = False,
) -> RegionOutcome | Rejected:
    """CMP-19: "After the summarizer returns, the measured node list (seq and tokens) MUST be DEEPEQ to the one
    from CMP-15 (else "session surface changed during summarization"); log-only appends (e.g."
    CMP-24: "Compaction MUST NOT write `request/header`, and MUST NOT change prefix, system, tools or
    config; the next request is `prefix ++ [checkpoint, retained…]` with the same prefix first (header-only
    pressure that has no compactable range yields none)."

    One region transaction for ``(start, end)`` over ``events``: their surface and their measurement, then
    :func:`run_region`.  A pure run sees no concurrent append, so CMP-19's comparison always holds here.
    ``aborted``: the turn signal as the summarizer returns (CMP-26's commit point).

    post: isinstance(__return__, Rejected) or region_holds(events, start, end, __return__, dialect) is None
    """
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return fold
    return run_region(events, fold.state.nodes, measure(events, dialect), start, end, summarizer, dialect=dialect,
                      max_tokens=max_tokens, summarization_target=summarization_target, ids=ids, manual=manual,
                      time=time, aborted=aborted)


def run_region(
    events: Sequence[Event],
    nodes: Sequence[int],
    measured: Measurement | Rejected,
    start: int,
    end: int,
    summarizer: Summarizer,
    *,
    dialect: Dialect,
    max_tokens: int,
    summarization_target: Target | None,
    ids: Ids,
    manual: bool,
    time: int,
    aborted: bool,
) -> RegionOutcome | Rejected:
    """The region transaction, given the surface ``nodes`` and the measurement of ``events`` (from a fold of
    them, or from a caller's running meter, MTR-5): validate (CMP-13), lock and owner (CMP-14), open and price
    (CMP-15), summarize (CMP-16..18), frame and gate (CMP-20/21), commit (CMP-22, DIA-16) or close with an
    error (CMP-23).  The dialect's record shapes come from :func:`rules_of`."""
    rules = rules_of(dialect)
    positions = check_region(events, nodes, start, end, dialect)
    if isinstance(positions, Rejected):
        return positions
    start_idx, end_idx = positions
    owner = rules.bracket_owner(events, manual)
    if isinstance(owner, Rejected):
        return owner
    shadowed = tuple(nodes[start_idx : end_idx + 1])
    bracket = _Bracket(events=events, time=time, ids=ids, turn=owner.turn, rules=rules)
    start_event = bracket.append(rules.event_type("start"), rules.bracket_record(ids, (bracket.turn_pair,)))
    if isinstance(measured, Rejected):
        return close_with_error(bracket, measured)
    shadowed_tokens = price_region(measured, start_idx, end_idx, shadowed)
    if isinstance(shadowed_tokens, Rejected):
        return close_with_error(bracket, shadowed_tokens)
    summary_input = rules.summary_input(events, shadowed, measured.header)
    if isinstance(summary_input, Rejected):
        return close_with_error(bracket, summary_input)
    target = summarization_target or routed_target(events, dialect)
    if target is None:
        return close_with_error(bracket, Rejected(rule="CMP-17", reason="no provider/model available for summarization"))
    output = summarizer(SummaryCall(input=summary_input, provider=target.provider, model=target.model, max_tokens=max_tokens))
    if isinstance(output, Rejected):
        return close_with_error(bracket, output)
    summary = summary_text_blocks(output.summary)
    if isinstance(summary, Rejected):
        return close_with_error(bracket, summary)
    framed = frame_summary(summary)
    smaller = check_summary_smaller(framed, shadowed_tokens)
    if isinstance(smaller, Rejected):
        return close_with_error(bracket, smaller)
    if aborted and stops_when_aborted(AbortPoint.COMMIT):
        return close_with_error(bracket, Rejected(rule="CMP-26", reason="aborted before commit"))
    return commit_region(bracket, start_event, output, summary, framed, Range(start=start, end=end), shadowed, shadowed_tokens)


@implements("CMP-13")
def check_region(events: Sequence[Event], nodes: Sequence[int], start: int, end: int,
                 dialect: Dialect) -> tuple[int, int] | Rejected:
    """CMP-13: "A region transaction for `(start, end)` MUST first validate, without events: both seqs on the
    surface ("compactRegion: start|end seq X not found in surface"), start position ≤ end position ("… is
    after end seq …"), `balancedBefore(start)` ("not a balanced boundary (would split a step's
    tool-call/result pair)"), `balancedAfter(end)` ("… (would split a step, or the step is still open)")."

    Returns the two surface positions."""
    positions = region_positions(nodes, start, end)
    if isinstance(positions, Rejected):
        return positions
    start_idx, end_idx = positions
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return balanced
    if not balanced[start_idx]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is not a balanced boundary (would split a step's tool-call/result pair)")
    if not balanced[end_idx + 1]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: end seq {end} is not a balanced boundary (would split a step, or the step is still open)")
    return start_idx, end_idx


def region_positions(nodes: Sequence[int], start: Json, end: Json) -> tuple[int, int] | Rejected:
    """CMP-13's first two clauses: both seqs on the surface ``nodes``, the start's position not after the end's.
    The surface positions of ``start`` and ``end``; the compaction companion asks it of a logged summary's range."""
    for name, seq in (("start", start), ("end", end)):
        if seq not in nodes:
            return Rejected(rule="CMP-13", reason=f"compactRegion: {name} seq {seq} not found in surface")
    start_idx, end_idx = nodes.index(start), nodes.index(end)
    if start_idx > end_idx:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is after end seq {end}")
    return start_idx, end_idx


@implements("CMP-15")
def price_region(measured: Measurement, start_idx: int, end_idx: int, shadowed: tuple[int, ...]) -> int | Rejected:
    """CMP-15: "After validation: `shadowed = nodes[startIdx..endIdx]`; append `compact/start {turn}`; then
    (inside the failure scope, CMP-23) measure; the measured nodes at positions `startIdx..endIdx` MUST be
    exactly `shadowed` (else "selected surface changed before summarization began"); `shadowedTokenCount =
    Σ` their tokens."
    """
    priced = measured.nodes[start_idx : end_idx + 1]
    if tuple(n.seq for n in priced) != shadowed:
        return Rejected(rule="CMP-15", reason="selected surface changed before summarization began")
    return sum(n.tokens for n in priced)


@dataclass(frozen=True, slots=True)
class _Bracket:
    """The events one transaction appends, after ``events`` (seq = log length + index)."""

    events: Sequence[Event]
    time: int
    ids: Ids
    turn: Json
    rules: CompactionRules
    out: list[Event] = field(default_factory=list)

    @property
    def turn_pair(self) -> tuple[str, Json]:
        return ("turn", self.turn)

    def append(self, kind: str, data: Json, provenance: Json | Absent = ABSENT, op: Json | Absent = ABSENT) -> Event:
        event = make_event(kind, seq=len(self.events) + len(self.out), time=self.time, data=data,
                           source_event_seqs=provenance, surface_op=op)
        self.out.append(event)
        return event


@implements("CMP-23")
def close_with_error(bracket: _Bracket, error: Rejected) -> RegionOutcome:
    """CMP-23: "Any failure after ``compact/start`` MUST append ``compact/end {turn, error: <error
    message, or its string form>}`` and re-raise; the surface is unchanged (a prune that landed
    earlier stays)." """
    rules = bracket.rules
    bracket.append(rules.event_type("end"), rules.bracket_record(bracket.ids, (bracket.turn_pair, ("error", error.reason))))
    return RegionOutcome(events=tuple(bracket.out), result=None, error=error)


@implements("CMP-22", "DIA-16")
def commit_region(bracket: _Bracket, start_event: Event, output: SummarizerOutput, summary: tuple[Json, ...],
                  framed: tuple[Json, ...], shadowed_range: Range, shadowed: tuple[int, ...],
                  shadowed_tokens: int) -> RegionOutcome:
    """CMP-22: "On success the model MUST append, in order: `compact/summary` (CMP-1; `summary` is the **raw**
    text-only summary, `shadowedRange = {start, end}` as requested, `shadowedSeqs = shadowed`, `maxTokens`
    only if returned); the checkpoint `user/message {content: framed, source: CHECKPOINT_SOURCE}` with
    `sourceEventSeqs` = `[startSeq, summarySeq]` followed by `shadowed` and `surfaceOp: {op:"replace",
    start, end}`; `compact/end {turn}`."
    DIA-16: "The region transaction MUST keep summary, checkpoint and end adjacent (no re-entrant appends),
    close failures with `errorChain(error)`, leave the start unmatched if the error end itself cannot be
    appended, and apply stability as whole-surface (automatic) or selected-span (manual); order: shrink
    gate, then (manual) abort check, then stability."
    """
    rules, ids = bracket.rules, bracket.ids
    record = rules.summary_record(output, summary, shadowed_range, shadowed, shadowed_tokens)
    summary_event = bracket.append(rules.event_type("summary"), rules.bracket_record(ids, record))
    checkpoint = bracket.append(
        "user/message",
        rules.checkpoint_message(framed, ids),
        provenance=(start_event.seq, summary_event.seq, *shadowed),
        op=JsonObject((("op", "replace"), ("start", shadowed_range.start), ("end", shadowed_range.end))),
    )
    end_event = bracket.append(rules.event_type("end"), rules.bracket_record(ids, (bracket.turn_pair,)))
    return RegionOutcome(
        events=tuple(bracket.out),
        result=RegionResult(
            start_seq=start_event.seq,
            summary_seq=summary_event.seq,
            checkpoint_seq=checkpoint.seq,
            end_seq=end_event.seq,
            summary=summary,
            shadowed_range=shadowed_range,
            shadowed_seqs=shadowed,
            shadowed_token_count=shadowed_tokens,
        ),
        error=None,
    )
