"""Request points (FMT-8, HDR-9, INV-7): the steps of a log that were requests, the header each was sent under,
and what a log must show of each (P-INV-1: every request can be rebuilt from the log).

A request's messages are ``prefix ++ derive(log[0:b])`` with ``b`` its ``step/start`` and its header the fold at
its first chunk (INV-5, :func:`sessionspec.model.reconstruct.rebuild_request_at`).  So a log must let each point be
rebuilt: every surface event it records projects (DER-1), every ``request/header`` reads (HDR-1), and a header naming
a provider and a model is in force at each point (HDR-9, HDR-8).  The definitions here say so from scratch (a
header fold per point); the loop writes what they accept (``tests/model/test_request_points.py``).

``sessionspec check`` runs their compiled twin, :class:`sessionspec.fast.request_points.RequestPointFold` (one pass,
no boundary derived), with :func:`check_request_point` judging each point as it is made;
``tests/fast/test_fast_request_points.py`` holds the two equal, finding for finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

from sessionspec.model.derive import project
from sessionspec.model.header import EpochHeader, fold_header, header_of_event
from sessionspec.model.jsonval import ABSENT, Absent, JsonObject, get
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements
from sessionspec.model.surface import plan_surface_event, splice


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedRequest:
    """A request point: the seq of its step's ``step/start`` (its boundary, INV-7), of its first chunk (None: the
    request failed before any), and the log length its header is folded over (HDR-9: up to the first chunk, else
    up to the step's ``step/end``)."""

    step_start_seq: int
    first_chunk_seq: int | None
    header_at: int


def is_request_failure(turn_end: Event) -> bool:
    """A ``turn/end {kind:"error", failure}``: the turn ended on a failed request (LOOP-14)."""
    reason = get(turn_end.data, "reason")
    return isinstance(reason, JsonObject) and get(reason, "kind") == "error" and get(reason, "failure") is not ABSENT


@decides("FMT-8")
@implements("FMT-8")
def logged_requests(events: Sequence[Event], first_live_seq: int = 0) -> tuple[LoggedRequest, ...]:
    """FMT-8: "Request points MUST be the first `assistant/chunk` of each attempt; an attempt ends at its `finish`
    chunk; in A55 each step has at most one loop attempt (a transient LLM-layer retry inside a step, if present,
    shares the step's request); a request that failed before any chunk is invisible except through `turn/end
    {kind:"error"}`."

    One point per step, in the order the log shows them: a step whose stream left a chunk; a step that ended
    without one when the turn then goes on with a new step or ends ``{kind:"error", failure}`` (the loop retries or
    gives up on a request error, LOOP-14), while a step interrupted before any chunk cannot show it was dispatched;
    a step still open at the log's end once it has a chunk.  A step opened inside another (no ``step/end``) replaces
    it.  In D08 a step's later attempts (DIA-7's retries, each after a header of its own, DIA-12) are not points of
    their own here: the step's point is its first attempt's first chunk.  The steps of a seed (``seq <
    first_live_seq``) were judged where they were written."""
    points: list[LoggedRequest] = []
    open_step: tuple[int, int | None] | None = None  # its step/start seq, its first chunk's seq
    ended: tuple[int, int] | None = None  # a step that ended without a chunk: its step/start and step/end seqs
    for event in events:
        kind = event.type
        if ended is not None and kind in ("step/start", "turn/end", "turn/start"):
            if kind == "step/start" or is_request_failure(event):
                points.append(LoggedRequest(step_start_seq=ended[0], first_chunk_seq=None, header_at=ended[1]))
            ended = None
        match kind:
            case "assistant/chunk":
                if open_step is not None and open_step[1] is None:
                    open_step = (open_step[0], event.seq)
            case "step/start" if event.seq >= first_live_seq:
                open_step = (event.seq, None)
            case "step/end" if open_step is not None:
                start, chunk = open_step
                if chunk is not None:
                    points.append(LoggedRequest(step_start_seq=start, first_chunk_seq=chunk, header_at=chunk))
                else:
                    ended = (start, event.seq)
                open_step = None
            case _:
                pass
    if open_step is not None and open_step[1] is not None:
        points.append(LoggedRequest(step_start_seq=open_step[0], first_chunk_seq=open_step[1], header_at=open_step[1]))
    return tuple(points)


@decides("HDR-9", "HDR-8", "P-INV-1")
def check_request_point(step_start_seq: int, first_chunk_seq: int | None, header: EpochHeader | Absent) -> Rejected | None:
    """The request of the step at ``step_start_seq`` (reported at its first chunk, if any) was sent under
    ``header``, the header in force (HDR-9): there is one (FMT-9 (g), reported as FMT-9), naming a provider and a
    model (HDR-8)."""
    at = first_chunk_seq if first_chunk_seq is not None else step_start_seq
    if header is ABSENT:
        return Rejected(rule="FMT-9", seq=at, reason=f"request of the step at seq {step_start_seq} has no request/header in force")
    provider, model = get(header.config, "provider"), get(header.config, "model")
    if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
        return Rejected(rule="HDR-8", seq=at, reason="request header in force lacks provider/model")
    return None


def unreadable_event(events: Sequence[Event], dialect: Dialect) -> Rejected | None:
    """The first event, in log order, that a rebuild cannot read: a surface event the surface fold refuses
    (SURF-9) or that does not project (DER-1), or a ``request/header`` whose header does not read (HDR-1)."""
    nodes: list[int] = []
    for index, event in enumerate(events):
        plan = plan_surface_event(nodes, event, log_view(events, index), dialect)
        if isinstance(plan, Rejected):
            return plan
        if plan is not None:
            projection = project(event, dialect)
            if isinstance(projection, Rejected):
                return projection
            splice(nodes, plan, plan.seq)
        if event.type == "request/header":
            header = header_of_event(event, dialect)
            if isinstance(header, Rejected):
                return header
    return None


@decides("INV-7", "P-INV-1")
@implements("INV-7")
def check_request_points(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """INV-7: "The real-log checker (A55) MUST reconstruct every request point as follows:"

    The boundary, the header and the messages are INV-5's rebuild; what the log must show for it is that every
    event it reads is readable (:func:`unreadable_event`: the first one that is not is the one finding, since
    every later request's rebuild reads it) and that each point of :func:`logged_requests` has its header
    (:func:`check_request_point`).  FMT-9's placement of the headers is :mod:`sessionspec.model.header_log`'s; the
    chunks of a request are held to its message by SURF-13 (:mod:`sessionspec.model.provenance`)."""
    unreadable = unreadable_event(events, dialect)
    if unreadable is not None:
        return [unreadable]
    found = (check_request_point(point.step_start_seq, point.first_chunk_seq, _header_at(events, point.header_at, dialect))
             for point in logged_requests(events, first_live_seq))
    return [finding for finding in found if finding is not None]


def _header_at(events: Sequence[Event], upto: int, dialect: Dialect) -> EpochHeader | Absent:
    """``fold(log[0:upto])`` (HDR-5) on a log whose headers all read."""
    header = fold_header(events[:upto], ABSENT, dialect)
    assert not isinstance(header, Rejected), header
    return header
