"""LOG-14 as the model decides it in a log (model/repair.py's CloserWatch), against the repair that writes closers.

Both ways, over logs the loop simulator writes (``sessionspec.generate``), cut inside a turn and closed by the
model's own repair (:func:`repair_closers`): every such log is accepted, and each change of the closers LOG-14
forbids (a closer dropped, two swapped, another code, text, time or provenance) is refused by LOG-14.  The fold
here is the test's own (a CloserWatch over the events, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.model.log import Dialect, Event
from sessionspec.model.repair import scan_for_repair
from tests.support import (
    closer_dropped,
    closer_late,
    closer_other_code,
    closer_other_text,
    closer_without_provenance,
    closers_judged,
    closers_swapped,
    crash_cut_with,
    crash_cuts,
    crash_repaired,
    d08_crash,
    repair_loop_log,
)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_repair_writes_is_accepted(seed: int) -> None:
    log = repair_loop_log(seed)
    assert closers_judged(log) == []
    cuts = crash_cuts(log)
    assert cuts
    for cut in cuts[:: max(1, len(cuts) // 8)]:
        events, _ = crash_repaired(log, cut)
        assert closers_judged(events) == [], cut
        assert not scan_for_repair(events).open_turn


Change = Callable[[list[Event], int], list[Event]]


@pytest.mark.parametrize(("change", "results", "started"), [
    (closer_dropped, 2, False), (closers_swapped, 2, False), (closer_late, 1, False), (closer_other_code, 1, False), (closer_other_text, 1, False),
    (closer_without_provenance, 1, True),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_closers_the_rule_forbids_are_refused(change: Change, results: int, started: bool, seed: int) -> None:
    log = repair_loop_log(seed, 3000)
    events, start = crash_repaired(log, crash_cut_with(log, results, started))
    assert closers_judged(events) == []
    assert {finding.rule for finding in closers_judged(change(events, start))} == {"LOG-14"}


def test_DIA_10_the_d08_repair_is_judged_through_its_overlay() -> None:
    """D08's closers carry their call under ``data.message`` (DIA-10): the scan finds the call there, and a result
    with another code or another time than the closers' is LOG-14."""
    assert closers_judged(d08_crash(), Dialect.D08) == []
    assert {f.rule for f in closers_judged(d08_crash(code="TOOL_NOT_STARTED"), Dialect.D08)} == {"LOG-14"}
    assert {f.rule for f in closers_judged(d08_crash(result_time=10), Dialect.D08)} == {"LOG-14"}
    assert {f.rule for f in closers_judged(d08_crash(), Dialect.A55)} == {"LOG-14"}  # read as A55, no call is pending
