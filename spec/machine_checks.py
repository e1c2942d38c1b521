"""What a run of the loop machine checks (``spec/machines.py``): its invariants and what is under test.

:class:`Check` names each invariant by the property it asserts (RULES §16.2); :class:`UnderTest` names
what a run checks besides the model: a context installed around each turn (the tests install a planted
variant of ``sessionspec.planted.loop`` there), the checker's request finder (P-INV-1 via the checker)
and the pressure listener (an incremental meter in front of compact-basic).  They are passed in, so
spec/ depends on the model alone.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from enum import Enum
from typing import Final

from sessionspec.model.loop import CompactionPlugin, PostStepHook, pressure_listener
from sessionspec.spec.loop_properties import RequestPointFinder


class Check(Enum):
    RECONSTRUCT = "P-INV-1"
    FREEZE = "P-PFX-1"
    DISCARD = "P-PFX-6"
    CACHE = "P-INV-4"
    HISTORY = "P-PFX-8"
    HEADERS = "P-LOOP-1"
    DISPATCH = "P-PFX-4"
    ENVELOPE = "P-CMP-5"
    PAIRS = "P-CMP-3"
    RESUMMARIZE = "P-CMP-4"
    OVERFLOW = "P-CMP-10"
    PRESSURE = "P-CMP-11"
    PRUNE = "P-PRN-3"
    # Issue 43: orders, precedence and thresholds.
    STEERING = "LOOP-13 first-in first-out"
    LISTENER = "LOOP-7 listener keys win"
    PRESSURE_GATE = "P-CMP-9"
    PRUNE_THRESHOLD = "PRN-3 threshold"


ALL_CHECKS: Final = frozenset(Check)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnderTest:
    """What a machine run checks besides the model (the defaults: the model alone)."""

    name: str = "model"
    # Installed around each turn (a planted variant, in the tests).
    around_turn: Callable[[], AbstractContextManager[object]] = nullcontext
    # The checker's INV-7 pass; None skips "P-INV-1 via the checker".
    find_requests: RequestPointFinder | None = None
    # The post-step pressure listener of compact-basic (an incremental meter may stand in front of it).
    pressure: Callable[[CompactionPlugin], PostStepHook] = pressure_listener


MODEL_ALONE: Final = UnderTest()
