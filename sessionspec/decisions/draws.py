"""The decision search's candidate traces, addressed by seed and number (issue 43 item 3).

One ``random.Random(seed)`` draws candidate after candidate (sessionspec/decisions/candidates.py and
candidates_logs.py): candidate ``n`` of a seed is the same trace for the same model and candidate code, so the
search records only the numbers it kept (groups/decision_kept.json) and the vector group draws them again.

From number WIDE_FROM on, the candidates are the wider ones (candidates_wide.py, candidates_configs.py), each
drawn by its own ``random.Random`` seeded with the seed and its number: the first stream stays as it was (its
kept candidates keep their numbers and vector ids), and a wide candidate is drawn without the ones before it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, Final

from sessionspec.decisions.candidates import Op, boundary_trace, check_trace, loop_trace, measure_trace, model_log
from sessionspec.decisions.candidates_configs import config_trace, prune_trace
from sessionspec.decisions.candidates_logs import log_trace
from sessionspec.decisions.candidates_wide import base_lines, packed, respelled, row_edited, session_header, targeted_edit

WIDE_FROM: Final = 8000  # the first stream's length when the wide candidates were added (decision_kept.json's first search)


def candidate(rng: random.Random) -> tuple[dict[str, Any], list[Op]]:
    """One candidate: a loop session (about a third), else an operation below the loop over the log it writes."""
    initial, ops = loop_trace(rng)
    roll = rng.random()
    if roll < 0.35:
        return initial, ops
    lines = model_log(initial, ops)
    if roll < 0.5:
        tuned = boundary_trace(rng, lines)
        if tuned is not None:
            return tuned
    if roll < 0.55:
        return measure_trace(rng, lines)
    if roll < 0.6:
        return check_trace(rng, lines)
    return log_trace(rng, lines)


def wide_candidate(rng: random.Random) -> tuple[dict[str, Any], list[Op]]:
    """One wide candidate: a model log corrupted the way a shape rule judges it, respelled, packed, or given to
    compact-basic with a configuration at its edges."""
    lines = base_lines(rng)
    if not lines:
        return {}, [{"op": "check", "log": []}]
    roll = rng.random()
    op = rng.choice(["check", "check", "check", "measure", "replay", "repair", "pack"])
    if roll < 0.35:
        edited = lines
        for _ in range(rng.choice([1, 1, 2, 3])):
            edited = targeted_edit(rng, edited)
        return {}, [{"op": op, "log": edited}]
    if roll < 0.45:
        return {}, [{"op": op, "log": [session_header(rng)] + (targeted_edit(rng, lines) if rng.random() < 0.3 else lines)}]
    if roll < 0.6:
        i = rng.randrange(len(lines))
        return {}, [{"op": op, "log": lines[:i] + [respelled(rng, lines[i])] + lines[i + 1:]}]
    if roll < 0.72:
        rows = packed(lines)
        return {}, [{"op": op, "log": row_edited(rng, rows) if rng.random() < 0.8 else rows}]
    if roll < 0.86:
        tuned = prune_trace(rng, lines)
        if tuned is not None:
            return tuned
    return config_trace(rng, lines)


def drawn(seed: int, count: int, start: int = 0) -> Iterator[tuple[dict[str, Any], list[Op]]]:
    """Candidates ``start`` .. count-1 of ``seed`` (the first stream is drawn from 0 up to where it is needed)."""
    rng = random.Random(seed)
    for number in range(min(count, WIDE_FROM)):
        trace = candidate(rng)
        if number >= start:
            yield trace
    for number in range(max(WIDE_FROM, start), count):
        yield wide_candidate(random.Random(f"wide:{seed}:{number}"))


def drawn_at(seed: int, numbers: frozenset[int]) -> dict[int, tuple[dict[str, Any], list[Op]]]:
    """The candidates of ``seed`` numbered ``numbers`` (the first stream's before them are drawn too)."""
    out: dict[int, tuple[dict[str, Any], list[Op]]] = {}
    first = [n for n in numbers if n < WIDE_FROM]
    for number, trace in enumerate(drawn(seed, max(first, default=-1) + 1)):
        if number in numbers:
            out[number] = trace
    for number in sorted(n for n in numbers if n >= WIDE_FROM):
        out[number] = wide_candidate(random.Random(f"wide:{seed}:{number}"))
    return out
