"""Planted bug in ``model.prune.check_prune_config``: the marker length is not
counted in the PRN-1 bound, so head + marker + tail may exceed the threshold."""

from __future__ import annotations

from sessionspec.model.prune import PRUNE_MARKER, PruneConfig  # noqa: F401  (PRUNE_MARKER is read by the contract)
from sessionspec.model.rejected import Rejected


def check_prune_config(config: PruneConfig) -> PruneConfig | Rejected:
    """PRN-1 bounds, forgetting the marker.

    post: isinstance(__return__, Rejected) or config.head_chars + len(PRUNE_MARKER) + config.tail_chars <= config.threshold_chars
    """
    if config.threshold_chars <= 0 or config.head_chars < 0 or config.tail_chars < 0:
        return Rejected(rule="PRN-1", reason="thresholdChars must be > 0 and head/tail >= 0")
    if config.head_chars + config.tail_chars > config.threshold_chars:  # BUG: + len(PRUNE_MARKER) missing
        return Rejected(rule="PRN-1", reason="headChars + marker + tailChars exceeds thresholdChars")
    return config
