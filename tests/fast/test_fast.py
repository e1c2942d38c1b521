"""The fast paths of ``sessionspec.fast`` equal the definitions they speed up.

- ``LiveLog`` / ``run_turn_live`` (an incremental derivation kept open across
  turns) against ``model.loop.run_turn`` (the session rebuilt from the whole
  log each turn, every boundary ``derive`` over the surface fold, LOOP-6);
- ``metered_pressure_listener`` (an incremental meter in front of compact-basic)
  against ``pressure_listener`` (CMP-8), on the same simulated sessions.

The simulator is run twice with the same seed: once as shipped, once with its
turn runner swapped for the normative ``run_turn`` and its pressure listener
for the plain one; the logs must be identical event for event.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

import sessionspec.simulate as simulate_module
from sessionspec.fast.live import LiveLog
from sessionspec.model.loop import AgentConfig, Hooks, LoopInstance, TurnOutcome, TurnScript, pressure_listener, run_turn
from sessionspec.model.rejected import Rejected
from sessionspec.simulate import simulate


def _normative_turn(live: LiveLog, instance: LoopInstance, agent: AgentConfig, script: TurnScript, *,
                    hooks: Hooks) -> TurnOutcome | Rejected:
    """The definition: ``run_turn`` over the whole log; its new events are then
    appended to the live log so the simulator goes on from the same state."""
    before = len(live.events)
    outcome = run_turn(tuple(live.events), instance, agent, script, hooks=hooks)
    if not isinstance(outcome, Rejected):
        for event in outcome.log[before:]:
            assert live.derivation.append(event) is None
    return outcome


@contextmanager
def _definitions() -> Iterator[None]:
    names = ("run_turn_live", "metered_pressure_listener")
    saved = [getattr(simulate_module, name) for name in names]
    for name, definition in zip(names, (_normative_turn, pressure_listener)):
        setattr(simulate_module, name, definition)
    try:
        yield
    finally:
        for name, fast in zip(names, saved):
            setattr(simulate_module, name, fast)


@settings(max_examples=12)
@given(seed=st.integers(0, 10**6), turns=st.integers(1, 8), compaction=st.booleans())
def test_DER_7_CMP_8_live_log_and_metered_listener_equal_the_definitions(seed: int, turns: int,
                                                                        compaction: bool) -> None:
    fast = simulate(seed, turns, compaction=compaction, context_window=1500)
    with _definitions():
        normative = simulate(seed, turns, compaction=compaction, context_window=1500)
    assert fast == normative


def test_DER_7_CMP_8_a_long_compacting_session_is_identical() -> None:
    """One longer session with several compactions and prunes (fixed seed)."""
    fast = simulate(3, 30, contributors=2, compaction=True, context_window=1500)
    with _definitions():
        normative = simulate(3, 30, contributors=2, compaction=True, context_window=1500)
    assert fast == normative
    assert sum(1 for e in fast if e.type == "compact/end") >= 2
