"""The machines can fail: each invariant catches a deliberately broken loop model.

Each test runs the loop machine with ONE invariant enabled against a faulty
variant (``sessionspec.planted.loop.Planted``) and asserts that Hypothesis finds the violation,
reported under that invariant's property ID.  Shrinking is skipped (only
finding matters here), and the runs are derandomized so they are stable.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from sessionspec.planted.loop import Planted
from sessionspec.spec.machine_checks import Check
from sessionspec.spec.machines import loop_machine
from tests.under_test import with_planted

FIND = settings(max_examples=300, stateful_step_count=20, deadline=None, derandomize=True, database=None,
                phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck), print_blob=False)

CASES = [
    # freeze: recomposing every turn composes twice in one instance / changes the prefix by a change header
    (Planted.RECOMPOSE_EVERY_TURN, Check.FREEZE),
    # freeze: a cache that aliases the contributor's objects sees its later mutation
    (Planted.NO_CLONE, Check.FREEZE),
    # discard: an interrupted composition must not be cached
    (Planted.CACHE_INTERRUPTED, Check.DISCARD),
    # reconstructability: the prefix after history is not prefix ++ derive(boundary)
    (Planted.PREFIX_AFTER_HISTORY, Check.RECONSTRUCT),
    # reconstructability: a boundary taken after agent/request leaks the request-time inject
    (Planted.SNAPSHOT_AFTER_REQUEST, Check.RECONSTRUCT),
    # cache stability: with the prefix at the tail a request cannot extend the previous one
    (Planted.PREFIX_AFTER_HISTORY, Check.CACHE),
    # the prefix appended to history becomes history
    (Planted.PREFIX_IN_HISTORY, Check.HISTORY),
    # compaction: a retention walk without head-ward rounding splits a tool call from its result
    (Planted.COMPACT_SPLITS_TOOL_PAIR, Check.PAIRS),
    # compaction: a bracket that re-anchors the header without the prefix touches the envelope
    (Planted.COMPACT_DROPS_PREFIX, Check.ENVELOPE),
    # dispatch: a waterfall that reaches other agents' scoped listeners
    (Planted.IGNORE_SCOPE, Check.DISPATCH),
]


@pytest.mark.parametrize(("fault", "check"), CASES, ids=[f"{f.name}-{c.name}" for f, c in CASES])
def test_machine_finds_fault(fault: Planted, check: Check) -> None:
    machine = loop_machine(with_planted(fault), frozenset({check}))
    with pytest.raises(AssertionError, match=check.value):
        run_state_machine_as_test(machine, settings=FIND)


def test_correct_model_passes_each_single_check() -> None:
    """Control: the unbroken model passes the same runs for every check."""
    for check in Check:
        run_state_machine_as_test(loop_machine(with_planted(None), frozenset({check})),
                                  settings=settings(FIND, max_examples=15))
