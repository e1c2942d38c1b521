"""``sessionspec conform --adapter CMD``: differential random testing.

Hypothesis generates operation traces (an initial agent, then ``send``, ``configure``, ``resume``,
``dispose``, ``fork`` operations in the adapter protocol's language, sessionspec/conformance/adapter/session.py);
each trace runs against the model in-process (the oracle) and against the implementation behind ``CMD``.
Every answer of the implementation must match the model's, compared as the vectors compare
(sessionspec/conformance/vectors/build.py ``recorded_expectation``: exact canonical JSON except event
times and the wording of errors).  The first unexpected divergence is shrunk by Hypothesis and reported as
a replayable trace (a one-vector ``sessionspec-vectors/1`` file: ``sessionspec vectors run``).

What the search does with everything else (issues 45 and 43):

- a trace cut to the adapter's scope: what ``hello`` declares, less what it answered ``unsupported`` to (the
  shape its words name, or the operation; capabilities.refusal_needs); the refused trace is skipped;
- a divergence that ``--expect`` lists (by signature) is recorded and the search goes on;
- an adapter that fails on a trace (dies, hangs, answers malformed or ``error``) is a *crash*: recorded,
  shrunk (within a budget), the adapter restarted, and the search goes on -- a new Hypothesis run that
  skips the traces already run;
- the traces are counted from the adapter's answers (outcome.Tally).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from sessionspec.conformance.adapter.capabilities import Capabilities, refusal_needs, restrict_trace
from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused, Response
from sessionspec.conformance.adapter.shapes import op_shapes
from sessionspec.conformance.conform.compare import FailedAt, compare_trace, model_answers, trace_operations
from sessionspec.conformance.conform.coverage import Coverage, answer_rules
from sessionspec.conformance.conform.outcome import Crash, Divergence, Dropped, ExpectedSeen, Tally
from sessionspec.conformance.conform.rules import divergence_rule
from sessionspec.conformance.conform.traces import strategies as all_traces
from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.runner import start_adapter

__all__ = ["DEFAULT_EXAMPLES", "Crash", "Divergence", "Tally", "compare_trace", "divergence_rule", "model_answers",
           "run_conform", "trace_operations"]

Op = dict[str, Any]

DEFAULT_EXAMPLES: Final = 200  # also the pytest plugin's --sessionspec-examples default
CRASHES_IN_A_ROW: Final = 3  # the search stops after this many traces in a row crashed the adapter
SHRINK_CRASH_RUNS: Final = 40  # replays spent shrinking a crash at most (each may cost a restart or a timeout)
SHRINK_CRASH_SECONDS: Final = 20.0  # and seconds
SEARCH_ROUNDS: Final = 8  # Hypothesis runs at most (a new one after each crash found)
DRAWS_PER_TRACE: Final = 4  # draws allowed per trace counted (repeats of a trace already run are not counted)


class _Failing(Exception):
    """Raised in the Hypothesis test for the failure being shrunk (an unexpected divergence, or a crash)."""


class _Halt(BaseException):
    """Ends a Hypothesis run at once, without shrinking (a ``BaseException``): the count is reached, the
    search must stop, or a crash's shrink budget is spent."""


@dataclass(slots=True)
class _Progress:
    """Progress on stderr, at most every ``every`` seconds."""

    out: TextIO | None
    examples: int
    every: float = 2.0
    shrinks: int = 0
    last: float = field(default_factory=time.monotonic)

    def say(self, text: str, *, now: bool = False) -> None:
        if self.out is not None:
            print(f"conform: {text}", file=self.out, flush=True)
            self.last = time.monotonic() if now else self.last

    def tick(self, tally: Tally, shrinking: str | None, shortest: int = 0) -> None:
        if self.out is None:
            return
        self.shrinks += 1 if shrinking else 0
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        if shrinking:
            what = "a crash" if shrinking.startswith("crash/") else "a divergence"
            self.say(f"shrinking {what} ({shrinking}): {self.shrinks} shrink runs, shortest trace {shortest} operations")
        else:
            self.say(f"{tally.passed}/{tally.run} traces agree ({tally.run} of {self.examples} run)")


@dataclass(slots=True, kw_only=True)
class _Search:
    command: str | None
    target: ProcessAdapter | InProcessAdapter
    examples: int
    tally: Tally
    coverage: Coverage | None
    expectations: Expectations | None
    progress: _Progress
    timeout: float
    max_answer: int
    scope: Capabilities = field(default_factory=Capabilities)
    seen: dict[str, str] = field(default_factory=dict)  # a trace run (its canonical text) -> its outcome
    shrinking: str | None = None  # the key of the failure being shrunk (None: generating)
    divergences: list[Divergence] = field(default_factory=list)  # the unexpected divergence, shrinking
    crash: Crash | None = None  # the crash being shrunk (its shortest so far)
    known_crashes: set[str] = field(default_factory=set)
    in_a_row: int = 0
    shrink_runs: int = 0
    shrink_started: float = 0.0

    # ---------------------------------------------------------------- one trace

    def body(self, initial: Op, trace: list[Op]) -> None:
        """The Hypothesis test: fails (raises) only for the failure it is shrinking or a new one."""
        from hypothesis import reject

        text = json.dumps([initial, trace], sort_keys=True)
        generating = self.shrinking is None
        if generating and text in self.seen:  # run in an earlier round: the same outcome, not run again
            if self.seen[text] == "skip":
                reject()
            return
        if generating and self.tally.run >= self.examples:
            raise _Halt
        if not generating:
            self.shrink_runs += 1
            spent = time.monotonic() - self.shrink_started
            if self.crash is not None and (self.shrink_runs > SHRINK_CRASH_RUNS or spent > SHRINK_CRASH_SECONDS):
                raise _Halt
        outcome = self._run(initial, trace, generating)
        if generating:
            self.seen[text] = outcome
            self.progress.tick(self.tally, None)
        else:
            shortest = len(self.crash.trace) if self.crash is not None else min(len(d.trace) for d in self.divergences)
            self.progress.tick(self.tally, self.shrinking, shortest)
        if outcome == "skip":
            reject()
        if outcome == "fail":
            raise _Failing(self.shrinking)

    def _run(self, initial: Op, trace: list[Op], generating: bool) -> str:
        """Run one trace; its outcome: ``pass``, ``skip``, ``xfail``, ``crash`` (known, recorded) or ``fail``
        (the failure to shrink).  Generating, the rules the model's answers reach are counted per outcome."""
        ops = trace_operations(initial, trace, self.scope.has_operation("log"))
        answers = model_answers(initial, trace)
        answered: list[int] = []
        try:
            divergence = compare_trace(self.target, initial, trace, expected_answers=answers,
                                       with_log=self.scope.has_operation("log"),
                                       on_answer=(lambda op, e, a: self._count(op, e, a, answered)) if generating else None)
        except FailedAt as failed:
            if generating:
                reached = answer_rules(ops[failed.index], answers[failed.index])
                agreed = set().union(*(answer_rules(ops[i], answers[i]) for i in range(failed.index)))
                refused = isinstance(failed.failure, OperationRefused) and failed.failure.unsupported
                self.tally.rules.add(agreed | reached if refused else agreed - reached, "skipped" if refused else "passed")
                if not refused:
                    self.tally.rules.add(reached, "failed")
            if isinstance(failed.failure, OperationRefused) and failed.failure.unsupported:
                if generating:  # counted before _learn, which may end the search (an init it cannot narrow)
                    self.tally.skipped += 1
                self._learn(ops[failed.index], failed.failure.error)
                return "skip"
            return self._crashed(initial, trace, failed, generating)
        if generating:
            agreeing = answered[:-1] if divergence is not None else answered  # the last one answered diverged
            broken = {divergence.rule} if divergence is not None else set()
            self.tally.rules.add(set().union(*(answer_rules(ops[i], answers[i]) for i in agreeing)) - broken, "passed")
        if divergence is None:
            if generating:
                self.tally.passed += 1
                self.in_a_row = 0
            return "pass"
        outcome = self._diverged(divergence, generating)
        if generating:
            self.tally.rules.add([divergence.rule], "expected" if outcome == "xfail" else "failed")
        return outcome

    def _count(self, op: Op, expected: Response, actual: Response, answered: list[int]) -> None:
        """What the adapter executed (counted from its answers, issue 45 part 2)."""
        answered.append(len(answered))
        self.tally.operations[str(op.get("op"))] += 1
        self.tally.shapes.update(op_shapes(op))
        if self.coverage is not None:
            self.coverage.add_operation(op)
            self.coverage.add_answer(op, expected, actual)

    def _diverged(self, divergence: Divergence, generating: bool) -> str:
        if not generating:
            if divergence.key != self.shrinking:
                return "pass"  # another failure: not the one being shrunk
            self.divergences.append(divergence)
            return "fail"
        self.in_a_row = 0
        entry = None if self.expectations is None else self.expectations.entry_for(divergence.key)
        if entry is not None and entry.pins(divergence.signature):
            self.tally.xfailed += 1
            seen = self.tally.expected.get(divergence.key)
            if seen is None:
                self.tally.expected[divergence.key] = ExpectedSeen(entry.reason, 1, divergence)
                self.progress.say(f"an expected divergence ({divergence.key}: {entry.reason}); searching on")
            else:
                seen.count += 1
            return "xfail"
        self.tally.failed += 1
        self.shrinking = divergence.key
        self.divergences.append(divergence)
        self.progress.say(f"a divergence ({divergence.key}, {divergence.rule}): shrinking it")
        return "fail"

    def _crashed(self, initial: Op, trace: list[Op], failed: FailedAt, generating: bool) -> str:
        """The adapter failed on this trace: it is closed (what it wrote on its standard error kept), the crash
        counted, and a new adapter started for the next trace."""
        self.target.close()  # then all it wrote has been read
        # failed.index counts init as 0 and the final log as len(trace) + 1.
        upto = (*trace, {"op": "log"}) if failed.index > len(trace) else tuple(trace[: failed.index])
        crash = Crash(initial=initial, trace=upto, message=str(failed.failure), output=self.target.output_tail())
        outcome = self._crash_outcome(crash, generating)
        try:
            self.target = start_adapter(self.command, timeout=self.timeout, max_answer=self.max_answer)
        except AdapterError as restart:
            if outcome == "fail":
                self._crash_shrunk()
            self.tally.stopped = f"the adapter could not be restarted: {restart}"
            raise _Halt from None
        return outcome

    def _crash_outcome(self, crash: Crash, generating: bool) -> str:
        if not generating:
            if self.crash is None or crash.key != self.shrinking:
                return "pass"
            if len(crash.trace) <= len(self.crash.trace):
                self.crash = crash
            return "fail"
        self.tally.crashed += 1
        self.in_a_row += 1
        if crash.key in self.known_crashes or not crash.trace:  # known, or at init: nothing to shrink
            if crash.key not in self.known_crashes:
                self.known_crashes.add(crash.key)
                self.tally.crashes.append(crash)
                self.progress.say(f"the adapter crashed ({crash.message}); restarted, searching on")
            if self.in_a_row >= CRASHES_IN_A_ROW:
                self.tally.stopped = f"the adapter crashed on {self.in_a_row} traces in a row ({crash.key})"
                raise _Halt
            return "crash"
        self.progress.say(f"the adapter crashed ({crash.message}); shrinking the trace")
        self.shrinking, self.crash, self.shrink_runs, self.shrink_started = crash.key, crash, 0, time.monotonic()
        return "fail"

    def _learn(self, op: Op, words: str) -> None:
        """An ``unsupported`` answer: leave out what it refuses (the shape its words name, else the operation's
        shapes, else the operation); ``init`` with no shape left to leave out ends the search."""
        needs = refusal_needs(op, words, self.scope)
        if needs == ("op init",):
            self.tally.stopped = f"the adapter refused init of an agent with no optional shape ({words!r}): no trace can run"
            raise _Halt
        if not self.scope.missing(needs):
            self.scope = self.scope.refuse(needs)
            self.tally.dropped.append(Dropped(needs, words.strip(), str(op.get("op"))))
            self.progress.say(f"{op.get('op')} answered {words.strip()!r}: leaving out {', '.join(needs)} from now on")

    # ---------------------------------------------------------------- the rounds

    def run(self, seed: int | None) -> Divergence | None:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis.errors import Flaky, Unsatisfiable

        strategy = all_traces().map(lambda case: restrict_trace(case[0], case[1], self.scope))

        for round_ in range(SEARCH_ROUNDS):
            # Distinct traces are counted (the cut to the adapter's scope maps many draws to one trace, and the
            # traces run in earlier rounds come back first): room for repeats, then _Halt at the count.
            budget = DRAWS_PER_TRACE * self.examples + len(self.seen)

            # The derandomized search is seeded by a digest of this test's source (Hypothesis's function_digest):
            # every round replays the same sequence, so the traces run before are recognised and skipped.
            @settings(max_examples=budget, database=None, deadline=None, derandomize=seed is None, print_blob=False,
                      suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink))
            @given(strategy)
            def trace_agrees(case: tuple[Op, list[Op]]) -> None:
                self.body(*case)

            try:
                if seed is not None:
                    from hypothesis import seed as hypothesis_seed

                    hypothesis_seed(seed)(trace_agrees)()
                else:
                    trace_agrees()
                return self._shortest()  # the count ran
            except _Failing:  # shrunk: a divergence ends the search, a crash is recorded below
                pass
            except _Halt:  # the count reached, the search stopped, or a crash's shrink budget spent
                pass
            except Flaky:
                # Replayed, the failure did not happen again (the adapter is not deterministic, or a crash came
                # from its state): the shortest one seen stands.
                if not self.divergences and self.crash is None:
                    raise AdapterError("the adapter is not deterministic: a trace that failed passed when replayed") from None
            except Unsatisfiable:
                self.tally.stopped = self.tally.stopped or "every generated trace was refused: nothing could run"
            if self.divergences:
                return self._shortest()
            if self.crash is not None:
                self._crash_shrunk()  # as it stands; generation resumes in a new round
            if self.tally.stopped is not None or self.tally.run >= self.examples:
                return None
            if round_ == SEARCH_ROUNDS - 1:
                self.tally.stopped = f"the adapter crashed in {SEARCH_ROUNDS} ways; the search stopped there"
        return None

    def _shortest(self) -> Divergence | None:
        return min(self.divergences, key=lambda d: len(d.trace)) if self.divergences else None

    def _crash_shrunk(self) -> None:
        """The crash being shrunk is recorded as it now stands; generation resumes."""
        assert self.crash is not None and self.shrinking is not None
        self.known_crashes.add(self.shrinking)
        self.tally.crashes.append(self.crash)
        self.crash, self.shrinking = None, None
        if self.in_a_row >= CRASHES_IN_A_ROW:
            self.tally.stopped = f"the adapter crashed on {self.in_a_row} traces in a row"


def run_conform(command: str | None, *, examples: int = 40, seed: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                max_answer: int = MAX_ANSWER, coverage: Coverage | None = None, progress: TextIO | None = None,
                progress_every: float = 2.0, tally: Tally | None = None,
                expectations: Expectations | None = None) -> Divergence | None:
    """Drive ``command`` (None: the model in-process) with ``examples`` traces; the shrunk first unexpected
    divergence, or None.  ``tally`` (when given) counts the traces by outcome and records the expected
    divergences and the crashes.  An adapter that fails at start-up (``hello``) raises :class:`AdapterError`;
    one that fails later is a crash (``tally.crashes``)."""
    target = start_adapter(command, timeout=timeout, max_answer=max_answer)
    counts = tally if tally is not None else Tally()
    search = _Search(command=command, target=target, examples=examples, tally=counts, coverage=coverage,
                     expectations=expectations, progress=_Progress(progress, examples, progress_every),
                     timeout=timeout, max_answer=max_answer, scope=target.capabilities)
    counts.unknown = target.capabilities.unknown()
    if target.capabilities != Capabilities():
        counts.declared = target.capabilities.describe()
        search.progress.say(f"the adapter declares {target.capabilities.describe()}: the traces use only those")
    try:
        return search.run(seed)
    finally:
        search.target.close()
