"""Choosing the decision vectors (issue 43 item 3): seeded candidates, kept when they pin an outcome anew.

``python -m sessionspec.decisions.search [--seed S] [--candidates N]`` draws N candidate traces
(sessionspec/decisions/draws.py), runs each on the model under the decision probe, and keeps a
candidate when it takes a reachable outcome that fewer than three vectors of distinct trace shapes take
yet (counting the committed vectors and the candidates already kept).  Only the numbers of the kept
candidates are written, with the first outcomes each was kept for, to
sessionspec/conformance/vectors/groups/decision_kept.json; the vector group draws those candidates again
and replays them through the model for their expectations (groups/decisions.py); ``sessionspec vectors
generate`` then writes them.  The search is deterministic for a seed, a model and a set of committed vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.adapter.protocol import AdapterError, OperationError, OperationRefused
from sessionspec.conformance.vectors.files import load_dir
from sessionspec.decisions.candidates import Op
from sessionspec.decisions.draws import drawn
from sessionspec.decisions.record import VECTORS
from sessionspec.spec.decision_probe import Probe, recording
from sessionspec.spec.decision_table import reachable_outcomes, trace_shape

KEPT: Final = Path(__file__).resolve().parents[1] / "conformance" / "vectors" / "groups" / "decision_kept.json"
FORMAT: Final = "sessionspec-decision-kept/1"
SHOWN: Final = 3  # outcomes named per kept candidate (the vector's rules come from them)
NEEDED: Final = 3
# The held-out faults of issue 43, each one decision inverted: the search also keeps candidates (up to NEEDED each)
# whose answers change with the decision inverted, so some vector fails on each (tests/spec/test_decision_faults.py).
CATCH: Final = ("loop.turn:drain_steering: pending.pop(0)", "loop.instance:apply_request_listener: merged.update(changes)",
                "compaction.run:compact_under_pressure: now < spec.threshold_tokens",
                "compaction.policy:compact_spec: math.floor(context_window * _retain_ratio(policy.retain_ratio))",
                "loop.turn:play_turn: queued.pop(0)")
GROUP_OF_OP: Final = {"check": "check", "compact": "codec", "measure": "codec", "replay": "codec", "pack": "codec",
                      "repair": "codec", "append-out-of-band": "codec"}


def _answers(initial: dict[str, Any], ops: Sequence[Op]) -> list[Any] | None:
    """The model's answers to a trace (None: the model refused an operation as malformed, or rejected init)."""
    adapter = InProcessAdapter()
    try:
        first = adapter.call({"op": "init", **initial})
        if "reject" in first:
            return None
        return [first] + [adapter.call(dict(op)) for op in ops]
    except (OperationError, OperationRefused, AdapterError):
        return None  # malformed for the protocol: not a vector


def _run(probe: Probe, initial: dict[str, Any], ops: Sequence[Op]) -> set[str] | None:
    """The outcomes a trace takes on the model (None: as for :func:`_answers`)."""
    probe.reset()
    return None if _answers(initial, ops) is None else set(probe.taken())


def _catches(probe: Probe, decision: str, initial: dict[str, Any], ops: Sequence[Op]) -> bool:
    """The model answers the trace differently with ``decision`` inverted (a vector of it catches that fault)."""
    plain = _answers(initial, ops)
    try:
        with probe.flipped(decision):
            inverted = _answers(initial, ops)
    except Exception:  # noqa: BLE001 - the inverted model failing is an answer that differs
        return plain is not None
    return plain is not None and _compared(plain) != _compared(inverted)


def _compared(answers: Any) -> str:
    """The answers as the vectors compare them: a rejection by its rules, never its message."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            if isinstance(value.get("reject"), dict):
                return {**value, "reject": value["reject"].get("rules")}
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(answers), sort_keys=True, default=str)


def committed_shapes(probe: Probe, directory: Path = VECTORS) -> dict[str, set[str]]:
    """Outcome -> the trace shapes of the committed vectors that take it, the decision vectors left out (the search
    chooses them anew)."""
    shapes: dict[str, set[str]] = {}
    for file in load_dir(directory):
        for vector in file["vectors"]:
            if "/decision/" in vector["id"]:
                continue
            ops = [s["op"] for s in vector["steps"]]
            taken = _run(probe, vector["initial"], ops)
            shape = trace_shape(vector["initial"], ops)
            for outcome in taken or ():
                shapes.setdefault(outcome, set()).add(shape)
    return shapes


def search(seed: int, count: int, out: Path = KEPT, directory: Path = VECTORS) -> int:
    kept: list[dict[str, Any]] = []
    caught: dict[str, int] = {}
    reachable = reachable_outcomes()
    with recording() as probe:
        shapes = committed_shapes(probe, directory)
        for index, (initial, ops) in enumerate(drawn(seed, count)):
            if index and index % 500 == 0:
                short = sum(1 for o in reachable if len(shapes.get(o, ())) < NEEDED)
                print(f"search: {index}/{count} candidates, {len(kept)} kept, {short} reachable outcomes short of {NEEDED} shapes",
                      file=sys.stderr, flush=True)
            taken = _run(probe, initial, ops)
            if taken is None:
                continue
            shape = trace_shape(initial, ops)
            gain = sorted(o for o in taken & reachable if len(shapes.get(o, ())) < NEEDED and shape not in shapes.get(o, ()))
            for decision in CATCH:
                if caught.get(decision, 0) < NEEDED and any(o.startswith(decision + " => ") for o in taken) \
                        and _catches(probe, decision, initial, ops):
                    caught[decision] = caught.get(decision, 0) + 1
                    gain.insert(0, f"{decision} (inverted, the answers change)")
            if not gain:
                continue
            for outcome in taken:
                shapes.setdefault(outcome, set()).add(shape)
            group = "loop" if "log" in initial else GROUP_OF_OP.get(ops[0]["op"], "loop") if ops else "loop"
            kept.append({"candidate": index, "group": group, "for": gain[:SHOWN], "gained": len(gain)})
    head = json.dumps({"format": FORMAT, "seed": seed, "candidates": count}, separators=(",", ":"))[:-1]
    rows = ",\n".join(json.dumps(k, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for k in kept)
    out.write_text(f'{head},"kept":[\n{rows}\n]}}\n', encoding="utf-8")
    still = sorted(o for o in reachable if len(shapes.get(o, ())) < NEEDED)
    print(f"search: kept {len(kept)} of {count} candidates (seed {seed}); {len(still)} reachable outcomes still short of "
          f"{NEEDED} vector shapes; inverted decisions caught: {caught}", file=sys.stderr)
    return 0


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m sessionspec.decisions.search")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--candidates", type=int, default=3000)
    args = parser.parse_args(argv)
    return search(args.seed, args.candidates)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
