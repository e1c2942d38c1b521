"""Running vectors against an adapter: one ``init`` then each step, matching the answers
against the expectation patterns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

from sessionspec.conformance.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.protocol import AdapterError, OperationRefused
from sessionspec.conformance.vector_format import match, verdict_only


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VectorResult:
    """One vector's outcome.  ``failures`` are every mismatch; a vector *agrees on verdicts* when the only
    mismatches are rejections that name no rule (``sessionspec-adapter/2``), and *agrees on rules* when
    there are none."""

    vector_id: str
    rules: tuple[str, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def verdicts_agree(self) -> bool:
        return all(verdict_only(f) for f in self.failures)


def run_vector(adapter: ProcessAdapter | InProcessAdapter, vector: Mapping[str, Any]) -> VectorResult:
    """``init`` then each step.  An ``error`` answer (an operation the adapter does not support) fails the
    vector; any other adapter failure raises :class:`AdapterError` naming the vector and step."""
    rules = tuple(vector["rules"])
    failures: list[str] = []
    where = "init"
    try:
        first = adapter.call({"op": "init", **vector["initial"]})
        if "reject" in first:
            failures.append(f"init: rejected {first['reject']}")
        for index, step in enumerate(vector["steps"]):
            if failures:
                break
            where = f"step {index}"
            response = adapter.call(step["op"])
            if "expect" in step:
                failures += [f"step {index} ({step['op']['op']}): {m}" for m in match(step["expect"], response)]
    except OperationRefused as refused:
        failures.append(f"{where}: {refused}")
    except AdapterError as failed:
        raise AdapterError(f"vector {vector['id']}, {where}: {failed}") from None
    return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures))


def start_adapter(adapter_command: str | None, *, timeout: float = DEFAULT_TIMEOUT,
                  max_answer: int = MAX_ANSWER) -> ProcessAdapter | InProcessAdapter:
    """The adapter (``None``: the model in-process), after a ``hello`` that names a protocol this driver reads."""
    if adapter_command is None:
        return InProcessAdapter()
    adapter = ProcessAdapter(adapter_command, timeout=timeout, max_answer=max_answer)
    try:
        adapter.hello()
    except AdapterError:
        adapter.close()
        raise
    return adapter


def run_vectors(files: Sequence[Mapping[str, Any]], adapter_command: str | None, *, stop_at_first: bool = False,
                timeout: float = DEFAULT_TIMEOUT, max_answer: int = MAX_ANSWER) -> list[VectorResult]:
    """Run every vector of ``files`` against one adapter process (``None``: the model in-process).
    Raises :class:`AdapterError` when the adapter fails (no answer in time, too large, not UTF-8 JSON, died)."""
    adapter = start_adapter(adapter_command, timeout=timeout, max_answer=max_answer)
    results: list[VectorResult] = []
    try:
        for document in files:
            for vector in document["vectors"]:
                result = run_vector(adapter, vector)
                results.append(result)
                if stop_at_first and not result.passed:
                    return results
    finally:
        adapter.close()
    return results
