"""The simulator (model/simulate.py) and the machines write logs the checker accepts.

Issue 5: "logs produced by the loop machine are all valid; logs from broken
variants are invalid" — judged by ``sessionspec.check.checker.check_path`` on files written
to disk, exactly as ``sessionspec check`` judges a real log.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from sessionspec.check.checker import FileReport, Verdict, check_path
from sessionspec.fast.request_points import reconstruct_requests
from sessionspec.model.compaction import is_checkpoint_source
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.log import Event, log_view
from sessionspec.model.meter import MeterState, fold_meter_event, measure_state
from sessionspec.model.rejected import Rejected
from sessionspec.planted.loop import Planted
from sessionspec.simulate import simulate, to_jsonl
from sessionspec.simulate_meter import _Total
from sessionspec.spec.loop_compaction_properties import (
    brackets,
    compaction_leaves_envelope,
    compactions_keep_tool_pairs,
    compactions_resummarize_head,
    overflow_retry_iff_compacted,
    pressure_compaction_closes_step,
    prunes_only_under_pressure,
)
from sessionspec.spec.machine_checks import Check
from sessionspec.spec.machines import loop_machine
from tests.under_test import with_planted


def _check(log: Sequence[Event], directory: Path) -> FileReport:
    path = directory / "session.jsonl"
    path.write_text(to_jsonl(log), encoding="utf-8")
    return check_path(str(path))


def test_simulate_is_deterministic_in_the_seed() -> None:
    assert simulate(3, 30, compaction=True) == simulate(3, 30, compaction=True)
    assert simulate(3, 30) != simulate(4, 30)


def test_simulate_has_a_realistic_shape() -> None:
    log = simulate(1, 120, contributors=2)
    types = Counter(e.type for e in log)
    replies = types["assistant/message"]
    # Streamed replies: many chunks per reply; tool rounds; retries; resumes with a drifted prefix.
    assert types["assistant/chunk"] > 5 * replies
    assert types["tool/call"] == types["tool/result"] > 10
    assert types["step/start"] > types["turn/start"]
    reasons = [get(e.data, "reason") for e in log if e.type == "request/header"]
    assert reasons[0] == "initial" and reasons.count("resume") >= 20
    ends = Counter(get(get(e.data, "reason"), "kind") for e in log if e.type == "turn/end")
    assert ends["completed"] > 60 and ends["aborted"] > 0 and ends["max-tokens"] > 0
    requests = reconstruct_requests(log)
    assert not isinstance(requests, Rejected) and all(r is not None for r in requests)


def test_CMP_6_CMP_7_PRN_6_simulate_with_compaction_compacts_prunes_and_recovers(tmp_path: Path) -> None:
    log = simulate(2, 150, contributors=2, compaction=True)
    committed = [b for b in brackets(log) if b.checkpoint is not None and b.summary is not None]
    assert len(committed) >= 5
    # Re-compaction re-summarises the previous checkpoint (head-anchored ranges, CMP-12).
    assert any(get(log[b.summary].data, "shadowedSeqs")[0] == a.checkpoint  # type: ignore[index]
               for a, b in zip(committed, committed[1:]))
    assert any(e.type == "tool/result" and isinstance(e.surface_op, JsonObject) for e in log)
    # An overflow recovery: a bracket right after a failed step's step/end, then the retry step.
    assert any(log[b.start - 1].type == "step/end" and b.end is not None and log[b.end + 1].type == "step/start"
               for b in committed)
    for predicate in (compactions_keep_tool_pairs, overflow_retry_iff_compacted, pressure_compaction_closes_step, prunes_only_under_pressure, compaction_leaves_envelope, compactions_resummarize_head):
        assert predicate(log) is None, predicate.__name__
    assert all(is_checkpoint_source(get(log[b.checkpoint].data, "source")) for b in committed)  # type: ignore[index]
    requests = reconstruct_requests(log)
    assert not isinstance(requests, Rejected) and all(r is not None for r in requests)
    report = _check(log, tmp_path)
    assert report.verdict is Verdict.VALID, report.findings


def test_FMT_7_simulated_logs_are_valid_under_the_checker(tmp_path: Path) -> None:
    for seed, compaction in ((5, False), (6, True)):
        report = _check(simulate(seed, 60, contributors=2, compaction=compaction), tmp_path)
        assert report.verdict is Verdict.VALID, (seed, report.findings)


@pytest.mark.parametrize(("fault", "rule"), [(Planted.COMPACT_SPLITS_TOOL_PAIR, "CMP-10"),
                                             (Planted.COMPACT_DROPS_PREFIX, "PFX-15")])
def test_CMP_10_PFX_15_logs_of_broken_compaction_are_invalid(tmp_path: Path, fault: Planted, rule: str) -> None:
    report = _check(simulate(11, 60, contributors=2, compaction=True, fault=fault), tmp_path)
    assert report.verdict is Verdict.INVALID
    assert rule in {f.rule for f in report.findings}


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), compaction=st.booleans())
def test_FMT_7_any_seed_gives_a_valid_log(seed: int, compaction: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        report = _check(simulate(seed, 25, contributors=2, compaction=compaction, context_window=2000), Path(directory))
        assert report.verdict is Verdict.VALID, report.findings


# ----------------------------------------------------------------- the machines' logs


def _checked_machine(fault: Planted | None) -> type[RuleBasedStateMachine]:
    """The loop machine (no in-run invariants) whose teardown judges the log with the checker."""
    base = loop_machine(with_planted(fault), frozenset[Check]())

    class Checked(base):  # type: ignore[misc, valid-type]
        def teardown(self) -> None:
            log = self.session.log
            if log:
                with tempfile.TemporaryDirectory() as directory:
                    report = _check(log, Path(directory))
                assert report.verdict in (Verdict.VALID, Verdict.UNKNOWN), \
                    f"checker: {report.verdict.value} {[f.rule for f in report.findings]}"
            super().teardown()

    return Checked


CHECKED = settings(max_examples=25, stateful_step_count=20, deadline=None, derandomize=True, database=None,
                   phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck), print_blob=False)


def test_FMT_7_logs_of_the_loop_machine_are_valid() -> None:
    run_state_machine_as_test(_checked_machine(None), settings=CHECKED)


def test_CMP_10_a_broken_compaction_in_the_machine_writes_an_invalid_log() -> None:
    with pytest.raises(AssertionError, match="checker: invalid"):
        run_state_machine_as_test(_checked_machine(Planted.COMPACT_SPLITS_TOOL_PAIR),
                                  settings=settings(CHECKED, max_examples=300))


@pytest.mark.parametrize(("seed", "turns", "window"), [(0, 50, 4000), (7, 60, 2000), (12, 40, 3000)])
def test_CMP_8_MTR_5_compaction_from_the_running_meter_writes_the_models_log(seed: int, turns: int, window: int) -> None:
    """The simulator's pressure listener starts each ``compactIfNeeded`` from a
    copy of its running meter (MTR-5: a replay fold, so the same state the
    model's run re-folds from the log); the log is the one the model's own
    ``pressure_listener`` writes, event for event."""
    fast = simulate(seed, turns, contributors=2, compaction=True, context_window=window)
    assert sum(e.type == "compact/summary" for e in fast) >= 2
    assert fast == simulate(seed, turns, contributors=2, compaction=True, context_window=window, model_listener=True)


def test_MTR_10_the_listeners_total_is_the_measured_total() -> None:
    """The simulator's listener measures with header equality and the header
    estimate remembered per header object: after every event of simulated logs
    (resumes, system changes, compactions) the total is ``measure_state``'s."""
    for seed, window in ((3, 2000), (8, 4000)):
        log = simulate(seed, 40, contributors=2, compaction=True, context_window=window)
        state, total = MeterState(), _Total()
        for index, event in enumerate(log):
            assert fold_meter_event(state, event, log_view(log, index)) is None
            assert total(state) == measure_state(state).total_tokens, index
