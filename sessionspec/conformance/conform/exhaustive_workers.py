"""The workers of ``conform --exhaustive`` (exhaustive.py): each drives one adapter over the traces it takes
from the queue, and they share the outcome -- the first unexpected divergence in the run's order, the tally,
the crashes (issue 43: a crashed adapter is restarted and the run goes on).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from sessionspec.conformance.adapter.driver import InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused, Response
from sessionspec.conformance.adapter.shapes import op_shapes
from sessionspec.conformance.conform.compare import FailedAt, compare_trace
from sessionspec.conformance.conform.exhaustive_leaf import Leaf
from sessionspec.conformance.conform.outcome import Crash, Divergence, ExpectedSeen, Tally
from sessionspec.conformance.conform.search import CRASHES_IN_A_ROW
from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.runner import start_adapter

Op = dict[str, Any]


@dataclass(slots=True)
class Shared:
    """What the workers share: the first unexpected divergence (smallest index), the first failure that
    ends the run (an adapter that cannot be restarted), and the tally."""

    command: str | None
    timeout: float
    max_answer: int
    tally: Tally
    expectations: Expectations | None
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: int = 0
    diverged: int = 0
    found: tuple[int, Divergence, str] | None = None
    failure: AdapterError | None = None

    in_a_row: int = 0  # traces that crashed the adapter since the last one that did not

    def stop_before(self, index: int) -> bool:
        with self.lock:
            return (self.failure is not None or self.tally.stopped is not None
                    or (self.found is not None and self.found[0] < index))

    def count(self, op: Op, expected: Response, actual: Response) -> None:
        with self.lock:
            self.tally.operations[str(op.get("op"))] += 1
            self.tally.shapes.update(op_shapes(op))

    def outcome(self, leaf: Leaf, divergence: Divergence | None) -> None:
        with self.lock:
            self.done += 1
            self.in_a_row = 0
            if divergence is None:
                self.tally.passed += 1
                return
            entry = None if self.expectations is None else self.expectations.entry_for(divergence.key)
            if entry is not None and entry.pins(divergence.signature):
                self.tally.xfailed += 1
                seen = self.tally.expected.setdefault(divergence.key, ExpectedSeen(entry.reason, 0, divergence))
                seen.count += 1
                return
            self.tally.failed += 1
            self.diverged += 1
            if self.found is None or leaf.index < self.found[0]:
                self.found = (leaf.index, divergence, leaf.agent)

    def crashed(self, leaf: Leaf, failed: FailedAt, output: str) -> None:
        """The adapter failed on ``leaf`` (issue 43, part 4): counted, the first crash of each kind kept."""
        upto = (*leaf.trace, {"op": "log"}) if failed.index > len(leaf.trace) else leaf.trace[: failed.index]
        crash = Crash(initial=leaf.initial, trace=tuple(upto), message=str(failed.failure), output=output)
        with self.lock:
            self.done += 1
            self.tally.crashed += 1
            self.in_a_row += 1
            if crash.key not in {c.key for c in self.tally.crashes}:
                self.tally.crashes.append(crash)
            if self.in_a_row >= CRASHES_IN_A_ROW:
                self.tally.stopped = f"the adapter crashed on {self.in_a_row} traces in a row ({crash.key})"


def worker(adapter: ProcessAdapter | InProcessAdapter, work: queue.Queue[Leaf | None], shared: Shared) -> None:
    while (leaf := work.get()) is not None:
        if shared.stop_before(leaf.index):
            continue
        try:
            divergence = compare_trace(adapter, leaf.initial, leaf.trace, expected_answers=leaf.answers,
                                       with_log=adapter.capabilities.has_operation("log"), on_answer=shared.count)
        except FailedAt as failed:
            if isinstance(failed.failure, OperationRefused) and failed.failure.unsupported:
                with shared.lock:
                    shared.done += 1
                    shared.tally.skipped += 1
                continue
            adapter.close()
            shared.crashed(leaf, failed, adapter.output_tail())
            try:
                adapter = start_adapter(shared.command, timeout=shared.timeout, max_answer=shared.max_answer)
            except AdapterError as restart:
                with shared.lock:
                    shared.failure = shared.failure or restart
                    shared.tally.stopped = f"the adapter could not be restarted: {restart}"
                return
            continue
        shared.outcome(leaf, divergence)
    adapter.close()


__all__ = ["Shared", "worker"]
