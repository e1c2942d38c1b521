"""CMP-9, CMP-11 and DIA-20 as the model decides them in a log (model/compaction/zero_retention.py), against the
writers that select with ``retainTokens = 0``.

Both ways, over logs the loop simulator writes (``sessionspec.generate``) with a compaction the model's own
``compactIfNeeded`` appends where its trigger runs: an overflow recovery (CMP-9) between two steps of an A55 turn,
a manual compaction (DIA-20) between two turns of the same log read as D08 (the reader's migration, DIA-13).
Every such summary is accepted (the writer priced its nodes; the decision prices none: with ``retainTokens = 0``
the prices do not matter), and a summary whose range ends anywhere else is refused by the trigger's rule.  The
fold here is the test's own surface (``surface_of`` before each summary) around the model's
``take_bracket_event``, as the checker keeps one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.compaction.records import Trigger
from sessionspec.model.compaction.run import compact_if_needed
from sessionspec.model.compaction.zero_retention import BracketPlace, check_zero_retention_summary, take_bracket_event
from sessionspec.model.jsonval import ABSENT, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import surface_of
from tests.support import short


def judged(events: Sequence[Event], dialect: Dialect, moving_only: bool = False) -> list[tuple[Event, str, Rejected | None]]:
    """Every summary of a bracket selected with retainTokens 0: the rule it answers to and the model's decision
    (``moving_only``: only the events of the place's ``moved_by`` types handed to it, as the checker does)."""
    place, decided = BracketPlace(dialect), []
    for event in events:
        if moving_only and event.type not in place.moved_by:
            continue
        rule = take_bracket_event(place, event)
        if rule is not None:
            surface = surface_of(events[: event.seq], dialect)
            assert not isinstance(surface, Rejected), surface
            decided.append((event, rule, check_zero_retention_summary(event, rule, surface.nodes, events, dialect)))
    return decided


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def compacted(log: Sequence[Event], cut: int, trigger: Trigger, dialect: Dialect) -> list[Event] | None:
    """``log[:cut]`` with what ``compactIfNeeded(trigger)`` appends there; None when it wrote no summary."""
    run = compact_if_needed(log[:cut], short, trigger=trigger, dialect=dialect)
    assert not isinstance(run, Rejected), run
    if not any(e.type.endswith("/summary") for e in run.events):
        return None
    return [*log[:cut], *run.events]


def _ending_at(summary: Event, end: int) -> Event:
    data = thaw(summary.data)
    assert isinstance(data, dict)
    data["shadowedRange"]["end"] = end
    return replace(summary, data=freeze(data))


def _both_ways(log: list[Event], dialect: Dialect, rule: str) -> None:
    """The writer's summary is accepted under ``rule``; the same summary ending at any other surface node is refused by it."""
    decided = judged(log, dialect)
    assert [bad for _, _, bad in decided] == [None] * len(decided), decided  # the loop's own recoveries too
    assert judged(log, dialect, moving_only=True) == decided
    summary, last_rule, _ = decided[-1]
    assert last_rule == rule
    nodes = surface_of(log[: summary.seq], dialect)
    assert not isinstance(nodes, Rejected)
    end = get(get(summary.data, "shadowedRange"), "end")
    for other in (n for n in nodes.nodes if n != end):
        changed = [*log[: summary.seq], _ending_at(summary, other), *log[summary.seq + 1:]]
        assert [bad.rule for _, _, bad in judged(changed, dialect) if bad is not None] == [rule], other


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.data())
def test_an_overflow_recovery_between_steps_takes_the_zero_retention_range(seed: int, data: st.DataObject) -> None:
    """CMP-9 (A55): the request-error listener's recovery after a failed step's ``step/end``, inside the turn."""
    log = loop_log(seed)
    ends = [i + 1 for i, e in enumerate(log) if e.type == "step/end"]
    written = compacted(log, data.draw(st.sampled_from(ends)), Trigger.CONTEXT_OVERFLOW, Dialect.A55)
    assume(written is not None)  # the shrink gate declined the summary (CMP-21): nothing to judge
    assert written is not None
    _both_ways(written, Dialect.A55, "CMP-9")


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.data())
def test_a_d08_manual_compaction_between_turns_takes_the_zero_retention_range(seed: int, data: st.DataObject) -> None:
    """DIA-20: a manual compaction of an idle D08 log (owner ``null``)."""
    log = list(migrate_legacy(loop_log(seed), "s"))
    ends = [i + 1 for i, e in enumerate(log) if e.type == "turn/end"]
    written = compacted(log, data.draw(st.sampled_from(ends)), Trigger.MANUAL, Dialect.D08)
    assume(written is not None)
    assert written is not None
    start = next(e for e in written[len(written) - 4:] if e.type == "compaction/start")
    assert get(start.data, "turn") is None
    _both_ways(written, Dialect.D08, "DIA-20")


@pytest.mark.parametrize("seed", range(6))
def test_the_loops_own_overflow_recoveries_are_accepted(seed: int) -> None:
    """The loop simulator's logs as written: every zero-retention summary in them is the walk's."""
    log = loop_log(seed, 1500)
    decided = judged(log, Dialect.A55)
    assert [bad for _, _, bad in decided if bad is not None] == []
    assert judged(log, Dialect.A55, moving_only=True) == decided


def test_a_summary_where_the_walk_selects_no_range_is_refused() -> None:
    """CMP-11: the retained tail has at least one node, so a one-node surface (the turn's prompt, before its first
    step) has no range ("`keep == 0` → none"): a summary there is refused, whichever node it names."""
    log = loop_log(3)
    cut = next(i + 1 for i, e in enumerate(log) if e.type == "user/message")
    surface = surface_of(log[:cut], Dialect.A55)
    assert not isinstance(surface, Rejected) and len(surface.nodes) == 1
    summary = make_event("compact/summary", seq=cut, time=0, data=freeze({"shadowedRange": {"start": surface.nodes[0], "end": surface.nodes[0]}}))
    found = check_zero_retention_summary(summary, "CMP-9", surface.nodes, log[:cut], Dialect.A55)
    assert found is not None and found.rule == "CMP-9" and "no range" in found.reason
    assert found.seq == summary.seq == cut  # the report points at the summary's line


# ---------------------------------------------------------------- the place a bracket lies, event by event

_START = {Dialect.A55: "compact/start", Dialect.D08: "compaction/start"}
_SUMMARY = {Dialect.A55: "compact/summary", Dialect.D08: "compaction/summary"}


def _rule_after(dialect: Dialect, *moves: tuple[str, dict[str, object]], owner: object = 1) -> str | None:
    """The rule the summary of a bracket opened after ``moves`` answers to, as :func:`take_bracket_event` folds
    them (each ``(type, data)``; an ``assistant/message`` is appended, ``surfaceOp: "append"`` (SURF-3), unless its
    data says ``"replace"`` under ``"op"``: then it replaces seq 0)."""
    place = BracketPlace(dialect)
    events = [*moves, (_START[dialect], {"turn": owner}), (_SUMMARY[dialect], {"turn": owner})]
    rules = []
    for seq, (kind, data) in enumerate(events):
        op = data.pop("op", "append") if kind == "assistant/message" else None
        surface_op = ABSENT if op is None else "append" if op == "append" else freeze({"op": op, "start": 0, "end": 0})
        event = make_event(kind, seq=seq, time=0, data=freeze(data), surface_op=surface_op)
        rules.append(take_bracket_event(place, event))
    assert rules[:-1] == [None] * (len(events) - 1)  # only the summary answers, and once
    return rules[-1]


def _finish(kind: str) -> tuple[str, dict[str, object]]:
    return "assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": kind}}}


STEP = ("step/start", {})


def test_CMP_9_an_A55_bracket_between_steps_is_the_overflow_recovery_and_one_inside_a_step_is_not() -> None:
    """CMP-9 (A55): the recovery runs between steps; a step/end, or the turn's end or a new turn's start (which
    close any step), puts the bracket between steps; a step/start puts it inside one (a pressure bracket)."""
    assert _rule_after(Dialect.A55) == "CMP-9"
    assert _rule_after(Dialect.A55, STEP) is None
    for closing in ("step/end", "turn/end", "turn/start"):
        assert _rule_after(Dialect.A55, STEP, (closing, {"turn": 1})) == "CMP-9", closing
    assert _rule_after(Dialect.A55, STEP, ("step/end", {}), STEP) is None


def test_DIA_7_a_d08_bracket_after_a_failed_attempt_inside_the_step_is_the_overflow_recovery() -> None:
    """DIA-7 (D08): inside the step, after an attempt whose ``finish`` carried an error and before any appended
    message: CMP-9.  A finish that is no error, an appended message, a new step, or the turn's or step's end
    (which close the step) leave a pressure bracket; a message that is not appended is not the step's message."""
    failed = (STEP, _finish("error"))
    assert _rule_after(Dialect.D08, *failed) == "CMP-9"
    assert _rule_after(Dialect.D08, STEP, _finish("stop")) is None
    assert _rule_after(Dialect.D08, STEP, _finish("error"), _finish("stop")) is None
    assert _rule_after(Dialect.D08, STEP, _finish("stop"), _finish("error")) == "CMP-9"
    assert _rule_after(Dialect.D08, *failed, ("assistant/message", {})) is None
    assert _rule_after(Dialect.D08, *failed, ("assistant/message", {"op": "replace"})) == "CMP-9"
    assert _rule_after(Dialect.D08, ("assistant/chunk", {"chunk": {"type": "text"}}), *failed) == "CMP-9"
    for closing in ("step/end", "turn/end", "turn/start"):
        assert _rule_after(Dialect.D08, *failed, (closing, {"turn": 1})) is None, closing
    assert _rule_after(Dialect.D08, *failed, STEP) is None
    assert _rule_after(Dialect.D08, *failed, ("user/message", {})) == "CMP-9"  # not a moving type


def test_DIA_20_a_d08_bracket_with_owner_null_is_a_manual_compaction_wherever_it_lies() -> None:
    assert _rule_after(Dialect.D08, owner=None) == "DIA-20"
    assert _rule_after(Dialect.D08, STEP, _finish("error"), owner=None) == "DIA-20"
    assert _rule_after(Dialect.D08) is None  # an owned bracket outside a step: pressure


def test_a_summary_answers_for_its_own_bracket_only() -> None:
    """The rule is the open bracket's: a second summary with no new start answers nothing."""
    place = BracketPlace(Dialect.A55)
    kinds = ["compact/start", "compact/summary", "compact/summary"]
    assert [take_bracket_event(place, make_event(k, seq=i, time=0, data=freeze({"turn": 1})))
            for i, k in enumerate(kinds)] == [None, "CMP-9", None]
