"""How ``conform`` shows what it found, the same in the command line and the pytest plugin: the whole
operation in force (long strings elided in the middle), the rule's sentence, the aligned differences with
runs of missing or extra items folded, the line to put in an expectations file, and the trace (issue 45,
part 4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sessionspec.conformance.conform.outcome import Crash, Divergence, Tally
from sessionspec.conformance.vectors.diff import collapse_runs, elide
from sessionspec.conformance.vectors.rule_table import rule_sentence


def op_text(op: Mapping[str, Any]) -> str:
    """An operation on one line, whole, its long strings elided in the middle."""
    return json.dumps(elide(dict(op)), sort_keys=True, ensure_ascii=False)


def divergence_lines(divergence: Divergence, limit: int | None = 8) -> list[str]:
    """The operation sent, the rule it maps to with its sentence, its differences from the model's answer
    (aligned lists, runs folded), at most ``limit`` of them then ``… N more`` (``None``: all), and the
    expectations line that would expect it."""
    lines = [f"sent: {op_text(divergence.op)}", f"maps to {rule_sentence(divergence.rule)} (best effort: read the paths)"]
    diffs = collapse_runs([d.text for d in divergence.diffs]) or list(divergence.mismatches)
    lines += [f"  {d}" for d in (diffs if limit is None else diffs[:limit])]
    if limit is not None and len(diffs) > limit:
        lines.append(f"… {len(diffs) - limit} more (-v shows all)")
    lines.append(f"expect with: {divergence.key}  <reason>")
    return lines


def trace_lines(initial: Mapping[str, Any], trace: tuple[Mapping[str, Any], ...]) -> list[str]:
    return [op_text({"op": "init", **initial}), *(op_text(op) for op in trace)]


def crash_lines(crash: Crash) -> list[str]:
    """A crash: what the driver saw, the trace that led to it, and the end of the adapter's standard error."""
    where = "init" if not crash.trace else f"operation {len(crash.trace)} of the trace ({crash.op.get('op')})"
    lines = [f"CRASH ({crash.key}) on {where}: {crash.message}", "trace (restarted after it; the search went on):"]
    lines += [f"    {line}" for line in trace_lines(crash.initial, crash.trace)]
    if crash.output.strip():
        lines.append("the adapter's standard error (its end):")
        lines += [f"    | {line}" for line in crash.output.splitlines()]
    else:
        lines.append("the adapter wrote nothing on its standard error")
    return lines


def expected_lines(tally: Tally, verbose: bool) -> list[str]:
    """The expected divergences seen (the search went on past them)."""
    lines: list[str] = []
    for key, seen in sorted(tally.expected.items()):
        lines.append(f"XFAIL {key} ({seen.reason}): seen in {seen.count} trace(s), first at operation "
                     f"{seen.first.index} of a {len(seen.first.trace)}-operation trace")
        if verbose:
            lines += [f"    {line}" for line in divergence_lines(seen.first, None)[:-1]]
    return lines


__all__ = ["crash_lines", "divergence_lines", "expected_lines", "op_text", "rule_sentence", "trace_lines"]
