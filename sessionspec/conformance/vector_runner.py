"""Running vectors against an adapter: one ``init`` then each step, matching the answers
against the expectation patterns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

from sessionspec.conformance.driver import InProcessAdapter, ProcessAdapter
from sessionspec.conformance.protocol import AdapterError
from sessionspec.conformance.vector_format import (
    match,
)

# --------------------------------------------------------------------------- running


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VectorResult:
    vector_id: str
    rules: tuple[str, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def run_vector(adapter: ProcessAdapter | InProcessAdapter, vector: Mapping[str, Any]) -> VectorResult:
    rules = tuple(vector["rules"])
    failures: list[str] = []
    try:
        first = adapter.call({"op": "init", **vector["initial"]})
        if "reject" in first:
            failures.append(f"init: rejected {first['reject']}")
        for index, step in enumerate(vector["steps"]):
            if failures:
                break
            response = adapter.call(step["op"])
            if "expect" in step:
                failures += [f"step {index} ({step['op']['op']}): {m}" for m in match(step["expect"], response)]
    except AdapterError as failed:
        failures.append(f"adapter: {failed}")
    return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures))


def run_vectors(files: Sequence[Mapping[str, Any]], adapter_command: str | None, *, stop_at_first: bool = False
                ) -> list[VectorResult]:
    """Run every vector of ``files`` against one adapter process (``None``: the model in-process)."""
    adapter: ProcessAdapter | InProcessAdapter = InProcessAdapter() if adapter_command is None else ProcessAdapter(adapter_command)
    results: list[VectorResult] = []
    try:
        for document in files:
            for vector in document["vectors"]:
                result = run_vector(adapter, vector)
                results.append(result)
                if stop_at_first and not result.passed:
                    return results
                if any(f.startswith("adapter:") for f in result.failures):
                    adapter.close()
                    adapter = InProcessAdapter() if adapter_command is None else ProcessAdapter(adapter_command)
    finally:
        adapter.close()
    return results
