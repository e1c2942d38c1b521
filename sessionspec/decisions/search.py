"""Choosing the decision vectors (issue 43 item 3): seeded candidates, kept when they pin an outcome anew.

``python -m sessionspec.decisions.search [--seed S] [--candidates N]`` draws N candidate traces
(sessionspec/decisions/draws.py), runs each on the model under the decision probe, and keeps a
candidate when it takes a reachable outcome that fewer than three vectors of distinct trace shapes take
yet (counting the committed vectors and the candidates already kept).  Only the numbers of the kept
candidates are written, with the first outcomes each was kept for, to
sessionspec/conformance/vectors/groups/decision_kept.json; the vector group draws those candidates again
and replays them through the model for their expectations (groups/decisions.py); ``sessionspec vectors
generate`` then writes them.  The search is deterministic for a seed, a model and a set of committed vectors.
``--extend START`` keeps the kept candidates numbered below START as they are (their traces run again for the
outcomes they take) and draws from START on: the wide candidates (draws.py WIDE_FROM) join without renumbering
the vectors already classified against the real harness.
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
from sessionspec.decisions.draws import drawn, drawn_at
from sessionspec.decisions.record import VECTORS
from sessionspec.spec.decision_probe import Probe, recording
from sessionspec.spec.decision_table import reachable_outcomes, trace_shape
from sessionspec.spec.decision_unreachable import NOT_YET_PINNED, UNREACHABLE

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


def _earlier(probe: Probe, seed: int, start: int, out: Path, shapes: dict[str, set[str]],
             caught: dict[str, int]) -> list[dict[str, Any]]:
    """The kept candidates of ``out`` numbered below ``start``, their outcomes added to ``shapes``."""
    data = json.loads(out.read_text(encoding="utf-8"))
    if data.get("seed") != seed:
        raise SystemExit(f"search: --extend needs the seed of {out} ({data.get('seed')})")
    kept = [k for k in data["kept"] if k["candidate"] < start]
    traces = drawn_at(seed, frozenset(k["candidate"] for k in kept))
    for k in kept:
        initial, ops = traces[k["candidate"]]
        shape = trace_shape(initial, ops)
        for outcome in _run(probe, initial, ops) or ():
            shapes.setdefault(outcome, set()).add(shape)
        for reason in k["for"]:
            if reason.endswith(" (inverted, the answers change)"):
                decision = reason.removesuffix(" (inverted, the answers change)")
                caught[decision] = caught.get(decision, 0) + 1
    return kept


def search(seed: int, count: int, out: Path = KEPT, directory: Path = VECTORS, start: int = 0) -> int:
    kept: list[dict[str, Any]] = []
    caught: dict[str, int] = {}
    reachable = reachable_outcomes()
    listed = frozenset(UNREACHABLE) | frozenset(NOT_YET_PINNED)
    with recording() as probe:
        shapes = committed_shapes(probe, directory)
        if start:
            kept = _earlier(probe, seed, start, out, shapes, caught)
        for index, (initial, ops) in enumerate(drawn(seed, count, start), start=start):
            if index > start and index % 500 == 0:
                short = sum(1 for o in reachable if len(shapes.get(o, ())) < NEEDED)
                print(f"search: {index}/{count} candidates, {len(kept)} kept, {short} reachable outcomes short of {NEEDED} shapes",
                      file=sys.stderr, flush=True)
            taken = _run(probe, initial, ops)
            if taken is None:
                continue
            if taken & listed:
                # the table says no run takes these (UNREACHABLE), or lists them as work left (NOT_YET_PINNED): a
                # vector taking one must come with that list's change, so it is named here and not kept
                print(f"search: candidate {index} takes {sorted(taken & listed)}, listed in spec/decision_unreachable.py: "
                      "not kept", file=sys.stderr)
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
    parser.add_argument("--extend", type=int, default=0, metavar="START",
                        help="keep the kept candidates numbered below START, draw from START on")
    args = parser.parse_args(argv)
    return search(args.seed, args.candidates, start=args.extend)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
