"""One answer to "what defines rule X, what checks it" (issue 28): spec.status.STATUS and the links
on the functions (@implements, @decides) agree, for every rule and property of the book."""

from __future__ import annotations

import ast
from pathlib import Path

from sessionspec.model.rules import IMPLEMENTATIONS
from sessionspec.spec.decidability import DECIDED_WITH_DEPLOYMENT, decidability
from sessionspec.spec.registry import deciders, load_definitions, properties, rules
from sessionspec.spec.status import (
    STATUS,
    Audited,
    Defined,
    NotDefined,
    OutOfScope,
    WithDeployment,
)

ROOT = Path(__file__).resolve().parents[2]


def _definitions(rule_id: str) -> set[str]:
    load_definitions()
    return {f"{f.__module__}.{f.__qualname__}" for f in IMPLEMENTATIONS.get(rule_id, [])}


def test_the_table_has_exactly_the_books_ids() -> None:
    assert set(STATUS) == {r.id for r in rules()} | {p.id for p in properties()}


def test_every_key_is_a_literal() -> None:
    """Keys built by f-strings or ** expansions cannot be found by grep (issue 28)."""
    tree = ast.parse((ROOT / "spec" / "status.py").read_text(encoding="utf-8"))
    table = next(node.value for node in ast.walk(tree)
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "STATUS")
    assert isinstance(table, ast.Dict)
    assert all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in table.keys)
    assert len(table.keys) == len(STATUS)


def test_defined_exactly_when_a_function_implements_it() -> None:
    wrong = {rid: (type(status.model).__name__, sorted(_definitions(rid)))
             for rid, status in STATUS.items() if isinstance(status.model, Defined) != bool(_definitions(rid))}
    assert wrong == {}


def test_rules_are_defined_in_model_and_properties_in_spec() -> None:
    misplaced = {rid: sorted(names) for rid in STATUS if (names := _definitions(rid))
                 and not all(n.startswith("sessionspec.spec." if rid.startswith("P-") else "sessionspec.model.") for n in names)}
    assert misplaced == {}


def test_out_of_scope_is_for_rules_only() -> None:
    assert not [rid for rid, status in STATUS.items() if rid.startswith("P-") and isinstance(status.model, OutOfScope)]


def test_audited_exactly_when_a_function_decides_it() -> None:
    links = deciders()
    wrong = {rid: type(status.log).__name__ for rid, status in STATUS.items()
             if isinstance(status.log, Audited | WithDeployment) != bool(links.get(rid))}
    assert wrong == {}


def test_the_deployments_rules_are_those_its_definitions_decide() -> None:
    """Issue 44, item 3: DECIDED_WITH_DEPLOYMENT lists exactly the rules a definition of
    ``model.compaction.obligation`` (what ``check --deployment`` runs) decides; a rule only the deployment
    decides is WithDeployment, and ``sessionspec rules`` says which: log, log+deployment, deployment, never."""
    links = deciders()
    by_deployment = {rid for rid, functions in links.items()
                     if any(f.__module__ == "sessionspec.model.compaction.obligation" for f in functions)}
    assert set(DECIDED_WITH_DEPLOYMENT) == by_deployment
    only = {rid for rid, status in STATUS.items() if isinstance(status.log, WithDeployment)}
    assert only <= by_deployment
    assert {decidability(rid) for rid in by_deployment} == {"log+deployment", "deployment"}
    assert decidability("WIRE-1") == "request-only" and decidability("SURF-3") == "log" and decidability("CMP-8") == "deployment"


def test_the_model_decides_every_audited_rule_and_nothing_else_does() -> None:
    """Issue 44: ``check`` runs the model's definitions.  Every rule ``check`` decides (audited, or with the
    deployment) is decided by ``@decides`` functions of ``sessionspec.model``; the checker has no link mechanism
    of its own left (``sessionspec.check.audits`` is gone), so no rule can be decided by checker code."""
    import importlib.util

    links = deciders()
    decided = {rid for rid, status in STATUS.items() if isinstance(status.log, Audited | WithDeployment)}
    assert sorted(rid for rid in decided if not links.get(rid)) == []
    outside = sorted(f"{rid}: {f.__module__}.{f.__qualname__}" for rid, fs in links.items() for f in fs
                     if not f.__module__.startswith("sessionspec.model."))
    assert outside == []
    assert importlib.util.find_spec("sessionspec.check.audits") is None


def test_every_audit_link_names_a_registered_rule_property_or_quirk() -> None:
    from sessionspec.spec.registry import quirks

    known = set(STATUS) | {q.id for q in quirks()}
    assert sorted(set(deciders()) - known) == []


def test_a_reported_as_names_a_rule_or_a_non_finding() -> None:
    for rid, status in STATUS.items():
        if isinstance(status.log, Audited) and status.log.reported_as is not None:
            assert status.log.reported_as in STATUS or status.log.reported_as in ("note", "unknown"), rid


def test_a_reason_is_given_whenever_the_answer_is_no() -> None:
    for rid, status in STATUS.items():
        if isinstance(status.model, (OutOfScope, NotDefined)):
            assert status.model.reason.strip(), rid


def test_every_function_a_reason_names_exists() -> None:
    """A reason or part may point at a function in prose ("reasons by sessionspec.check.x.f"); when the
    function moves, the prose must follow (issue 28: the old tables named 60 functions wrongly)."""
    import importlib
    import importlib.util
    import re

    from sessionspec.spec.status import NotYet, Undecidable

    texts = []
    for status in STATUS.values():
        for facet in (status.model, status.log):
            match facet:
                case Audited(part=text) | WithDeployment(part=text) | Undecidable(reason=text) | NotYet(reason=text) | OutOfScope(reason=text) | NotDefined(reason=text):
                    texts.append(text)
                case _:
                    pass
    missing = []
    for dotted in sorted({m for text in texts for m in re.findall(r"\b(?:sessionspec|model)(?:\.\w+)+", text)}):
        module, _, name = dotted.rpartition(".")
        # The texts name the model from the package (docs/index.md): model.x is sessionspec.model.x.
        module = f"sessionspec.{module}" if module.split(".")[0] == "model" else module
        try:
            found = hasattr(importlib.import_module(module), name)
        except ModuleNotFoundError:
            found = importlib.util.find_spec(dotted) is not None
        if not found:
            missing.append(dotted)
    assert missing == []
