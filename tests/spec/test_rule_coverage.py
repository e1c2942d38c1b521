"""Rule coverage in CI (issue 7): every rule of an enforced area is checked by a test or property.

Every area of the rule book is enforced: each rule the model decides (all but
``spec.status``, ``OutOfScope``) is named by a test or an exercised property, and has a
conformance vector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from sessionspec.coverage import (
    collect_tests,
    coverage,
    exercised_properties,
    properties_naming_no_rule,
    property_predicates,
    rule_ids_in,
    summary,
    unchecked,
    unknown_property_ids,
)
from sessionspec.spec.registry import rules

# Every area of the book: each rule the model decides is checked by a test or property.
ENFORCED_AREAS: Final = tuple(sorted({r.area for r in rules()}))


def test_enforced_areas_are_fully_checked() -> None:
    missing = unchecked(coverage(), ENFORCED_AREAS)
    assert not missing, (
        f"rules of {', '.join(ENFORCED_AREAS)} that no test names (test_<AREA>_<n>_... or the ID in a docstring) "
        f"and no exercised property checks: {', '.join(missing)}"
    )


def test_coverage_report_lists_every_area() -> None:
    """The report (printed with -s) has one line per area of the book; not asserted beyond that."""
    report = summary(coverage())
    print("\n" + report)
    areas = {r.area for r in rules()}
    assert {line.split()[0] for line in report.splitlines()} == areas


def test_every_property_names_its_rules() -> None:
    assert properties_naming_no_rule() == ()


def test_property_tables_use_known_property_ids() -> None:
    assert unknown_property_ids(property_predicates()) == ()


def test_vectors_per_rule() -> None:
    """Every rule the model decides (all but those spec/status.py puts out of scope) has a conformance vector."""
    from sessionspec.spec.registry import out_of_scope

    report = coverage()
    without = [c.rule.id for c in report if not c.vectors and c.rule.id not in out_of_scope()]
    assert not without, f"rules without a conformance vector: {', '.join(without)}"


def test_rule_ids_in_reads_both_spellings() -> None:
    assert rule_ids_in("test_SURF_5_rejects_missing_start") == {"SURF-5"}
    assert rule_ids_in("checks HDR-2 and WIRE-1") == {"HDR-2", "WIRE-1"}
    assert rule_ids_in("test_SURF_50_x") == {"SURF-50"}  # SURF-5 is not a prefix match of SURF-50
    assert rule_ids_in("test_regression_P_LOOP_1_fork and P-DER-2") == frozenset()  # property IDs are not rule IDs


def test_collect_tests_uses_names_and_docstrings(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_example.py").write_text(
        'def test_DER_4_order():\n    pass\n\n'
        'def test_other():\n    """Checks HDR-5."""\n\n'
        'class TestGroup:\n    def test_WIRE_2_prefix_first(self):\n        pass\n\n'
        'def helper_SURF_1():\n    pass\n',
        encoding="utf-8",
    )
    found = {t.node_id: t.rule_ids for t in collect_tests(tests)}
    assert found == {
        "tests/test_example.py::test_DER_4_order": {"DER-4"},
        "tests/test_example.py::test_other": {"HDR-5"},
        "tests/test_example.py::TestGroup::test_WIRE_2_prefix_first": {"WIRE-2"},
    }


def test_a_property_counts_only_when_some_test_runs_it() -> None:
    def canonical_idempotent() -> bool:
        return True

    predicates = {"P-HDR-1": canonical_idempotent, "P-HDR-2": canonical_idempotent}
    assert exercised_properties(predicates, ["assert canonical_idempotent(h)"]) == {"P-HDR-1", "P-HDR-2"}
    assert exercised_properties({"P-HDR-1": lambda: True}, ["nothing here"]) == frozenset()
    assert exercised_properties({"P-HDR-1": lambda: True}, ["# P-HDR-1"]) == {"P-HDR-1"}


def test_rules_outside_the_model_are_known_and_give_a_reason() -> None:
    """spec/status.py puts out of scope only rules of the book, each with its reason."""
    from sessionspec.spec.registry import out_of_scope, rule_ids

    outside = out_of_scope()
    assert set(outside) <= rule_ids()
    assert all(len(reason) > 20 for reason in outside.values())
