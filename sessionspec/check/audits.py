"""Links from rule IDs to the checker functions that audit them in a log.

``model.rules.implements`` marks the one normative definition of a rule (in
``model/``); a checker function that looks for a rule's violation in a log is
not a second definition of the rule, so it says ``@audits`` instead.  The
audit table (``audit_table.py``, docs/check.md) and docs/SPEC.md read these
links; the decorator returns the function unchanged.  An audit fold class is linked
by a call after its body, ``audits(ID, ...)(TheFold)``, not by a class decorator
(see :mod:`sessionspec.check.folds`: mypyc would compile it as a plain Python class).
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


def load_audits() -> dict[str, list[Callable[..., object]]]:
    """Every ``@audits`` link: the checker's pipeline imports every audit module (and the
    definitions it runs, :mod:`sessionspec.check.by_definition`), so importing it registers all."""
    import sessionspec.check.checker  # noqa: F401

    return AUDITS
