"""Planted bug in ``model.reconstruct.rebuild_request_at``: an off-by-one bounds check (totality)."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected


def boundary_type(events: Sequence[Event], step_start_seq: int) -> str | Rejected:
    """The boundary lookup of INV-5; total: out of range is a Rejected, never an exception.

    post: isinstance(__return__, Rejected) or 0 <= step_start_seq < len(events)
    """
    if not 0 <= step_start_seq <= len(events):  # BUG: '<=' lets len(events) through
        return Rejected(rule="INV-2", seq=step_start_seq, reason="no step/start at the boundary")
    return events[step_start_seq].type
