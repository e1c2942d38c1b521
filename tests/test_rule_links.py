"""The registry's links say who defines each rule (issue 14).

One implementing definition per rule: ``@implements`` marks the one normative
definition in ``model/``; checker functions say ``@audits`` (sessionspec.check.audits);
properties claim only property IDs.  Every rule of the book is defined by the model,
audited by the checker, or says why not in spec/status.py (tests/test_rule_status.py).
"""

from __future__ import annotations

from model.rules import IMPLEMENTATIONS
from spec.registry import load_definitions, rules


def _model_definitions(rule_id: str) -> list[str]:
    return sorted({f"{f.__module__}.{f.__qualname__}" for f in IMPLEMENTATIONS.get(rule_id, []) if f.__module__.startswith("model.")})


def test_no_rule_has_two_implementing_definitions() -> None:
    load_definitions()
    twice = {r.id: _model_definitions(r.id) for r in rules() if len(_model_definitions(r.id)) > 1}
    assert twice == {}


def test_only_model_functions_implement_rules() -> None:
    """Outside model/, @implements is for property IDs only; checkers use @audits."""
    load_definitions()
    ids = {r.id for r in rules()}
    outside = sorted(f"{rule_id}: {f.__module__}.{f.__qualname__}" for rule_id, fs in IMPLEMENTATIONS.items()
                     for f in fs if rule_id in ids and not f.__module__.startswith("model."))
    assert outside == []


# Functions that still define more than three rules, each to be split into one named function per
# rule step (issue 28). They are the compaction and loop drivers that issue 29's contracts are being
# written on at the same time; the test fails when one of them is split (so the list shrinks) and
# when any other function claims more than three rules.
NOT_YET_SPLIT: dict[str, int] = {
    "model.compaction.region.compact_region": 8,
    "model.compaction.run.compact_if_needed": 4,
}


def test_no_function_defines_more_than_three_rules_at_any_length() -> None:
    """One named function per rule step (consensus-specs' process_x -> apply_x): a function that
    claims many rules hides which of its lines is which rule's.  Length does not excuse it."""
    load_definitions()
    ids = {r.id for r in rules()}
    claimed: dict[str, set[str]] = {}
    for rule_id, functions in IMPLEMENTATIONS.items():
        for f in functions:
            if rule_id in ids:
                claimed.setdefault(f"{f.__module__}.{f.__qualname__}", set()).add(rule_id)
    assert {name: len(rule_ids) for name, rule_ids in claimed.items() if len(rule_ids) > 3} == NOT_YET_SPLIT


def test_every_implementing_function_names_each_rule_it_implements() -> None:
    """docs/index.md: a reviewer reads a rule's code beside its text; a docstring that never names
    the rule (21 did, issue 28) leaves the reader to guess which lines are which rule's."""
    import inspect

    load_definitions()
    ids = {r.id for r in rules()}
    silent = sorted(f"{f.__module__}.{f.__qualname__}: {rule_id}" for rule_id, functions in IMPLEMENTATIONS.items()
                    if rule_id in ids for f in functions if rule_id not in (inspect.getdoc(f) or ""))
    assert silent == []
