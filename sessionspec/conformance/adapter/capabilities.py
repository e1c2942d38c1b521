"""What an adapter supports: the operations and the shapes (``features``) ``hello`` declares (issue 27,
part 1; shapes: issue 45).

An adapter half-way there declares what it implements, so the kit *skips* what needs anything else
instead of failing it (test262's ``features``, Bowtie's capabilities, the WebAssembly suite's split of
"not supported" from "wrong"):

    {"protocol": "sessionspec-adapter/2", "implementation": "…",
     "operations": ["init", "send", "log"], "features": ["tool-calls", "contributors"]}

``operations`` absent: every operation is taken as supported until the adapter answers one with
``{"error": "unsupported"}`` (then that vector is skipped, never failed).  ``features`` absent: every
shape.  ``hello`` itself is always supported (it is the handshake).  The features are the shapes of
shapes.py (a reply kind, a prompt kind, an agent option, an interrupt window...), properties of an
operation's content (:func:`vector_needs`).  What the adapter refuses at run time is added to
``refused_operations``/``refused_features`` (:meth:`Capabilities.refuse`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, final

from sessionspec.conformance.adapter.protocol import AdapterError, is_unsupported
from sessionspec.conformance.adapter.shapes import SHAPES, covered, named_by, op_shapes, restrict

__all__ = ["EVERYTHING", "FEATURES", "OPERATIONS", "Capabilities", "from_hello", "is_unsupported", "operation_needs",
           "refusal_needs", "restrict_trace", "unlock_ranking", "unlock_summary", "vector_needs"]

OPERATIONS: Final = ("init", "send", "configure", "resume", "dispose", "fork", "log", "check", "replay", "pack",
                     "repair", "append-out-of-band", "measure", "compact")

FEATURES: Final[Mapping[str, str]] = {s.name: s.what for s in SHAPES}


@final
@dataclass(frozen=True, slots=True)
class Capabilities:
    """The declared operations and features (``None``: "not declared: all"), less what the adapter refused
    at run time."""

    operations: frozenset[str] | None = None
    features: frozenset[str] | None = None
    refused_operations: frozenset[str] = frozenset()
    refused_features: frozenset[str] = frozenset()

    def has_operation(self, name: str) -> bool:
        if name == "hello":
            return True
        return name not in self.refused_operations and (self.operations is None or name in self.operations)

    def has_feature(self, name: str) -> bool:
        family = name.split("/", 1)[0]
        if name in self.refused_features or family in self.refused_features:
            return False
        return self.features is None or covered(name, self.features)

    def missing(self, needs: Iterable[str]) -> tuple[str, ...]:
        """The needs (``op X`` / ``feature Y``) this adapter did not declare (or refused)."""
        out: list[str] = []
        for need in needs:
            kind, _, name = need.partition(" ")
            if not (self.has_operation(name) if kind == "op" else self.has_feature(name)):
                out.append(need)
        return tuple(out)

    def refuse(self, needs: Iterable[str]) -> Capabilities:
        """These capabilities less ``needs`` (what the adapter answered ``unsupported`` to)."""
        ops = {n.removeprefix("op ") for n in needs if n.startswith("op ")}
        features = {n.removeprefix("feature ") for n in needs if n.startswith("feature ")}
        return replace(self, refused_operations=self.refused_operations | ops,
                       refused_features=self.refused_features | features)

    @property
    def declared(self) -> Capabilities:
        """What ``hello`` declared (nothing refused since)."""
        return replace(self, refused_operations=frozenset(), refused_features=frozenset())

    def unknown(self) -> list[str]:
        """The names ``hello`` declared that no operation or shape has (a misspelling unlocks nothing, so the run
        says so), each with the nearest known name: ``feature tool-call (did you mean tool-calls?)``."""
        from difflib import get_close_matches

        out: list[str] = []
        for kind, declared, known in (("op", self.operations, ("hello", *OPERATIONS)), ("feature", self.features, FEATURES)):
            for name in sorted(set(declared or ()) - set(known)):
                near = get_close_matches(name, list(known), n=1)
                out.append(f"{kind} {name}" + (f" (did you mean {near[0]}?)" if near else ""))
        return out

    def describe(self) -> str:
        ops = "all operations" if self.operations is None else f"operations {', '.join(sorted(self.operations)) or '(none)'}"
        features = "all features" if self.features is None else f"features {', '.join(sorted(self.features)) or '(none)'}"
        return f"{ops}; {features}"


EVERYTHING: Final = Capabilities()  # an adapter that declares nothing: every operation and feature


def from_hello(answer: Mapping[str, object], what: str = "operation 'hello'") -> Capabilities:
    """The capabilities a ``hello`` answer declares; :class:`AdapterError` when a declaration is not a list of
    names (unknown names are kept: they unlock nothing)."""
    def names(key: str) -> frozenset[str] | None:
        value = answer.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise AdapterError(f"{what}: {key} must be a list of names")
        return frozenset(value)

    return Capabilities(operations=names("operations"), features=names("features"))


def _agents(vector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    initial = vector.get("initial", {})
    agents = [initial.get("agent")] + [s["op"].get("agent") for s in vector.get("steps", []) if s["op"].get("op") == "configure"]
    return [a for a in agents if isinstance(a, dict)]


def operation_needs(ops: Sequence[Mapping[str, Any]], agents: Sequence[Mapping[str, Any]] = (),
                    seed_log: bool = False) -> tuple[str, ...]:
    """What a sequence of operations needs: ``op NAME`` for each operation, ``feature NAME`` for each shape it
    carries (shapes.py), and the shapes of ``agents`` (an initial agent)."""
    needs = {f"op {op.get('op')}" for op in ops}
    for op in [*ops, *({"op": "configure", "agent": a} for a in agents)]:
        needs |= {f"feature {name}" for name in op_shapes(op)}
    if seed_log:
        needs.add("feature persistence")
    return tuple(sorted(needs))


def vector_needs(vector: Mapping[str, Any]) -> tuple[str, ...]:
    """Every operation (``init`` and each step's) and feature a vector needs, sorted."""
    ops = [{"op": "init", **vector.get("initial", {})}, *(s["op"] for s in vector.get("steps", []))]
    return operation_needs(ops, _agents(vector), bool(vector.get("initial", {}).get("log")))


def refusal_needs(op: Mapping[str, Any], words: str, capabilities: Capabilities) -> tuple[str, ...]:
    """What an ``unsupported`` answer to ``op`` refuses, as needs: the shapes of ``op`` its ``words`` name
    (shapes.named_by), else every shape ``op`` carries that was still in scope, else the operation itself."""
    carried = sorted(name for name in op_shapes(op) if capabilities.has_feature(name))
    named = named_by(words, carried)
    chosen = named or carried
    return tuple(f"feature {name}" for name in chosen) if chosen else (f"op {op.get('op')}",)


def unlock_ranking(skipped: Sequence[Sequence[str]], limit: int = 5) -> list[tuple[str, int, int]]:
    """Which missing capabilities would unlock the most skipped vectors: ``(need, alone, in_all)`` with the
    skipped vectors that need only it and those that need it among others, best first."""
    needing: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    for missing in skipped:
        needing.update(set(missing))
        if len(set(missing)) == 1:
            alone.update(set(missing))
    ranked = sorted(needing, key=lambda need: (-alone[need], -needing[need], need))[:limit]
    return [(need, alone[need], needing[need]) for need in ranked]


def unlock_summary(skipped: Sequence[Sequence[str]], limit: int = 5) -> str:
    """:func:`unlock_ranking` in words: ``op check (103 alone, 110 in all), …``."""
    return ", ".join(f"{need} ({alone} alone, {total} in all)" for need, alone, total in unlock_ranking(skipped, limit))


def restrict_trace(initial: Mapping[str, Any], trace: Sequence[Mapping[str, Any]],
                   capabilities: Capabilities) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A generated ``conform`` trace cut to what the adapter declared and has not refused: those operations
    dropped, those shapes left out of the agents and the operations (shapes.without).  The result is still
    a valid trace; the model answers it as it is."""
    keeps = capabilities.has_feature
    kept = [restrict(op, keeps) for op in trace if capabilities.has_operation(str(op.get("op")))]
    start = restrict({"op": "init", **initial}, keeps)
    start.pop("op")
    return start, kept
