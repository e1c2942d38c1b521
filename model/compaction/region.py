"""The region transaction (CMP-13..CMP-26, DIA-16): one bracket, as the events it appends."""

from __future__ import annotations

from collections.abc import Sequence

from model.compaction.contracts import region_holds  # noqa: F401 - the post: line reads it
from model.compaction.dialect import rules_of
from model.compaction.policy import Target, routed_target
from model.compaction.records import NO_IDS, Ids, Range, RegionOutcome, RegionResult, Summarizer, SummaryCall
from model.compaction.retention import balanced_cuts
from model.compaction.summary import check_summary_smaller, frame_summary, summary_text_blocks
from model.jsonval import ABSENT, Absent, Json, JsonObject
from model.log import Dialect, Event, make_event
from model.meter import MeterState, measure, measure_state
from model.rejected import Rejected
from model.rules import implements
from model.surface import fold_surface


@implements("CMP-13", "CMP-15", "CMP-19", "CMP-22", "CMP-23", "CMP-24", "CMP-26", "DIA-16")
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
    meter: MeterState | None = None,
) -> RegionOutcome | Rejected:
    """One region transaction for ``(start, end)``.

    CMP-13: validate without events (both seqs on the surface, order, balanced
    edges).  CMP-14: lock and owner.  CMP-15: append the start, measure, sum the
    shadowed tokens.  CMP-16..18: summarize.  CMP-19: the surface is stable
    (no concurrent appends in a pure run).  CMP-20/21: frame and the shrink
    gate.  CMP-22: summary, checkpoint replace citing ``[start, summary] ++
    shadowed``, end.  CMP-23: any failure after the start closes with
    ``end{error}`` and leaves the surface unchanged.  CMP-24: no header event.
    CMP-26/Q-2: no abort check before commit.  DIA-16: summary, checkpoint and
    end adjacent.  The dialect's record shapes come from :func:`rules_of`.
    ``meter``: the caller's meter folded over exactly ``events`` (MTR-5), read
    instead of folding the log again (its nodes are the surface, P-MTR-3).

    pre: meter is None or (meter.consumed == len(events) and meter.dialect is dialect)
    post: isinstance(__return__, Rejected) or region_holds(events, start, end, __return__, dialect) is None
    """
    rules = rules_of(dialect)
    if meter is None:
        fold = fold_surface(events, dialect)
        if isinstance(fold, Rejected):
            return fold
        nodes = fold.state.nodes
    else:
        nodes = tuple(meter.surface.seqs)
    for name, seq in (("start", start), ("end", end)):
        if seq not in nodes:
            return Rejected(rule="CMP-13", reason=f"compactRegion: {name} seq {seq} not found in surface")
    start_idx, end_idx = nodes.index(start), nodes.index(end)
    if start_idx > end_idx:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is after end seq {end}")
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return balanced
    if not balanced[start_idx]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is not a balanced boundary (would split a step's tool-call/result pair)")
    if not balanced[end_idx + 1]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: end seq {end} is not a balanced boundary (would split a step, or the step is still open)")
    owner = rules.bracket_owner(events, manual)
    if isinstance(owner, Rejected):
        return owner
    shadowed = tuple(nodes[start_idx : end_idx + 1])
    out: list[Event] = []

    def append(kind: str, data: Json, provenance: Json | Absent = ABSENT, op: Json | Absent = ABSENT) -> Event:
        event = make_event(
            kind, seq=len(events) + len(out), time=time, data=data, source_event_seqs=provenance, surface_op=op
        )
        out.append(event)
        return event

    turn_pair: tuple[str, Json] = ("turn", owner.turn)
    start_event = append(rules.event_type("start"), rules.bracket_record(ids, (turn_pair,)))

    def fail(error: Rejected) -> RegionOutcome:
        append(rules.event_type("end"), rules.bracket_record(ids, (turn_pair, ("error", error.reason))))
        return RegionOutcome(events=tuple(out), result=None, error=error)

    measured = measure(events, dialect) if meter is None else measure_state(meter)
    if isinstance(measured, Rejected):
        return fail(measured)
    priced = measured.nodes[start_idx : end_idx + 1]
    if tuple(n.seq for n in priced) != shadowed:
        return fail(Rejected(rule="CMP-15", reason="selected surface changed before summarization began"))
    shadowed_tokens = sum(n.tokens for n in priced)
    summary_input = rules.summary_input(events, shadowed, measured.header)
    if isinstance(summary_input, Rejected):
        return fail(summary_input)
    target = summarization_target or routed_target(events, dialect)
    if target is None:
        return fail(Rejected(rule="CMP-17", reason="no provider/model available for summarization"))
    output = summarizer(SummaryCall(input=summary_input, provider=target.provider, model=target.model, max_tokens=max_tokens))
    if isinstance(output, Rejected):
        return fail(output)
    summary = summary_text_blocks(output.summary)
    if isinstance(summary, Rejected):
        return fail(summary)
    framed = frame_summary(summary)
    smaller = check_summary_smaller(framed, shadowed_tokens)
    if isinstance(smaller, Rejected):
        return fail(smaller)
    shadowed_range = Range(start=start, end=end)
    record = rules.summary_record(output, summary, shadowed_range, shadowed, shadowed_tokens)
    summary_event = append(rules.event_type("summary"), rules.bracket_record(ids, record))
    checkpoint = append(
        "user/message",
        rules.checkpoint_message(framed, ids),
        provenance=(start_event.seq, summary_event.seq, *shadowed),
        op=JsonObject((("op", "replace"), ("start", start), ("end", end))),
    )
    end_event = append(rules.event_type("end"), rules.bracket_record(ids, (turn_pair,)))
    return RegionOutcome(
        events=tuple(out),
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
