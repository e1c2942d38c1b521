"""The registry's links say who defines each rule (issue 14).

One implementing definition per rule: ``@implements`` marks the one normative
definition in ``model/``; checker functions say ``@audits`` (sessionspec.check.audits);
properties claim only property IDs.  Every rule of the book is defined by the model,
audited by the checker, or says why not in spec/status.py (tests/spec/test_rule_status.py).
"""

from __future__ import annotations

from sessionspec.model.rules import IMPLEMENTATIONS
from sessionspec.spec.registry import load_definitions, rules


def _model_definitions(rule_id: str) -> list[str]:
    return sorted({f"{f.__module__}.{f.__qualname__}" for f in IMPLEMENTATIONS.get(rule_id, []) if f.__module__.startswith("sessionspec.model.")})


def test_no_rule_has_two_implementing_definitions() -> None:
    load_definitions()
    twice = {r.id: _model_definitions(r.id) for r in rules() if len(_model_definitions(r.id)) > 1}
    assert twice == {}


def test_only_model_functions_implement_rules() -> None:
    """Outside model/, @implements is for property IDs only; checkers use @audits."""
    load_definitions()
    ids = {r.id for r in rules()}
    outside = sorted(f"{rule_id}: {f.__module__}.{f.__qualname__}" for rule_id, fs in IMPLEMENTATIONS.items()
                     for f in fs if rule_id in ids and not f.__module__.startswith("sessionspec.model."))
    assert outside == []


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
    assert {name: len(rule_ids) for name, rule_ids in claimed.items() if len(rule_ids) > 3} == {}


def test_every_implementing_function_quotes_the_rule_it_implements() -> None:
    """Issue 28: a reviewer reads a rule's code beside its text, consensus-specs style: each
    implementing function's docstring holds the normative sentence of every rule it implements,
    verbatim (whitespace, backticks, asterisks and quote marks aside: Markdown and reST spell them
    differently).  8 of 157 did."""
    import inspect
    import re

    def plain(text: str) -> str:
        return re.sub(r'[`\s*"\\]+', " ", text).strip()

    load_definitions()
    by_id = {r.id: r for r in rules()}
    unquoted = sorted(f"{f.__module__}.{f.__qualname__}: {rule_id}" for rule_id, functions in IMPLEMENTATIONS.items()
                      if rule_id in by_id for f in functions
                      if plain(by_id[rule_id].sentence) not in plain(inspect.getdoc(f) or ""))
    assert unquoted == []
