"""The ways a turn ends early: a request error (LOOP-14) and an interruption (LOOP-15)."""

from __future__ import annotations

from typing import assert_never

from sessionspec.model.jsonval import JsonObject
from sessionspec.model.loop.events import Draft, ErrorAction, ErrorDecision, RequestErrorContext
from sessionspec.model.loop.script import InterruptKind, Reply, obj
from sessionspec.model.loop.state import Interrupted, StepEnd, Turn, TurnFailed
from sessionspec.model.loop.stream import failure_of
from sessionspec.model.rules import implements


@implements("LOOP-14")
def request_error(t: Turn, reply: Reply, prior_failures: list[JsonObject]) -> StepEnd:
    """LOOP-14: "On a request error, the loop MUST follow this path: 1."

    LOOP-14: "(1) close the step with ``step/end``; (2) if the turn is
    interrupted, end the turn; (3) otherwise run the ``agent/request-error``
    waterfall ... The default is ``{action:"fail"}``; (4) interruption wins
    again; (5) ``retry`` appends the failure to ``priorFailures`` and starts a
    **new numbered step** ...; (6) ``fail`` gives ``turn/end {kind:"error",
    step, failure}``."  The listeners see whether the signal is aborted.  QF-7
    (settles Q-30): "interrupted" means an agent interrupt (cancel or dispose);
    the path ignores a foreign abort reason, so the turn ends with the provider
    failure, or a retry meets the abort at the next step's first checkpoint."""
    t.append(Draft(type_name="step/end", data=obj(("turn", t.number), ("step", t.step))))
    t.open_step = None
    end_if_agent_interrupted(t)
    failure = failure_of(reply)
    default = ErrorAction.RETRY if reply.retry else ErrorAction.FAIL
    decision = ErrorDecision(action=default)
    if t.hooks.request_error is not None:
        decision = t.hooks.request_error(t.session.events, RequestErrorContext(
            turn=t.number, step=t.step, failure=failure, prior_failures=tuple(prior_failures), default=default,
            aborted=t.aborted is not None))
    for draft in decision.drafts:
        t.append(draft)
    t.side_calls.extend(decision.side_calls)
    end_if_agent_interrupted(t)
    match decision.action:
        case ErrorAction.RETRY:
            prior_failures.append(failure)
            return StepEnd.RETRY
        case ErrorAction.FAIL:
            raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("failure", failure)))
        case _:
            assert_never(decision.action)


def end_if_agent_interrupted(t: Turn) -> None:
    """LOOP-14 (2) and (4): end the turn when the signal carries an agent
    interrupt reason (cancel or dispose); a foreign reason is not one."""
    if t.aborted is InterruptKind.CANCEL or t.aborted is InterruptKind.DISPOSE:
        raise Interrupted(t.aborted)


@implements("LOOP-15")
def interruption_reason(kind: InterruptKind, step: int) -> JsonObject:
    """LOOP-15: "The loop MUST check for interruption at each of these points: after `turn/start`, after
    prompt-submit, after assembly, after composition, after pre-step, after `step/start`, after
    `agent/request`, after `prepareCall`, before each chunk append, after the stream, after step-result,
    after continuation, after turn-stop."

    LOOP-15: "``turn/end {kind:"aborted"}`` follows; it is ``{kind:"disposed"}``
    when the handle is disposed, and disposal always wins."  Q-30: a foreign
    abort reason ends ``{kind:"error", step, message:"turn interrupted"}``."""
    match kind:
        case InterruptKind.CANCEL | InterruptKind.DISPOSE:
            return obj(("kind", kind.value))
        case InterruptKind.FOREIGN:
            return obj(("kind", "error"), ("step", step), ("message", "turn interrupted"))
        case _:
            assert_never(kind)
