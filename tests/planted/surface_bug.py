"""Planted bug in ``model.surface.replacement_range``: rejects ``start == end`` (SURF-5 allows one node)."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfaceOp


def replacement_range(nodes: Sequence[int], op: SurfaceOp, seq: int) -> tuple[int, int] | Rejected:
    """SURF-5 with an off-by-one.

    post: isinstance(__return__, Rejected) == (op.start not in nodes or op.end not in nodes or nodes.index(op.start) > nodes.index(op.end))
    """
    try:
        start_idx = nodes.index(op.start)
    except ValueError:
        return Rejected(rule="SURF-5", seq=seq, reason="start not found")
    try:
        end_idx = nodes.index(op.end)
    except ValueError:
        return Rejected(rule="SURF-5", seq=seq, reason="end not found")
    if start_idx >= end_idx:  # BUG: should be '>'; a single-node replace is valid
        return Rejected(rule="SURF-5", seq=seq, reason="start after end")
    return start_idx, end_idx
