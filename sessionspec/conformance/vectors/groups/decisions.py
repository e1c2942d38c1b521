"""The decision vectors (issue 43 item 3): traces the decision search kept because each pins an outcome of a
decision of the model that fewer than three vectors of distinct shapes pinned (sessionspec/decisions/search.py
writes the numbers of the kept candidates to decision_kept.json beside this module; they are drawn again here,
sessionspec/decisions/draws.py, and the model's answers, recorded here, are the expectations).

They join the group of their first operation: ``loop/decision/N`` (sessions, also seeded ones),
``codec/decision/N`` (compact, measure, replay, pack, repair, out-of-band appends) and ``check/decision/N``.
Each vector names the rules of the decisions it was kept for.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.vectors.build import Vector, record

KEPT: Final = Path(__file__).with_name("decision_kept.json")
FORMAT: Final = "sessionspec-decision-kept/1"


@cache
def _kept() -> tuple[dict[str, Any], ...]:
    """The kept candidates, each with its trace (``initial``, ``ops``) drawn again."""
    if not KEPT.exists():
        return ()
    from sessionspec.decisions.draws import drawn_at

    data = json.loads(KEPT.read_text(encoding="utf-8"))
    assert data.get("format") == FORMAT, f"{KEPT}: not {FORMAT}"
    traces = drawn_at(data["seed"], frozenset(k["candidate"] for k in data["kept"]))
    return tuple({**k, "initial": traces[k["candidate"]][0], "ops": traces[k["candidate"]][1]} for k in data["kept"])


def _rules(outcomes: list[str]) -> tuple[str, ...]:
    """The rule IDs of the registry the decisions carry (quirk IDs, Q-..., are not rules)."""
    from sessionspec.spec.decision_points import derive_decisions
    from sessionspec.spec.decision_table import rules_of
    from sessionspec.spec.registry import rule_ids

    registered = set(rule_ids())
    by_id = {d.id: d for d in derive_decisions()}
    rules: set[str] = set()
    for outcome in outcomes:
        decision = by_id.get(outcome.rsplit(" => ", 1)[0])
        if decision is not None:
            rules.update(r for r in rules_of(decision) if r in registered)
    return tuple(sorted(rules))


def decision_vectors(group: str) -> list[Vector]:
    """The kept traces of ``group``, each recorded against the model."""
    out: list[Vector] = []
    for number, kept in enumerate(_kept()):
        if kept["group"] != group:
            continue
        outcomes = list(kept["for"])
        description = (f"kept by the decision search for {kept['gained']} outcome(s) short of three vectors, first: "
                       f"{outcomes[0]}" if outcomes else "kept by the decision search")
        out.append(record(f"{group}/decision/{number:04d}", _rules(outcomes), description, kept["initial"], kept["ops"]))
    return out
