"""INV-5 in one pass: every loop request of a log with its boundary and header,
as the checker and replay need them.  The compiled twin of two definitions:
which steps are request points and what a log must show of them is
:mod:`sessionspec.model.request_points` (``logged_requests``, ``check_request_points``;
tests/fast/test_fast_request_points.py asserts the same points and findings), and
each point's request is :func:`model.reconstruct.rebuild_request_at` (quadratic when
run for every request; the properties of tests/fast/test_incremental.py assert the two agree)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.derivation import IncrementalDerivation, header_of, projected
from sessionspec.fast.jsonget import get
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import Absent, JsonObject
from sessionspec.model.log import Dialect, Event, data_int
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan
from sessionspec.model.wire import Request, build_request


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPoint:
    """One loop request as the log records it.

    ``boundary`` is the derivation just before ``step/start`` (shared storage:
    ``boundary_store[:boundary_length]``, stable because the incremental
    derivation only ever appends to a list it owns or replaces it whole).
    """

    step_start_seq: int
    first_chunk_seq: int | None
    turn: int | None
    step: int | None
    header: EpochHeader | Absent
    header_seq: int | None
    boundary_store: list[JsonObject]
    boundary_length: int
    surface_length: int

    @property
    def boundary(self) -> tuple[JsonObject, ...]:
        return tuple(self.boundary_store[: self.boundary_length])

    def request(self) -> Request | None:
        """The reconstructed request, or None when no header was in force."""
        if self.header is ABSENT:
            return None
        return build_request(self.header, self.boundary)


class _OpenStep:
    # Built at every step: a plain class, whose ``__init__`` mypyc compiles (a dataclass's generated
    # initializer stays interpreted code; docs/performance.md, step 15).
    __slots__ = ("seq", "turn", "step", "header", "header_seq", "store", "length", "surface", "chunk")

    def __init__(self, *, seq: int, turn: int | None, step: int | None, header: EpochHeader | Absent, header_seq: int | None,
                 store: list[JsonObject], length: int, surface: int) -> None:
        self.seq = seq
        self.turn = turn
        self.step = step
        self.header = header
        self.header_seq = header_seq
        self.store = store
        self.length = length
        self.surface = surface
        self.chunk: int | None = None

    def point(self) -> RequestPoint:
        return RequestPoint(
            step_start_seq=self.seq,
            first_chunk_seq=self.chunk,
            turn=self.turn,
            step=self.step,
            header=self.header,
            header_seq=self.header_seq,
            boundary_store=self.store,
            boundary_length=self.length,
            surface_length=self.surface,
        )


def request_points(
    events: Sequence[Event], dialect: Dialect = A55, first_live_seq: int = 0, plans: Sequence[SurfacePlan | None] | None = None
) -> tuple[RequestPoint, ...] | Rejected:
    """Every loop request of an A55 log, in dispatch order (one pass).

    A step is a request when its stream left a chunk (FMT-8), or when it
    failed as a request error before any chunk: the turn then retries with a
    new step or ends ``{kind:"error", failure}`` (LOOP-14).  Steps interrupted
    before a chunk are not counted: the log cannot show whether they were
    dispatched.  Steps of a seed (``seq < first_live_seq``) belong to the
    source session and are skipped.  The header is the fold at the first chunk,
    else at the step's ``step/end`` (HDR-9).  ``plans``, when given, are the
    surface transitions of ``events`` already planned (one per event, by the
    checker's one surface fold), so the derivation does not plan them again.

    pre: plans is None or len(plans) == len(events)
    post: isinstance(__return__, Rejected) or all(p.step_start_seq >= first_live_seq for p in __return__)
    post: isinstance(__return__, Rejected) or all(a.step_start_seq < b.step_start_seq for a, b in zip(__return__, __return__[1:]))
    post: isinstance(__return__, Rejected) or all(p.first_chunk_seq is None or p.first_chunk_seq > p.step_start_seq for p in __return__)
    """
    fold = RequestPointFold(dialect=dialect, first_live_seq=first_live_seq, planned=plans is not None)
    for index, event in enumerate(events):
        fold.step(event, None if plans is None else plans[index])
        if fold.rejected is not None:
            return fold.rejected
    return fold.finish()


# Judges a request point as it is made: its step/start seq, its first chunk's seq, its header.
PointJudge = Callable[[int, int | None, EpochHeader | Absent], None]
# What an open step of a judging fold holds as its boundary (read by nothing; nor its turn and step).
_NO_BOUNDARY: Final[list[JsonObject]] = []


@dataclass(slots=True)
class RequestPointFold:
    """:func:`request_points` one event at a time (the checker's one loop steps it, issue 26):
    ``step`` each event in order, then ``finish``; ``rejected`` is set, and later events are
    ignored, once the derivation or a header cannot be folded."""

    dialect: Dialect
    first_live_seq: int = 0
    # Are the events' surface plans given to ``step`` (else the derivation plans them)?
    planned: bool = False
    # Each request point handed to ``judge`` as it is made instead of kept in ``points`` (the
    # checker's audit: a point is judged, then dropped).  Such a fold reads no boundary, so it
    # derives none: of the derivation it keeps only what can reject, each surface event's
    # projection (DER-1, what ``IncrementalDerivation.append_planned`` checks).  Needs ``planned``.
    judge: PointJudge | None = None
    derivation: IncrementalDerivation = field(init=False)
    header: EpochHeader | Absent = ABSENT
    header_seq: int | None = None
    points: list[RequestPoint] = field(default_factory=list)
    open_step: _OpenStep | None = None
    ended_without_chunk: _OpenStep | None = None
    rejected: Rejected | None = None

    def __post_init__(self) -> None:
        if self.judge is not None and not self.planned:
            raise ValueError("a fold judging its points derives nothing, so it needs the plans")
        # Planned appends need no copy of the log (issue 26).
        self.derivation = IncrementalDerivation(dialect=self.dialect, keep_events=not self.planned)

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        """Fold one event (with its surface ``plan`` when ``planned``, else the derivation plans it)."""
        if self.rejected is not None:
            return
        kind = event.type
        ended = self.ended_without_chunk
        if ended is not None and kind in ("step/start", "turn/end", "turn/start"):
            # The previous step ended without a chunk: it was a request error
            # iff the turn goes on with a new step or ends in a failure.
            if kind == "step/start" or _is_request_failure(event):
                self._made(ended)
            self.ended_without_chunk = None
        if not self.planned:
            rejected = self.derivation.append(event)
        elif plan is None:
            # A planned append without a plan changes nothing (the derivation keeps no event).
            rejected = None
        elif self.judge is None:
            rejected = self.derivation.append_planned(event, plan)
        else:
            projection = projected(event, self.dialect)
            rejected = projection if isinstance(projection, Rejected) else None
        if rejected is not None:
            self.rejected = rejected
            return
        open_step = self.open_step
        match kind:
            case "assistant/chunk":
                if open_step is not None and open_step.chunk is None:
                    open_step.chunk = event.seq
            case "request/header":
                h = header_of(event, self.dialect)
                if isinstance(h, Rejected):
                    self.rejected = h
                    return
                self.header, self.header_seq = h, event.seq
                if open_step is not None and open_step.chunk is None:
                    open_step.header, open_step.header_seq = h, event.seq
            case "step/start" if event.seq >= self.first_live_seq:
                derivation, kept = self.derivation, self.judge is None
                store, length = derivation.snapshot() if kept else (_NO_BOUNDARY, 0)
                self.open_step = _OpenStep(
                    seq=event.seq,
                    turn=data_int(event, "turn") if kept else None,
                    step=data_int(event, "step") if kept else None,
                    header=self.header,
                    header_seq=self.header_seq,
                    store=store,
                    length=length,
                    surface=derivation.surface_length,
                )
            case "step/end" if open_step is not None:
                if open_step.chunk is not None:
                    self._made(open_step)
                else:
                    self.ended_without_chunk = open_step
                self.open_step = None
            case _:
                pass

    def _made(self, step: _OpenStep) -> None:
        """A request point is made: kept, or handed to the judge."""
        if self.judge is None:
            self.points.append(step.point())
        else:
            self.judge(step.seq, step.chunk, step.header)

    def step_chunks(self, first: Event) -> None:
        """:meth:`step` of consecutive log-only ``assistant/chunk`` events (a packed row's, CHK-6),
        ``first`` the first, when ``planned`` (the derivation then keeps no event and a
        log-only event has no plan): no chunk closes the step a request error left open, the
        derivation takes none (SURF-11), and only the first can be the open step's first chunk
        (FMT-8); the others change nothing."""
        if not self.planned:
            raise ValueError("chunks are stepped at once only with their plans given (none: log-only)")
        if self.rejected is None and (open_step := self.open_step) is not None and open_step.chunk is None:
            open_step.chunk = first.seq

    def finish(self) -> tuple[RequestPoint, ...] | Rejected:
        """Every request point not handed to the judge, in dispatch order, or the rejection that
        ended the fold."""
        if self.rejected is not None:
            return self.rejected
        open_step = self.open_step
        if open_step is not None and open_step.chunk is not None:
            self._made(open_step)
            self.open_step = None
        return tuple(self.points)


def check_request_point(step_start_seq: int, first_chunk_seq: int | None, header: EpochHeader | Absent) -> Rejected | None:
    """:func:`sessionspec.model.request_points.check_request_point`, compiled: the fold judges every request
    point (tests/fast/test_fast_request_points.py holds the two equal)."""
    at = first_chunk_seq if first_chunk_seq is not None else step_start_seq
    if header is ABSENT:
        return Rejected(rule="FMT-9", seq=at, reason=f"request of the step at seq {step_start_seq} has no request/header in force")
    provider, model = get(header.config, "provider"), get(header.config, "model")
    if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
        return Rejected(rule="HDR-8", seq=at, reason="request header in force lacks provider/model")
    return None


def _is_request_failure(event: Event) -> bool:
    reason = get(event.data, "reason")
    return isinstance(reason, JsonObject) and get(reason, "kind") == "error" and get(reason, "failure") is not ABSENT


def reconstruct_requests(
    events: Sequence[Event], dialect: Dialect = A55, first_live_seq: int = 0
) -> tuple[Request | None, ...] | Rejected:
    """The requests of :func:`request_points`, materialized."""
    points = request_points(events, dialect, first_live_seq)
    if isinstance(points, Rejected):
        return points
    return tuple(p.request() for p in points)
