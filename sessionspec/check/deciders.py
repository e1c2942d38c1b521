"""Every function that decides a rule in a log (issue 44): the model's ``@decides`` definitions and the checker's
remaining ``@audits`` functions, for the audit table, docs/SPEC.md and the status tests.  A leaf of the
checker: nothing the checker runs imports it (it imports the whole pipeline, so that every link is made)."""

from __future__ import annotations

from collections.abc import Callable

import sessionspec.check.checker  # noqa: F401  (the pipeline imports every fold module: their @audits links are made)
from sessionspec.check.audits import AUDITS
from sessionspec.model.rules import DECIDERS
from sessionspec.spec.registry import load_definitions


def deciders() -> dict[str, list[Callable[..., object]]]:
    """Every function that decides a rule in a log: the model's ``@decides`` definitions (every module of
    ``model/`` loaded, as for the registry) and the checker's remaining ``@audits`` functions (the checker's
    modules loaded: importing the pipeline imports every audit module)."""
    load_definitions()
    merged: dict[str, list[Callable[..., object]]] = {rule_id: list(functions) for rule_id, functions in DECIDERS.items()}
    for rule_id, functions in AUDITS.items():
        merged.setdefault(rule_id, []).extend(functions)
    return merged
