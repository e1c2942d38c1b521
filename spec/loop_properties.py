"""Loop, prefix and reconstruction properties (RULES §16.2) as pure predicates.

One convention: each predicate is named after what it protects, carries
``@implements("P-…")`` and returns ``None`` when the property holds, else the
violation in words (starting with the property ID).  They take what the loop model produced (the log,
the requests it sent, per-turn outcomes) and are used by the state machines in
``spec/machines.py`` and by the unit tests.  ``PROPERTY_PREDICATES`` maps every
property ID to its predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

from sessionspec.model.derive import derive
from sessionspec.model.header import EpochHeader, fold_header, header_eq, header_event_reason, header_of_event
from sessionspec.model.jsonval import ABSENT, Absent, Json, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import SentRequest, TurnOutcome
from sessionspec.model.prefix import NotComposed
from sessionspec.model.reconstruct import Mismatch, reconstruction_mismatch
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.wire import Request, request_to_json


class RequestPoint(Protocol):
    """One loop request a log checker found: where its ``step/start`` is, and the
    request it rebuilds (None: the point is not a request the loop could send)."""

    @property
    def step_start_seq(self) -> int: ...

    def request(self) -> Request | None: ...


class RequestPointFinder(Protocol):
    """A checker's INV-7 pass (``sessionspec.fast.request_points`` is one): every
    loop request of a log, in dispatch order, or the rule that refuses the log.
    P-INV-1 is stated here; the finder under test is passed in."""

    def __call__(self, events: Sequence[Event], *, first_live_seq: int) -> Sequence[RequestPoint] | Rejected: ...


def _header_at(log: Sequence[Event], length: int) -> EpochHeader | Absent | Rejected:
    return fold_header(list(log[:length]), ABSENT)


def _prefix_text(h: EpochHeader | Absent | Rejected) -> str:
    """``JS(h.messagePrefix or [])``."""
    if not isinstance(h, EpochHeader) or isinstance(h.message_prefix, Absent):
        return "[]"
    return js_stringify(h.message_prefix)


@implements("P-INV-1", "P-INV-2")
def requests_rebuild_from_log(log: Sequence[Event], requests: Sequence[SentRequest]) -> str | None:
    """P-INV-1/P-INV-2 (reconstructability, INV-3/INV-5): every loop request equals
    its rebuild from the log strictly before its ``step/start`` (fresh derivation)
    with the header in force at dispatch, in every field."""
    for sent in requests:
        result = reconstruction_mismatch(log, sent.request, sent.step_start_seq, sent.dispatch_len)
        if isinstance(result, Rejected):
            return f"P-INV-1: request of turn {sent.turn} step {sent.step} cannot be rebuilt: {result}"
        if isinstance(result, Mismatch):
            return (f"P-INV-1: request of turn {sent.turn} step {sent.step} differs from its rebuild in "
                    f"{', '.join(result.fields)} (harness INV-4 would accept: {result.harness_accepts})")
    return None


@implements("P-INV-1")
def checker_finds_the_sent_requests(log: Sequence[Event], requests: Sequence[SentRequest], first_live_seq: int = 0,
                                    since: int = 0, *, find: RequestPointFinder) -> str | None:
    """P-INV-1 via a real-log checker (INV-7; ``find`` is the checker's pass):
    every request point the checker finds is a request the loop sent, equal in
    every field; every sent request whose stream left a chunk is such a point.
    Points and requests whose ``step/start`` precedes ``since`` were compared
    by an earlier call on the same (append-only) log and are only matched up."""
    points = find(log, first_live_seq=first_live_seq)
    if isinstance(points, Rejected):
        return f"P-INV-1: the checker rejects the loop's log: {points}"
    sent = {r.step_start_seq: r for r in requests}
    found = set()
    for point in points:
        loop_request = sent.get(point.step_start_seq)
        if loop_request is None:
            return f"P-INV-1: the checker sees a request at seq {point.step_start_seq} the loop did not send"
        found.add(point.step_start_seq)
        if point.step_start_seq < since:
            continue
        request = point.request()
        if request is None:
            return f"P-INV-1: the checker sees a request at seq {point.step_start_seq} the loop did not send"
        if js_stringify(request_to_json(request)) != js_stringify(request_to_json(loop_request.request)):
            return f"P-INV-1: the checker's request at seq {point.step_start_seq} differs from the loop's"
    for r in requests:
        if r.step_start_seq < since:
            continue
        chunked = any(e.type == "assistant/chunk" for e in log[r.step_start_seq:r.dispatch_len + 1])
        if chunked and r.step_start_seq not in found:
            return f"P-INV-1: the checker misses the request of turn {r.turn} step {r.step}"
    return None


def _surface_rewrite_between(log: Sequence[Event], start: int, end: int) -> bool:
    """A request/header or a replace event in ``log[start:end]`` (INV-6 exclusions)."""
    for event in log[start:end]:
        if event.type == "request/header":
            return True
        if not isinstance(event.surface_op, Absent) and event.surface_op != "append":
            return True
    return False


@implements("P-INV-4")
def requests_extend_within_instance(log: Sequence[Event], instance_requests: Sequence[Sequence[SentRequest]]) -> str | None:
    """P-INV-4 (cache stability, INV-6): within an instance, with no header event
    and no replace between their boundaries, each request's messages extend the
    previous request's messages."""
    for requests in instance_requests:
        for before, after in zip(requests, requests[1:]):
            if _surface_rewrite_between(log, before.step_start_seq, after.step_start_seq):
                continue
            previous, current = before.request.messages, after.request.messages
            if len(current) < len(previous) or any(
                js_stringify(a) != js_stringify(b) for a, b in zip(previous, current)
            ):
                return (f"P-INV-4: request of turn {after.turn} step {after.step} does not extend the "
                        f"request of turn {before.turn} step {before.step}")
    return None


@implements("P-PFX-1")
def prefix_frozen_per_instance(log: Sequence[Event], instance_requests: Sequence[Sequence[SentRequest]],
            instance_compositions: Sequence[int]) -> str | None:
    """P-PFX-1 (freeze; PFX-6, PFX-7, PFX-15): at most one successful composition
    per instance; every request of an instance starts with the identical prefix
    that its header logs; a ``change`` header never differs in ``messagePrefix``."""
    for index, count in enumerate(instance_compositions):
        if count > 1:
            return f"P-PFX-1: instance {index} composed {count} times"
    for requests in instance_requests:
        seen: str | None = None
        for sent in requests:
            header = _header_at(log, sent.dispatch_len)
            prefix = _prefix_text(header)
            if seen is not None and prefix != seen:
                return f"P-PFX-1: the prefix changed within an instance at turn {sent.turn} step {sent.step}"
            seen = prefix
            count = 0 if not isinstance(header, EpochHeader) or isinstance(header.message_prefix, Absent) else len(
                header.message_prefix) if isinstance(header.message_prefix, tuple) else 0
            if js_stringify(tuple(sent.request.messages[:count])) != prefix:
                return f"P-PFX-1: request of turn {sent.turn} step {sent.step} does not start with its prefix"
    for event in log:
        if event.type == "request/header" and header_event_reason(event) == "change":
            before = _header_at(log, event.seq)
            after = header_of_event(event)
            if _prefix_text(before) != _prefix_text(after):
                return f"P-PFX-1: the change header at seq {event.seq} changes messagePrefix"
    return None


@implements("P-PFX-6")
def interrupted_composition_discarded(outcome: TurnOutcome, before_len: int) -> str | None:
    """P-PFX-6 (discard, PFX-5): an interrupted composition leaves no cache, no
    ``step/start``, no header and no model call; the turn ends aborted/disposed."""
    if not outcome.interrupted_composition:
        return None
    written = outcome.log[before_len:]
    if outcome.requests:
        return "P-PFX-6: an interrupted composition reached the model"
    if any(e.type in ("step/start", "request/header") for e in written):
        return "P-PFX-6: an interrupted composition wrote step/start or request/header"
    if not outcome.instance.disposed and not isinstance(outcome.instance.prefix, NotComposed):
        return "P-PFX-6: an interrupted composition was cached"
    kind = get(outcome.end_reason, "kind")
    # a foreign abort reason ends the turn as an error "turn interrupted".
    foreign = kind == "error" and get(outcome.end_reason, "message") == "turn interrupted"
    if kind not in ("aborted", "disposed") and not foreign:
        return "P-PFX-6: an interrupted composition did not end the turn aborted/disposed"
    return None


@implements("P-PFX-8")
def prefix_never_history(log: Sequence[Event], contributed: Sequence[Json] = ()) -> str | None:
    """P-PFX-8 (PFX-9): no message of any logged ``messagePrefix``, nor any message
    a contributor returned (``contributed``, known to the driver), is part of
    ``derive(log)`` (the prefix is never history)."""
    messages = derive(log)
    if isinstance(messages, Rejected):
        return f"P-PFX-8: the log does not derive: {messages}"
    history = {js_stringify(_content_of(m)) for m in messages}
    for message in contributed:
        if js_stringify(_content_of(message)) in history:
            return "P-PFX-8: a contributed prefix message is in derive(log)"
    for event in log:
        if event.type == "request/header":
            h = header_of_event(event)
            if isinstance(h, EpochHeader) and isinstance(h.message_prefix, tuple):
                for message in h.message_prefix:
                    if js_stringify(_content_of(message)) in history:
                        return f"P-PFX-8: a prefix message of the header at seq {event.seq} is in derive(log)"
    return None


def _content_of(message: Json) -> Json:
    content = get(message, "content")
    return None if isinstance(content, Absent) else content


@implements("P-PFX-4")
def other_agents_never_contribute(requests: Sequence[SentRequest], foreign: Sequence[Json]) -> str | None:
    """P-PFX-4 (PFX-4): "dispatch reaches global + own-agent listeners only": no
    request carries a message that only another agent's scoped session-prefix
    listener contributed (``foreign``, known to the driver)."""
    texts = {js_stringify(m) for m in foreign}
    for sent in requests:
        if any(js_stringify(m) in texts for m in sent.request.messages):
            return f"P-PFX-4: request of turn {sent.turn} step {sent.step} carries another agent's contribution"
    return None


@implements("P-LOOP-1")
def header_reasons_follow_instances(log: Sequence[Event], instance_starts: Sequence[int], first_live_seq: int = 0) -> str | None:
    """P-LOOP-1 (LOOP-9): an instance's first header is ``initial`` iff the log had
    no header, else ``resume``; later headers are ``change`` and differ from the fold.
    ``instance_starts`` are the log lengths at which each instance began; headers
    of a seed (before ``first_live_seq``) belong to the source session."""
    starts = sorted(instance_starts)
    for event in log:
        if event.type != "request/header" or event.seq < first_live_seq:
            continue
        start = max((s for s in starts if s <= event.seq), default=0)
        earlier_in_instance = any(e.type == "request/header" for e in log[start:event.seq])
        reason = header_event_reason(event)
        previous = _header_at(log, event.seq)
        if not earlier_in_instance:
            expected = "initial" if isinstance(previous, Absent) else "resume"
            if reason != expected:
                return f"P-LOOP-1: header at seq {event.seq} has reason {reason!r}, expected {expected!r}"
        else:
            if reason != "change":
                return f"P-LOOP-1: header at seq {event.seq} has reason {reason!r}, expected 'change'"
            now = header_of_event(event)
            if isinstance(previous, EpochHeader) and isinstance(now, EpochHeader) and header_eq(previous, now):
                return f"P-LOOP-1: change header at seq {event.seq} equals the fold"
    return None


@implements("P-LOOP-4")
def steps_closed_before_turn_end(outcome: TurnOutcome, before_len: int) -> str | None:
    """P-LOOP-4 (LOOP-15): every opened step is closed before ``turn/end``;
    an interrupted turn ends ``aborted`` or ``disposed``."""
    written = outcome.log[before_len:]
    starts = sum(1 for e in written if e.type == "step/start")
    ends = sum(1 for e in written if e.type == "step/end")
    if starts != ends:
        return f"P-LOOP-4: turn {outcome.turn} opened {starts} steps but closed {ends}"
    if not written or written[-1].type != "turn/end":
        return f"P-LOOP-4: turn {outcome.turn} does not end with turn/end"
    return None


@implements("P-LOOP-7")
def turn_numbers_continue(log: Sequence[Event], first_live_seq: int = 0) -> str | None:
    """P-LOOP-7 (LOOP-2): live turn numbers continue the log's numbering by one."""
    last: int | None = None
    for event in log:
        if event.type == "turn/start":
            turn = get(event.data, "turn")
            if event.seq >= first_live_seq and last is not None and turn != last + 1:
                return f"P-LOOP-7: turn/start at seq {event.seq} has turn {turn}, expected {last + 1}"
            last = turn if isinstance(turn, int) else last
    return None


@implements("P-PFX-7")
def empty_prefix_leaves_requests_bare(outcome: TurnOutcome, before_len: int) -> str | None:
    """P-PFX-7 (PFX-10): with an empty composition the instance's headers omit
    ``messagePrefix`` and every request is the bare boundary derivation."""
    if outcome.instance.prefix != ():
        return None
    for e in outcome.log[before_len:]:
        if e.type == "request/header" and get(get(e.data, "header"), "messagePrefix") is not ABSENT:
            return f"P-PFX-7: header at seq {e.seq} carries messagePrefix while the composition is empty"
    for sent in outcome.requests:
        boundary = derive(list(outcome.log[: sent.step_start_seq]))
        if isinstance(boundary, Rejected) or js_stringify(boundary) != js_stringify(sent.request.messages):
            return f"P-PFX-7: request of turn {sent.turn} step {sent.step} is not the bare derivation"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-INV-1": requests_rebuild_from_log,
    "P-INV-2": requests_rebuild_from_log,
    "P-INV-4": requests_extend_within_instance,
    "P-PFX-1": prefix_frozen_per_instance,
    "P-PFX-4": other_agents_never_contribute,
    "P-PFX-6": interrupted_composition_discarded,
    "P-PFX-7": empty_prefix_leaves_requests_bare,
    "P-PFX-8": prefix_never_history,
    "P-LOOP-1": header_reasons_follow_instances,
    "P-LOOP-4": steps_closed_before_turn_end,
    "P-LOOP-7": turn_numbers_continue,
}
