"""``sessionspec conform --adapter CMD``: differential random testing.

Hypothesis generates operation traces (an initial agent, then ``send``,
``configure``, ``resume``, ``dispose``, ``fork`` operations in the adapter
protocol's language, sessionspec/conformance/adapter/session.py); each trace runs against the model
in-process (the oracle) and against the implementation behind ``CMD``.  Every
answer of the implementation must match the model's, compared as the vectors
compare (sessionspec/conformance/vectors/build.py ``recorded_expectation``: exact canonical JSON except
event times and the wording of errors).  The first divergence is shrunk by
Hypothesis and reported as a replayable trace (a one-vector ``sessionspec-vectors/1``
file: ``sessionspec vectors run``) with the rule ID the divergence maps to.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, TextIO, final

from sessionspec.conformance.adapter.capabilities import OPERATIONS, Capabilities, restrict_trace
from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused, Response
from sessionspec.conformance.adapter.session import ModelSession
from sessionspec.conformance.conform.coverage import Coverage
from sessionspec.conformance.conform.rules import divergence_rule
from sessionspec.conformance.conform.traces import strategies as all_traces
from sessionspec.conformance.vectors.build import Step, Vector, recorded_expectation
from sessionspec.conformance.vectors.format import match, verdict_only
from sessionspec.conformance.vectors.runner import start_adapter

__all__ = ["Divergence", "Tally", "compare_trace", "divergence_rule", "model_answers", "run_conform", "trace_operations"]

Op = dict[str, Any]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """The first (shrunk) divergence: the trace up to the diverging operation."""

    initial: Op
    trace: tuple[Op, ...]
    index: int  # the diverging operation (into trace)
    mismatches: tuple[str, ...]
    expected: Response
    actual: Response
    rule: str

    def vector(self) -> Vector:
        """A replayable vector: the model's answers as expectations."""
        reference = InProcessAdapter()
        reference.call({"op": "init", **self.initial})
        steps = tuple(Step(op=op, expect=recorded_expectation(reference.call(op))) for op in self.trace)
        return Vector(id="conform/divergence", rules=(self.rule,), description=f"diverged at operation {self.index}: "
                      + "; ".join(self.mismatches[:3]), initial=self.initial, steps=steps)


class _Diverged(Exception):
    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.rule)
        self.divergence = divergence


def trace_operations(initial: Op, trace: Sequence[Op], with_log: bool = True) -> list[Op]:
    """What a trace sends: ``init`` with the initial agent, the trace, then ``log`` (the whole log compared;
    left out for an adapter that does not declare ``log``)."""
    return [{"op": "init", **initial}, *trace, *([{"op": "log"}] if with_log else [])]


def model_answers(initial: Op, trace: Sequence[Op]) -> list[Response]:
    """The model's answer to every operation of the trace (the oracle)."""
    reference = InProcessAdapter(ModelSession())
    return [reference.call(op) for op in trace_operations(initial, trace)]


def compare_trace(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op],
                  coverage: Coverage | None = None, expected_answers: Sequence[Response] | None = None,
                  with_log: bool = True) -> Divergence | None:
    """Run one trace on ``target`` and compare each answer with the model's (``expected_answers``, when the
    caller has them already, else computed here); the first diverging answer, or None.

    A rejection that names no rule where the model names one agrees in verdict (``sessionspec-adapter/2``)
    and is counted, not reported.  An ``init`` answer that differs from the model's is a protocol
    failure (the generated agents are valid; no loop rule is involved): :class:`AdapterError`."""
    ops = trace_operations(initial, trace, with_log)
    answers = (model_answers(initial, trace) if expected_answers is None else expected_answers)[: len(ops)]
    header: dict[str, Any] | None = None  # the model's header in effect before the operation
    previous_send: Op | None = None
    for index, (op, expected) in enumerate(zip(ops, answers, strict=True)):
        before, sent_before = header, previous_send
        previous_send = op if op["op"] == "send" else previous_send
        header = _last_header(expected, header)
        actual = target.call(op)
        if coverage is not None:
            coverage.add_answer(op, expected)
        every = match(recorded_expectation(expected), actual)
        mismatches = [m for m in every if not verdict_only(m)]
        if coverage is not None and len(mismatches) < len(every):
            coverage.rule_unknown += 1
        if mismatches and index == 0:
            raise AdapterError(f"operation 'init': the answer does not match the model's "
                               f"({'; '.join(mismatches[:2])}); the adapter must answer {{\"length\": 0}} to an init "
                               "without a seed log")
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


@dataclass(slots=True)
class Tally:
    """What a run did with its traces, for the summary line the vectors run has (issue 27): ``passed``
    agreed with the model, ``failed`` diverged (the search stops at the first), ``skipped`` used an operation
    the adapter answered ``unsupported`` to; ``declared``: the scope the adapter's ``hello`` restricted the
    traces to (None: it declared nothing, so every operation), ``dropped``: the operations left out of the
    traces once refused.  Traces replayed while shrinking are not counted."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    declared: str | None = None
    dropped: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """``38/41 traces passed, 1 failed, 2 skipped``, then what restricted or dropped operations."""
        total = self.passed + self.failed + self.skipped
        lines = [f"{self.passed}/{total} traces passed, {self.failed} failed, {self.skipped} skipped"]
        if self.declared is not None:
            lines.append(f"restricted to what the adapter declares: {self.declared}")
        if self.dropped:
            lines.append("dropped as unsupported (their traces skipped, not failed): "
                         + ", ".join(f"op {name}" for name in self.dropped))
        return lines


@dataclass(slots=True)
class _Scope:
    """What the generated traces may use: the adapter's declared capabilities, narrowed as it answers
    ``unsupported`` to an operation it did not declare (issue 27: a partial adapter can use conform)."""

    capabilities: Capabilities
    progress: TextIO | None
    tally: Tally = field(default_factory=Tally)

    def declares(self, op: str) -> bool:
        return self.capabilities.operations is None or op in self.capabilities.operations

    def learn(self, refused: OperationRefused) -> bool:
        """Drop the refused operation from the scope; False when it cannot be dropped (``init``)."""
        name = str(refused).split("'")[1] if "'" in str(refused) else ""
        if name in ("", "init", "hello") or not self.declares(name):
            return False
        known = self.capabilities.operations if self.capabilities.operations is not None else frozenset(OPERATIONS)
        self.capabilities = replace(self.capabilities, operations=known - {name})
        self.tally.dropped.append(name)
        print(f"conform: the adapter does not support {name!r}: the traces leave it out from now on",
              file=self.progress or sys.stderr, flush=True)
        return True


def _compare_in_scope(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op],
                      coverage: Coverage | None, scope: _Scope) -> Divergence | None:
    """:func:`compare_trace` within the adapter's scope: no ``log`` unless declared; an ``unsupported`` answer
    to an operation that can leave the traces drops it and skips this trace (Hypothesis ``reject``)."""
    try:
        return compare_trace(target, initial, trace, coverage, with_log=scope.declares("log"))
    except OperationRefused as refused:
        if not refused.unsupported or not scope.learn(refused):
            raise
    from hypothesis import reject

    reject()  # this trace used an operation the adapter does not support: skipped, not failed
    raise AssertionError("unreachable: reject() raises")


class _AdapterFailed(BaseException):
    """Carries an :class:`AdapterError` out of the Hypothesis test: a ``BaseException``, so Hypothesis
    neither shrinks nor replays it (an adapter failure is not a divergence, and replaying a dead adapter
    would end in a FlakyFailure)."""

    def __init__(self, failure: AdapterError) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass(slots=True)
class _Progress:
    """Progress on stderr, at most every ``every`` seconds: traces run, and while shrinking the shortest
    divergence so far."""

    examples: int
    every: float = 2.0
    runs: int = 0
    shrinks: int = 0
    last: float = field(default_factory=time.monotonic)

    def tick(self, found: Sequence[Divergence], out: TextIO) -> None:
        self.runs += 1
        if found:
            self.shrinks += 1
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        if found:
            shortest = min(len(d.trace) for d in found)
            print(f"conform: shrinking a divergence ({found[-1].rule}): {self.shrinks} shrink runs, shortest trace "
                  f"{shortest} operations", file=out, flush=True)
        else:
            print(f"conform: {self.runs}/{self.examples} traces agree", file=out, flush=True)


def run_conform(command: str | None, *, examples: int = 40, seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                max_answer: int = MAX_ANSWER, coverage: Coverage | None = None, progress: TextIO | None = None,
                progress_every: float = 2.0, tally: Tally | None = None) -> Divergence | None:
    """Drive ``command`` (None: the model in-process) with ``examples`` traces;
    the shrunk first divergence, or None when every trace agreed (``tally``, when given, counts the traces
    and the scope).  An adapter failure (no answer in time, too large, not UTF-8 JSON, died, a hello
    without a protocol) raises :class:`AdapterError`."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Flaky, UnsatisfiedAssumption

    # Fail fast, before any search, on an adapter that does not speak the protocol.
    target = start_adapter(command, timeout=timeout, max_answer=max_answer)
    found: list[Divergence] = []
    ticker = _Progress(examples=examples, every=progress_every)
    counts = tally if tally is not None else Tally()
    scope = _Scope(target.capabilities, progress, counts)
    if target.capabilities != Capabilities():
        counts.declared = target.capabilities.describe()
    if progress is not None and target.capabilities != Capabilities():
        print(f"conform: the adapter declares {target.capabilities.describe()}: the traces use only those",
              file=progress, flush=True)

    # The derandomized search is seeded by a digest of the decorated test's source (Hypothesis's
    # function_digest), so its text stays as it was before issue 27: every committed result (the mutants
    # each killed within 200 traces, the shrunk vectors) stays reproducible.  The scope (issue 27) lives in
    # these two local stand-ins instead: the traces cut to the declared capabilities, and an ``unsupported``
    # answer dropping its operation from the traces to come; they also count the traces (not while shrinking).
    def strategies() -> Any:
        return all_traces().map(lambda case: restrict_trace(case[0], case[1], scope.capabilities))

    def compare_trace(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op],
                      coverage: Coverage | None = None) -> Divergence | None:
        counting = not found
        try:
            divergence = _compare_in_scope(target, initial, trace, coverage, scope)
        except UnsatisfiedAssumption:  # reject(): the trace used an operation the adapter does not support
            if counting:
                counts.skipped += 1
            raise
        if counting and divergence is None:
            counts.passed += 1
        elif counting:
            counts.failed += 1
        return divergence

    @settings(max_examples=examples, database=None, deadline=None, derandomize=seed is None, print_blob=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink))
    @given(strategies())
    def trace_agrees(case: tuple[Op, list[Op]]) -> None:
        initial, trace = case
        shrinking = bool(found)
        if coverage is not None and not shrinking:
            coverage.add_trace(initial, trace)
        try:
            divergence = compare_trace(target, initial, trace, None if shrinking else coverage)
        except AdapterError as failed:
            raise _AdapterFailed(failed) from None
        if progress is not None:
            ticker.tick(found, progress)
        if divergence is not None:
            found.append(divergence)
            raise _Diverged(divergence)

    try:
        if seed is not None:
            from hypothesis import seed as hypothesis_seed

            hypothesis_seed(seed)(trace_agrees)()
        else:
            trace_agrees()
    except _Diverged as diverged:
        return diverged.divergence
    except _AdapterFailed as failed:
        if not found:
            raise failed.failure from None
        # A divergence was already seen: it stands (shrinking stopped where the adapter failed).
        print(f"conform: the adapter failed while shrinking ({failed.failure}); reporting the shortest divergence "
              "seen", file=progress or sys.stderr)
    except Flaky:
        # The adapter answered the same trace differently when replayed (it is not deterministic): the
        # shortest divergence seen still stands.
        if not found:
            raise AdapterError("the adapter is not deterministic: a trace that diverged agreed when replayed") from None
    finally:
        target.close()
    return min(found, key=lambda d: len(d.trace)) if found else None


# --------------------------------------------------------------------------- what the CLI (cli.py) shows


DEFAULT_EXAMPLES: Final = 200  # also the pytest plugin's --sessionspec-examples default


def divergence_lines(divergence: Divergence, limit: int | None = 8) -> list[str]:
    """The readable report of a divergence, the same in the CLI and the pytest plugin: the operation sent,
    its differences from the model's answer (aligned lists, vectors/diff.py), at most ``limit`` of them then
    ``… N more`` (``None``: all)."""
    from sessionspec.conformance.vectors.diff import diff

    sent = divergence.trace[-1] if divergence.trace else {"op": "init", **divergence.initial}
    text = json.dumps(sent, sort_keys=True, ensure_ascii=False)
    lines = [f"sent: {text if len(text) <= 200 else text[:199] + '…'}"]
    diffs = [d.text for d in diff(recorded_expectation(divergence.expected), divergence.actual)] or list(divergence.mismatches)
    lines += [f"  {d}" for d in (diffs if limit is None else diffs[:limit])]
    if limit is not None and len(diffs) > limit:
        lines.append(f"… {len(diffs) - limit} more (-v shows all)")
    return lines
