"""The compaction companion and the prune replacement as the model decides them in a log
(model/compaction/companion.py, model/compaction/companion_d08.py, model/prune_check.py), against the writers.

Both ways: every log the region transaction, the prune pass and the loop simulator write is accepted, and each
change the rule forbids is refused by that rule.  The fold is the test's own (``tests/companion_cases.judged``),
over the model's own priced surface and CMP-10's ``balanced_cuts``: not the checker's compiled twins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.model.compaction import compaction_owner
from sessionspec.model.jsonval import freeze, get, json_eq
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.prune import prune_session
from sessionspec.model.prune_check import is_prune_replacement
from sessionspec.model.rejected import Rejected
from tests.companion_cases import (
    D08_REFUSALS,
    PRUNE_REFUSALS,
    REFUSALS,
    SMALL,
    at_seq,
    bracket_edit,
    committed_bracket,
    d08_bracket_edit,
    filler,
    judged,
    manual_bracket,
    pruned_result,
    rules_of,
    simulated,
)
from tests.support import busy_log, compacted_head, d08_tool_result_log, with_data


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_simulated_loop_writes_is_accepted(seed: int) -> None:
    assert judged(simulated(seed)) == []


def test_the_simulated_loop_writes_brackets_and_prunes() -> None:
    """The property above is not vacuous: the simulator's logs hold committed brackets and prunes."""
    log = simulated(0)
    assert any(e.type == "compact/summary" for e in log) and any(is_prune_replacement(e) for e in log)


def test_the_committed_bracket_is_accepted() -> None:
    events, *bracket = committed_bracket()
    assert judged([*events, *bracket]) == []


@pytest.mark.parametrize(("name", "rule"), REFUSALS)
def test_each_change_the_companion_forbids_is_refused_by_its_rule(name: str, rule: str) -> None:
    assert rule in rules_of(bracket_edit(name)), judged(bracket_edit(name))


def test_a_failed_bracket_needs_no_summary_and_a_turn_end_drops_an_orphan_start() -> None:
    """CMP-23's failed end needs neither summary nor checkpoint; Q-12: a turn's end forgets its open start."""
    events, start, summary, checkpoint, end = committed_bracket()
    n = len(events)
    assert judged([*events, start, at_seq(with_data(end, error="boom"), n + 1)]) == []
    turn_end = make_event("turn/end", seq=n + 1, time=0, data=freeze({"turn": 1, "reason": {"kind": "completed"}}))
    turn_start = make_event("turn/start", seq=n + 2, time=0, data=freeze({"turn": 2, "trigger": {"kind": "message"}}))
    assert judged([*events, start, turn_end, turn_start, at_seq(with_data(start, turn=2), n + 3)]) == []


def test_a_checkpoint_outside_a_bracket_is_not_compactions() -> None:
    events, start, summary, checkpoint, end = committed_bracket()
    shadowed = checkpoint.source_event_seqs[2:]  # type: ignore[index]
    assert judged([*events, replace(checkpoint, seq=len(events), source_event_seqs=shadowed)]) == []


def test_an_end_seed_clears_an_open_bracket() -> None:
    events, start, summary, checkpoint, end = committed_bracket()
    n = len(events)
    seed_end = make_event("session/end-seed", seq=n + 1, time=0, data=freeze({}))
    assert rules_of([*events, start, seed_end, at_seq(end, n + 2)]) == {"CMP-25"}
    assert judged([*events, start, seed_end, at_seq(start, n + 2)]) == []


def test_a_corrupt_surface_is_named_by_CMP_10() -> None:
    """CMP-10: a negative running sum is a corrupt surface (here two results for one call), its first node named."""
    log = busy_log(steps=1)
    _, outcome = compacted_head(log, 1 + 1)
    start, summary, _, _ = outcome.events
    result = next(e for e in log.events if e.type == "tool/result")
    n = len(log.events)
    found = judged([*log.events, replace(result, seq=n), at_seq(start, n + 1), at_seq(summary, n + 2)])
    assert [(f.rule, f.seq, f.reason) for f in found if f.rule == "CMP-10"] == [("CMP-10", n, "corrupt surface: more tool results than tool calls")]


def test_a_range_splitting_a_tool_pair_is_refused_by_CMP_10() -> None:
    """CMP-10: the summary's range ends between a call and its result."""
    events, start, summary, checkpoint, end = committed_bracket()
    message = next(e for e in reversed(events) if e.type == "assistant/message")
    seqs = get(summary.data, "shadowedSeqs")
    assert isinstance(seqs, tuple) and message.seq not in seqs
    nodes = tuple(s for s in range(seqs[0], message.seq + 1) if s in {e.seq for e in events if e.surface_op == "append"})
    split = with_data(summary, shadowedSeqs=list(nodes), shadowedRange={"start": nodes[0], "end": nodes[-1]})
    found = judged([*events, start, split])
    assert "CMP-10" in {f.rule for f in found}, found


def test_a_count_over_scrubbed_content_is_not_judged() -> None:
    """FMT-6: a placeholder in a shadowed node, or in the header, makes the price unknown (CMP-15 not judged)."""
    log = busy_log(steps=2)
    log.user("working in {{cwd}}/src " * 20)
    _, outcome = compacted_head(log, 5)  # the whole surface: the user message, two steps and the scrubbed message
    start, summary, checkpoint, end = outcome.events
    count = get(summary.data, "shadowedTokenCount")
    assert isinstance(count, int)
    assert "CMP-15" not in rules_of([*log.events, start, with_data(summary, shadowedTokenCount=count + 1), checkpoint, end])
    scrubbed = busy_log(steps=2)
    scrubbed.header(system="{{system}}")
    _, again = compacted_head(scrubbed, 2)
    start, summary, checkpoint, end = again.events
    count = get(summary.data, "shadowedTokenCount")
    assert isinstance(count, int)
    assert "CMP-15" not in rules_of([*scrubbed.events, start, with_data(summary, shadowedTokenCount=count + 1), checkpoint, end])


def test_the_d08_writer_is_accepted_both_manual_and_pruned() -> None:
    events, *bracket = manual_bracket()
    assert judged([*events, *bracket], Dialect.D08) == []
    log = d08_tool_result_log()
    pruned = prune_session(log.events, SMALL, dialect=Dialect.D08)
    assert not isinstance(pruned, Rejected) and [e.type for e in pruned] == ["compaction/prune", "tool/result"]
    assert judged([*log.events, *pruned], Dialect.D08) == []


@pytest.mark.parametrize(("name", "rule"), D08_REFUSALS)
def test_each_change_the_d08_companion_forbids_is_refused_by_its_rule(name: str, rule: str) -> None:
    events = d08_bracket_edit(name)
    assert rule in rules_of(events, Dialect.D08), judged(events, Dialect.D08)
    # Each finding names the line of an event of the log (the companion judges events, never the file as a whole).
    assert {f.seq for f in judged(events, Dialect.D08)} <= {e.seq for e in events}


def test_a_failed_d08_end_need_not_be_adjacent_and_turns_outside_a_bracket_are_free() -> None:
    events, start, summary, checkpoint, end = manual_bracket()
    turn = [make_event("turn/start", seq=end.seq + 1, time=0, data=freeze({"turn": 1})),
            make_event("turn/end", seq=end.seq + 2, time=0, data=freeze({"turn": 1}))]
    assert judged([*events, start, summary, checkpoint, end, *turn], Dialect.D08) == []
    assert judged([*events, start, summary, checkpoint, filler(end.seq), at_seq(with_data(end, error="x"), end.seq + 1)], Dialect.D08) == []


def test_the_prune_pass_is_accepted() -> None:
    events, replacement = pruned_result()
    assert judged([*events, replacement]) == []


@pytest.mark.parametrize(("name", "edit", "rule"), PRUNE_REFUSALS, ids=[name for name, _, _ in PRUNE_REFUSALS])
def test_each_change_a_prune_forbids_is_refused_by_its_rule(name: str, edit: Callable[[list[Event], Event], list[Event]], rule: str) -> None:
    events, replacement = pruned_result()
    assert rule in rules_of(edit(events, replacement)), judged(edit(events, replacement))


def test_a_d08_prune_without_its_record_is_refused_by_DIA_18() -> None:
    log = d08_tool_result_log()
    record, replacement = prune_session(log.events, SMALL, dialect=Dialect.D08)  # type: ignore[misc]
    n = len(log.events)
    assert rules_of([*log.events, at_seq(replacement, n)], Dialect.D08) == {"DIA-18"}
    assert rules_of([*log.events, record, filler(n + 1), at_seq(replacement, n + 2)], Dialect.D08) == {"DIA-18"}
    assert rules_of([*log.events, with_data(record, shadowedSeqs=[0]), replacement], Dialect.D08) == {"DIA-18"}
    # A55 writes no record: the same replacement, unrecorded, is A55's.
    assert "DIA-18" not in rules_of([*log.events, at_seq(replacement, n)], Dialect.A55)


@pytest.mark.parametrize(("compaction_id", "named"), [(5, "compactionId 5,"), ("", 'compactionId "",'), (None, "compactionId null,")])
def test_DIA_19_the_finding_names_the_compaction_id_it_read(compaction_id: object, named: str) -> None:
    """DIA-19: a bracket's ``compactionId`` is a non-empty string; the finding says what the start carried (a number
    was called "empty compactionId", the wording of DIA-2's checkpoint source before it was mended too)."""
    events, start, *_ = manual_bracket()
    found = [r for r in judged([*events, with_data(start, compactionId=compaction_id)], Dialect.D08) if r.rule == "DIA-19"]
    assert [r.reason for r in found] == [f"{named} not a non-empty string"]


_TURNS: list[object] = [None, 1, 2, "x", True, "absent"]


def _turn_start(turn: object) -> Event:
    data = {"trigger": {"kind": "message"}} if turn == "absent" else {"turn": turn, "trigger": {"kind": "message"}}
    return make_event("turn/start", seq=0, time=0, data=freeze(data))


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
@pytest.mark.parametrize("open_turn", _TURNS)
@pytest.mark.parametrize("bracket_turn", [None, 1, 2, "x", True])
def test_CMP_14_DIA_3_the_companion_accepts_a_bracket_owner_iff_the_writer_gives_it(
        dialect: Dialect, open_turn: object, bracket_turn: object) -> None:
    """One definition of the owner, both ways: a ``turn/start`` as logged, then a bracket start naming
    ``bracket_turn``.  The writer's lock (``compaction_owner``; D08: manual when the bracket's turn is ``null``)
    gives an owner equal to ``bracket_turn`` exactly when the companion raises no owner finding.  Before the two
    shared ``turn_owner``, A55's companion accepted ``turn/start {turn: null}`` + ``compact/start {turn: null}``
    (the writer finds no open turn, region.ts ``inspectTurnTail``) and D08's refused the manual bracket after it
    (the real invariant reads a ``null`` ``openTurn`` as idle: 611615650f compaction/src/invariant.ts 110-135)."""
    turn_start = _turn_start(open_turn)
    start_type = "compact/start" if dialect is Dialect.A55 else "compaction/start"
    data = {"turn": bracket_turn} if dialect is Dialect.A55 else {"turn": bracket_turn, "compactionId": "m"}
    start = make_event(start_type, seq=1, time=0, data=freeze(data))
    owner = compaction_owner([turn_start], dialect, manual=bracket_turn is None)
    writes = not isinstance(owner, Rejected) and json_eq(owner.turn, freeze(bracket_turn))
    owner_findings = [f for f in judged([turn_start, start], dialect) if f.seq == 1 and f.rule in ("CMP-14", "DIA-19")]
    assert (owner_findings == []) is writes, (owner, owner_findings)


def test_CMP_14_a_null_turn_is_no_owner_in_A55_and_idle_in_D08() -> None:
    """The two answers that changed when the companion ran the writer's owner (issue 44): A55 refuses, D08 takes a
    manual bracket."""
    turn_start = _turn_start(None)
    a55 = make_event("compact/start", seq=1, time=0, data=freeze({"turn": None}))
    d08 = make_event("compaction/start", seq=1, time=0, data=freeze({"turn": None, "compactionId": "m"}))
    assert rules_of([turn_start, a55]) == {"CMP-14"}
    assert rules_of([turn_start, d08], Dialect.D08) == set()
