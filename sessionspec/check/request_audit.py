"""Request points (FMT-8, HDR-9, INV-7, P-INV-1): a driver of :mod:`sessionspec.model.request_points`.

The points are found by the compiled twin of :func:`sessionspec.model.request_points.logged_requests`,
:class:`sessionspec.fast.request_points.RequestPointFold` (tied to the model finding for finding by
``tests/fast/test_fast_request_points.py``), from each event's surface plan, and each is judged by the model's
:func:`~sessionspec.model.request_points.check_request_point` as it is made (through its compiled twin, tied by
the same test).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.folds import AuditFold, Step

# The model's check_request_point through its compiled twin (tied by tests/fast/test_fast_request_points.py).
from sessionspec.fast.request_points import RequestPoint, RequestPointFold, check_request_point, request_points
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import Absent
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


def check_request_points(
    events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0, plans: Sequence[SurfacePlan | None] | None = None
) -> list[Rejected]:
    """:func:`sessionspec.model.request_points.check_request_points` by the compiled twin, the points kept and
    then judged (``plans``: the events' surface transitions, when the checker's one surface fold made them).
    The requests are not materialized: copying every boundary (``RequestPoint.request()``) would cost the
    history length per request, quadratic in the log."""
    return request_findings(request_points(events, dialect, first_live_seq, plans))


class RequestPointAudit(AuditFold):
    """:func:`check_request_points` as a fold of the checker's one loop: the request points are
    found from each event's surface plan, never planning it again, and judged as they are made (no
    boundary is derived: only each surface event's projection is checked, DER-1, INV-7)."""

    NEEDS_SURFACE = True
    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.found: list[Rejected] = []
        # Each point is judged as it is made and not kept: a point holds the derivation before its
        # step (issue 26: memory bounded by the surface, not the log), and none is derived.
        self.fold = RequestPointFold(dialect=dialect, first_live_seq=first_live_seq, planned=True, judge=self.judge)

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        self.fold.step(event, plan)

    def stepper(self) -> Step:
        return self.fold.step

    def step_run(self, run: ChunkRun) -> None:
        """A packed row's chunks: FMT-8's first chunk of the open step is the run's first member."""
        self.fold.step_chunks(run.members[0])

    def judge(self, step_start_seq: int, first_chunk_seq: int | None, header: EpochHeader | Absent) -> None:
        finding = check_request_point(step_start_seq, first_chunk_seq, header)
        if finding is not None:
            self.found.append(finding)

    def finish(self) -> list[Rejected]:
        points = self.fold.finish()
        return request_findings(points) if isinstance(points, Rejected) else self.found + request_findings(points)


def request_findings(points: tuple[RequestPoint, ...] | Rejected) -> list[Rejected]:
    """:func:`check_request_point` on every request point (or the rejection that stopped the points, INV-7)."""
    if isinstance(points, Rejected):
        return [points]
    found = (check_request_point(point.step_start_seq, point.first_chunk_seq, point.header) for point in points)
    return [finding for finding in found if finding is not None]
