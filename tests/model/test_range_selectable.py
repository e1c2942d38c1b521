"""CMP-12 from the log alone (issue 44, item 1): a summary's ``shadowedRange`` is one the retention walk selects for
some ``retainTokens`` (``model.compaction.bracket_contents.check_range_selectable``, which runs ``retention_cut``).

The oracle here is the definition run at every class of ``retainTokens``: ``select_range`` depends on R only through
which suffix sums of the prices reach it, so R = 0, each suffix sum, and one above the whole surface give every
range any R gives.  The check asks the walk once; these tests hold it to that oracle both ways, on the surfaces the
loop writes and on hand-priced surfaces where a node priced 0 makes a cut unreachable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.compaction_audit import CompactionAudit, audit_compactions
from sessionspec.generate import generate_events
from sessionspec.model.compaction.bracket_contents import check_range_selectable
from sessionspec.model.compaction.policy import CompactConfig
from sessionspec.model.compaction.records import Range
from sessionspec.model.compaction.retention import balanced_cuts, select_range
from sessionspec.model.compaction.run import pressure_compaction
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, Absent, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.meter import meter_state
from sessionspec.model.rejected import Rejected
from tests.support import short


def _summary(seq: int, start: Any, end: Any) -> Event:
    return make_event("compact/summary", seq=seq, time=0, data=freeze({"shadowedRange": {"start": start, "end": end}}))


def _priced(events: Sequence[Event]) -> tuple[list[int], list[int], list[bool]]:
    """The priced surface after ``events`` (MTR-7) and its balanced cuts (CMP-10), by the model's definitions."""
    state = meter_state(events)
    assert not isinstance(state, Rejected), state
    nodes = [node.seq for node in state.nodes]
    balanced = balanced_cuts(nodes, events)
    assert not isinstance(balanced, Rejected), balanced
    return nodes, [node.tokens for node in state.nodes], list(balanced)


def _selectable(events: Sequence[Event], nodes: list[int], tokens: list[int]) -> set[Range]:
    """Every range ``select_range`` gives for some retainTokens (one R per class, see the module docstring)."""
    priced = list(zip(nodes, tokens, strict=True))
    candidates = {0, sum(tokens) + 1, *(sum(tokens[k:]) for k in range(len(tokens)))}
    ranges = {select_range(priced, nodes, events, retain) for retain in candidates}
    return {r for r in ranges if isinstance(r, Range)}


def _loop_prefixes(seed: int) -> list[list[Event]]:
    """The log the loop writes, cut before each ``step/end`` (a post-step point, where a pressure bracket starts)."""
    log = [event for block in generate_events(500, seed, 2) for event in block]
    return [log[:i] for i, event in enumerate(log) if event.type == "step/end"][:12]


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10_000))
def test_CMP_12_the_check_accepts_exactly_the_ranges_some_retain_tokens_selects(seed: int) -> None:
    """Every head range of every surface the loop writes: accepted iff the walk selects it for some retainTokens;
    an unbalanced cut is CMP-10's, not judged here.  Both outcomes occur on every log (at least the whole surface,
    which no R selects, is refused)."""
    outcomes = {"accepted": 0, "refused": 0}
    for events in _loop_prefixes(seed):
        nodes, tokens, balanced = _priced(events)
        if len(nodes) < 2:
            continue
        selectable = _selectable(events, nodes, tokens)
        for end_idx, end in enumerate(nodes):
            bad = check_range_selectable(_summary(len(events), nodes[0], end), nodes, tokens, balanced, ABSENT, events)
            if not balanced[end_idx + 1]:
                assert bad is None
            elif Range(start=nodes[0], end=end) in selectable:
                assert bad is None
                outcomes["accepted"] += 1
            else:
                assert bad is not None and bad.rule == "CMP-12"
                outcomes["refused"] += 1
    assert outcomes["accepted"] > 0 and outcomes["refused"] > 0


def test_CMP_12_a_range_that_does_not_start_at_the_head_is_refused() -> None:
    events = _loop_prefixes(0)[-1]
    nodes, tokens, balanced = _priced(events)
    bad = check_range_selectable(_summary(len(events), nodes[1], nodes[-2]), nodes, tokens, balanced, ABSENT, events)
    assert bad is not None and bad.rule == "CMP-12"
    assert bad.reason == f"compaction range starts at seq {nodes[1]}, not at the surface head {nodes[0]} (automatic ranges are head-anchored)"


# ---------------------------------------------------------------- hand-priced surfaces: a node priced 0


def _surface(count: int, scrubbed: Sequence[int] = ()) -> list[Event]:
    """``count`` user messages (seqs 0..count-1), the ``scrubbed`` ones holding a placeholder (FMT-6)."""
    return [make_event("user/message", seq=seq, time=0, surface_op="append",
                       data=freeze({"content": [{"type": "text", "text": "{{cwd}}" if seq in scrubbed else f"m{seq}"}]}))
            for seq in range(count)]


# Prices 5, 5, 0, 5: a walk keeping 1..5 tokens stops at seq 3 (the node priced 0 is never where it stops), one
# keeping 6..10 at seq 1, more keeps nothing; so the ranges 0..2 and 0..0 are selectable and 0..1 is not.
TOKENS = [5, 5, 0, 5]
BALANCED = [True] * 5


def _judged(end: int, balanced: Sequence[bool] = BALANCED, scrubbed: Sequence[int] = (),
            header: EpochHeader | Absent = ABSENT) -> Rejected | None:
    events = _surface(4, scrubbed)
    return check_range_selectable(_summary(4, 0, end), [0, 1, 2, 3], TOKENS, balanced, header, events)


def test_CMP_12_a_cut_a_node_priced_0_makes_unreachable_is_refused_and_its_neighbours_accepted() -> None:
    events = _surface(4)
    assert {r.end for r in {select_range(list(zip(range(4), TOKENS)), range(4), events, retain) for retain in range(0, 16)}
            if isinstance(r, Range)} == {0, 2}  # the walk itself, every R up to past the total
    assert _judged(0) is None and _judged(2) is None
    bad = _judged(1)
    assert bad is not None and (bad.rule, bad.seq) == ("CMP-12", 4)
    assert bad.reason == ("compaction range ends at seq 1, which no retainTokens selects "
                          "(retaining the 5 tokens after it, the retention walk keeps from seq 3)")
    last = _judged(3)
    assert last is not None and last.reason == "compaction range ends at the last surface node 3 (the retention walk keeps at least one node)"


def test_CMP_12_an_unbalanced_cut_is_left_to_CMP_10() -> None:
    assert _judged(1, balanced=[True, True, False, True, True]) is None
    assert _judged(3, balanced=[True, True, True, True, False]) is None


def test_CMP_12_FMT_6_a_scrubbed_retained_node_or_header_leaves_the_walk_unknown() -> None:
    """FMT-6: the walk reads the prices after the range; a placeholder there (or in the header) makes them unknown.
    A placeholder inside the range changes nothing the walk reads: still judged."""
    assert _judged(1, scrubbed=(3,)) is None
    assert _judged(1, scrubbed=(2,)) is None
    inside = _judged(1, scrubbed=(0,))
    assert inside is not None and inside.rule == "CMP-12"
    assert _judged(1, header=EpochHeader(config=freeze({}), system="{{system}}")) is None
    plain = _judged(1, header=EpochHeader(config=freeze({}), system="persona"))
    assert plain is not None and plain.rule == "CMP-12"


def test_a_range_not_on_the_surface_is_left_to_CMP_15_and_CMP_25() -> None:
    events = _surface(4)
    for start, end in ((0, 9), (ABSENT, 2), (2, ABSENT), (2, 0)):
        summary = make_event("compact/summary", seq=4, time=0, data=freeze(
            {"shadowedRange": {k: v for k, v in (("start", start), ("end", end)) if v is not ABSENT}}))
        assert check_range_selectable(summary, [0, 1, 2, 3], TOKENS, BALANCED, ABSENT, events) is None


# ---------------------------------------------------------------- the writer's ranges, and the checker's fold


WINDOW = 2000


def _written_brackets(retain: int) -> list[list[Event]]:
    """The pressure brackets compact-basic writes keeping ``retain`` tokens, each with the log before it."""
    log = [event for block in generate_events(1500, 0, 2) for event in block]
    config = CompactConfig(threshold_ratio=0.8, retain_tokens=retain)
    found = []
    for cut in (i for i, e in enumerate(log) if e.type == "step/end"):
        run = pressure_compaction(log[:cut], short, context_window=WINDOW, config=config)
        assert not isinstance(run, Rejected), run
        if any(e.type == "compact/summary" for e in run.events) and run.error is None:
            found.append([*log[:cut], *run.events])
        if len(found) == 3:
            break
    assert found
    return found


@pytest.mark.parametrize("retain", [0, 40, 300, 900])
def test_CMP_12_every_range_the_writer_writes_is_accepted(retain: int) -> None:
    for events in _written_brackets(retain):
        summary = next(i for i, e in enumerate(events) if e.type == "compact/summary" and i >= len(events) - 4)
        before = events[: summary - 1]  # the surface the range was selected on: before compact/start
        nodes, tokens, balanced = _priced(before)
        rng = get(events[summary].data, "shadowedRange")
        assert Range(start=get(rng, "start"), end=get(rng, "end")) in _selectable(before, nodes, tokens)  # type: ignore[arg-type]
        assert check_range_selectable(events[summary], nodes, tokens, balanced, ABSENT, before) is None
        assert audit_compactions(events, Dialect.A55) == ()


def _reranged(summary: Event, nodes: Sequence[int], tokens: Sequence[int], start_idx: int, end_idx: int) -> Event:
    """``summary`` recording the range ``nodes[start_idx..end_idx]`` consistently (seqs and count: CMP-25, CMP-15)."""
    data = thaw(summary.data)
    assert isinstance(data, dict)
    data["shadowedRange"] = {"start": nodes[start_idx], "end": nodes[end_idx]}
    data["shadowedSeqs"] = list(nodes[start_idx : end_idx + 1])
    data["shadowedTokenCount"] = sum(tokens[start_idx : end_idx + 1])
    return replace(summary, data=freeze(data))


def test_CMP_12_the_checker_runs_the_decision_at_a_live_summary() -> None:
    """The fold that prices the surface (sessionspec/check/compaction_audit.py) asks it at each summary: a consistent
    summary whose range ends at the last node, or starts after the head, is a CMP-12 finding and nothing else (the
    log cut after the summary); in the seed (before the first live seq) it was judged where it was written."""
    planted_any = False
    for events in _written_brackets(40):
        summary = next(i for i, e in enumerate(events) if e.type == "compact/summary")
        nodes, tokens, balanced = _priced(events[: summary - 1])
        cuts = [k for k in range(1, len(nodes) + 1) if balanced[k]]  # balanced cuts after the head
        if len(cuts) < 2 or cuts[-1] != len(nodes):
            continue
        planted_any = True
        for start_idx, end_idx in ((0, len(nodes) - 1), (cuts[0], cuts[-1] - 1)):
            planted = [*events[:summary], _reranged(events[summary], nodes, tokens, start_idx, end_idx)]
            assert [bad.rule for bad in audit_compactions(planted, Dialect.A55)] == ["CMP-12"]
            seeded = CompactionAudit(dialect=Dialect.A55, first_live_seq=events[summary].seq + 1)
            assert seeded.run(planted) == ()
    assert planted_any
