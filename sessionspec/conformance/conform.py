"""``sessionspec conform --adapter CMD``: differential random testing.

Hypothesis generates operation traces (an initial agent, then ``send``,
``configure``, ``resume``, ``dispose``, ``fork`` operations in the adapter
protocol's language, sessionspec/conformance/adapter.py); each trace runs against the model
in-process (the oracle) and against the implementation behind ``CMD``.  Every
answer of the implementation must match the model's, compared as the vectors
compare (sessionspec/conformance/vectors.py ``recorded_expectation``: exact canonical JSON except
event times and the wording of errors).  The first divergence is shrunk by
Hypothesis and reported as a replayable trace (a one-vector ``sessionspec-vectors/1``
file: ``sessionspec vectors run``) with the rule ID the divergence maps to.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO, final

from sessionspec.conformance.adapter import ModelSession
from sessionspec.conformance.conform_coverage import Coverage
from sessionspec.conformance.conform_rules import divergence_rule
from sessionspec.conformance.conform_traces import strategies
from sessionspec.conformance.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.protocol import AdapterError, Response
from sessionspec.conformance.vector_build import Step, Vector, recorded_expectation
from sessionspec.conformance.vector_format import FORMAT, PlainJson, file_text, match, verdict_only
from sessionspec.conformance.vector_runner import start_adapter
from sessionspec.conformance.vectors import add_driver_arguments, driver_usage_error

__all__ = ["Divergence", "compare_trace", "divergence_rule", "model_answers", "run_conform", "trace_operations"]

HELP: Final = "drive an adapter with generated operation traces and report the first divergence from the model"

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


def trace_operations(initial: Op, trace: Sequence[Op]) -> list[Op]:
    """What a trace sends: ``init`` with the initial agent, the trace, then ``log`` (the whole log compared)."""
    return [{"op": "init", **initial}, *trace, {"op": "log"}]


def model_answers(initial: Op, trace: Sequence[Op]) -> list[Response]:
    """The model's answer to every operation of the trace (the oracle)."""
    reference = InProcessAdapter(ModelSession())
    return [reference.call(op) for op in trace_operations(initial, trace)]


def compare_trace(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op],
                  coverage: Coverage | None = None, expected_answers: Sequence[Response] | None = None) -> Divergence | None:
    """Run one trace on ``target`` and compare each answer with the model's (``expected_answers``, when the
    caller has them already, else computed here); the first diverging answer, or None.

    A rejection that names no rule where the model names one agrees in verdict (``sessionspec-adapter/2``)
    and is counted, not reported.  An ``init`` answer that differs from the model's is a protocol
    failure (the generated agents are valid; no loop rule is involved): :class:`AdapterError`."""
    ops = trace_operations(initial, trace)
    answers = model_answers(initial, trace) if expected_answers is None else expected_answers
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
                progress_every: float = 2.0) -> Divergence | None:
    """Drive ``command`` (None: the model in-process) with ``examples`` traces;
    the shrunk first divergence, or None when every trace agreed.  An adapter failure (no answer in
    time, too large, not UTF-8 JSON, died, a hello without a protocol) raises :class:`AdapterError`."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Flaky

    # Fail fast, before any search, on an adapter that does not speak the protocol.
    target = start_adapter(command, timeout=timeout, max_answer=max_answer)
    found: list[Divergence] = []
    ticker = _Progress(examples=examples, every=progress_every)

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


# --------------------------------------------------------------------------- CLI


DEFAULT_EXAMPLES: Final = 200  # also the pytest plugin's --sessionspec-examples default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", required=True, metavar="CMD", help="the adapter command to test")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N", help=f"generated traces (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="a random seed (default: derandomized, reproducible)")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="write the shrunk divergence as a replayable vector file here (missing directories are created)")
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr (as check --no-progress)")
    parser.add_argument("--quiet", "-q", dest="no_progress", action="store_true", help=argparse.SUPPRESS)  # the old spelling
    parser.add_argument("--exhaustive", action="store_true",
                        help="run every trace of up to --depth operations over the small alphabet of docs/conformance.md "
                             "section 4.1 instead of random traces")
    parser.add_argument("--depth", type=int, default=2, metavar="K",
                        help="with --exhaustive: the longest trace, in operations (default 2)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="with --exhaustive: adapters run in parallel (default: the CPU count, at most 4)")
    add_driver_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.examples < 1:
        print("sessionspec conform: --examples must be at least 1", file=sys.stderr)
        return 2
    problem = driver_usage_error(args)
    if problem is not None:
        print(f"sessionspec conform: {problem}", file=sys.stderr)
        return 2
    if args.exhaustive:
        return _run_exhaustive(args)
    coverage = Coverage()
    try:
        divergence = run_conform(args.adapter, examples=args.examples, seed=args.seed, timeout=args.timeout,
                                 max_answer=args.max_answer, coverage=coverage,
                                 progress=None if args.no_progress else sys.stderr)
    except ModuleNotFoundError as missing:
        print(f"sessionspec conform: needs the {missing.name} package (pip install hypothesis)", file=sys.stderr)
        return 2
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    if divergence is None:
        print(f"no divergence in {args.examples} generated traces")
        print(coverage.report())
        return 0
    _print_divergence(divergence)
    print(coverage.report())
    return _write_divergence(divergence, args)


def _run_exhaustive(args: argparse.Namespace) -> int:
    import os

    from sessionspec.conformance.conform_exhaustive import report, run_exhaustive

    if not 1 <= args.depth <= 6:
        print("sessionspec conform: --depth must be between 1 and 6", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs is not None else min(os.cpu_count() or 1, 4)
    if jobs < 1:
        print("sessionspec conform: --jobs must be at least 1", file=sys.stderr)
        return 2
    try:
        result = run_exhaustive(args.adapter, depth=args.depth, jobs=jobs, timeout=args.timeout,
                                max_answer=args.max_answer, progress=None if args.no_progress else sys.stderr)
    except AdapterError as failed:
        print(f"sessionspec conform: adapter failure: {failed}", file=sys.stderr)
        return 2
    report(result)
    if result.divergence is None:
        return 0
    print(f"initial agent: {result.agent}")
    _print_divergence(result.divergence)
    return _write_divergence(result.divergence, args)


def _print_divergence(divergence: Divergence) -> None:
    print(f"DIVERGENCE ({divergence.rule}) at operation {divergence.index} of a {len(divergence.trace)}-operation trace")
    for line in divergence.mismatches[:8]:
        print(f"    {line}")
    print("trace:")
    print("    " + json.dumps({"op": "init", **divergence.initial}, sort_keys=True, ensure_ascii=False))
    for op in divergence.trace:
        print("    " + json.dumps(op, sort_keys=True, ensure_ascii=False))


def _write_divergence(divergence: Divergence, args: argparse.Namespace) -> int:
    """Write the divergence as a one-vector file when ``--out`` is given; exit 1 (a finding) either way."""
    if args.out:
        document: Mapping[str, PlainJson] = {"format": FORMAT, "registry": _digest(), "group": "conform",
                                             "vectors": [divergence.vector().to_json()]}
        try:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(file_text(document), encoding="utf-8")
        except OSError as failed:
            print(f"sessionspec conform: cannot write {args.out}: {failed}", file=sys.stderr)
            return 2
        print(f"replay with: sessionspec vectors run {Path(args.out).parent} --adapter {args.adapter!r}")
    return 1


def _digest() -> str:
    from spec.registry import registry_digest

    return registry_digest()
