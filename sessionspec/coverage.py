"""Rule coverage: which tests, properties and vectors check each rule (issue 7).

A rule counts as *checked* when something that fails on a broken model names
it:

- a unit test whose name carries the rule ID in identifier form
  (``test_SURF_5_rejects_missing_start``) or whose docstring quotes it
  (``"SURF-5"``);
- an implemented property (a ``P-...`` entry of a ``PROPERTY_PREDICATES``
  table) whose rule-book row lists the rule, provided some test mentions the
  property ID or its predicate (a predicate no test runs fails nothing);
- a conformance vector under ``vectors/`` that declares the rule in its
  ``rules`` list.

Everything is read statically (``ast`` for tests, plain text for vectors), so
computing coverage never runs a test.  The result is deterministic: sorted IDs
and paths.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, final

from sessionspec.conformance.vectors.command import vectors_by_rule
from sessionspec.spec.registry import PROPERTY_MODULES, Property, Rule, out_of_scope, properties, rules

ROOT: Final = Path(__file__).resolve().parents[1]
TESTS: Final = ROOT / "tests"
VECTORS: Final = ROOT / "vectors"


# A rule ID (SURF-5) or its identifier form (SURF_5); a property ID (P-SURF-5,
# P_SURF_5) is not a rule ID.
_RULE_ID: Final = re.compile(r"(?<![A-Za-z0-9])(?<!P[-_])([A-Z]{2,5})[-_](\d+)(?!\d)")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TestRef:
    """One test function (``path::qualname``) and the rule IDs it names."""

    path: str
    name: str
    rule_ids: frozenset[str]

    @property
    def node_id(self) -> str:
        return f"{self.path}::{self.name}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RuleCoverage:
    rule: Rule
    tests: tuple[str, ...]
    properties: tuple[str, ...]
    vectors: tuple[str, ...]

    @property
    def checked(self) -> bool:
        """At least one test or exercised property fails when the rule is broken."""
        return bool(self.tests or self.properties)


def rule_ids_in(text: str) -> frozenset[str]:
    """Rule IDs named in ``text``, in ``SURF-5`` or identifier ``SURF_5`` form."""
    return frozenset(f"{area}-{number}" for area, number in _RULE_ID.findall(text))


def _test_functions(tree: ast.Module) -> Iterable[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    yield f"{node.name}::{item.name}", item


def collect_tests(tests_dir: Path = TESTS) -> tuple[TestRef, ...]:
    """Every test function under ``tests_dir`` with the rule IDs its name or docstring names.

    A file that does not parse contributes nothing (the test run reports it).
    """
    found: list[TestRef] = []
    for path in sorted(tests_dir.rglob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        relative = path.relative_to(tests_dir.parent).as_posix()
        for name, function in _test_functions(tree):
            ids = rule_ids_in(name) | rule_ids_in(ast.get_docstring(function) or "")
            found.append(TestRef(path=relative, name=name, rule_ids=ids))
    return tuple(found)


@cache
def _test_texts() -> tuple[str, ...]:
    return tuple(path.read_text(encoding="utf-8", errors="replace") for path in sorted(TESTS.rglob("test_*.py")))


def property_predicates() -> dict[str, Callable[..., object]]:
    """The union of every ``PROPERTY_PREDICATES`` table that exists now."""
    table: dict[str, Callable[..., object]] = {}
    for module_name in PROPERTY_MODULES:
        predicates = getattr(importlib.import_module(module_name), "PROPERTY_PREDICATES", None)
        if isinstance(predicates, Mapping):
            table.update({str(k): v for k, v in predicates.items()})
    return dict(sorted(table.items()))


def exercised_properties(
    predicates: Mapping[str, Callable[..., object]], test_texts: Iterable[str]
) -> frozenset[str]:
    """The implemented properties that some test runs: it names the P-ID or the predicate."""
    texts = tuple(test_texts)
    exercised: set[str] = set()
    for prop_id, predicate in predicates.items():
        name = getattr(predicate, "__name__", "")
        if any(prop_id in text or (name and re.search(rf"\b{re.escape(name)}\b", text)) for text in texts):
            exercised.add(prop_id)
    return frozenset(exercised)


def collect_vectors(vectors_dir: Path = VECTORS) -> dict[str, tuple[str, ...]]:
    """Rule ID -> IDs of the vectors that declare it in their ``rules`` (only declared rules count)."""
    return vectors_by_rule(vectors_dir)


def properties_naming_no_rule(book: Iterable[Property] = ()) -> tuple[str, ...]:
    """Properties of the rule book whose row names no rule (each must name its rules)."""
    return tuple(p.id for p in (book or properties()) if not p.checks)


def unknown_property_ids(predicates: Mapping[str, object]) -> tuple[str, ...]:
    """``PROPERTY_PREDICATES`` keys that are not properties of the rule book."""
    known = {p.id for p in properties()}
    return tuple(sorted(k for k in predicates if k not in known))


def coverage(tests_dir: Path = TESTS, vectors_dir: Path = VECTORS) -> tuple[RuleCoverage, ...]:
    """Per rule (book order): the tests, exercised properties and vectors that name it."""
    tests = collect_tests(tests_dir)
    predicates = property_predicates()
    texts = tuple(p.read_text(encoding="utf-8", errors="replace") for p in sorted(tests_dir.rglob("test_*.py")))
    exercised = exercised_properties(predicates, texts)
    props_by_rule: dict[str, list[str]] = {}
    for prop in properties():
        if prop.id in exercised:
            for rule_id in prop.checks:
                props_by_rule.setdefault(rule_id, []).append(prop.id)
    vectors = collect_vectors(vectors_dir)
    result: list[RuleCoverage] = []
    for r in rules():
        result.append(
            RuleCoverage(
                rule=r,
                tests=tuple(sorted(t.node_id for t in tests if r.id in t.rule_ids)),
                properties=tuple(sorted(set(props_by_rule.get(r.id, ())))),
                vectors=vectors.get(r.id, ()),
            )
        )
    return tuple(result)


def unchecked(report: Iterable[RuleCoverage], areas: Iterable[str]) -> tuple[str, ...]:
    """Rule IDs of ``areas`` that no test and no exercised property checks
    (rules outside the model, ``spec.status``, ``OutOfScope``, are not asked for)."""
    wanted = set(areas)
    outside = out_of_scope()
    return tuple(c.rule.id for c in report if c.rule.area in wanted and not c.checked and c.rule.id not in outside)


def summary(report: Iterable[RuleCoverage]) -> str:
    """One line per area: rules, checked by tests/properties, with vectors (deterministic)."""
    per_area: dict[str, list[RuleCoverage]] = {}
    for c in report:
        per_area.setdefault(c.rule.area, []).append(c)
    lines = []
    for area, items in per_area.items():
        checked = sum(1 for c in items if c.checked)
        vectored = sum(1 for c in items if c.vectors)
        missing = [c.rule.id for c in items if not c.checked and c.rule.id not in out_of_scope()]
        outside = [c.rule.id for c in items if c.rule.id in out_of_scope()]
        tail = f"; outside the model: {', '.join(outside)}" if outside else ""
        tail += f"; unchecked: {', '.join(missing)}" if missing else ""
        lines.append(f"{area:5} {checked:3}/{len(items):<3} checked, {vectored:3} with vectors{tail}")
    return "\n".join(lines)
