"""Planted bug in ``model.compaction.retention_cut``: the cut is not rounded
head-ward to a balanced point, so compaction could split a tool call from its
result (CMP-10, CMP-11)."""

from __future__ import annotations

from collections.abc import Sequence


def retention_cut(tokens: Sequence[int], balanced: Sequence[bool], retain_tokens: int) -> int:
    """CMP-11 without the balancing step.

    pre: len(balanced) == len(tokens) + 1
    pre: all(t >= 0 for t in tokens)
    post: 0 <= __return__ < max(len(tokens), 1)
    post: __return__ == 0 or balanced[__return__]
    post: __return__ == 0 or sum(tokens[__return__:]) >= retain_tokens
    """
    total = 0
    keep = len(tokens) - 1
    for i in range(len(tokens) - 1, -1, -1):
        keep = i
        total += tokens[i]
        if total >= retain_tokens:
            break
    if keep <= 0:
        return 0
    return keep  # BUG: the head-ward walk to a balanced cut is missing
