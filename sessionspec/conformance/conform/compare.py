"""One trace on an adapter, each answer compared with the model's (the step every ``conform`` mode shares).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sessionspec.conformance.adapter.driver import InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused, Response
from sessionspec.conformance.adapter.session import ModelSession
from sessionspec.conformance.conform.outcome import Divergence
from sessionspec.conformance.conform.rules import divergence_rule
from sessionspec.conformance.vectors.build import recorded_expectation
from sessionspec.conformance.vectors.format import match, verdict_only

Op = dict[str, Any]
OnAnswer = Callable[[Op, Response, Response], None]  # (operation, the model's answer, the adapter's)


class FailedAt(AdapterError):
    """The adapter failed (or refused) operation ``index`` of a trace's operations (0: ``init``)."""

    def __init__(self, failure: AdapterError, index: int) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.index = index


def trace_operations(initial: Op, trace: Sequence[Op], with_log: bool = True) -> list[Op]:
    """What a trace sends: ``init`` with the initial agent, the trace, then ``log`` (the whole log compared;
    left out for an adapter that does not declare ``log``)."""
    return [{"op": "init", **initial}, *trace, *([{"op": "log"}] if with_log else [])]


def model_answers(initial: Op, trace: Sequence[Op]) -> list[Response]:
    """The model's answer to every operation of the trace (the oracle)."""
    reference = InProcessAdapter(ModelSession())
    return [reference.call(op) for op in trace_operations(initial, trace)]


def compare_trace(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op],
                  expected_answers: Sequence[Response] | None = None, with_log: bool = True,
                  on_answer: OnAnswer | None = None) -> Divergence | None:
    """Run one trace on ``target`` and compare each answer with the model's (``expected_answers``, when the
    caller has them already, else computed here); the first diverging answer, or None.  ``on_answer`` sees
    every operation the adapter answered (ok or a rejection) with both answers.

    A rejection that names no rule where the model names one agrees in verdict (``sessionspec-adapter/2``)
    and is not a divergence.  An ``init`` answer that differs from the model's is a protocol failure (the
    generated agents are valid; no loop rule is involved).  A failure of the adapter, or an ``error``
    answer, raises :class:`FailedAt` with the operation's index."""
    ops = trace_operations(initial, trace, with_log)
    answers = (model_answers(initial, trace) if expected_answers is None else expected_answers)[: len(ops)]
    header: dict[str, Any] | None = None  # the model's header in effect before the operation
    previous_send: Op | None = None
    for index, (op, expected) in enumerate(zip(ops, answers, strict=True)):
        before, sent_before = header, previous_send
        previous_send = op if op["op"] == "send" else previous_send
        header = _last_header(expected, header)
        try:
            actual = target.call(op)
        except (AdapterError, OperationRefused) as failed:
            raise FailedAt(failed, index) from None
        if on_answer is not None:
            on_answer(op, expected, actual)
        mismatches = [m for m in match(recorded_expectation(expected), actual) if not verdict_only(m)]
        if mismatches and index == 0:
            raise FailedAt(AdapterError(
                f"operation 'init': the answer does not match the model's ({'; '.join(mismatches[:2])}); the adapter "
                "must answer {\"length\": 0} to an init without a seed log"), 0)
        if mismatches:
            shown = list(trace) if index > len(trace) else list(trace[: max(index, 0)])
            if op["op"] == "log":
                shown.append(op)
            return Divergence(initial=initial, trace=tuple(shown), index=max(index - 1, 0),
                              mismatches=tuple(mismatches), expected=expected, actual=actual,
                              rule=divergence_rule(expected, actual, mismatches, before, op, sent_before))
    return None


def _last_header(response: Response, header: dict[str, Any] | None) -> dict[str, Any] | None:
    """The last ``request/header`` the model appended in ``response`` (else ``header``); a fork or resume
    keeps the log, so the header in effect carries over."""
    events = response.get("appended")
    for event in reversed(events if isinstance(events, list) else []):
        data = event.get("data") if isinstance(event, dict) and event.get("type") == "request/header" else None
        found = data.get("header") if isinstance(data, dict) else None
        if isinstance(found, dict):
            return found
    return header


__all__ = ["FailedAt", "OnAnswer", "compare_trace", "model_answers", "trace_operations"]
