"""The registry's links say who defines each rule (issue 14).

One implementing definition per rule: ``@implements`` marks the one normative
definition in ``model/``; checker functions say ``@audits`` (sessionspec.check.audits);
properties claim only property IDs.  Every rule of the book is defined by the model,
audited by the checker, declared outside the model (spec/scope.md), or listed below
with the reason it has neither yet.
"""

from __future__ import annotations

import inspect

from model.rules import IMPLEMENTATIONS
from sessionspec.check.audits import AUDITS
from spec.registry import load_definitions, out_of_scope, rules

# Rules with no model definition and no audit, each with why (kept short on purpose: a
# rule that gains a definition or an audit must leave this table, the test says so).
NEITHER: dict[str, str] = {
    "LOG-5": "the order of an append's checks: the model rejects at the first failing check but the order is not yet linked",
    "DER-7": "constrains caching implementations: sessionspec.fast.derivation is checked against derive (tests/test_incremental.py)",
    "DER-9": "derived messages are JsonObject/tuple values, immutable by construction (tests/test_jsonval.py)",
    "WIRE-6": "a prohibition: the model does not model adapter-layer changes; nothing to define",
    "INV-2": "the harness's own runtime invariant and its check order; the model checks the stronger INV-5",
    "INV-6": "a corollary of INV-5, checked as the property requests_extend_within_instance (P-INV-4)",
    "CHK-8": "contiguity after expansion is LOG-1 on the expanded events; the pack round trip is a codec property",
    "LEG-10": "strict-mode refusal of hand-edited fixtures: not yet audited",
    "DIA-21": "a permission (MAY): nothing to define or audit",
    "FMT-4": "an example of the file format (FMT-1/FMT-5 define it)",
}


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


def test_every_rule_is_defined_audited_out_of_scope_or_listed_with_its_reason() -> None:
    load_definitions()
    import sessionspec.check.audit  # noqa: F401  (registers the audits)

    uncovered = {r.id for r in rules() if not _model_definitions(r.id) and r.id not in AUDITS and r.id not in out_of_scope()}
    assert uncovered == set(NEITHER)


def test_a_short_function_claims_at_most_three_rules() -> None:
    """A function under 15 lines that claims more than 3 rule IDs is a coarse link (issue 14)."""
    load_definitions()
    claims: dict[object, set[str]] = {}
    for rule_id, functions in IMPLEMENTATIONS.items():
        for function in functions:
            claims.setdefault(function, set()).add(rule_id)
    coarse = sorted(f"{getattr(f, '__qualname__', f)}: {sorted(ids)}" for f, ids in claims.items()
                    if len(ids) > 3 and len(inspect.getsource(f).splitlines()) < 15)  # type: ignore[arg-type]
    assert coarse == []
