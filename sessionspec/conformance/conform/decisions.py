"""Which decisions of the model a ``conform`` run reached (issue 43 item 3): the decision table's reachable
outcomes (spec/decision_table.py) against those the model took while it answered the run's traces.

The model runs instrumented for the whole run (spec/decision_probe.py ``recording``): every answer it gives as the
oracle counts, the shrinking phase's too.  This says how much of the model the run exercised; it is not a proof
that the implementation took the same decisions (its answers are compared, not its code).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SHOWN_MODULES = 12  # modules named in the text line, most missing first


@contextmanager
def decisions_taken() -> Iterator[dict[str, Any]]:
    """Run the block with the model instrumented; the yielded dict is filled with the summary on exit."""
    from sessionspec.decisions.trace import DecisionCoverage

    summary: dict[str, Any] = {}
    with DecisionCoverage() as coverage:
        yield summary
        summary.update(summarise(coverage.reached()))


def summarise(reached: frozenset[str]) -> dict[str, Any]:
    """Reachable and reached outcomes, the missing ones counted per model module, and how many of those the adapter
    protocol cannot reach at all (a group of spec/decision_not_by_vectors.py says why), JSON-ready."""
    from sessionspec.spec.decision_not_by_vectors import group_of
    from sessionspec.spec.decision_table import reachable_outcomes

    reachable = reachable_outcomes()
    missing = reachable - reached
    by_module = Counter(outcome.split(":", 1)[0] for outcome in missing)
    return {"reachable": len(reachable), "reached": len(reachable & reached), "missing": len(missing),
            "missingByModule": dict(sorted(by_module.items(), key=lambda kv: (-kv[1], kv[0]))),
            "missingOutOfReach": sum(1 for outcome in missing if group_of(outcome) is not None)}


def decision_lines(summary: dict[str, Any]) -> list[str]:
    reachable, reached = summary["reachable"], summary["reached"]
    share = 100.0 * reached / reachable if reachable else 100.0
    lines = [f"decisions: the model took {reached} of its {reachable} reachable decision outcomes ({share:.1f} %) "
             "answering this run (docs/decisions.md)"]
    if summary.get("missingOutOfReach"):
        lines.append(f"  {summary['missingOutOfReach']} of the {summary['missing']} not reached no trace of the adapter protocol can "
                     "reach (their groups in docs/decisions.md say why)")
    if summary["missing"]:
        shown = list(summary["missingByModule"].items())[:SHOWN_MODULES]
        more = len(summary["missingByModule"]) - len(shown)
        lines.append("  not reached, by module: " + ", ".join(f"{m} {n}" for m, n in shown) + (f", {more} more" if more > 0 else ""))
    return lines
