"""The per-rule conformance report (issue 46, part 6): rule -> passed / failed / skipped, as test262 and
Bowtie users read a run ("PFX-2: 12/14 passed").

``vectors run`` counts vectors (each vector counts for every rule it names); ``conform`` counts traces (a
trace counts for the rules the model's answers show it reached: passed when they agreed, failed for the
rule its divergence maps to, skipped when the adapter refused it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

OUTCOMES: Final = ("passed", "failed", "skipped", "expected")
FARED: Final = ("passed", "passedWhereRun", "failed", "expected", "skipped")  # RuleTable.fared's classes


def rule_sentence(rule: str) -> str:
    """``RULE: its normative first sentence`` (the rule ID alone when it is not in the registry)."""
    from sessionspec.spec.registry import rule as registered

    try:
        sentence = registered(rule).sentence
    except KeyError:
        return rule
    return f"{rule}: {sentence if len(sentence) <= 200 else sentence[:199] + '…'}"


def rule_order(rule: str) -> tuple[str, int]:
    area, _, number = rule.rpartition("-")
    return (area, int(number) if number.isdigit() else 0)


@dataclass(slots=True)
class RuleTable:
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, rules: Iterable[str], outcome: str) -> None:
        assert outcome in OUTCOMES, outcome
        for rule in set(rules):
            self.counts.setdefault(rule, Counter())[outcome] += 1

    def rows(self) -> list[tuple[str, int, int, int, int]]:
        return [(rule, *(self.counts[rule][o] for o in OUTCOMES))  # type: ignore[misc]
                for rule in sorted(self.counts, key=rule_order)]

    def fared(self) -> dict[str, int]:
        """The rules counted by how they fared, each rule in exactly one class (so the classes add up to the
        rules in the table): ``failed`` (a failure), ``expected`` (failing only as expected), ``passed`` (every
        one ran and passed), ``passedWhereRun`` (passed where it ran, some skipped), ``skipped`` (only skipped)."""
        classes = Counter({name: 0 for name in FARED})
        for _, passed, failed, skipped, expected in self.rows():
            classes["failed" if failed else "expected" if expected else
                    ("passedWhereRun" if skipped else "passed") if passed else "skipped"] += 1
        return dict(classes)

    def lines(self, unit: str, *, every: bool = False) -> list[str]:
        """A count of the rules by how they fared, then the table: every rule with ``every``, else the rules
        with a failure or an expected failure.  ``unit`` names what is counted (vectors, traces)."""
        rows = self.rows()
        if not rows:
            return []
        fared = self.fared()
        lines = [f"per rule ({unit}): {fared['passed']} of {len(rows)} rules all passed, "
                 f"{fared['passedWhereRun']} passed where they ran (others skipped), {fared['failed']} with a failure, "
                 f"{fared['expected']} failing only as expected, {fared['skipped']} only skipped"
                 + ("" if every else " (-v: every rule)")]
        shown = rows if every else [r for r in rows if r[2] or r[4]]
        if shown:
            lines.append(f"  {'rule':10} {'passed':>7} {'failed':>7} {'skipped':>8} {'expected':>9}")
            lines += [f"  {rule:10} {p:>7} {f:>7} {s:>8} {e:>9}" for rule, p, f, s, e in shown]
        return lines

    def as_json(self) -> list[dict[str, object]]:
        return [{"rule": rule, "passed": p, "failed": f, "skipped": s, "expected": e} for rule, p, f, s, e in self.rows()]


__all__ = ["FARED", "OUTCOMES", "RuleTable", "rule_order", "rule_sentence"]
