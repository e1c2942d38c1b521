"""What decides each rule in a log: the model's definitions, and (until each area moves, issue 44) checker code.

``sessionspec.model.rules.decides`` links a rule to the definition of ``model/`` that ``check`` runs to
decide it: the checker is a driver of the model's definitions.  The rules whose decision has not yet moved
into the model are still decided by a checker function carrying ``@audits`` here; an audit fold class is
linked by a call after its body, ``audits(ID, ...)(TheFold)``, not by a class decorator (see
:mod:`sessionspec.check.folds`: mypyc would compile it as a plain Python class).
``tests/spec/test_rule_status.py`` holds the list of those rules, which only shrinks.  The audit table
(``audit_table.py``, docs/check.md) and docs/SPEC.md read :func:`sessionspec.check.deciders.deciders`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

AUDITS: dict[str, list[Callable[..., object]]] = {}


def audits(*rule_ids: str) -> Callable[[F], F]:
    def register(function: F) -> F:
        for rule_id in rule_ids:
            AUDITS.setdefault(rule_id, []).append(function)
        return function

    return register
