"""LOOP-5 stages 9..12 and LOOP-7: the boundary snapshot, ``step/start`` and
``runStep`` up to the dispatch of the frozen request."""

from __future__ import annotations

from dataclasses import replace

from sessionspec.model.header import EpochHeader, canonical, header_to_json
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.loop.compose import cached_prefix
from sessionspec.model.loop.events import Draft, SentRequest
from sessionspec.model.loop.instance import LOSSY_HEADER_MESSAGE, apply_request_listener, header_record, seed_config
from sessionspec.model.loop.script import Reply, Window, obj
from sessionspec.model.loop.state import APPEND, Turn, TurnFailed
from sessionspec.model.rules import implements
from sessionspec.model.wire import Request, build_request


@implements("LOOP-6")
def take_boundary(t: Turn) -> tuple[JsonObject, ...]:
    """LOOP-6: "The boundary snapshot MUST be ``derive(log)`` taken synchronously,
    immediately before ``step/start`` is appended.  It MUST NOT include anything
    appended later." """
    return t.session.boundary()


def open_step(t: Turn) -> tuple[tuple[JsonObject, ...], int]:
    """LOOP-5 (9) boundary, (10) ``step/start {turn, step}``, (11) checkpoint.
    Returns the boundary and the seq of ``step/start``."""
    boundary = take_boundary(t)
    step_start_seq = t.append(Draft(type_name="step/start", data=obj(("turn", t.number), ("step", t.step))))
    t.open_step = t.step
    t.checkpoint(Window.AFTER_STEP_START)
    return boundary, step_start_seq


@implements("PFX-7", "PFX-10")
def request_header(t: Turn, config: JsonObject) -> EpochHeader:
    """PFX-10: "An empty composition MUST leave the `messagePrefix` key out of every header of the instance."

    PFX-7: "Once cached, the prefix MUST NOT be recomputed inside the instance.  Every later
    step, turn and request-error retry reuses the identical value."  PFX-10: "An empty composition
    MUST leave the ``messagePrefix`` key out of every header of the instance" (``canonical`` drops
    it).  LOOP-7 (7): the canonical header of this request."""
    return canonical(EpochHeader(config=config, system=t.agent.system, tools=t.agent.tools,
                                 message_prefix=cached_prefix(t)))


@implements("LOOP-7", "PFX-16")
def dispatch_request(t: Turn, reply: Reply, boundary: tuple[JsonObject, ...], step_start_seq: int) -> EpochHeader:
    """PFX-16: "The cache MAY be composed while no header is anchored yet."

    LOOP-7: "``runStep`` MUST run in this order: 1. seed the config (LOOP-8); 2. run the
    ``agent/request`` waterfall over the frozen seed; 3. interruption checkpoint; 4. if ``provider``
    or ``model`` is empty, raise an error (a turn error); 5. ``prepareCall`` gives the effective
    config ...; 6. interruption checkpoint; 7. build the canonical header ... and record it" (LOOP-9),
    then the frozen request (WIRE-1).  An ``inject()`` in ``agent/request`` joins the NEXT request
    (LOOP-6).  PFX-16: "The cache MAY be composed while no header is anchored yet" (the first
    header then follows here).  Returns the header of the request."""
    config = apply_request_listener(seed_config(t.instance, t.agent, t.session.header), t.agent.request_config)
    # The scripted model answers requests in order: this request takes ``reply``.
    t.replies_taken += 1
    if reply.request_inject is not None:
        t.append(Draft(type_name="user/message", data=reply.request_inject, surface_op=APPEND))
    t.checkpoint(Window.AFTER_REQUEST)
    if not get(config, "provider") or not get(config, "model"):
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", "request lacks provider/model")))
    t.checkpoint(Window.AFTER_PREPARE_CALL)
    header = request_header(t, config)
    reason = header_record(t.instance, t.session.header, header)
    if reason is not None and t.instance.prefix_lossy:
        # Q-3 / PFX-13: the append rejects the non-JSON header after step/start;
        # the cache is never cleared, so every later step of the instance fails.
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", LOSSY_HEADER_MESSAGE)))
    if reason is not None:
        t.append(Draft(type_name="request/header",
                       data=obj(("header", header_to_json(header)), ("reason", reason.value))))
        t.instance = replace(t.instance, logged_header=True)
    request = build_request(header, boundary)
    if reply.mutation_error is not None:
        mutation_attempt(t, request, reply.mutation_error)
    t.requests.append(SentRequest(request=request, step_start_seq=step_start_seq, dispatch_len=len(t.session.events),
                                  turn=t.number, step=t.step))
    return header


def mutation_attempt(t: Turn, request: Request, message: str) -> None:
    """A stream listener's edit of the request (WIRE-3, defined by :class:`~sessionspec.model.wire.Request`): the
    script's listener edits the first message's content when the request has a message (as the harness adapter's
    listener does); the request is frozen, so the edit raises into the step, which ends as a turn error with the
    listener's message."""
    if request.messages:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", message)))
