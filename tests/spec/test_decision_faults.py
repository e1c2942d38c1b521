"""The faults issue 43 names, each one decision of the model inverted, are caught by the machines (issue 43).

Issue 43 measured four one-line faults at the model's decision points that every check of the project
passed: a pressure threshold compared with ``<=``, a retained budget rounded up, steering drained
last-in first-out, an ``agent/request`` listener that cannot override a key of the seed.  Each is planted
here as the inversion of its decision (spec/decision_probe.py ``Probe.flipped``: the model's own code,
instrumented, with that one decision going the other way), installed around each turn of the loop
machine with only the check that must find it enabled; Hypothesis must find it.  The vectors and the
model's tests catch the same faults (tests/spec/test_decision_table.py, tests/model/test_decision_boundaries.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from sessionspec.fast.meter import metered_pressure_listener
from sessionspec.spec.decision_probe import recording
from sessionspec.spec.machine_checks import Check, UnderTest
from sessionspec.spec.machines import loop_machine

FIND = settings(max_examples=200, stateful_step_count=20, deadline=None, derandomize=True, database=None,
                phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck), print_blob=False)

STEERING_LIFO = "loop.turn:drain_steering: pending.pop(0)"
SEED_KEYS_WIN = "loop.instance:apply_request_listener: merged.update(changes)"
THRESHOLD_LE = "compaction.run:compact_under_pressure: now < spec.threshold_tokens"


@contextmanager
def flipped(decision: str) -> Iterator[None]:
    with recording() as probe, probe.flipped(decision):
        yield


def under(decision: str | None) -> UnderTest:
    """The model (with the metered pressure listener, as the suite's machine runs), ``decision`` inverted in each turn."""
    if decision is None:
        return UnderTest(name="model", pressure=metered_pressure_listener)
    return UnderTest(name=decision, around_turn=lambda: flipped(decision), pressure=metered_pressure_listener)


CASES = [
    (STEERING_LIFO, Check.STEERING),
    (SEED_KEYS_WIN, Check.LISTENER),
    (THRESHOLD_LE, Check.PRESSURE_GATE),
]


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
@pytest.mark.parametrize(("decision", "check"), CASES, ids=[c.name for _, c in CASES])
def test_the_machine_finds_the_inverted_decision(decision: str, check: Check) -> None:
    with pytest.raises(AssertionError, match=check.value):
        run_state_machine_as_test(loop_machine(under(decision), frozenset({check})), settings=FIND)


@pytest.mark.parametrize("check", [c for _, c in CASES], ids=[c.name for _, c in CASES])
def test_the_model_passes_the_same_checks(check: Check) -> None:
    """Control: the unbroken model passes each of those checks on the same runs."""
    run_state_machine_as_test(loop_machine(under(None), frozenset({check})), settings=settings(FIND, max_examples=40))


RETAIN_CEIL = "compaction.policy:compact_spec: math.floor(context_window * _retain_ratio(policy.retain_ratio))"
# The held-out faults of issue 43 whose vectors are checked here; tests/model/test_loop_decisions.py checks the model's
# tests catch the same faults.
HELD_OUT = (STEERING_LIFO, SEED_KEYS_WIN, THRESHOLD_LE, RETAIN_CEIL, "loop.turn:play_turn: queued.pop(0)")


@pytest.fixture(scope="module")
def vectors_by_decision() -> dict[str, list[tuple[dict[str, object], str]]]:
    """Decision id -> the committed vectors (with their group) that take one of its outcomes, found by running them
    under the probe (the pins file names only the first of each outcome)."""
    from sessionspec.conformance.adapter.driver import InProcessAdapter
    from sessionspec.conformance.vectors.files import load_dir
    from sessionspec.conformance.vectors.runner import run_vector
    from sessionspec.decisions.record import VECTORS

    out: dict[str, list[tuple[dict[str, object], str]]] = {}
    with recording() as probe:
        for file in load_dir(VECTORS):
            for vector in file["vectors"]:
                probe.reset()
                run_vector(InProcessAdapter(), vector, file.get("group", ""))
                for decision in {o.rsplit(" => ", 1)[0] for o in probe.taken()} & set(HELD_OUT):
                    out.setdefault(decision, []).append((vector, file.get("group", "")))
    return out


@pytest.mark.parametrize("decision", HELD_OUT)
def test_the_vectors_catch_the_inverted_decision(decision: str, vectors_by_decision: dict[str, list[tuple[dict[str, object], str]]]) -> None:
    """Some committed vector that takes the decision fails with it inverted (the vectors pin it, not only reach it)."""
    from sessionspec.conformance.adapter.driver import InProcessAdapter
    from sessionspec.conformance.vectors.runner import run_vector

    vectors = vectors_by_decision.get(decision, [])
    assert vectors, f"no vector takes {decision}"
    with flipped(decision):
        failed = [v["id"] for v, group in vectors if run_vector(InProcessAdapter(), v, group).status != "pass"]
    assert failed, f"no vector of {len(vectors)} fails with {decision} inverted"
