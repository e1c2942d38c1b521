"""Candidate traces over a given log (issue 43 item 3): the operations below the loop, and seeded sessions.

A base log is a model log (a loop trace's) or a bundled real one (tests/data/real, both dialects), cut to
at most 60 lines.  The families: ``check`` of the log as it is, or with one line edited; ``measure`` with and
without an override; ``replay``; ``pack``; ``repair`` of a log cut inside a turn; an out-of-band append;
compact-basic called directly (``compact``: pressure with configurations on and off their validity edges,
manual, a region, D08 on D08 logs); and a session seeded with the log (``init`` with ``log``), then sends.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.vectors.build import ROOT, text
from sessionspec.decisions.candidates import Op, _edit, _send

REAL: Final = ROOT / "tests" / "data" / "real"
MAX_LINES: Final = 60


@cache
def real_logs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(dialect, lines) of every bundled real log of at most 40 kB, in path order."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for path in sorted(REAL.rglob("*.jsonl")):
        if path.stat().st_size > 40_000:
            continue
        dialect = "D08" if "611615650f" in path.parts else "A55"
        out.append((dialect, tuple(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())))
    return tuple(out)


def base_log(rng: random.Random, model_lines: list[str], dialects: tuple[str, ...] = ("A55", "D08")) -> tuple[str, list[str]]:
    """A model log or a real one of ``dialects``, cut to at most MAX_LINES lines."""
    if model_lines and rng.random() < 0.6:
        dialect, lines = "A55", list(model_lines)
    else:
        dialect, chosen = rng.choice([log for log in real_logs() if log[0] in dialects])
        lines = list(chosen)
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
    return dialect, lines


def _cut(rng: random.Random, lines: list[str]) -> list[str]:
    return lines[: rng.randint(1, len(lines))] if lines else lines


def _closed(rng: random.Random, lines: list[str]) -> list[str]:
    """The log through one of its turn/end lines (a seed whose turns are all closed), or all of it."""
    ends = [i for i, line in enumerate(lines) if '"type":"turn/end"' in line]
    return lines[: rng.choice(ends) + 1] if ends else lines


def _valid_compaction(spec: dict[str, Any]) -> bool:
    """Whether compact-basic accepts the configuration (CMP-3): an invalid one is refused when the service is built."""
    from sessionspec.conformance.adapter.decode import decode_compaction
    from sessionspec.model.compaction.policy import check_compact_config
    from sessionspec.model.rejected import Rejected

    try:
        return not isinstance(check_compact_config(decode_compaction(spec).config), Rejected)
    except Exception:  # noqa: BLE001 - undecodable: the protocol refuses it
        return False


def _compaction(rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {"contextWindow": rng.choice([1, 50, 400, 1000, 5000]), "instruction": "condense",
                            "summaries": [text("CHECKPOINT")] * 4, "maxTokens": 256}
    roll = rng.random()
    if roll < 0.15:
        spec["thresholdRatio"] = rng.choice([0, {"$number": "1e-9"}, 1, {"$number": "1.5"}])
    elif roll < 0.3:
        spec["retainRatio"] = rng.choice([{"$number": "0.8"}, {"$number": "0.16"}, 1])
    elif roll < 0.45:
        spec["retainTokens"] = rng.choice([0, 1, 10**6])
    elif roll < 0.5:
        spec["retainRatio"], spec["retainTokens"] = {"$number": "0.1"}, 10
    elif roll < 0.55:
        del spec["contextWindow"]
    elif roll < 0.6:
        spec["contextWindow"] = rng.choice([0, -5])
    if rng.random() < 0.2:
        spec["compactionRetries"] = rng.choice([0, 3])
    if rng.random() < 0.2:
        spec["prune"] = {"thresholdChars": rng.choice([40, 400]), "headChars": 0, "tailChars": 1}
    return spec


def log_trace(rng: random.Random, model_lines: list[str]) -> tuple[dict[str, Any], list[Op]]:
    """One operation over a base log (or a session seeded with it)."""
    family = rng.choice(["check", "check", "check-edited", "check-edited", "measure", "replay", "pack", "repair",
                         "out-of-band", "compact", "compact", "seeded"])
    # A55 logs only: the adapter protocol's check, measure and seeds read the A55 dialect.  compact-basic is called on
    # the model's own logs (their provider is the scripted one; a real log names providers no test rig registers).
    dialect, lines = base_log(rng, model_lines, ("A55",))
    if family == "compact" and model_lines:
        dialect, lines = "A55", model_lines[:MAX_LINES]
    if family in ("measure", "out-of-band") and model_lines:
        # the model's own logs: a real log's session header (placeholders) and packed rows are the loader's business
        dialect, lines = "A55", model_lines[:MAX_LINES]
    if family == "check":
        return {}, [{"op": "check", "log": lines, **({"dialect": dialect} if rng.random() < 0.5 else {})}]
    if family == "check-edited":
        edited = list(lines)
        i = rng.randrange(len(edited))
        try:
            edited[i] = json.dumps(_edit(rng, json.loads(edited[i])), separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            del edited[i]
        return {}, [{"op": "check", "log": edited}]
    if family == "measure":
        op: Op = {"op": "measure", "log": lines}
        if rng.random() < 0.4:
            op["override"] = {"config": {"provider": "p", "model": "m"}, "system": "override", "tools": []}
        return {}, [op]
    if family == "replay":
        # without compaction: replay's summariser requests are not compared here (the real adapter omits them)
        return {}, [{"op": "replay", "log": [line for line in lines if "\"type\":\"compact/" not in line]}]
    if family == "pack":
        return {}, [{"op": "pack", "log": lines}]
    if family == "repair":
        return {}, [{"op": "repair", "log": _cut(rng, lines)}]
    if family == "out-of-band":
        return {}, [{"op": "append-out-of-band", "log": _closed(rng, lines), "type": "session/title", "data": {"title": "t"},
                     **({"trigger": {"kind": "injection", "source": {"kind": "plugin", "plugin": "titles"}}} if rng.random() < 0.5 else {})}]
    if family == "compact":
        trigger = rng.choice(["pressure", "pressure", "manual", "region"])
        spec = _compaction(rng)
        if not _valid_compaction(spec):
            spec = {k: v for k, v in spec.items() if k not in ("thresholdRatio", "retainRatio", "retainTokens")}
        op = {"op": "compact", "trigger": trigger, "log": lines, "compaction": spec}
        if dialect == "D08":
            op["dialect"] = "D08"
            op["ids"] = [{"compactionId": f"compaction-{k}", "messageId": f"message-{k}"} for k in range(1, 4)]
        if trigger == "region":
            op["region"] = {"start": rng.randint(0, len(lines)), "end": rng.randint(0, len(lines))}
        if rng.random() < 0.1:
            op["aborted"] = True
        return {}, [op]
    agent = {"system": "S", "tools": []}
    return {"log": _closed(rng, lines), "agent": agent}, [_send(rng, 90 + k, None) for k in range(rng.randint(1, 2))]


__all__ = ["Path", "log_trace", "real_logs"]
