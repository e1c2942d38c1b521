"""LOG-8 (strict load): the shapes the harness's load refuses, one fold over the log driving
:func:`sessionspec.model.load_shape.load_refusals` (through its compiled twin, :mod:`sessionspec.fast.load_shape`,
tied to it by ``tests/fast/test_fast_load_shape.py``)."""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.load_shape import load_refusals
from sessionspec.model.load_shape import LOAD_CHECKED_TYPES, load_shapes
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


class LoadShapeAudit(WalkFold):
    """LOG-8 (strict load): each event a load checks (``request/header``, ``mode/set``,
    ``assistant/message``, ``turn/end``) is handed to the model's load refusals (LEG-2, LEG-3,
    LEG-4, HDR-8/LEG-5/LEG-6, HDR-1/DIA-8/FMT-6, LOG-11, DIA-14)."""

    EVENT_TYPES = LOAD_CHECKED_TYPES

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        shapes = load_shapes(self.dialect)
        found: list[Rejected] = []
        while (event := (yield)) is not None:
            if refused := load_refusals(event, shapes):
                found += refused
        return found


def check_load_shapes(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """:class:`LoadShapeAudit` run alone."""
    return run_alone(LoadShapeAudit, events, dialect)
