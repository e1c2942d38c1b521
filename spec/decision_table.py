"""The decision table (issue 43): each outcome of each decision of the model -> what pins it.

The decisions come from the code (spec/decision_points.py); the pins from recorded runs
(sessionspec/decisions/record.py writes spec/decision_pins.json): the tests and the state machines'
rules that took the outcome, and the vectors that took it with every answer matched; the CrossHair
targets are read from proofs/targets.txt: a target analyses the decisions inside the function it names
(or inside every contracted function of the module it names), and one of the ``ci`` tier, which CI runs,
pins them (a ``full``-tier target is listed, not counted: it runs only on demand).  An outcome no run takes is either declared
unreachable, with the reason (spec/decision_unreachable.py), or *unpinned*: tests/spec/test_decision_table.py
fails on it.  docs/decisions.md is :func:`render` of this table.

The table is also what conform can ask: :func:`reachable_outcomes` (every outcome to reach) and
spec/decision_probe.py's ``recording`` (which outcomes a run of the model takes; sessionspec/decisions/trace.py
runs a protocol trace under it).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, final

from sessionspec.spec.decision_not_by_vectors import group_of, work_left
from sessionspec.spec.decision_points import MODEL_DIR, Decision, derive_decisions, module_files
from sessionspec.spec.decision_unreachable import EXEMPT_MARK, NOT_YET_PINNED, UNREACHABLE, WORK_LEFT_MARK

SPEC_DIR: Final = Path(__file__).resolve().parent
PINS_FILE: Final = SPEC_DIR / "decision_pins.json"
TARGETS: Final = SPEC_DIR.parent / "proofs" / "targets.txt"
FORMAT: Final = "sessionspec-decision-pins/2"
NAMED: Final = 3  # a pin kind taken by at most this many keeps its first name (the fragile pins); a larger count stands alone


def trace_shape(initial: Any, ops: Sequence[Any]) -> str:
    """A trace without its texts: every string blanked, every number, key and structure kept (a string that
    is a JSON object or array, such as a log line, is blanked inside).  Two vectors of one shape are text
    variants of one trace; vectors of different shapes pin an outcome independently."""

    def blank(value: Any) -> Any:
        if isinstance(value, str):
            if value[:1] in ("{", "["):
                try:
                    return {"$json": blank(json.loads(value))}
                except ValueError:
                    return ""
            return ""
        if isinstance(value, list):
            return [blank(v) for v in value]
        if isinstance(value, dict):
            return {k: blank(v) for k, v in value.items()}
        return value

    return json.dumps([blank(initial), blank(list(ops))], sort_keys=True, separators=(",", ":"))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomePins:
    """What took one outcome: how many tests, machine rules and vectors (and the vectors' distinct shapes),
    and the first of each by name where there are at most NAMED (the counts are what the checks read; the
    names point a reader at the pins an outcome hangs on)."""

    tests: int = 0
    first_test: str = ""
    machine: int = 0
    first_machine: str = ""
    vectors: int = 0
    vector_shapes: int = 0
    first_vector: str = ""

    def to_json(self) -> list[Any]:
        return [self.tests, self.first_test, self.machine, self.first_machine, self.vectors, self.vector_shapes, self.first_vector]

    @staticmethod
    def from_json(data: Sequence[Any]) -> OutcomePins:
        tests, first_test, machine, first_machine, vectors, shapes, first_vector = data
        return OutcomePins(tests=tests, first_test=first_test, machine=machine, first_machine=first_machine, vectors=vectors,
                           vector_shapes=shapes, first_vector=first_vector)


@final
@dataclass(frozen=True, slots=True)
class PinSet:
    outcomes: Mapping[str, OutcomePins] = field(default_factory=dict)

    @staticmethod
    def from_runs(vectors: Mapping[str, Iterable[str]], tests: Mapping[str, Iterable[str]] | None,
                  shapes: Mapping[str, str], previous: PinSet | None = None) -> PinSet:
        """Pins from recorded runs: ``vectors`` and ``tests`` map an outcome id to the pins that took it
        (``vector:ID``; ``test:NODE`` and ``machine:RULE``).  Without ``tests``, the test and machine pins of
        ``previous`` are kept."""
        out: dict[str, OutcomePins] = {}
        known = set(vectors) | set(tests or ()) | (set() if tests is not None or previous is None else set(previous.outcomes))
        for outcome in sorted(known):
            ids = sorted(p.removeprefix("vector:") for p in vectors.get(outcome, ()) if p.startswith("vector:"))
            if tests is not None:
                labels = set(tests.get(outcome, ()))
                test_names = sorted(p.removeprefix("test:") for p in labels if p.startswith("test:"))
                rules = sorted(p.removeprefix("machine:") for p in labels if p.startswith("machine:"))
                old = OutcomePins(tests=len(test_names), first_test=_first(test_names), machine=len(rules), first_machine=_first(rules))
            else:
                old = previous.outcomes.get(outcome, OutcomePins()) if previous is not None else OutcomePins()
            by_shape = {shapes.get(vector_id, vector_id) for vector_id in ids}
            pins = OutcomePins(tests=old.tests, first_test=old.first_test, machine=old.machine, first_machine=old.first_machine,
                               vectors=len(ids), vector_shapes=len(by_shape), first_vector=_first(ids))
            if pins != OutcomePins():
                out[outcome] = pins
        return PinSet(out)


def _first(names: Sequence[str]) -> str:
    return names[0] if 0 < len(names) <= NAMED else ""


def write_pins(pins: PinSet, path: Path = PINS_FILE) -> None:
    """One line per decision: its outcomes' pins, each ``[tests, first test, machine rules, first rule, vectors,
    vector shapes, first vector]``."""
    by_decision: dict[str, dict[str, list[Any]]] = {}
    for outcome, p in sorted(pins.outcomes.items()):
        decision, _, name = outcome.rpartition(" => ")
        by_decision.setdefault(decision, {})[name] = p.to_json()
    rows = ",\n".join(json.dumps(d, ensure_ascii=False) + ":" + json.dumps(o, ensure_ascii=False, separators=(",", ":"))
                      for d, o in by_decision.items())
    path.write_text(f'{{"format":"{FORMAT}","decisions":{{\n{rows}\n}}}}\n', encoding="utf-8")


def read_pins(path: Path = PINS_FILE) -> PinSet:
    if not path.exists():
        return PinSet()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data.get("format") == FORMAT, f"{path}: not {FORMAT}"
    return PinSet({f"{decision} => {name}": OutcomePins.from_json(p)
                   for decision, outcomes in data["decisions"].items() for name, p in outcomes.items()})


# --------------------------------------------------------------------------- CrossHair targets and rules


@cache
def crosshair_targets() -> dict[tuple[str, str], tuple[str, ...]]:
    """(module under model/, function) -> the proofs/targets.txt targets that analyse it, as ``target (tier)``."""
    if not TARGETS.exists():
        return {}
    contracted: dict[str, set[str]] = {}
    functions: dict[str, str] = {}
    for module, path in module_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                functions.setdefault(node.name, module)
                doc = ast.get_docstring(node) or ""
                if "post:" in doc or "pre:" in doc:
                    contracted.setdefault(module, set()).add(node.name)
    out: dict[tuple[str, str], list[str]] = {}
    for line in TARGETS.read_text(encoding="utf-8").splitlines():
        target = line.split("#", 1)[0].split()
        if len(target) < 2 or not target[0].startswith("sessionspec.model."):
            continue
        dotted, label = target[0].removeprefix("sessionspec.model."), f"{target[0]} ({target[1]})"
        if dotted in contracted:
            for name in contracted[dotted]:
                out.setdefault((dotted, name), []).append(label)
        else:
            name = dotted.rsplit(".", 1)[-1]
            if name in functions:
                out.setdefault((functions[name], name), []).append(label)
    return {k: tuple(v) for k, v in out.items()}


@cache
def rules_by_function() -> dict[tuple[str, str], tuple[str, ...]]:
    """(module, function) -> the rule IDs of its ``@implements``; a function without one carries the rules
    of the model functions that call it, nearest first (a helper of many rules carries them all)."""
    own: dict[tuple[str, str], tuple[str, ...]] = {}
    callers: dict[str, set[tuple[str, str]]] = {}
    for module, path in module_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            key = (module, node.name)
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name) and deco.func.id == "implements":
                    own[key] = tuple(a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(call.func, ast.Attribute) else None
                    if name is not None:
                        callers.setdefault(name, set()).add(key)
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for module, path in module_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                out[(module, node.name)] = own.get((module, node.name)) or _inherited(node.name, own, callers)
    return out


def _inherited(name: str, own: Mapping[tuple[str, str], tuple[str, ...]], callers: Mapping[str, set[tuple[str, str]]]) -> tuple[str, ...]:
    seen: set[str] = {name}
    frontier, found = [name], set[str]()
    while frontier and not found:
        nxt: list[str] = []
        for callee in frontier:
            for caller in callers.get(callee, ()):
                if caller in own:
                    found.update(own[caller])
                elif caller[1] not in seen:
                    seen.add(caller[1])
                    nxt.append(caller[1])
        frontier = nxt
    return tuple(sorted(found))


def rules_of(decision: Decision) -> tuple[str, ...]:
    return rules_by_function().get((decision.module, decision.function.split(".")[-1]), ())


# --------------------------------------------------------------------------- the table


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    decision: Decision
    outcome: str
    outcome_id: str
    pins: OutcomePins
    crosshair: tuple[str, ...]
    unreachable: str | None
    not_by_vectors: str | None  # the group of spec/decision_not_by_vectors.py that says why no vector can take it

    @property
    def pinned(self) -> bool:
        """Some test, machine rule or vector takes the outcome, or a CrossHair target CI runs analyses it."""
        return bool(self.pins.tests or self.pins.machine or self.pins.vectors or any(t.endswith("(ci)") for t in self.crosshair))


def rows(pins: PinSet | None = None) -> list[Row]:
    pins = read_pins() if pins is None else pins
    targets = crosshair_targets()
    out: list[Row] = []
    for decision in derive_decisions():
        crosshair = targets.get((decision.module, decision.function.split(".")[-1]), ())
        for outcome, oid in zip(decision.outcomes, decision.outcome_ids()):
            out.append(Row(decision=decision, outcome=outcome, outcome_id=oid, pins=pins.outcomes.get(oid, OutcomePins()),
                           crosshair=crosshair, unreachable=UNREACHABLE.get(oid), not_by_vectors=_group_name(oid)))
    return out


def _group_name(outcome_id: str) -> str | None:
    group = group_of(outcome_id)
    return None if group is None else group.name


def reachable_outcomes(pins: PinSet | None = None) -> frozenset[str]:
    """Every outcome not declared unreachable: what the checks (and conform) should reach."""
    return frozenset(r.outcome_id for r in rows(pins) if r.unreachable is None)


def unpinned(pins: PinSet | None = None) -> list[Row]:
    """Reachable outcomes no test, machine rule or vector takes (those listed in NOT_YET_PINNED included)."""
    return [r for r in rows(pins) if r.unreachable is None and not r.pinned]


def not_yet_pinned() -> dict[str, str]:
    """The unpinned outcomes listed as work left, with what is known (spec/decision_unreachable.py)."""
    return dict(NOT_YET_PINNED)


def short_of_vectors(pins: PinSet | None = None, needed: int = 3) -> list[Row]:
    """Reachable outcomes taken by fewer than ``needed`` vectors of distinct shapes (and not exempted)."""
    return [r for r in rows(pins) if r.unreachable is None and r.not_by_vectors is None and r.pins.vector_shapes < needed]


def short_reasons(pins: PinSet | None = None, needed: int = 3) -> dict[str, str | None]:
    """Every reachable outcome fewer than ``needed`` vector shapes take -> why: ``not by vectors: GROUP`` (the
    protocol cannot reach it, spec/decision_not_by_vectors.py), ``work left: ...`` (some vector enters its function,
    so the protocol reaches it; or what WORK_LEFT knows of its function), or None (no reason stated)."""
    table = [r for r in rows(pins) if r.unreachable is None]
    entered: dict[tuple[str, str], int] = {}
    for r in table:
        if r.pins.vectors:
            key = (r.decision.module, r.decision.function)
            entered[key] = max(entered.get(key, 0), r.pins.vectors)
    out: dict[str, str | None] = {}
    for r in table:
        if r.pins.vector_shapes >= needed:
            continue
        where = f"{r.decision.module}:{r.decision.function}"
        known = work_left(r.decision.module, r.decision.function)
        if r.not_by_vectors is not None:
            out[r.outcome_id] = EXEMPT_MARK + r.not_by_vectors
        elif (r.decision.module, r.decision.function) in entered:
            out[r.outcome_id] = (f"{WORK_LEFT_MARK}reachable: vectors enter {where} (up to {entered[(r.decision.module, r.decision.function)]} "
                                 f"per outcome), {r.pins.vector_shapes} shape(s) take this outcome")
        elif known is not None:
            out[r.outcome_id] = f"{WORK_LEFT_MARK}no vector enters {where}: {known}"
        else:
            out[r.outcome_id] = None
    return out


__all__ = ["MODEL_DIR", "NAMED", "OutcomePins", "PinSet", "Row", "crosshair_targets", "reachable_outcomes", "read_pins", "rows",
           "not_yet_pinned", "rules_of", "short_of_vectors", "short_reasons", "trace_shape", "unpinned", "write_pins"]
