"""LOG-13 and the loop rules its relations check in a log (model/nesting.py), against the loop that writes the logs.

Both ways, over logs the loop simulator writes (``sessionspec.generate``, the model's own loop, prunes and compactions
included), cut by a crash and closed by the model's repair (LOG-14), and in D08 as the reader migrates them (DIA-13)
with a manual compaction of the model's between two turns (DIA-3): every such log is accepted, and each change the
relations forbid is refused, naming the rule (LOG-13; an unanswered call, LOOP-12).  The fold is the tests' own
(``tests.support.nesting_judged``: one Nesting over the events, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.model.jsonval import freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.nesting import D08_TURN_BOUND_TYPES, Nesting, d08_inside_open_turn
from tests.support import (
    NESTING_CHANGES,
    crash_cuts,
    crash_repaired,
    d08_manual_log,
    nesting_judged,
    repair_loop_log,
    with_data,
)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_is_accepted(seed: int) -> None:
    log = repair_loop_log(seed, 600)
    assert {"turn/start", "step/start", "tool/call", "tool/result", "turn/end"} <= {e.type for e in log}
    assert nesting_judged(log) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_what_the_crash_repair_writes_is_accepted(seed: int) -> None:
    log = repair_loop_log(seed, 1500)
    cuts = crash_cuts(log)
    assert cuts
    for cut in cuts[:: max(1, len(cuts) // 8)]:
        events, _ = crash_repaired(log, cut)
        assert nesting_judged(events) == [], cut


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_DIA_3_what_the_d08_writer_writes_is_accepted(seed: int) -> None:
    log = d08_manual_log(seed)
    assert log[-1].type == "compaction/end" and get(log[-1].data, "turn") is None
    assert nesting_judged(log, Dialect.D08) == []


@pytest.mark.parametrize(("change", "rules"), NESTING_CHANGES, ids=[change.__name__ for change, _ in NESTING_CHANGES])
@pytest.mark.parametrize("seed", [1, 2])
def test_each_change_the_relations_forbid_is_refused(change: Callable[[list[Event]], list[Event]], rules: frozenset[str], seed: int) -> None:
    log = repair_loop_log(seed, 3000)
    assert nesting_judged(log) == []
    assert {finding.rule for finding in nesting_judged(change(log))} == rules


def test_DIA_3_a_manual_bracket_runs_between_turns_in_d08_alone() -> None:
    """Between turns, D08's manual bracket (owner null) and its checkpoint message are accepted; read as A55 (which
    has no manual compaction) they lie outside an open turn.  D08's core types need an open turn; its session-level
    records do not."""
    log = d08_manual_log(3)
    bracket = log[next(i for i, e in enumerate(log) if e.type == "compaction/start"):]
    assert {"compaction/start", "user/message", "compaction/end"} <= {e.type for e in bracket}
    a55 = nesting_judged([*repair_loop_log(3, 400), *bracket], Dialect.A55)
    assert {(f.rule, f.seq) for f in a55} == {("LOG-13", e.seq) for e in bracket}
    prompt = with_data(next(e for e in log if e.type == "user/message"), turn=None)
    assert {f.rule for f in nesting_judged([*log, replace(prompt, seq=log[-1].seq + 1)], Dialect.D08)} == {"LOG-13"}
    record = make_event("approval/policy", seq=log[-1].seq + 1, time=log[-1].time, data=freeze({}))
    assert nesting_judged([*log, record], Dialect.D08) == []


# ---------------------------------------------------------------- DIA-3/DIA-5: the manual bracket, event by event


def _d08_take(nesting: Nesting, kind: str, **data: object) -> str | None:
    return d08_inside_open_turn(nesting, make_event(kind, seq=0, time=0, data=freeze(data)))


def test_DIA_3_a_closed_manual_bracket_leaves_the_state_it_found() -> None:
    """DIA-3: a manual bracket (owner ``null``) opened between turns lets D08's turn-bound types in (its checkpoint
    ``user/message``); its ``compaction/end`` closes it and leaves the companion's state exactly as before it opened:
    the next turn-bound event between turns is again outside an open turn."""
    nesting = Nesting(last_turn=2, next_step=3, last_seq=40)
    before = replace(nesting, pending={})
    assert _d08_take(nesting, "compaction/start", turn=None) is None and nesting.manual_bracket is True
    assert _d08_take(nesting, "user/message") is None
    assert _d08_take(nesting, "compaction/end", turn=None) is None
    assert nesting == before
    assert _d08_take(nesting, "user/message") == "user/message outside an open turn"


def test_DIA_5_the_end_of_the_seed_closes_a_manual_bracket_of_the_seed() -> None:
    """DIA-5: ``session/end-seed`` (the constructor's) ends a bracket the seed left open; without one it changes
    nothing."""
    nesting = Nesting()
    assert _d08_take(nesting, "session/end-seed") is None and nesting == Nesting()
    _d08_take(nesting, "compaction/start", turn=None)
    assert _d08_take(nesting, "session/end-seed") is None and nesting == Nesting()
    assert _d08_take(nesting, "request/header") == "request/header outside an open turn"


def test_DIA_3_an_owner_null_start_inside_an_open_turn_opens_no_manual_bracket() -> None:
    """DIA-3: only between turns does owner ``null`` open a manual bracket (inside a turn it is DIA-19's veto): once
    the turn has closed, turn-bound events are outside an open turn again; an end with no manual bracket open is
    no event of a turn (it changes nothing)."""
    nesting = Nesting(turn=1, last_turn=1)
    assert _d08_take(nesting, "compaction/start", turn=None) is None and nesting.manual_bracket is False
    assert _d08_take(nesting, "todo/write") is None  # inside the open turn
    nesting.turn = None
    assert _d08_take(nesting, "compaction/end", turn=None) is None and nesting == Nesting(last_turn=1)
    assert _d08_take(nesting, "todo/write") == "todo/write outside an open turn"


def test_DIA_3_d08s_core_types_alone_need_an_open_turn() -> None:
    """D08's turn-bound types are refused between turns and taken inside one; its plugins' session-level records and
    the bracket's own events are taken anywhere (the bracket types do not answer to the turn requirement)."""
    for kind in sorted(D08_TURN_BOUND_TYPES):
        assert _d08_take(Nesting(), kind) == f"{kind} outside an open turn"
        assert _d08_take(Nesting(turn=1, last_turn=1), kind) is None
    for kind in ("approval/policy", "agent/inbox/spliced", "compaction/summary", "compaction/end"):
        nesting = Nesting()
        assert _d08_take(nesting, kind, turn=1) is None and nesting == Nesting()
