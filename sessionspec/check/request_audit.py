"""Request points (FMT-8, INV-7): each live request has a header in force naming a provider and
model, and its request can be built (prefix first, WIRE-2)."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.folds import AuditFold, Step
from sessionspec.fast.constants import ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.fast.request_points import RequestPoint, RequestPointFold, request_points
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import Absent
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


def check_request_points(
    events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0, plans: Sequence[SurfacePlan | None] | None = None
) -> list[Rejected]:
    """FMT-8/INV-7: every live request point has a header in force (HDR-9,
    FMT-9 g) naming a provider and model, and its request (prefix first,
    WIRE-2, then the boundary derivation) can be built.

    The requests are not materialized: ``build_request`` (WIRE-1) is total on
    a header and a boundary, and ``request_points`` fails (INV-7) when a
    boundary cannot be derived, so a point with a header in force has a
    request.  Copying every boundary (``RequestPoint.request()``) would cost
    the history length per request, quadratic in the log.  ``plans``: the
    events' surface transitions, when the checker's one surface fold made them."""
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
        finding = point_finding(step_start_seq, first_chunk_seq, header)
        if finding is not None:
            self.found.append(finding)

    def finish(self) -> list[Rejected]:
        points = self.fold.finish()
        return request_findings(points) if isinstance(points, Rejected) else self.found + request_findings(points)


audits("FMT-8", "INV-7", "HDR-9", "P-INV-1")(RequestPointAudit)


def request_findings(points: tuple[RequestPoint, ...] | Rejected) -> list[Rejected]:
    """FMT-9 g and HDR-8 on every request point (or the rejection that stopped the points, INV-7)."""
    if isinstance(points, Rejected):
        return [points]
    found = (point_finding(point.step_start_seq, point.first_chunk_seq, point.header) for point in points)
    return [finding for finding in found if finding is not None]


def point_finding(step_start_seq: int, first_chunk_seq: int | None, header: EpochHeader | Absent) -> Rejected | None:
    """FMT-9 g: the request of the step at ``step_start_seq`` (reported at its first chunk, if any)
    has a ``request/header`` in force; HDR-8: naming a provider and a model."""
    at = first_chunk_seq if first_chunk_seq is not None else step_start_seq
    if header is ABSENT:
        return Rejected(rule="FMT-9", seq=at, reason=f"request of the step at seq {step_start_seq} has no request/header in force")
    config = header.config
    provider, model = get(config, "provider"), get(config, "model")
    if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
        return Rejected(rule="HDR-8", seq=at, reason="request header in force lacks provider/model")
    return None
