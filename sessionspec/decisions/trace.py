"""Decision coverage of protocol traces: the hook ``conform`` can call (issue 43 item 3).

``conform`` runs the model beside the implementation; under :class:`DecisionCoverage` every model run
it makes is counted, per trace, against the decision table's reachable outcomes::

    with DecisionCoverage() as coverage:
        for trace in traces:
            with coverage.trace(trace_id):
                ...  # the model answers the trace (InProcessAdapter calls)
    coverage.report()  # {"reachable": N, "reached": M, "missing": [...], "byTrace": {...}}

:func:`trace_outcomes` is the one-trace form (init with ``initial``, then ``ops``, on a fresh model).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.spec.decision_probe import Probe, recording
from sessionspec.spec.decision_table import reachable_outcomes


class DecisionCoverage:
    """Counts the decision outcomes the model takes while the block runs, per named trace."""

    def __init__(self) -> None:
        self._recording = recording()
        self.probe: Probe | None = None

    def __enter__(self) -> DecisionCoverage:
        self.probe = self._recording.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._recording.__exit__(kind, value, tb)

    @contextmanager
    def trace(self, label: str) -> Iterator[None]:
        assert self.probe is not None, "DecisionCoverage.trace outside its with block"
        with self.probe.pinned(f"trace:{label}"):
            yield

    def reached(self) -> frozenset[str]:
        assert self.probe is not None
        return frozenset(self.probe.taken())

    def report(self) -> dict[str, Any]:
        """Reachable and reached outcomes, the missing ones, and each trace's outcomes (JSON-ready)."""
        assert self.probe is not None
        taken = self.probe.taken()
        reachable = reachable_outcomes()
        by_trace: dict[str, list[str]] = {}
        for outcome, pins in taken.items():
            for pin in pins:
                if pin.startswith("trace:"):
                    by_trace.setdefault(pin.removeprefix("trace:"), []).append(outcome)
        return {"reachable": len(reachable), "reached": len(reachable & set(taken)),
                "missing": sorted(reachable - set(taken)), "byTrace": {k: sorted(v) for k, v in sorted(by_trace.items())}}


def trace_outcomes(initial: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The outcomes the model takes answering one trace: ``init`` with ``initial``, then each of ``ops``."""
    with recording() as probe:
        adapter = InProcessAdapter()
        adapter.call({"op": "init", **initial})
        for op in ops:
            adapter.call(dict(op))
    return frozenset(probe.taken())
