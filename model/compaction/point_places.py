"""Where a dialect's compaction trigger points lie in a log (CMP-6, CMP-7; D08: DIA-6, DIA-7), apart from how they are
judged: what ``check`` without the deployment's facts lists as not decided (``sessionspec/check/deployment_points.py``)
and what :mod:`sessionspec.model.compaction.trigger_points` judges them with (its ``PointRules`` are built from these).

A pressure point is a window: it opens after one of ``opens`` and runs before ``closes``.  A55's is the post-step
(CMP-6: "inside the step, after the assistant message, tool results, ... **before `step/end`**"); D08's the pre-step
(DIA-6: "after the previous `step/end`, or after `turn/start` ...; **before `step/start`**").  A55 marks its overflow
point (CMP-7: "after the failed step's `step/end`"); D08 recovers inside the failed attempt's step (DIA-7), at no
point the log marks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.log import Dialect


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PointPlaces:
    """What a dialect changes in where ``compactIfNeeded`` runs (each field names A55's)."""

    # The pressure point's window: the events after which it is open, and the one before which it runs.
    opens: frozenset[str]
    closes: str
    # The rule that names a pressure point where compaction had to write and wrote nothing, and the point's name.
    rule: str
    where: str
    # Whether the log marks the overflow point (after a failed step's ``step/end``).
    marks_overflow_point: bool


A55_PLACES: Final = PointPlaces(opens=frozenset({"assistant/message"}), closes="step/end", rule="CMP-6", where="post-step (CMP-6)",
                                marks_overflow_point=True)
D08_PLACES: Final = PointPlaces(opens=frozenset({"turn/start", "step/end"}), closes="step/start", rule="DIA-6", where="pre-step (DIA-6)",
                                marks_overflow_point=False)


def point_places(dialect: Dialect) -> PointPlaces:
    """A55's trigger points' places, or D08's overlay (DIA-6, DIA-7)."""
    match dialect:
        case Dialect.A55:
            return A55_PLACES
        case Dialect.D08:
            return D08_PLACES
