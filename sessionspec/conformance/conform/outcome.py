"""What a ``conform`` run found, and what it ran: a divergence, a crash, the traces counted by outcome and
what the adapter executed (issue 45, parts 2-3; issue 43, part 4).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.vectors.build import Step, Vector, recorded_expectation
from sessionspec.conformance.vectors.diff import Diff, diff, signature
from sessionspec.conformance.vectors.rule_table import RuleTable

Op = dict[str, Any]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """A divergence: the trace up to the diverging operation (``trace[-1]``, or ``init`` when it is empty)."""

    initial: Op
    trace: tuple[Op, ...]
    index: int  # the diverging operation (into trace)
    mismatches: tuple[str, ...]
    expected: Response
    actual: Response
    rule: str  # the rule it maps to (best effort, conform/rules.py)

    @property
    def op(self) -> Op:
        """The operation whose answer diverged."""
        return self.trace[-1] if self.trace else {"op": "init", **self.initial}

    @property
    def diffs(self) -> list[Diff]:
        """The aligned differences (vectors/diff.py) of its answer from the model's."""
        return diff(recorded_expectation(self.expected), self.actual)

    @property
    def signature(self) -> str:
        """How it fails: the operation and the first differing path (diff.signature), stable across traces."""
        return signature(str(self.op.get("op")), self.diffs)

    @property
    def key(self) -> str:
        """What an ``--expect`` entry names: ``conform/`` and the signature."""
        return f"conform/{self.signature}"

    def vector(self) -> Vector:
        """A replayable vector: the model's answers as expectations."""
        reference = InProcessAdapter()
        reference.call({"op": "init", **self.initial})
        steps = tuple(Step(op=op, expect=recorded_expectation(reference.call(op))) for op in self.trace)
        return Vector(id="conform/divergence", rules=(self.rule,), description=f"diverged at operation {self.index}: "
                      + "; ".join(self.mismatches[:3]), initial=self.initial, steps=steps)


_CRASH_KINDS: Final = (
    ("no answer within", "timeout"), ("did not read the request", "timeout"), ("closed its output", "died"),
    ("stopped reading its input", "died"), ("exceeds the", "too-large"), ("not valid UTF-8", "not-utf8"),
    ("not a JSON line", "not-json"), ("nests deeper", "too-deep"), ("the answer is not {id", "wrong-id"),
    ("does not match the model's", "init-mismatch"), ("refused it as malformed", "error-answer"),
    ("cannot start adapter", "restart-failed"), ("names no protocol", "restart-failed"),
)


def crash_kind(message: str) -> str:
    """A crash's kind from the driver's message (the same kind on another trace is the same crash)."""
    return next((kind for text, kind in _CRASH_KINDS if text in message), "failed")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Crash:
    """The adapter failed on a trace (issue 43, part 4): it died, hung, answered malformed or answered an
    ``error``.  ``trace`` runs up to the operation it failed on (empty: ``init``); ``output`` is the end of
    what it wrote on its standard error."""

    initial: Op
    trace: tuple[Op, ...]
    message: str
    output: str = ""

    @property
    def op(self) -> Op:
        return self.trace[-1] if self.trace else {"op": "init", **self.initial}

    @property
    def key(self) -> str:
        return f"crash/{self.op.get('op')}/{crash_kind(self.message)}"


@final
@dataclass(frozen=True, slots=True)
class Dropped:
    """What an ``unsupported`` answer took out of the traces: the needs (``feature X``/``op Y``), the
    adapter's words verbatim, and the operation it answered."""

    needs: tuple[str, ...]
    words: str
    op: str

    def text(self) -> str:
        return f"{', '.join(self.needs)} ({self.op} answered {self.words!r})"


@dataclass(slots=True)
class ExpectedSeen:
    """An expected divergence (``--expect``): its entry's reason, how often it was seen, the first one."""

    reason: str
    count: int
    first: Divergence


@dataclass(slots=True)
class Tally:
    """What a run did with its traces (not the replays while shrinking): ``passed`` agreed with the model,
    ``failed`` diverged unexpectedly (the search stops at the first), ``xfailed`` diverged as ``--expect``
    lists (the search goes on), ``skipped`` used a shape or operation the adapter answered ``unsupported``
    to, ``crashed`` failed the adapter (it is restarted and the search goes on).  ``operations`` and
    ``shapes`` count what the adapter answered (ok or a rejection), not what was generated; ``dropped`` is
    what left the traces at run time (a *degraded* run); ``declared`` the scope ``hello`` declared."""

    passed: int = 0
    failed: int = 0
    xfailed: int = 0
    skipped: int = 0
    crashed: int = 0
    declared: str | None = None
    unknown: list[str] = field(default_factory=list)  # names hello declared that no operation or shape has
    dropped: list[Dropped] = field(default_factory=list)
    operations: Counter[str] = field(default_factory=Counter)
    shapes: Counter[str] = field(default_factory=Counter)
    expected: dict[str, ExpectedSeen] = field(default_factory=dict)
    crashes: list[Crash] = field(default_factory=list)
    stopped: str | None = None  # why the search ended before its count
    rules: RuleTable = field(default_factory=RuleTable)  # per rule: the traces that passed, failed, were skipped

    @property
    def run(self) -> int:
        """The traces the adapter ran to an outcome (not skipped)."""
        return self.passed + self.failed + self.xfailed + self.crashed

    @property
    def total(self) -> int:
        return self.run + self.skipped

    def lines(self) -> list[str]:
        """``38/41 traces passed, 1 failed, 2 skipped``, then the outcomes apart, what the adapter executed,
        and what narrowed the traces."""
        line = f"{self.passed}/{self.total} traces passed, {self.failed} failed, {self.skipped} skipped"
        if self.xfailed:
            line += f", {self.xfailed} diverged as expected"
        if self.crashed:
            line += f", {self.crashed} crashed the adapter"
        lines = [line]
        if self.operations:
            lines.append(f"executed by the adapter: {sum(self.operations.values())} operations ("
                         + ", ".join(f"{name} {n}" for name, n in sorted(self.operations.items())) + ")"
                         + ("; shapes: " + ", ".join(f"{name} {n}" for name, n in sorted(self.shapes.items()))
                            if self.shapes else "; no optional shape"))
        if self.declared is not None:
            lines.append(f"restricted to what the adapter declares: {self.declared}")
        if self.unknown:
            lines.append(f"UNKNOWN in hello (declares nothing; docs/conformance.md 1.1): {'; '.join(self.unknown)}")
        if self.dropped:
            lines.append("DEGRADED: left out at run time (their traces skipped, not failed): "
                         + "; ".join(d.text() for d in self.dropped))
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}")
        return lines


__all__ = ["Crash", "Divergence", "Dropped", "ExpectedSeen", "Tally", "crash_kind"]
