"""The decision search's candidate traces, addressed by seed and number (issue 43 item 3).

One ``random.Random(seed)`` draws candidate after candidate (sessionspec/decisions/candidates.py and
candidates_logs.py): candidate ``n`` of a seed is the same trace for the same model and candidate code, so the
search records only the numbers it kept (groups/decision_kept.json) and the vector group draws them again.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from sessionspec.decisions.candidates import Op, boundary_trace, check_trace, loop_trace, measure_trace, model_log
from sessionspec.decisions.candidates_logs import log_trace


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


def drawn(seed: int, count: int) -> Iterator[tuple[dict[str, Any], list[Op]]]:
    """Candidates 0 .. count-1 of ``seed``."""
    rng = random.Random(seed)
    for _ in range(count):
        yield candidate(rng)


def drawn_at(seed: int, numbers: frozenset[int]) -> dict[int, tuple[dict[str, Any], list[Op]]]:
    """The candidates of ``seed`` numbered ``numbers`` (those before them are drawn too: one stream)."""
    out: dict[int, tuple[dict[str, Any], list[Op]]] = {}
    for number, trace in enumerate(drawn(seed, max(numbers, default=-1) + 1)):
        if number in numbers:
            out[number] = trace
    return out
