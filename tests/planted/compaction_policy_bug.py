"""Planted bug in ``model.compaction.policy.compact_spec``: the threshold budget rounded up (issue 43: one of
the held-out faults a retained or threshold budget rounded the wrong way); CMP-4 floors ``cw x ratio``."""

from __future__ import annotations

import math

from sessionspec.model.compaction.policy import DEFAULT_RETAIN_RATIO, CompactConfig, CompactSpec, _ratio_ok, _retain_ratio  # noqa: F401
from sessionspec.model.jsonval import Json, is_safe_int
from sessionspec.model.rejected import Rejected


def compact_spec(policy: CompactConfig, context_window: Json | None, target: str) -> CompactSpec | Rejected:
    """CMP-4 with a ceiling; the real function's precondition (CMP-3's checked ratios), so the bug is the only difference.

    pre: _ratio_ok(policy.threshold_ratio) and _ratio_ok(policy.retain_ratio)
    post: isinstance(__return__, Rejected) or __return__.threshold_tokens <= context_window * policy.threshold_ratio < __return__.threshold_tokens + 1
    """
    if context_window is None:
        return Rejected(rule="CMP-8", reason=f"no context capacity for {target}")
    if not is_safe_int(context_window) or not isinstance(context_window, int) or context_window <= 0:
        return Rejected(rule="CMP-4", reason=f"invalid context window for {target}")
    threshold = math.ceil(context_window * policy.threshold_ratio)  # BUG: CMP-4 floors
    retain = policy.retain_tokens if policy.retain_tokens is not None else math.floor(context_window * _retain_ratio(policy.retain_ratio))
    if retain >= threshold:
        return Rejected(rule="CMP-4", reason=f"retained tokens {retain} >= threshold {threshold} for {target}")
    return CompactSpec(threshold_tokens=threshold, retain_tokens=retain)
