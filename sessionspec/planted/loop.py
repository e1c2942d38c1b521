"""Deliberately broken loop models, to prove the machines and the conformance
kit can fail.  Never part of ``model/``: each variant is a copy of ONE model
function with the bug (or a thin wrapper around it), installed over the name
the loop looks up, only while :func:`planted` is active (or for good, in a
mutant adapter process, by :func:`install`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from types import ModuleType
from typing import Any, Final, assert_never

import sessionspec.model.loop.compose as compose_module
import sessionspec.model.loop.listeners as listeners_module
import sessionspec.model.loop.step as step_module
import sessionspec.model.loop.streaming as streaming_module
import sessionspec.model.loop.turn as turn_module
from sessionspec.model.compaction import CompactionRun, OverflowDecision
from sessionspec.model.compaction import compact_if_needed as compact_if_needed_
from sessionspec.model.compaction import pressure_compaction as pressure_compaction_
from sessionspec.model.compaction import recover_overflow as recover_overflow_
from sessionspec.model.header import EpochHeader, canonical, header_to_json
from sessionspec.model.jsonval import Json, JsonObject, get
from sessionspec.model.log import Event
from sessionspec.model.loop.compose import cached_prefix
from sessionspec.model.loop.events import Draft, Hooks, SentRequest, StepContext, TurnOutcome
from sessionspec.model.loop.instance import LOSSY_HEADER_MESSAGE, LoopInstance, apply_request_listener, header_record, seed_config
from sessionspec.model.loop.script import (
    GOAL_SOURCE,
    USER_SOURCE,
    AgentConfig,
    Prompt,
    Reply,
    Steering,
    TurnScript,
    Window,
    obj,
    text_content,
)
from sessionspec.model.loop.state import APPEND, Interrupted, SessionLog, Turn, TurnFailed
from sessionspec.model.loop.step import mutation_attempt
from sessionspec.model.loop.stream import reply_content
from sessionspec.model.loop.streaming import record_assistant
from sessionspec.model.loop.turn import drain_steering
from sessionspec.model.prefix import NOT_COMPOSED, Composition, Contributor, NotComposed, compose, frozen_copy
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import Request, build_request
from sessionspec.planted import compaction as broken_compaction


class Planted(Enum):
    """The broken variants (the value says what is broken)."""

    RECOMPOSE_EVERY_TURN = "recompose every turn"
    CACHE_INTERRUPTED = "cache an interrupted composition"
    PREFIX_AFTER_HISTORY = "put the prefix after history"
    PREFIX_IN_HISTORY = "append the prefix to history"
    NO_CLONE = "cache the contributors' objects without cloning"
    SNAPSHOT_AFTER_REQUEST = "take the boundary after agent/request"
    COMPACT_SPLITS_TOOL_PAIR = "a retention walk that splits a tool call from its result"
    COMPACT_DROPS_PREFIX = "a compaction that folds the prefix away (logs a header without it)"
    IGNORE_SCOPE = "dispatch the session-prefix waterfall to every agent's scoped listeners"
    # Issue 16: the model's behaviour before the running harness corrected it (QF-3..QF-7).
    STEP_RESULT_CANCEL_DROPS_MESSAGE = "a cancel after step-result records no assistant message"
    DROP_REQUEUED_STEERING = "drop the steering queued for a blocked or failed prompt"
    TURN_STOP_ONLY_WHEN_STOPPING = "check the after-turn-stop point only when the turn stops"
    LOSSY_OVER_ALL_CONTRIBUTORS = "compute the lossy flag over every contributor, dispatched or not"
    THROWN_STREAM_CHECKPOINT = "an after-stream checkpoint also on a thrown stream"
    # Issue 24: the model before the running harness corrected it again (QF-9, QF-10, the protocol's in-order replies
    # and in-composition window).
    REQUEUED_TURNS_OUTLIVE_INTERRUPT = "re-queued steering still runs after the send's interruption fired"
    REPLIES_RESTART_PER_REQUEUED_TURN = "every re-queued turn answers from the first scripted reply again"
    THROW_PASSES_COMPOSITION_WINDOW = "an interruption at in-composition fires although a contributor threw"
    LOSSY_WITHOUT_MESSAGES = "a lossy contributor that returns no message still fails the header append"


# The model's own functions, captured before any variant is installed.
_PLAY_TURN: Final = turn_module.play_turn
_WRITE_CACHE: Final = compose_module.write_cache


# --------------------------------------------------------------------------- PFX-2 / PFX-7


def play_turn_recomposing(session: SessionLog, instance: LoopInstance, agent: AgentConfig, script: TurnScript,
                          hooks: Hooks) -> TurnOutcome | Rejected:
    """BUG: every turn starts with an empty cache, so the prefix is recomposed."""
    return _PLAY_TURN(session, replace(instance, prefix=NOT_COMPOSED), agent, script, hooks)


# --------------------------------------------------------------------------- PFX-5


def compose_caching_interrupted(t: Turn) -> None:
    """``compose_if_needed`` that caches the composition before honouring the interruption."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    comp = compose(t.agent.contributors, t.agent.agent_id)
    for inject in comp.injects:
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))
    if comp.failure is not None:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))
    t.signal(Window.IN_COMPOSITION)
    if t.aborted is not None:
        t.interrupted_composition = True
        _WRITE_CACHE(t, comp)  # BUG: PFX-5 discards an interrupted composition
        raise Interrupted(t.aborted)
    _WRITE_CACHE(t, comp)


# --------------------------------------------------------------------------- PFX-11


def build_request_prefix_last(header: EpochHeader, boundary: Sequence[JsonObject]) -> Request:
    """BUG: the prefix goes after the derived history (PFX-11 puts it before)."""
    request = build_request(header, boundary)
    prefix = header.message_prefix if isinstance(header.message_prefix, tuple) else ()
    return replace(request, messages=tuple(boundary) + prefix)


# --------------------------------------------------------------------------- PFX-9 / PFX-6


def write_cache_into_history(t: Turn, comp: Composition) -> None:
    """BUG: the composed prefix is appended to history (PFX-9) and the cache left empty."""
    for message in frozen_copy(comp.held):
        t.append(Draft(type_name="user/message",
                       data=obj(("content", get(message, "content")),
                                ("source", USER_SOURCE)),
                       surface_op=APPEND))
    t.compositions += 1
    t.instance = replace(t.instance, prefix=(),
                         prefix_lossy=any(c.lossy for c in t.agent.contributors))


class _Aliased(tuple[Json, ...]):
    """A cached prefix that still aliases the contributors' live objects."""

    live: list[object]


def write_cache_aliasing(t: Turn, comp: Composition) -> None:
    """BUG: the cache keeps the contributors' objects instead of a deep frozen copy (PFX-6)."""
    aliased = _Aliased(frozen_copy(comp.held))
    aliased.live = comp.held
    t.compositions += 1
    t.instance = replace(t.instance, prefix=aliased,
                         prefix_lossy=any(c.lossy for c in t.agent.contributors))


def cached_prefix_aliasing(t: Turn) -> tuple[Json, ...]:
    """What an aliasing cache holds now: whatever the contributors' objects say."""
    prefix = t.instance.prefix
    if isinstance(prefix, _Aliased):
        return frozen_copy(prefix.live)
    return () if isinstance(prefix, NotComposed) else prefix


# --------------------------------------------------------------------------- LOOP-6


def dispatch_request_late_boundary(t: Turn, reply: Reply, boundary: tuple[JsonObject, ...],
                                   step_start_seq: int) -> EpochHeader:
    """``dispatch_request`` with the boundary retaken after ``agent/request`` (LOOP-6 broken)."""
    config = apply_request_listener(seed_config(t.instance, t.agent, t.session.header), t.agent.request_config)
    t.replies_taken += 1
    if reply.request_inject is not None:
        t.append(Draft(type_name="user/message", data=reply.request_inject, surface_op=APPEND))
    boundary = t.session.boundary()  # BUG: the request-time inject leaks into this request
    t.checkpoint(Window.AFTER_REQUEST)
    if not get(config, "provider") or not get(config, "model"):
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", "request lacks provider/model")))
    t.checkpoint(Window.AFTER_PREPARE_CALL)
    header = canonical(EpochHeader(config=config, system=t.agent.system, tools=t.agent.tools,
                                   message_prefix=cached_prefix(t)))
    reason = header_record(t.instance, t.session.header, header)
    if reason is not None and t.instance.prefix_lossy:
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


# --------------------------------------------------------------------------- PFX-4


def compose_ignoring_scope(contributors: Sequence[Contributor], agent_id: str | None = None) -> Composition:
    """BUG: every agent's scoped listeners are dispatched (PFX-4)."""
    return compose(tuple(replace(c, scope=None) for c in contributors), agent_id)


# --------------------------------------------------------------------------- issue 16 (the old model)


def step_result_without_message(t: Turn, header: EpochHeader, reply: Reply, chunk_seqs: Sequence[Json]) -> None:
    """``step_result`` with the checkpoint outside the recording try (QF-3 broken)."""
    if reply.step_result_error is not None:
        record_assistant(t, header, reply, (), chunk_seqs)
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", reply.step_result_error)))
    t.checkpoint(Window.AFTER_STEP_RESULT)  # BUG: an interruption here records no message
    record_assistant(t, header, reply, reply_content(reply), chunk_seqs)


def requeue_nothing(t: Turn) -> None:
    """BUG: the steering of a turn that ended in its prologue is dropped (QF-4)."""


def after_step_stop_check_when_stopping(t: Turn, reply: Reply, pending: list[Steering],
                                        prior_failures: list[JsonObject]) -> JsonObject | None:
    """``after_step`` with the after-turn-stop checkpoint only when the turn stops (QF-5 broken)."""
    drain_steering(t, pending)
    t.signal(Window.AFTER_POST_STEP)
    if t.hooks.post_step is not None:
        header = t.session.header
        assert isinstance(header, EpochHeader)
        listened = t.hooks.post_step(t.session.events, StepContext(
            turn=t.number, step=t.step, header=header, had_tool_calls=bool(reply.executed_calls),
            aborted=t.aborted is not None))
        for draft in listened.drafts:
            t.append(draft)
        t.side_calls.extend(listened.side_calls)
    t.checkpoint(Window.AFTER_POST_STEP)
    t.append(Draft(type_name="step/end", data=obj(("turn", t.number), ("step", t.step))))
    t.open_step = None
    prior_failures.clear()
    if reply.continue_with is not None:
        pending.append(Steering(content=text_content(reply.continue_with), source=GOAL_SOURCE))
    go_on = bool(reply.executed_calls) or bool(pending)
    t.max_tokens = t.max_tokens or reply.max_tokens
    t.checkpoint(Window.AFTER_CONTINUATION)
    if go_on:
        return None
    t.checkpoint(Window.AFTER_TURN_STOP)  # BUG: skipped on a continuing step
    return obj(("kind", "max-tokens" if t.max_tokens else "completed"))


def write_cache_lossy_over_all(t: Turn, comp: Composition) -> None:
    """``write_cache`` whose lossy flag counts undispatched contributors (QF-6 broken)."""
    t.compositions += 1
    t.instance = replace(t.instance, prefix=frozen_copy(comp.held),
                         prefix_lossy=any(c.lossy and c.content for c in t.agent.contributors))  # BUG: not only dispatched


def after_stream_always_checkpoint(t: Turn, reply: Reply) -> None:
    """BUG: a thrown stream passes an after-stream checkpoint too (QF-7), so a
    foreign abort ends the turn "turn interrupted" before the request-error path."""
    t.checkpoint(Window.AFTER_STREAM)


# --------------------------------------------------------------------------- issue 24


def still_queued_after_interrupt(t: Turn, queued: list[Steering]) -> list[Steering]:
    """BUG: the queue survives the send's interruption (QF-9): the next re-queued turn runs, and the interruption
    (re-armed by its script) fires there again."""
    return [*queued, *t.requeued]


def requeued_turn_from_the_first_reply(previous: Turn, item: Steering) -> TurnScript:
    """BUG: a re-queued turn answers from the send's first reply again, not from the next one."""
    script = previous.script
    return TurnScript(prompt=Prompt(content=item.content, source=item.source), replies=script.replies,
                      interrupt=script.interrupt, pre_step_error=script.pre_step_error)


def compose_signalling_before_the_throw(t: Turn) -> None:
    """``compose_if_needed`` whose in-composition window is passed even when a contributor threw, so a dispose there
    disposes the instance of a turn that ends in error."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    comp = compose(t.agent.contributors, t.agent.agent_id)
    for inject in comp.injects:
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))
    t.signal(Window.IN_COMPOSITION)  # BUG: a throwing contributor ended the waterfall before this point
    if comp.failure is not None:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))
    if t.aborted is not None:
        t.interrupted_composition = True
        raise Interrupted(t.aborted)
    _WRITE_CACHE(t, comp)


def write_cache_lossy_without_messages(t: Turn, comp: Composition) -> None:
    """``write_cache`` whose lossy flag ignores whether the contributor returned a message (QF-10 broken)."""
    dispatched = [c for c in t.agent.contributors if c.scope is None or c.scope == t.agent.agent_id]
    t.compositions += 1
    t.instance = replace(t.instance, prefix=frozen_copy(comp.held),
                         prefix_lossy=any(c.lossy for c in dispatched))  # BUG: also with no message


# --------------------------------------------------------------------------- CMP-10 / CMP-24


Breakage = Callable[[Sequence[Event], tuple[Event, ...]], tuple[Event, ...]]


def _broken_compactions(breakage: Breakage) -> tuple[tuple[ModuleType, str, object], ...]:
    """compact-basic's three entry points, each appending what ``breakage`` makes of its events."""
    pressure, overflow, manual = pressure_compaction_, recover_overflow_, compact_if_needed_

    def pressure_compaction(events: Sequence[Event], *args: Any, **kwargs: Any) -> CompactionRun | Rejected:
        run = pressure(events, *args, **kwargs)
        return run if isinstance(run, Rejected) else replace(run, events=breakage(events, run.events))

    def recover_overflow(events: Sequence[Event], *args: Any, **kwargs: Any) -> OverflowDecision:
        decision = overflow(events, *args, **kwargs)
        return replace(decision, events=breakage(events, decision.events))

    def compact_if_needed(events: Sequence[Event], *args: Any, **kwargs: Any) -> CompactionRun | Rejected:
        run = manual(events, *args, **kwargs)
        return run if isinstance(run, Rejected) else replace(run, events=breakage(events, run.events))

    return ((listeners_module, "pressure_compaction", pressure_compaction),
            (listeners_module, "recover_overflow", recover_overflow),
            (listeners_module, "compact_if_needed", compact_if_needed))


# --------------------------------------------------------------------------- installing


def patches(variant: Planted) -> tuple[tuple[ModuleType, str, object], ...]:
    """Where ``variant`` is installed: (module, the name the loop looks up there, the replacement)."""
    match variant:
        case Planted.RECOMPOSE_EVERY_TURN:
            return ((turn_module, "play_turn", play_turn_recomposing),)
        case Planted.CACHE_INTERRUPTED:
            return ((turn_module, "compose_if_needed", compose_caching_interrupted),)
        case Planted.PREFIX_AFTER_HISTORY:
            return ((step_module, "build_request", build_request_prefix_last),)
        case Planted.PREFIX_IN_HISTORY:
            return ((compose_module, "write_cache", write_cache_into_history),)
        case Planted.NO_CLONE:
            return ((compose_module, "write_cache", write_cache_aliasing),
                    (step_module, "cached_prefix", cached_prefix_aliasing))
        case Planted.SNAPSHOT_AFTER_REQUEST:
            return ((turn_module, "dispatch_request", dispatch_request_late_boundary),)
        case Planted.COMPACT_SPLITS_TOOL_PAIR:
            return _broken_compactions(broken_compaction.split_tool_pair)
        case Planted.COMPACT_DROPS_PREFIX:
            return _broken_compactions(broken_compaction.drop_prefix)
        case Planted.IGNORE_SCOPE:
            return ((compose_module, "compose", compose_ignoring_scope),)
        case Planted.STEP_RESULT_CANCEL_DROPS_MESSAGE:
            return ((streaming_module, "step_result", step_result_without_message),)
        case Planted.DROP_REQUEUED_STEERING:
            return ((turn_module, "requeue_steering", requeue_nothing),)
        case Planted.TURN_STOP_ONLY_WHEN_STOPPING:
            return ((turn_module, "after_step", after_step_stop_check_when_stopping),)
        case Planted.LOSSY_OVER_ALL_CONTRIBUTORS:
            return ((compose_module, "write_cache", write_cache_lossy_over_all),)
        case Planted.THROWN_STREAM_CHECKPOINT:
            return ((streaming_module, "after_stream", after_stream_always_checkpoint),)
        case Planted.REQUEUED_TURNS_OUTLIVE_INTERRUPT:
            return ((turn_module, "still_queued", still_queued_after_interrupt),)
        case Planted.REPLIES_RESTART_PER_REQUEUED_TURN:
            return ((turn_module, "requeued_turn", requeued_turn_from_the_first_reply),)
        case Planted.THROW_PASSES_COMPOSITION_WINDOW:
            return ((turn_module, "compose_if_needed", compose_signalling_before_the_throw),)
        case Planted.LOSSY_WITHOUT_MESSAGES:
            return ((compose_module, "write_cache", write_cache_lossy_without_messages),)
        case _:
            assert_never(variant)


@contextmanager
def planted(variant: Planted | None) -> Iterator[None]:
    """Run the block with ``variant`` installed (None: the model itself)."""
    if variant is None:
        yield
        return
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches(variant)]
    for module, name, replacement in patches(variant):
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, name, original in reversed(saved):
            setattr(module, name, original)


def install(variant: Planted) -> None:
    """Install ``variant`` for good (a mutant adapter process only)."""
    for module, name, replacement in patches(variant):
        setattr(module, name, replacement)
