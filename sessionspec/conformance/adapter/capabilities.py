"""What an adapter supports: the operations and optional features ``hello`` declares (issue 27, part 1).

An adapter half-way there declares what it implements, so the kit *skips* what needs anything else
instead of failing it (test262's ``features``, Bowtie's capabilities, the WebAssembly suite's split of
"not supported" from "wrong"):

    {"protocol": "sessionspec-adapter/2", "implementation": "…",
     "operations": ["init", "send", "log"], "features": ["contributors"]}

``operations`` absent: every operation is taken as supported until the adapter answers one with
``{"error": "unsupported"}`` (then that vector is skipped, never failed).  ``features`` absent: every
feature.  ``hello`` itself is always supported (it is the handshake).  The features are properties of a
vector's content (:func:`vector_needs`), named in :data:`FEATURES`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, final

from sessionspec.conformance.adapter.protocol import AdapterError, is_unsupported

__all__ = ["EVERYTHING", "FEATURES", "OPERATIONS", "Capabilities", "from_hello", "is_unsupported", "operation_needs", "restrict_trace",
           "unlock_ranking", "unlock_summary", "vector_needs"]

OPERATIONS: Final = ("init", "send", "configure", "resume", "dispose", "fork", "log", "check", "replay", "pack",
                     "repair", "append-out-of-band", "measure", "compact")

FEATURES: Final[Mapping[str, str]] = {
    "persistence": "init with a seed log (a session loaded from storage, `initial.log`)",
    "contributors": "session-prefix contributors in the agent (`contributors`, PFX)",
    "compaction": "compact-basic mounted in the agent (`compaction`, CMP)",
    "prune": "the tool-result prune of compact-basic (`compaction.prune`, PRN)",
    "interrupts": "an interrupt fired inside a turn (`send.interrupt`, LOOP-15)",
    "steering": "steering messages queued while a turn runs (`send.steering`, LOOP-13)",
    "D08": "the later dialect 611615650f (`dialect: \"D08\"` in check or compact, DIA)",
}


@final
@dataclass(frozen=True, slots=True)
class Capabilities:
    """The declared operations and features; ``None`` for "not declared: all"."""

    operations: frozenset[str] | None = None
    features: frozenset[str] | None = None

    def missing(self, needs: Iterable[str]) -> tuple[str, ...]:
        """The needs (``op X`` / ``feature Y``) this adapter did not declare."""
        out: list[str] = []
        for need in needs:
            kind, _, name = need.partition(" ")
            declared = self.operations if kind == "op" else self.features
            if declared is not None and name not in declared and name != "hello":
                out.append(need)
        return tuple(out)

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
    """What a sequence of operations needs: ``op NAME`` for each operation, ``feature NAME`` for each feature."""
    needs = {f"op {op.get('op')}" for op in ops}
    every_agent = [*agents, *(op["agent"] for op in ops if isinstance(op.get("agent"), dict))]
    if seed_log:
        needs.add("feature persistence")
    if any(a.get("contributors") for a in every_agent):
        needs.add("feature contributors")
    if any(a.get("compaction") is not None for a in every_agent):
        needs.add("feature compaction")
    if any(isinstance(a.get("compaction"), dict) and a["compaction"].get("prune") is not None for a in every_agent):
        needs.add("feature prune")
    if any(op.get("interrupt") is not None for op in ops):
        needs.add("feature interrupts")
    if any(op.get("steering") for op in ops):
        needs.add("feature steering")
    if any(op.get("dialect") == "D08" for op in ops):
        needs.add("feature D08")
    return tuple(sorted(needs))


def vector_needs(vector: Mapping[str, Any]) -> tuple[str, ...]:
    """Every operation (``init`` and each step's) and feature a vector needs, sorted."""
    ops = [{"op": "init"}, *(s["op"] for s in vector.get("steps", []))]
    return operation_needs(ops, _agents(vector), bool(vector.get("initial", {}).get("log")))


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
    """A generated ``conform`` trace cut to what the adapter declared: undeclared operations dropped,
    undeclared features taken out of the agent and the operations (contributors, compaction, prune,
    interrupts).  The result is still a valid trace; the model answers it as it is."""
    features = capabilities.features
    operations = capabilities.operations

    def agent_without(agent: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(agent)
        if features is not None:
            if "contributors" not in features:
                out.pop("contributors", None)
            if "compaction" not in features:
                out.pop("compaction", None)
            elif "prune" not in features and isinstance(out.get("compaction"), dict):
                out["compaction"] = {k: v for k, v in out["compaction"].items() if k != "prune"}
        return out

    def op_without(op: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(op)
        if isinstance(out.get("agent"), dict):
            out["agent"] = agent_without(out["agent"])
        if features is not None and "interrupts" not in features:
            out.pop("interrupt", None)
        if features is not None and "steering" not in features:
            out.pop("steering", None)
        return out

    kept = [op_without(op) for op in trace if operations is None or op.get("op") in operations]
    start = dict(initial)
    if isinstance(start.get("agent"), dict):
        start["agent"] = agent_without(start["agent"])
    return start, kept
