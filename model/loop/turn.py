"""One message-triggered turn: the prologue (LOOP-3, LOOP-4), the steps in
LOOP-5 order, the post-stream epilogue (LOOP-13) and the outer catch (LOOP-17).

``run_turn(log, instance, agent, script)`` plays one turn exactly as
``packages/core/agent-loop/src/loop.ts`` runs it and returns the new log, the
new instance state and the requests the loop handed to the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop.compose import compose_if_needed
from sessionspec.model.loop.errors import interruption_reason
from sessionspec.model.loop.events import NO_HOOKS, Draft, Hooks, StepContext, TurnOutcome
from sessionspec.model.loop.instance import LoopInstance, next_turn_number
from sessionspec.model.loop.script import (
    GOAL_SOURCE,
    AgentConfig,
    InterruptKind,
    Placement,
    Prompt,
    Reply,
    Steering,
    TurnScript,
    Window,
    obj,
    text_content,
)
from sessionspec.model.loop.state import APPEND, AppendRejected, Interrupted, SessionLog, StepEnd, Turn, TurnFailed, log_writer
from sessionspec.model.loop.step import dispatch_request, open_step
from sessionspec.model.loop.streaming import stream
from sessionspec.model.loop_records import prefixed_content, stop_reason
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.rules import implements


def run_turn(log: Sequence[Event], instance: LoopInstance, agent: AgentConfig, script: TurnScript, *,
             hooks: Hooks = NO_HOOKS, dialect: Dialect = Dialect.A55) -> TurnOutcome | Rejected:
    """One message-triggered turn over ``log``.  Total: an invalid input log, a
    disposed instance or another dialect is a ``Rejected``.  Every append is
    validated (the loop cannot write an invalid log) and every request is
    built by WIRE-1 from the boundary taken just before ``step/start``."""
    if dialect is not Dialect.A55:
        return Rejected(rule="DIA-8", reason="the loop model covers the A55 dialect only")
    session = log_writer(log, dialect)
    if isinstance(session, Rejected):
        return session
    return play_turn(session, instance, agent, script, hooks)


def play_turn(session: SessionLog, instance: LoopInstance, agent: AgentConfig, script: TurnScript,
              hooks: Hooks) -> TurnOutcome | Rejected:
    """The turn on ``session`` (grown in place), then the turns of any
    steering it put back on the queue (QF-4), one at a time; the outcome as
    values (requests, compositions and side calls of all of them, the end of
    the last).  The scripted replies answer the send's requests in order,
    across its turns; an interruption that fired discards what is still queued
    (QF-9)."""
    if instance.disposed:
        return Rejected(rule="LOOP-1", reason="the loop instance was disposed; start a new instance")
    played: list[tuple[Turn, JsonObject]] = []
    queued: list[Steering] = []
    while True:
        t = Turn(session=session, instance=instance, agent=agent, script=script, hooks=hooks, number=next_turn_number(session.events))
        try:
            played.append((t, end_turn(t)))
        except AppendRejected as failed:
            return Rejected(rule=failed.rejected.rule, seq=failed.rejected.seq, kind=FailureKind.BUG,
                            reason=f"the loop model wrote an invalid event: {failed.rejected.reason}")
        instance, agent = replace(t.instance, disposed=t.aborted is InterruptKind.DISPOSE), t.agent
        queued = still_queued(t, queued)
        if not queued:
            break
        script = requeued_turn(t, queued.pop(0))
    last, reason = played[-1]
    return TurnOutcome(log=tuple(session.events), instance=instance, agent=agent,
                       requests=tuple(r for t, _ in played for r in t.requests),
                       compositions=sum(t.compositions for t, _ in played),
                       interrupted_composition=any(t.interrupted_composition for t, _ in played), turn=last.number,
                       end_reason=reason, side_calls=tuple(c for t, _ in played for c in t.side_calls))


def requeue_steering(t: Turn) -> None:
    """QF-4: steering queued for a turn that ends in its prologue (the prompt is
    blocked, or ``agent/prompt-submit`` throws) is never drained into it; the
    harness puts it back on the queue, and each item runs as the next
    message-triggered turn (LOOP-3 (1) claims it)."""
    t.requeued = t.script.steering


def still_queued(t: Turn, queued: list[Steering]) -> list[Steering]:
    """QF-9: what is left on the queue after turn ``t``: the items queued
    before it, then the steering it put back (QF-4) -- unless the send's
    interruption fired in ``t``: ``cancel()`` (a user cancel or a foreign abort
    reason) clears the inbox, and a disposed agent runs no further turn, so
    nothing queued runs."""
    if t.aborted is not None:
        return []
    return [*queued, *t.requeued]


def requeued_turn(previous: Turn, item: Steering) -> TurnScript:
    """The turn a re-queued steering item triggers: the item is its prompt; the
    model answers with the replies the earlier turns of the send left
    (``agent/request`` takes them in order); the listeners behave as scripted (a
    throwing pre-step listener, an interruption that did not fire yet)."""
    script = previous.script
    return TurnScript(prompt=Prompt(content=item.content, source=item.source),
                      replies=script.replies[previous.replies_taken:], interrupt=script.interrupt,
                      pre_step_error=script.pre_step_error)


@implements("LOOP-17")
def end_turn(t: Turn) -> JsonObject:
    """LOOP-17: "The turn epilogue MUST append `turn/end {turn, reason}` and then flush."

    The outer catch closes a turn only if that turn's ``turn/start`` is in the log, and closes
    an open step first.  The reason is completed / max-tokens, aborted / disposed (LOOP-15), or
    an error (LOOP-16)."""
    source = t.script.prompt.source
    t.append(Draft(type_name="turn/start",
                   data=obj(("turn", t.number), ("trigger", obj(("kind", "message"), ("source", source))))))
    try:
        reason = turn_body(t)
    except Interrupted as interrupted:
        reason = interruption_reason(interrupted.kind, t.step)
    except TurnFailed as failed:
        reason = failed.reason
    if t.open_step is not None:
        t.append(Draft(type_name="step/end", data=obj(("turn", t.number), ("step", t.open_step))))
        t.open_step = None
    t.append(Draft(type_name="turn/end", data=obj(("turn", t.number), ("reason", reason))))
    return reason


@implements("LOOP-3", "PFX-14")
def prologue(t: Turn) -> JsonObject | None:
    """LOOP-3: "The turn prologue MUST run in this order: 1."
    PFX-14: "A turn that ends before the composition point MUST NOT compose."

    LOOP-3: ``turn/start`` (written by :func:`end_turn`), checkpoint,
    ``agent/prompt-submit``, checkpoint, then **block** (``prompt/blocked`` and
    ``{kind:"rejected", reason}``: zero steps, so no composition, PFX-14; queued
    steering is put back on the queue, QF-4) or
    **allow** (the prompt as ``user/message`` (LOOP-4), then each context whose
    placement is not ``prompt-prefix`` as its own ``user/message``).  Returns the
    end reason of a blocked turn, else None."""
    prompt = t.script.prompt
    t.checkpoint(Window.AFTER_TURN_START)
    if prompt.submit_error is not None:
        requeue_steering(t)
        # a prompt-submit failure names step 0.
        raise TurnFailed(obj(("kind", "error"), ("step", 0), ("message", prompt.submit_error)))
    t.checkpoint(Window.AFTER_PROMPT_SUBMIT)
    if prompt.block_reason is not None:
        requeue_steering(t)
        t.append(Draft(type_name="prompt/blocked",
                       data=obj(("content", prompt.content), ("source", prompt.source), ("reason", prompt.block_reason))))
        return obj(("kind", "rejected"), ("reason", prompt.block_reason))
    t.append(Draft(type_name="user/message", data=prompt_message_data(prompt), surface_op=APPEND))
    for ctx in prompt.contexts:
        if ctx.placement is Placement.SEPARATE:
            t.append(Draft(type_name="user/message",
                           data=obj(("content", ctx.content), ("source", ctx.source), ("meta", ctx.meta)),
                           surface_op=APPEND))
    return None


@implements("LOOP-4")
def prompt_message_data(prompt: Prompt) -> JsonObject:
    """LOOP-4: "When there are contexts with placement `prompt-prefix`, the logged prompt MUST be built as
    follows:"

    LOOP-4: with ``prompt-prefix`` contexts the logged prompt is their content,
    the delimiter block, then the prompt; ``envelope = {displayContent,
    prefixContexts:[{source, meta?}]}``; key order ``content, source, envelope, meta?``."""
    prefixed = [c for c in prompt.contexts if c.placement is Placement.PROMPT_PREFIX]
    if not prefixed:
        return obj(("content", prompt.content), ("source", prompt.source))
    content = prefixed_content((c.content for c in prefixed), prompt.content)
    envelope = obj(
        ("displayContent", prompt.content),
        ("prefixContexts", tuple(obj(("source", c.source), ("meta", c.meta)) for c in prefixed)),
    )
    return obj(("content", content), ("source", prompt.source), ("envelope", envelope))


def turn_body(t: Turn) -> JsonObject:
    """The prologue, then steps until the turn stops."""
    blocked = prologue(t)
    if blocked is not None:
        return blocked
    pending: list[Steering] = list(t.script.steering)
    prior_failures: list[JsonObject] = []
    while True:
        # The next scripted reply; every step that gets this far without ending
        # the turn reaches agent/request, which takes it (dispatch_request).
        replies = t.script.replies
        reply = replies[t.replies_taken] if t.replies_taken < len(replies) else Reply()
        if run_step_stages(t, reply, pending, prior_failures) is StepEnd.RETRY:
            continue
        stop = after_step(t, reply, pending, prior_failures)
        if stop is not None:
            return stop


@implements("LOOP-5")
def run_step_stages(t: Turn, reply: Reply, pending: list[Steering], prior_failures: list[JsonObject]) -> StepEnd:
    """LOOP-5: "Each step MUST run these stages in order: (1) `step += 1`; (2) drain steering (LOOP-13); (3)
    assemble the system prompt and tools; (4) interruption checkpoint; (5) render the system text; (6)
    compose the prefix, only if `NOT_COMPOSED` (PFX-2), followed by its interruption checkpoint; (7) run
    `agent/pre-step` serially; (8) interruption checkpoint; (9) take the boundary snapshot (LOOP-6); (10)
    append `step/start {turn, step}`; (11) interruption checkpoint (a synchronous `step/start` observer may
    cancel here); (12) `runStep` (LOOP-7)."
    """
    t.step += 1
    drain_steering(t, pending)
    t.checkpoint(Window.AFTER_ASSEMBLY)
    compose_if_needed(t)
    if t.script.pre_step_error is not None:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", t.script.pre_step_error)))
    t.checkpoint(Window.AFTER_PRE_STEP)
    boundary, step_start_seq = open_step(t)
    header = dispatch_request(t, reply, boundary, step_start_seq)
    return stream(t, reply, header, prior_failures)


def drain_steering(t: Turn, pending: list[Steering]) -> None:
    """LOOP-13: "for each steering item: append ``steering/message {turn, content,
    source, envelope?, meta?}`` with ``surfaceOp:"append"``"."""
    while pending:
        item = pending.pop(0)
        t.append(Draft(type_name="steering/message",
                       data=obj(("turn", t.number), ("content", item.content), ("source", item.source)),
                       surface_op=APPEND))


@implements("LOOP-13")
def after_step(t: Turn, reply: Reply, pending: list[Steering], prior_failures: list[JsonObject]) -> JsonObject | None:
    """LOOP-13: "The steering drain MUST, for each steering item:"

    LOOP-13: "After the stream, the order is: (1) drain; (2) ``agent/post-step``,
    run serially.  Compaction runs here (CMP-6) ...; (3) interruption check;
    (4) ``step/end``; (5) ``agent/turn-continuation``.  The default is continue
    exactly when the step had tool calls or steering was drained.  A
    continuation reason becomes steering for the next step ...; (6)
    ``agent/turn-stop``" and its checkpoint, on every step (QF-5).  Returns the end reason when the turn stops (LOG-11:
    "max-tokens takes precedence over completed only"), else None."""
    drain_steering(t, pending)
    # A cancel that lands while the tools run is already visible to the
    # post-step listeners (CMP-6 skips when aborted); the checkpoint after
    # post-step then ends the turn.
    t.signal(Window.AFTER_POST_STEP)
    if t.hooks.post_step is not None:
        header = t.session.header
        assert isinstance(header, EpochHeader)
        # The listener reads the live log; it appends only through its result (CMP-6).
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
    # QF-5: agent/turn-stop and its checkpoint run after every step, also when the turn goes on.
    t.checkpoint(Window.AFTER_TURN_STOP)
    if go_on:
        return None
    return stop_reason(t.max_tokens)
