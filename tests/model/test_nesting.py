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
