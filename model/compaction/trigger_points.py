"""The points of a log where ``compactIfNeeded`` runs, as the deployment's decisions read them (CMP-6, CMP-7; D08:
DIA-6, DIA-7), event by event.

A pressure point is a window: it opens after the event that precedes the trigger and is decided by the first
compaction event in it (a prune or a bracket), else at the event that closes it, where nothing ran.  A55's is the
post-step (CMP-6: "inside the step, after the assistant message, tool results, ... **before `step/end`**"): it
opens at the step's ``assistant/message`` and closes at its ``step/end``.  D08's is the pre-step (DIA-6: "after the
previous `step/end`, or after `turn/start` ...; **before `step/start`**").  A55's overflow point (CMP-7: "after the
failed step's `step/end`, inside the turn, outside any step") follows a step that recorded no message; D08 retries
inside the failed step (DIA-7), where the log marks no point, so its overflow points are not decided.  The
dialect differences are one overlay, :func:`point_rules`.

``sessionspec check --deployment`` runs these over a log (``sessionspec/check/deployment_fold.py``); what had to be
written at a point is :mod:`sessionspec.model.compaction.obligation`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.compaction.point_places import A55_PLACES, D08_PLACES
from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event

# The turn ends after which a compaction that did not run is not judged: the signal was aborted (CMP-6, CMP-7:
# "unless the signal is already aborted"), and where the abort landed is not logged.  A disposal aborts the turn's
# signal too (harness a55f148516 packages/core/agent-loop/src/cancellation.ts `TurnCancellation.request` with
# DISPOSED_INTERRUPT_REASON; loop.ts `interruptionTurnEndReason` then ends the turn `disposed`).
ABORTED_KINDS: Final = frozenset({"interrupted", "aborted", "disposed"})


@dataclass(slots=True)
class OverflowTrack:
    """CMP-7's state so far (A55): the failure codes of the failed steps since the turn's last successful one
    (``priorFailures``, LOOP-14; None: not logged), the open step's logged failure code and whether it recorded a
    message, and whether a failed step's ``step/end`` opened a point not yet decided.  Mutable, owned by whoever
    folds the log."""

    failures: list[str | None] = field(default_factory=list)
    step_code: str | None = None
    step_ok: bool = False
    open: bool = False


@final
@dataclass(frozen=True, slots=True)
class OverflowPoint:
    """An overflow point to judge, decided at ``seq``, after ``prior_overflows`` earlier ``CONTEXT_WINDOW_EXCEEDED``
    failures of its ``priorFailures``."""

    seq: int
    prior_overflows: int


def _failure_code(turn_end: Event) -> str | None:
    """The failure a ``turn/end`` error logs (``reason.failure.code``, else ``reason.code``); None if none."""
    reason = get(turn_end.data, "reason")
    failure = get(reason, "failure")
    logged = get(failure, "code") if failure is not ABSENT else get(reason, "code")
    return logged if isinstance(logged, str) else None


def a55_overflow_step(track: OverflowTrack, event: Event, acts: bool) -> OverflowPoint | None:
    """CMP-7: after a failed step's ``step/end`` the request-error listeners run, then the retry's ``step/start`` or
    the turn's end.  The point is decided at its first compaction event (``acts``), else where it closes; it is
    judged only when the failure's code is logged (the step's error finish, else the turn's error end) and is
    ``CONTEXT_WINDOW_EXCEEDED``, every earlier failure's of the sequence is logged, and the turn was not aborted.
    A failure whose code is not logged and was followed by a compaction was an overflow (recovery runs for no
    other)."""
    kind = event.type
    point = None
    if track.open and (acts or kind in ("step/start", "turn/end")):
        code = track.step_code
        if code is None and kind == "turn/end":
            code = _failure_code(event)
        track.open = False
        aborted = kind == "turn/end" and get(get(event.data, "reason"), "kind") in ABORTED_KINDS
        if code == CONTEXT_WINDOW_EXCEEDED and None not in track.failures and not aborted:
            point = OverflowPoint(event.seq, track.failures.count(CONTEXT_WINDOW_EXCEEDED))
        track.failures.append(CONTEXT_WINDOW_EXCEEDED if code is None and acts else code)
    match kind:
        case "turn/start":
            track.failures.clear()
        case "step/start":
            track.step_code, track.step_ok = None, False
        case "assistant/chunk":
            chunk = get(event.data, "chunk")
            reason = get(chunk, "reason")
            if get(chunk, "type") == "finish" and get(reason, "kind") == "error":
                finished = get(get(reason, "failure"), "code")
                track.step_code = finished if isinstance(finished, str) else None
        case "assistant/message":
            track.step_ok = True
            track.failures.clear()
        case "step/end":
            track.open = not track.step_ok
        case _:
            pass
    return point


def d08_overflow_step(track: OverflowTrack, event: Event, acts: bool) -> OverflowPoint | None:
    """DIA-7: D08 recovers inside the failed attempt's step, at no point the log marks: none is decided."""
    return None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PointRules:
    """What a dialect changes in where ``compactIfNeeded`` runs (each field names A55's)."""

    # The pressure point's window: the events after which it is open, and the one before which it runs.
    opens: frozenset[str]
    closes: str
    # The rule that names a pressure point where compaction had to write and wrote nothing, and the point's name.
    rule: str
    where: str
    overflow_step: Callable[[OverflowTrack, Event, bool], OverflowPoint | None]


# The places are :mod:`sessionspec.model.compaction.point_places`' (one definition, which ``check`` also lists by).
A55_POINTS: Final = PointRules(opens=A55_PLACES.opens, closes=A55_PLACES.closes, rule=A55_PLACES.rule,
                               where=A55_PLACES.where, overflow_step=a55_overflow_step)
D08_POINTS: Final = PointRules(opens=D08_PLACES.opens, closes=D08_PLACES.closes, rule=D08_PLACES.rule,
                               where=D08_PLACES.where, overflow_step=d08_overflow_step)


def point_rules(dialect: Dialect) -> PointRules:
    """A55's trigger points, or D08's overlay (DIA-6, DIA-7)."""
    match dialect:
        case Dialect.A55:
            return A55_POINTS
        case Dialect.D08:
            return D08_POINTS
