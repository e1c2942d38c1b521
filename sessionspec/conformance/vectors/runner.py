"""Running vectors against an adapter: one ``init`` then each step, matching the answers
against the expectation patterns.

A vector that needs an operation or feature the adapter's ``hello`` did not declare, or whose operation
the adapter answers ``{"error": "unsupported"}``, is *skipped* (issue 27: not supported is not wrong);
``--expect`` turns a listed failure into ``xfail`` and a listed pass into ``xpass``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, final

from sessionspec.conformance.adapter.capabilities import vector_needs
from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused
from sessionspec.conformance.vectors.diff import Diff, diff
from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.format import match, verdict_only

STATUSES: Final = ("pass", "fail", "skip", "xfail", "xpass", "error")


@final
@dataclass(frozen=True, slots=True)
class StepDiff:
    """The readable differences of one step's answer: the step (``-1``: ``init``), the operation sent."""

    step: int
    op: Mapping[str, Any]
    diffs: tuple[Diff, ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VectorResult:
    """One vector's outcome.  ``failures`` are every mismatch; a vector *agrees on verdicts* when the only
    mismatches are rejections that name no rule (``sessionspec-adapter/2``), and *agrees on rules* when
    there are none.  ``skipped`` names what the adapter lacks (``op check``, ``feature D08``); ``error`` is
    the adapter's refusal of an operation as malformed; ``expected`` the ``--expect`` reason."""

    vector_id: str
    rules: tuple[str, ...]
    failures: tuple[str, ...]
    group: str = ""
    skipped: tuple[str, ...] = ()
    steps: tuple[StepDiff, ...] = ()
    error: str | None = None
    expected: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures and not self.skipped

    @property
    def verdicts_agree(self) -> bool:
        return not self.skipped and all(verdict_only(f) for f in self.failures)

    @property
    def status(self) -> str:
        """``pass``, ``fail``, ``skip``, ``xfail``, ``xpass`` or ``error`` (an ``error`` answer)."""
        if self.skipped:
            return "skip"
        if self.expected is not None:
            return "xpass" if self.passed else "xfail"
        if self.passed:
            return "pass"
        return "error" if self.error is not None else "fail"

    @property
    def counts_as_failure(self) -> bool:
        """Whether the run's exit code is 1 for it: a failure not listed in ``--expect``, or a listed one that
        passes (the expectations file is out of date)."""
        return self.status in ("fail", "error", "xpass")


def run_vector(adapter: ProcessAdapter | InProcessAdapter, vector: Mapping[str, Any], group: str = "") -> VectorResult:
    """``init`` then each step.  A vector needing an undeclared capability is skipped unrun; an
    ``unsupported`` answer skips it; another ``error`` answer fails it; any other adapter failure raises
    :class:`AdapterError` naming the vector and step."""
    rules = tuple(vector["rules"])
    missing = adapter.capabilities.missing(vector_needs(vector))
    if missing:
        return VectorResult(vector_id=vector["id"], rules=rules, failures=(), group=group, skipped=missing)
    failures: list[str] = []
    steps: list[StepDiff] = []
    where, op = "init", {"op": "init", **vector["initial"]}
    try:
        first = adapter.call(op)
        if "reject" in first:
            failures.append(f"init: rejected {first['reject']}")
            steps.append(StepDiff(-1, op, (Diff("$", "{length}", json.dumps(first, sort_keys=True)[:160],
                                                f"init: rejected {first['reject']}"),)))
        for index, step in enumerate(vector["steps"]):
            if failures:
                break
            where, op = f"step {index}", step["op"]
            response = adapter.call(op)
            if "expect" in step:
                found = match(step["expect"], response)
                failures += [f"step {index} ({op['op']}): {m}" for m in found]
                if found:
                    steps.append(StepDiff(index, op, tuple(diff(step["expect"], response))))
    except OperationRefused as refused:
        if refused.unsupported:
            return VectorResult(vector_id=vector["id"], rules=rules, failures=(), group=group,
                                skipped=(f"op {op.get('op')}",))
        failures.append(f"{where}: {refused}")
        steps.append(StepDiff(-1 if where == "init" else int(where.split()[1]), op,
                              (Diff("$", None, refused.error[:160], f"error answer: {refused}"),)))
        return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures), group=group,
                            steps=tuple(steps), error=refused.error)
    except AdapterError as failed:
        raise AdapterError(f"vector {vector['id']}, {where}: {failed}") from None
    return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures), group=group, steps=tuple(steps))


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


def expect(result: VectorResult, expectations: Expectations | None) -> VectorResult:
    """``result`` with its ``--expect`` reason (a skipped vector stays skipped: it did not run)."""
    if expectations is None or result.skipped:
        return result
    reason = expectations.reason_for(result.vector_id)
    return result if reason is None else replace(result, expected=reason)


def run_vectors(files: Sequence[Mapping[str, Any]], adapter_command: str | None, *, stop_at_first: bool = False,
                timeout: float = DEFAULT_TIMEOUT, max_answer: int = MAX_ANSWER,
                expectations: Expectations | None = None) -> list[VectorResult]:
    """Run every vector of ``files`` against one adapter process (``None``: the model in-process).
    Raises :class:`AdapterError` when the adapter fails (no answer in time, too large, not UTF-8 JSON, died)."""
    adapter = start_adapter(adapter_command, timeout=timeout, max_answer=max_answer)
    try:
        return run_on(adapter, files, stop_at_first=stop_at_first, expectations=expectations)
    finally:
        adapter.close()


def run_on(adapter: ProcessAdapter | InProcessAdapter, files: Sequence[Mapping[str, Any]], *,
           stop_at_first: bool = False, expectations: Expectations | None = None) -> list[VectorResult]:
    """Every vector of ``files`` on a started ``adapter`` (which the caller closes)."""
    results: list[VectorResult] = []
    for document in files:
        for vector in document["vectors"]:
            result = expect(run_vector(adapter, vector, str(document.get("group", ""))), expectations)
            results.append(result)
            if stop_at_first and result.status in ("fail", "error"):
                return results
    return results


def failure_lines(result: VectorResult, limit: int | None = 8) -> list[str]:
    """The readable report of a failing vector, the same in the CLI and the pytest plugin: for each failing
    step the operation sent, then its differences (aligned lists); at most ``limit`` differences, then
    ``… N more`` (``None``: all)."""
    lines: list[str] = []
    shown = 0
    total = sum(len(s.diffs) for s in result.steps)
    for step in result.steps:
        name = "init" if step.step < 0 else f"step {step.step}"
        sent = json.dumps(dict(step.op), sort_keys=True, ensure_ascii=False)
        lines.append(f"{name}: sent {sent if len(sent) <= 200 else sent[:199] + '…'}")
        for item in step.diffs:
            if limit is not None and shown >= limit:
                break
            lines.append(f"  {item.text}")
            shown += 1
    if limit is not None and total > shown:
        lines.append(f"… {total - shown} more (-v shows all)")
    return lines
