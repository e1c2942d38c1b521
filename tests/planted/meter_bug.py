"""Planted bug in ``model.meter.ceil4``: floor instead of ceiling (MTR-1 rounds up)."""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def ceil4(n: int) -> int:
    """MTR-1 rounded the wrong way.

    pre: n >= 0
    post: CHARS_PER_TOKEN * (__return__ - 1) < n <= CHARS_PER_TOKEN * __return__
    """
    return n // CHARS_PER_TOKEN  # BUG: must round up
