"""What the state machines of spec/machines.py check besides the model: the
checker's request finder, the metered pressure listener and the planted
variants (spec/ takes them as arguments, so it depends on the model alone)."""

from __future__ import annotations

from typing import Final

from sessionspec.fast.meter import metered_pressure_listener
from sessionspec.fast.request_points import request_points
from sessionspec.planted.loop import Planted, planted
from sessionspec.spec.machine_checks import UnderTest

# The model with the checker's INV-7 pass and the incremental meter: what the suite's machine runs check.
WITH_CHECKER: Final = UnderTest(name="checker", find_requests=request_points, pressure=metered_pressure_listener)


def with_planted(fault: Planted | None) -> UnderTest:
    """The model with ``fault`` installed around each turn (None: the model itself), checked as WITH_CHECKER."""
    if fault is None:
        return WITH_CHECKER
    return UnderTest(name=fault.name, around_turn=lambda: planted(fault), find_requests=request_points,
                     pressure=metered_pressure_listener)
