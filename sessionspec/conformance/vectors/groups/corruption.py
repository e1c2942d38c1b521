"""The corruption engine: ``mutate`` applies one named corruption to one line of a log, and
``RECORDED_CORRUPTIONS`` lists one corruption per rule the checker names (``check/recorded/*``),
re-verified against the checker at generation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from sessionspec.conformance.vectors.build import ROOT, Step, Vector
from sessionspec.conformance.vectors.format import (
    FormatError,
    PlainJson,
    reject,
    rejection_rules,
)
from sessionspec.conformance.vectors.groups.data import dump_row

# --------------------------------------------------------------------------- recorded corruptions


def _leaf_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The key paths of ``value`` in depth-first order (objects and arrays)."""
    out: list[tuple[str | int, ...]] = []
    items: Iterable[tuple[str | int, Any]] = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out += _leaf_paths(child, (*prefix, key))
    return out


def _wrong(value: Any) -> Any:
    """A value of the same JSON kind that breaks it: -1, "", [], {} or the negation."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return -1 if value >= 0 else 0
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return 0


def _renumber(rows: list[Any], gone: int | None = None) -> list[Any]:
    for seq, row in enumerate(rows):
        if isinstance(row, dict) and isinstance(row.get("seq"), int):
            row["seq"] = seq
    return rows


MUTATION_KINDS: Final = ("drop", "duplicate", "swap-next", "seq-plus-one", "time-text", "type-unknown", "no-data",
                         "surface-append", "surface-none", "surface-replace-self", "sources-none", "sources-shift",
                         "truncate", "reverse-keys", *(f"deep-{op}-{k}" for op in ("drop", "null", "wrong") for k in range(6)))


def mutate(lines: Sequence[str], kind: str, index: int) -> list[str] | None:
    """One corruption of line ``index`` of a log (None when it does not apply).
    Only the touched lines are re-serialized; the others stay byte-exact."""
    out = list(lines)
    try:
        row = json.loads(lines[index])
    except json.JSONDecodeError:
        return None
    if not isinstance(row, dict):
        return None
    match kind:
        case "drop":
            del out[index]
            return out
        case "duplicate":
            out.insert(index, lines[index])
            return out
        case "swap-next":
            if index + 1 >= len(lines):
                return None
            rows = [json.loads(x) for x in lines]
            rows[index], rows[index + 1] = rows[index + 1], rows[index]
            if not all(isinstance(r, dict) and isinstance(r.get("seq"), int) for r in rows):
                return None
            return [dump_row(r) for r in _renumber(rows)]
        case "seq-plus-one" | "time-text" | "type-unknown" | "no-data":
            key, value = {"seq-plus-one": ("seq", row.get("seq", 0) + 1 if isinstance(row.get("seq"), int) else None),
                          "time-text": ("time", "later"), "type-unknown": ("type", "x/unknown"),
                          "no-data": ("data", None)}[kind]
            if key not in row or (kind == "seq-plus-one" and value is None):
                return None
            if kind == "no-data":
                del row["data"]
            else:
                row[key] = value
        case "surface-append":
            row["surfaceOp"] = "append"
        case "surface-none":
            if "surfaceOp" not in row:
                return None
            del row["surfaceOp"]
        case "surface-replace-self":
            if not isinstance(row.get("seq"), int):
                return None
            row["surfaceOp"] = {"op": "replace", "start": row["seq"], "end": row["seq"]}
        case "sources-none":
            if "sourceEventSeqs" not in row:
                return None
            del row["sourceEventSeqs"]
        case "sources-shift":
            if not isinstance(row.get("sourceEventSeqs"), list):
                return None
            row["sourceEventSeqs"] = [s + 1 if isinstance(s, int) else s for s in row["sourceEventSeqs"]]
        case "truncate":
            out[index] = lines[index][: len(lines[index]) // 2]
            return out
        case "reverse-keys":
            row = dict(reversed(list(row.items())))
        case _ if kind.startswith("deep-"):
            _, op, k = kind.split("-")
            paths = _leaf_paths(row.get("data"), ("data",)) if isinstance(row.get("data"), dict | list) else []
            if int(k) >= len(paths):
                return None
            path = paths[int(k)]
            parent: Any = row
            for step in path[:-1]:
                parent = parent[step]
            last = path[-1]
            if op == "drop":
                del parent[last]
            elif op == "null":
                parent[last] = None
            else:
                parent[last] = _wrong(parent[last])
        case _:
            raise FormatError(f"unknown mutation {kind}")
    out[index] = dump_row(row)
    return out


# One corruption per rule the checker names, found by an offline search over
# the ground-truth logs and small real logs (rule, log under tests/data, kind, line).
# Generation re-applies each and asserts the checker still names the rule.
RECORDED_CORRUPTIONS: Final[tuple[tuple[str, str, str, int], ...]] = (
    ("LOG-13", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 0),
    ("LOG-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 0),
    ("LOG-2", "groundtruth/a-single-turn-no-prefix/session.jsonl", "time-text", 0),
    ("LOG-3", "groundtruth/a-single-turn-no-prefix/session.jsonl", "no-data", 0),
    ("SURF-2", "groundtruth/a-single-turn-no-prefix/session.jsonl", "surface-append", 0),
    ("FMT-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "truncate", 0),
    ("SURF-5", "groundtruth/a-single-turn-no-prefix/session.jsonl", "surface-replace-self", 1),
    ("DER-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 1),
    ("FMT-9", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 2),
    ("HDR-8", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 3),
    ("HDR-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 3),
    ("HDR-7", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-5", 3),
    ("SURF-4", "groundtruth/a-single-turn-no-prefix/session.jsonl", "swap-next", 17),
    ("LOG-11", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-1", 20),
    ("CMP-14", "groundtruth/j1-pressure-compaction/session.jsonl", "type-unknown", 0),
    ("CMP-15", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-drop-1", 1),
    ("SURF-6", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 13),
    ("CMP-10", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-null-2", 13),
    ("CMP-22", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 58),
    ("CMP-25", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 58),
    ("CMP-20", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-drop-0", 59),
    ("SURF-7", "groundtruth/j2-tool-result-prune/session.jsonl", "deep-drop-0", 12),
    ("PRN-3", "groundtruth/j2-tool-result-prune/session.jsonl", "deep-drop-4", 12),
    ("CHK-5", "real/a55f148516/examples/acp-agent/tests/snapshots/text-turn/session.jsonl", "no-data", 7),
    ("DIA-19", "real/611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", "deep-drop-0", 20),
)


def recorded_check_vectors() -> list[Vector]:
    from sessionspec.conformance.adapter.driver import InProcessAdapter as Model

    out: list[Vector] = []
    model = Model()
    for rule, source, kind, index in RECORDED_CORRUPTIONS:
        lines = [line for line in (ROOT / "tests" / "data" / source).read_text(encoding="utf-8").splitlines() if line.strip()]
        mutated = mutate(lines, kind, index)
        if mutated is None:
            raise FormatError(f"corruption {kind} does not apply to line {index} of {source}")
        answer = model.call({"op": "check", "log": list[PlainJson](mutated)})
        if rule not in (rejection_rules(answer) or []):
            raise FormatError(f"{source} with {kind} at line {index} no longer breaks {rule}: {answer}")
        out.append(Vector(id=f"check/recorded/{rule}", rules=(rule,),
                          description=f"{source} with one corruption ({kind} at line {index + 1}) breaks {rule}",
                          initial={}, steps=(Step(op={"op": "check", "log": mutated}, expect=reject(rule)),)))
    return out
