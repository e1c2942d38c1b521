"""Where ``compactIfNeeded`` runs, as the deployment's decisions read a log (model/compaction/trigger_points.py):
CMP-6's post-step window and DIA-6's pre-step window, and CMP-7's overflow points.

The expected points are reasoned from CMP-7 ("after the failed step's `step/end` ... only if `failure.code ==
"CONTEXT_WINDOW_EXCEEDED"`, the signal is not aborted ..., and the number of earlier `CONTEXT_WINDOW_EXCEEDED`
failures in `priorFailures` (LOOP-14) is `< maxOverflowRetries`"): a point is judged when its failure's code is
logged and is that code, every earlier failure of the sequence is logged, and the turn did not end aborted.  The
whole fold, against the loop's own logs under a deployment, is tests/check/test_deployment_property.py's.
"""

from __future__ import annotations

import pytest

from sessionspec.model.compaction.obligation import Action, Expectation, decide_pressure_point
from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.compaction.trigger_points import (
    A55_POINTS,
    D08_POINTS,
    OverflowPoint,
    OverflowTrack,
    a55_overflow_step,
    d08_overflow_step,
    point_rules,
)
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, make_event

CWE = CONTEXT_WINDOW_EXCEEDED


class Steps:
    """Events fed to :func:`a55_overflow_step` in order, each with whether compaction acted there."""

    def __init__(self) -> None:
        self.track = OverflowTrack()
        self.seq = 0

    def take(self, type_name: str, data: object = None, acts: bool = False) -> OverflowPoint | None:
        event = make_event(type_name, seq=self.seq, time=0, data=freeze({} if data is None else data))
        self.seq += 1
        return a55_overflow_step(self.track, event, acts)

    def failed_step(self, code: object = CWE, finish: bool = True) -> None:
        """A step whose attempt ends in an error finish (with ``code`` as its failure's, or none) and no message."""
        assert self.take("step/start") is None
        reason: dict[str, object] = {"kind": "error"}
        if code is not None:
            reason["failure"] = {"code": code}
        assert self.take("assistant/chunk", {"chunk": {"type": "finish", "reason": reason} if finish else {"type": "text"}}) is None
        assert self.take("step/end") is None


def test_CMP_7_a_logged_overflow_is_a_point_decided_at_its_first_compaction_event() -> None:
    steps = Steps()
    steps.take("turn/start")
    steps.failed_step()
    assert steps.track.open
    assert steps.take("request/header") is None and steps.track.open  # neither a compaction nor a close
    assert steps.take("compact/start", acts=True) == OverflowPoint(seq=5, prior_overflows=0)
    assert not steps.track.open and steps.track.failures == [CWE]
    steps.failed_step()
    assert steps.take("step/start") == OverflowPoint(seq=9, prior_overflows=1)


def test_CMP_7_a_step_with_its_message_opens_no_point_and_ends_the_failure_sequence() -> None:
    steps = Steps()
    steps.failed_step()
    steps.take("step/start")  # the retry: the point closes with nothing written
    steps.take("assistant/message")
    assert steps.track.failures == [] and steps.track.step_ok
    assert steps.take("step/end") is None and not steps.track.open


@pytest.mark.parametrize("code", ["PROVIDER_ERROR", 7])
def test_CMP_7_another_failure_is_no_overflow_point(code: object) -> None:
    """A failure whose code is not CONTEXT_WINDOW_EXCEEDED (a code that is no string is not logged)."""
    steps = Steps()
    steps.failed_step(code)
    assert steps.take("compact/start", acts=True) is None
    assert steps.track.failures == [code if isinstance(code, str) else CWE]


def test_CMP_7_an_unlogged_failure_followed_by_a_compaction_was_an_overflow() -> None:
    """Recovery runs only for CONTEXT_WINDOW_EXCEEDED: the sequence's later overflow is still judged."""
    steps = Steps()
    steps.failed_step(None)
    assert steps.take("compaction/prune", acts=True) is None
    steps.failed_step()
    assert steps.take("turn/end", {"reason": {"kind": "error"}}) == OverflowPoint(seq=7, prior_overflows=1)


def test_CMP_7_after_an_unlogged_failure_nothing_ran_for_the_sequence_is_not_judged() -> None:
    steps = Steps()
    steps.failed_step(None, finish=False)
    assert steps.track.step_code is None
    assert steps.take("step/start") is None and steps.track.failures == [None]
    steps.failed_step()
    assert steps.take("compact/start", acts=True) is None


@pytest.mark.parametrize(("reason", "point"), [
    ({"kind": "error", "failure": {"code": CWE}}, True),
    ({"kind": "error", "code": CWE}, True),
    ({"kind": "error", "failure": {"code": 3}}, False),
    ({"kind": "error"}, False),
    ({"kind": "aborted", "failure": {"code": CWE}}, False),
    ({"kind": "interrupted", "code": CWE}, False),
])
def test_CMP_7_a_turn_end_closes_the_point_with_the_code_it_logs(reason: object, point: bool) -> None:
    """A failure the step did not log is the turn's error end's (``reason.failure.code``, else ``reason.code``);
    an aborted turn ran no recovery ("the signal is not aborted")."""
    steps = Steps()
    steps.failed_step(None)
    assert (steps.take("turn/end", {"reason": reason}) is not None) is point


@pytest.mark.parametrize(("kind", "point"), [("aborted", False), ("interrupted", False), ("disposed", False),
                                           ("completed", True), ("max-tokens", True)])
def test_CMP_7_a_logged_overflow_in_a_turn_whose_signal_was_aborted_is_no_point(kind: str, point: bool) -> None:
    """The step logged ``CONTEXT_WINDOW_EXCEEDED``; the turn then ends.  A disposal aborts the turn's signal as a
    user's or parent's abort does (harness a55f148516 agent-loop/src/cancellation.ts ``TurnCancellation.request``
    with DISPOSED_INTERRUPT_REASON), so ``disposed`` closes no point, as ``aborted`` and ``interrupted`` do."""
    steps = Steps()
    steps.failed_step()
    assert (steps.take("turn/end", {"reason": {"kind": kind}}) is not None) is point


def test_CMP_7_only_an_error_finish_logs_the_step_s_failure() -> None:
    """A finish chunk whose reason is no error (a retry that streamed to its end) logs no failure code."""
    steps = Steps()
    steps.take("step/start")
    steps.take("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": "stop", "failure": {"code": CWE}}}})
    assert steps.track.step_code is None
    steps.take("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"code": CWE}}}})
    assert steps.track.step_code == CWE


def test_CMP_7_a_turn_start_forgets_the_last_turn_s_failures() -> None:
    steps = Steps()
    steps.failed_step(None)
    steps.take("step/start")
    assert steps.track.failures == [None]
    steps.take("turn/start")
    assert steps.track.failures == []


def test_DIA_7_d08_decides_no_overflow_point() -> None:
    track = OverflowTrack(open=True, step_code=CWE)
    assert d08_overflow_step(track, make_event("compaction/start", seq=1, time=0, data=freeze({})), True) is None


def test_CMP_6_DIA_6_the_pressure_windows() -> None:
    """A55's post-step opens at the step's message and runs before ``step/end`` (CMP-6); D08's pre-step opens at
    ``turn/start`` or the previous ``step/end`` and runs before ``step/start`` (DIA-6)."""
    assert point_rules(Dialect.A55) is A55_POINTS and point_rules(Dialect.D08) is D08_POINTS
    assert (A55_POINTS.opens, A55_POINTS.closes) == (frozenset({"assistant/message"}), "step/end")
    assert (D08_POINTS.opens, D08_POINTS.closes) == (frozenset({"turn/start", "step/end"}), "step/start")


@pytest.mark.parametrize(("dialect", "rule", "where"), [(Dialect.A55, "CMP-6", "post-step"), (Dialect.D08, "DIA-6", "pre-step")])
def test_CMP_6_DIA_6_a_point_that_had_to_write_and_did_not_is_the_dialect_s_rule(dialect: Dialect, rule: str, where: str) -> None:
    due = Expectation(action=Action.COMPACTION, total=10, threshold=5, target="p/m")
    found = decide_pressure_point(due, Action.NOTHING, 4, dialect)
    assert found is not None and found.rule == rule and where in found.reason
    below = decide_pressure_point(Expectation(action=Action.NOTHING, total=1, threshold=5, target="p/m"), Action.COMPACTION, 4, dialect)
    assert below is not None and below.rule == "CMP-8" and where in below.reason
