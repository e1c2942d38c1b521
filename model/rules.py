"""Links from rule IDs to the functions that implement them, and to those that decide them in a log.

The normative sentences live in the rule book (``spec/rulebook.md``, read by
``spec.registry``); this module only records which model function carries which
rule, so the registry has one source of truth for each side.  ``implements``: the
function is the rule's definition.  ``decides``: ``sessionspec check`` runs this
definition to decide the rule in a log (issue 44: the checker is a driver of the
model's definitions, never a second recogniser beside them).  The decorators
return the function unchanged (no runtime cost, nothing for CrossHair to see).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

IMPLEMENTATIONS: dict[str, list[Callable[..., object]]] = {}


def implements(*rule_ids: str) -> Callable[[F], F]:
    def register(function: F) -> F:
        for rule_id in rule_ids:
            IMPLEMENTATIONS.setdefault(rule_id, []).append(function)
        return function

    return register


DECIDERS: dict[str, list[Callable[..., object]]] = {}


def decides(*rule_ids: str) -> Callable[[F], F]:
    def register(function: F) -> F:
        for rule_id in rule_ids:
            DECIDERS.setdefault(rule_id, []).append(function)
        return function

    return register
