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
from sessionspec.model.jsonval import ABSENT, freeze
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


# ---------------------------------------------------------------- DIA-7: D08's overflow point inside the step
#
# Reasoned from compact-basic src/index.ts at 611615650f: the request-error listener runs at the failed attempt's
# error finish (agent-loop agent.ts:373-389), recovers only CONTEXT_WINDOW_EXCEEDED below maxOverflowRetries counted in
# ``overflowRetries`` (lines 183-189), sets that count only where it returns retry after the surface advanced (206,
# 221), and the count is cleared by any assistant/message (176) and by the agent going idle (168).


class D08Steps:
    """Events fed to :func:`d08_overflow_step` in order, each with whether compaction acted there."""

    def __init__(self) -> None:
        self.track = OverflowTrack()
        self.seq = 0

    def take(self, type_name: str, data: object = None, acts: bool = False, replace: bool = False) -> OverflowPoint | None:
        op = {"op": "replace", "start": 1, "end": 1} if replace else None
        event = make_event(type_name, seq=self.seq, time=0, data=freeze({} if data is None else data),
                           surface_op=ABSENT if op is None else freeze(op))
        self.seq += 1
        return d08_overflow_step(self.track, event, acts)

    def finish(self, code: object = CWE, kind: str = "error") -> None:
        """A failed attempt's finish chunk (its failure's code ``code``)."""
        assert self.take("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": kind, "failure": {"code": code}}}}) is None

    def recovery(self, advanced: bool = True) -> OverflowPoint | None:
        """A bracket: its start decides the point; a committed one replaces surface (the checkpoint)."""
        point = self.take("compaction/start", acts=True)
        assert self.take("compaction/summary") is None
        if advanced:
            assert self.take("user/message", replace=True) is None
        assert self.take("compaction/end", {} if advanced else {"error": "no smaller"}) is None
        return point


def test_DIA_7_a_failed_attempt_opens_a_point_decided_at_its_first_compaction_event() -> None:
    steps = D08Steps()
    steps.take("turn/start")
    steps.take("step/start")
    steps.finish()
    assert steps.track.open
    assert steps.take("session/title") is None and steps.track.open  # neither a compaction nor a sign of the listeners' return
    assert steps.recovery() == OverflowPoint(seq=4, prior_overflows=0)
    assert not steps.track.open and (steps.track.retried, steps.track.recovering) == (1, False)


def test_DIA_7_the_budget_counts_the_recoveries_that_retried_until_a_message() -> None:
    """The retry overflows again: its point has one earlier recovery that retried; a message clears the count."""
    steps = D08Steps()
    steps.take("step/start")
    steps.finish()
    steps.recovery()
    steps.finish()
    assert steps.take("compaction/prune", acts=True) == OverflowPoint(seq=7, prior_overflows=1)
    assert steps.take("tool/result", replace=True) is None and steps.track.retried == 2
    steps.take("assistant/chunk", {"chunk": {"type": "text-delta"}})
    assert steps.take("assistant/message") is None and steps.track.retried == 0


def test_DIA_7_a_recovery_that_replaced_nothing_did_not_retry() -> None:
    """A failed bracket (no replacement: the listener keeps the original error) counts nothing, through the step's
    and turn's end; nor does a recovery followed by another listener's retry before any replacement."""
    steps = D08Steps()
    steps.take("step/start")
    steps.finish()
    assert steps.recovery(advanced=False) is not None and steps.track.recovering
    steps.take("step/end")
    assert steps.track.recovering and steps.take("turn/end", {"reason": {"kind": "error"}}) is None
    assert (steps.track.retried, steps.track.recovering) == (0, False)
    steps.finish()
    steps.take("compaction/prune", acts=True)
    steps.take("request/header")
    assert (steps.track.retried, steps.track.recovering) == (0, False)
    assert steps.take("tool/result", replace=True) is None and steps.track.retried == 0


JUDGED, NOT_STATED = OverflowPoint(seq=2, prior_overflows=1), OverflowPoint(seq=2, prior_overflows=1, stated=False)


@pytest.mark.parametrize(("kind", "data", "point"), [
    ("assistant/chunk", {"chunk": {"type": "block-start"}}, JUDGED),  # the retry streamed: another listener retried
    ("request/header", {}, JUDGED),
    ("step/start", {}, JUDGED),
    ("turn/end", {"reason": {"kind": "error"}}, JUDGED),  # the failure was thrown
    ("turn/end", {"reason": {"kind": "completed"}}, JUDGED),
    ("turn/end", {"reason": {"kind": "aborted"}}, None),  # "the signal is not aborted"
    ("turn/end", {"reason": {"kind": "disposed"}}, None),
    ("llm/retry", {}, NOT_STATED),  # another listener's retry: its place in the waterfall is not stated
])
def test_DIA_7_a_point_where_nothing_ran_is_decided_where_the_listeners_returned(kind: str, data: object, point: OverflowPoint | None) -> None:
    steps = D08Steps()
    steps.track.retried = 1
    steps.finish()
    assert steps.take("step/end") is None and steps.track.open  # a thrown failure: step/end, then the turn's end
    assert steps.take(kind, data) == point
    assert not steps.track.open and not steps.track.recovering


def test_DIA_7_the_next_attempt_s_failed_finish_decides_the_open_point_and_opens_another() -> None:
    steps = D08Steps()
    steps.finish()
    assert steps.take("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"code": CWE}}}}) == \
        OverflowPoint(seq=1, prior_overflows=0)
    assert steps.track.open


@pytest.mark.parametrize(("code", "kind"), [("PROVIDER_ERROR", "error"), (CWE, "stop")])
def test_DIA_7_another_failure_or_finish_opens_no_point(code: str, kind: str) -> None:
    steps = D08Steps()
    steps.finish(code, kind)
    assert not steps.track.open
    assert steps.take("compaction/start", acts=True) is None


def test_DIA_7_a_turn_start_clears_the_count() -> None:
    """A turn ends after its last step's message or by a thrown failure that takes the agent idle (index.ts:168)."""
    steps = D08Steps()
    steps.track.retried = 2
    steps.take("turn/start")
    assert steps.track.retried == 0
    steps.track.retried = 2
    steps.take("step/start")
    assert steps.track.retried == 2


def test_DIA_7_the_dialects_name_their_overflow_points() -> None:
    assert (A55_POINTS.places.overflow_rule, A55_POINTS.places.overflow_what, D08_POINTS.places.overflow_rule, D08_POINTS.places.overflow_what) == (
        "CMP-7", "failed step", "DIA-7", "failed attempt")


def test_CMP_6_DIA_6_the_pressure_windows() -> None:
    """A55's post-step opens at the step's message and runs before ``step/end`` (CMP-6); D08's pre-step opens at
    ``turn/start`` or the previous ``step/end`` and runs before ``step/start`` (DIA-6)."""
    assert point_rules(Dialect.A55) is A55_POINTS and point_rules(Dialect.D08) is D08_POINTS
    assert (A55_POINTS.places.opens, A55_POINTS.places.closes) == (frozenset({"assistant/message"}), "step/end")
    assert (D08_POINTS.places.opens, D08_POINTS.places.closes) == (frozenset({"turn/start", "step/end"}), "step/start")


@pytest.mark.parametrize(("dialect", "rule", "where"), [(Dialect.A55, "CMP-6", "post-step"), (Dialect.D08, "DIA-6", "pre-step")])
def test_CMP_6_DIA_6_a_point_that_had_to_write_and_did_not_is_the_dialect_s_rule(dialect: Dialect, rule: str, where: str) -> None:
    due = Expectation(action=Action.COMPACTION, total=10, threshold=5, target="p/m")
    found = decide_pressure_point(due, Action.NOTHING, 4, dialect)
    assert found is not None and found.rule == rule and where in found.reason
    below = decide_pressure_point(Expectation(action=Action.NOTHING, total=1, threshold=5, target="p/m"), Action.COMPACTION, 4, dialect)
    assert below is not None and below.rule == "CMP-8" and where in below.reason
