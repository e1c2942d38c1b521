"""Where a dialect's compaction trigger points lie in a log (CMP-6, CMP-7; D08: DIA-6, DIA-7), apart from how they are
judged: what ``check`` without the deployment's facts lists as not decided (``sessionspec/check/deployment_points.py``)
and what :mod:`sessionspec.model.compaction.trigger_points` judges them with (its ``PointRules`` are built from these).

A pressure point is a window: it opens after one of ``opens`` and runs before ``closes``.  A55's is the post-step
(CMP-6: "inside the step, after the assistant message, tool results, ... **before `step/end`**"); D08's the pre-step
(DIA-6: "after the previous `step/end`, or after `turn/start` ...; **before `step/start`**").  An overflow point opens
where ``agent/request-error`` runs: A55's after a failed step's ``step/end`` (CMP-7: "after the failed step's
`step/end`"), D08's inside the step, at the failed attempt's error ``finish`` chunk (DIA-7: the request-error waterfall
runs when the attempt's finish is an error, harness 611615650f agent-loop ``agent.ts:373-389``, before the retry
streams).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.jsonval import get
from sessionspec.model.log import Dialect, Event


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
    # The overflow point: the rule naming a recovery that had to run and wrote nothing (or ran beyond its budget), what
    # the point follows, the event type at which it may open, and whether this event (of that type) opens one, given
    # whether the step recorded its assistant/message.
    overflow_rule: str
    overflow_what: str
    overflow_opens: str
    opens_overflow: Callable[[Event, bool], bool]


def failed_step_end(event: Event, answered: bool) -> bool:
    """CMP-7: a ``step/end`` after no ``assistant/message`` ends a failed step, after which the listeners run."""
    return event.type == "step/end" and not answered


def overflow_finish(event: Event, answered: bool) -> bool:
    """DIA-7: an attempt's ``finish`` chunk whose reason is ``error`` or ``aborted`` dispatches
    ``agent/request-error`` with its failure (``agent.ts:373-383``); compaction's listener recovers only
    ``CONTEXT_WINDOW_EXCEEDED`` (compact-basic ``index.ts:183``).  The code is always logged there."""
    chunk = get(event.data, "chunk")
    reason = get(chunk, "reason")
    return (event.type == "assistant/chunk" and get(chunk, "type") == "finish" and get(reason, "kind") in ("error", "aborted")
            and get(get(reason, "failure"), "code") == CONTEXT_WINDOW_EXCEEDED)


A55_PLACES: Final = PointPlaces(opens=frozenset({"assistant/message"}), closes="step/end", rule="CMP-6", where="post-step (CMP-6)",
                                overflow_rule="CMP-7", overflow_what="failed step", overflow_opens="step/end", opens_overflow=failed_step_end)
D08_PLACES: Final = PointPlaces(opens=frozenset({"turn/start", "step/end"}), closes="step/start", rule="DIA-6", where="pre-step (DIA-6)",
                                overflow_rule="DIA-7", overflow_what="failed attempt", overflow_opens="assistant/chunk",
                                opens_overflow=overflow_finish)


def point_places(dialect: Dialect) -> PointPlaces:
    """A55's trigger points' places, or D08's overlay (DIA-6, DIA-7)."""
    match dialect:
        case Dialect.A55:
            return A55_PLACES
        case Dialect.D08:
            return D08_PLACES
