"""sessionspec/fast/repair.py against the definitions of model/repair.py (LOG-14), finding for finding.

On the logs the loop simulator writes, cut inside a turn and closed by the model's repair; on every change of the
closers the model refuses (tests/model/test_repair_check.py's); and on a D08 crash, each way the D08 overlay reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import sessionspec.fast.repair as fast
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import SCANNED_TYPES
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


def judged_fast(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The twin folded over ``events`` as the checker folds it."""
    watch = fast.CloserWatch(dialect)
    found: list[Rejected] = []
    for previous, event in zip([None, *events], events, strict=False):
        if event.type in SCANNED_TYPES:
            found += fast.watch_event(watch, event, previous)
    return found


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_twin_accepts_what_the_model_accepts(seed: int) -> None:
    log = repair_loop_log(seed, 1500)
    cuts = crash_cuts(log)
    for cut in cuts[:: max(1, len(cuts) // 10)]:
        events, _ = crash_repaired(log, cut)
        assert judged_fast(events) == closers_judged(events) == []


@pytest.mark.parametrize(("change", "results", "started"), [
    (closer_dropped, 2, False), (closers_swapped, 2, False), (closer_late, 1, False), (closer_other_code, 1, False), (closer_other_text, 1, False),
    (closer_without_provenance, 1, True),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_twin_refuses_what_the_model_refuses(change: object, results: int, started: bool, seed: int) -> None:
    log = repair_loop_log(seed, 3000)
    events, start = crash_repaired(log, crash_cut_with(log, results, started))
    changed = change(events, start)  # type: ignore[operator]
    assert judged_fast(changed) == closers_judged(changed) != []


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize(("result_time", "code"), [(9, "TOOL_OUTCOME_UNKNOWN"), (10, "TOOL_OUTCOME_UNKNOWN"), (9, "TOOL_NOT_STARTED")])
def test_the_twin_reads_d08_as_the_overlay_does(dialect: Dialect, result_time: int, code: str) -> None:
    events = d08_crash(result_time, code)
    assert judged_fast(events, dialect) == closers_judged(events, dialect)
