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

from sessionspec.conformance.adapter.capabilities import refusal_needs, vector_needs
from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter, ProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationRefused, Response
from sessionspec.conformance.adapter.shapes import BY_NAME as SHAPES
from sessionspec.conformance.adapter.shapes import op_shapes
from sessionspec.conformance.conform.rules import divergence_rule
from sessionspec.conformance.vectors.diff import Diff, collapse_runs, diff, elide, expected_value, signature
from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.format import match, verdict_only
from sessionspec.conformance.vectors.rule_table import rule_sentence

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
    there are none.  ``skipped`` names what the adapter lacks (``op check``, ``feature D08``) and
    ``skip_reason`` says why in words: the adapter's own ``unsupported`` answer, verbatim, or what ``hello``
    did not declare; ``error`` is the adapter's refusal of an operation as malformed; ``expected`` the
    ``--expect`` reason."""

    vector_id: str
    rules: tuple[str, ...]
    failures: tuple[str, ...]
    group: str = ""
    skipped: tuple[str, ...] = ()
    steps: tuple[StepDiff, ...] = ()
    error: str | None = None
    expected: str | None = None
    skip_reason: str | None = None
    unpinned: str | None = None  # listed in --expect, but failing another way: "expected SIG, fails as SIG'"
    breaks: tuple[str, ...] = ()  # the rules the first difference breaks (conform/rules.py), apart from ``rules``
    description: str = ""
    initial: Mapping[str, Any] | None = None  # the vector's ``initial`` (a failure shows the session it ran in)
    step_ops: tuple[str, ...] = ()  # the operation of each step, in order

    @property
    def signature(self) -> str | None:
        """How it fails (diff.signature of its first failing step), None when it does not."""
        first = next((s for s in self.steps if s.diffs), None)
        return None if first is None else signature(str(first.op.get("op")), first.diffs)

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
        return VectorResult(vector_id=vector["id"], rules=rules, failures=(), group=group, skipped=missing,
                            description=str(vector.get("description", "")),
                            skip_reason=f"not declared in hello: {', '.join(missing)}")
    failures: list[str] = []
    steps: list[StepDiff] = []
    breaks: tuple[str, ...] = ()
    description = str(vector.get("description", ""))
    step_ops = tuple(str(step["op"].get("op")) for step in vector["steps"])
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
                    aligned = tuple(diff(step["expect"], response))
                    steps.append(StepDiff(index, op, aligned))
                    breaks = breaks or _breaks(step["expect"], response, [d.text for d in aligned] or found, op, rules)
    except OperationRefused as refused:
        if refused.unsupported:  # the adapter's words are the reason; what they name is what it lacks
            return VectorResult(vector_id=vector["id"], rules=rules, failures=(), group=group, description=description,
                                skipped=refusal_needs(op, refused.error, adapter.capabilities),
                                skip_reason=refused.error.strip())
        failures.append(f"{where}: {refused}")
        steps.append(StepDiff(-1 if where == "init" else int(where.split()[1]), op,
                              (Diff("$", None, refused.error[:160], f"error answer: {refused}"),)))
        return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures), group=group,
                            steps=tuple(steps), error=refused.error, description=description, initial=vector["initial"],
                            step_ops=step_ops)
    except AdapterError as failed:
        raise AdapterError(f"vector {vector['id']}, {where}: {failed}") from None
    return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures), group=group, steps=tuple(steps),
                        breaks=breaks, description=description, initial=vector["initial"], step_ops=step_ops)


def _breaks(pattern: Any, response: Response, mismatches: Sequence[str], op: Mapping[str, Any],
            named: Sequence[str]) -> tuple[str, ...]:
    """The rule a failing step's first difference breaks (best effort): conform/rules.py's mapping of the
    difference (from the value the expectation stands for and the aligned differences, whose paths name the
    field that differs); when the vector does not name that rule but names the rule of a shape the step's
    operation carries (an ``empty`` reply: DER-5, a request mutation: WIRE-3), that one."""
    value = expected_value(pattern)
    if isinstance(pattern, dict) and isinstance(pattern.get("reject"), dict):
        value = {"reject": {"rules": [pattern["reject"].get("rule")]}}
    expected = value if isinstance(value, dict) else {}
    mapped = divergence_rule(expected, response, [m for m in mismatches if not verdict_only(m)] or list(mismatches),
                             None, op, None)
    if mapped in named:
        return (mapped,)
    shaped = sorted({SHAPES[s].rule for s in op_shapes(op) if s in SHAPES} & set(named))
    return tuple(shaped) or (mapped,)


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
    """``result`` with its ``--expect`` reason (a skipped vector stays skipped: it did not run).  A failure
    whose signature is not the one its entry pins stays a failure (``unpinned`` says how it differs)."""
    if expectations is None or result.skipped:
        return result
    entry = expectations.entry_for(result.vector_id)
    if entry is None:
        return result
    found = result.signature
    if result.passed or found is None or entry.pins(found):
        return replace(result, expected=entry.reason)
    return replace(result, unpinned=f"listed ({entry.reason}) as failing @{entry.signature}, but fails @{found}")


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


def session_line(initial: Mapping[str, Any], earlier: Sequence[str]) -> str:
    """The session a failing step ran in: the ``init`` (the agent, elided; a seed log by its length), then the
    operations of the steps before it: what the step's expected answer depends on besides the operation."""
    agent = initial.get("agent")
    log = initial.get("log")
    text = "in force: init " + json.dumps(elide({"agent": agent if isinstance(agent, Mapping) else {}}), sort_keys=True,
                                           ensure_ascii=False)
    if isinstance(log, list) and log:
        text += f" with a seed log of {len(log)} line{'s' if len(log) != 1 else ''} (initial.log)"
    if earlier:
        text += f", then step{'s' if len(earlier) > 1 else ''} " + ", ".join(f"{i} {op}" for i, op in enumerate(earlier))
    return text


def failure_lines(result: VectorResult, limit: int | None = 8) -> list[str]:
    """The readable report of a failing vector, the same in the CLI and the pytest plugin: its description,
    the rule its first difference breaks with the rule's sentence, the rules it exercises (with ``limit`` None,
    each with its sentence), the session the failing step ran in (session_line), then for each failing step the whole
    operation sent (long strings elided in the middle) and its differences (aligned lists, runs of missing
    or extra items folded); at most ``limit`` differences, then ``… N more`` (``None``: all)."""
    lines: list[str] = [result.description] if result.description else []
    lines += [f"breaks {rule_sentence(rule)}" for rule in result.breaks]
    named = [r for r in result.rules if r not in result.breaks]
    if named and limit is None:  # -v: each rule the vector names, with its sentence
        lines += [f"exercises {rule_sentence(rule)}" for rule in named]
    elif named:
        lines.append(f"exercises {', '.join(named)}")
    if result.unpinned:
        lines.append(result.unpinned)
    first = next((step.step for step in result.steps), -1)
    if first >= 0 and (result.initial or first > 0):
        lines.append(session_line(result.initial or {}, result.step_ops[:first]))
    shown = 0
    total = 0
    for step in result.steps:
        name = "init" if step.step < 0 else f"step {step.step}"
        lines.append(f"{name}: sent {json.dumps(elide(dict(step.op)), sort_keys=True, ensure_ascii=False)}")
        texts = collapse_runs([item.text for item in step.diffs])
        total += len(texts)
        for text in texts:
            if limit is not None and shown >= limit:
                break
            lines.append(f"  {text}")
            shown += 1
    if limit is not None and total > shown:
        lines.append(f"… {total - shown} more (-v shows all)")
    if result.signature is not None:
        lines.append(f"signature: {result.signature}")
    return lines
