"""RequestPointAudit judges each request point as it is made and derives no boundary; its findings are
those of check_request_points (the points with their boundaries, then judged), on generated logs, the
same logs damaged (tests/check/test_chunk_runs.py's mutations), and in both dialects; a fold whose
points are kept makes the points request_points makes."""

from __future__ import annotations

from hypothesis import given, settings

from sessionspec.check.fold_loop import run_alone, run_folds
from sessionspec.check.request_audit import RequestPointAudit, check_request_points
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from tests.support import request_point_logs


@settings(max_examples=60, deadline=None)
@given(request_point_logs())
def test_the_judging_fold_finds_what_the_points_show(drawn: tuple[list[Event], Dialect, int]) -> None:
    log, dialect, first_live_seq = drawn
    outcome = run_folds(log, dialect, first_live_seq, [RequestPointAudit])
    if outcome.surface_rejected is not None:
        assert run_alone(RequestPointAudit, log, dialect, first_live_seq) == []
        return
    expected = check_request_points(log, dialect, first_live_seq)
    assert outcome.findings == expected
    assert isinstance(expected, list) and all(isinstance(f, Rejected) for f in expected)
