"""The points of a log where ``compactIfNeeded`` runs, as the deployment's decisions read them (CMP-6, CMP-7; D08:
DIA-6, DIA-7), event by event.

A pressure point is a window: it opens after the event that precedes the trigger and is decided by the first
compaction event in it (a prune or a bracket), else at the event that closes it, where nothing ran.  A55's is the
post-step (CMP-6: "inside the step, after the assistant message, tool results, ... **before `step/end`**"): it
opens at the step's ``assistant/message`` and closes at its ``step/end``.  D08's is the pre-step (DIA-6: "after the
previous `step/end`, or after `turn/start` ...; **before `step/start`**").  A55's overflow point (CMP-7: "after the
failed step's `step/end`, inside the turn, outside any step") follows a step that recorded no message; D08's
(DIA-7) lies inside the failed step, after the failed attempt's error ``finish`` and before the retry streams, and
its budget counts the recoveries that retried, not the failures.  The dialect differences are one overlay,
:func:`point_rules`.

``sessionspec check --deployment`` runs these over a log (``sessionspec/check/deployment_fold.py``); what had to be
written at a point is :mod:`sessionspec.model.compaction.obligation`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.compaction.point_places import A55_PLACES, D08_PLACES, PointPlaces, overflow_finish
from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event

# The turn ends after which a compaction that did not run is not judged: the signal was aborted (CMP-6, CMP-7:
# "unless the signal is already aborted"), and where the abort landed is not logged.  A disposal aborts the turn's
# signal too (harness a55f148516 packages/core/agent-loop/src/cancellation.ts `TurnCancellation.request` with
# DISPOSED_INTERRUPT_REASON; loop.ts `interruptionTurnEndReason` then ends the turn `disposed`).
ABORTED_KINDS: Final = frozenset({"interrupted", "aborted", "disposed"})

# DIA-7: the events after a D08 failed attempt that show the request-error listeners returned with no compaction
# written: the retry's request (its header, its first chunk; another listener retried), the turn's end (the failure
# was thrown: agent.ts:386-387 then step/end and turn/end), a step/start; and ``llm/retry``, another listener's
# retry, whose place before or after compaction's in the waterfall the deployment does not state.
D08_OVERFLOW_CLOSES: Final = frozenset({"assistant/chunk", "request/header", "step/start", "turn/end", "llm/retry"})


@dataclass(slots=True)
class OverflowTrack:
    """CMP-7's state so far (A55): the failure codes of the failed steps since the turn's last successful one
    (``priorFailures``, LOOP-14; None: not logged), the open step's logged failure code and whether it recorded a
    message, and whether a failed step's ``step/end`` opened a point not yet decided.  D08 (DIA-7): whether a
    failed attempt's finish opened a point not yet decided, the recoveries that retried since the last
    ``assistant/message`` or turn start (compact-basic's ``overflowRetries``) and whether a recovery is running whose
    surface replacement has not come yet.  Mutable, owned by whoever folds the log."""

    failures: list[str | None] = field(default_factory=list)
    step_code: str | None = None
    step_ok: bool = False
    open: bool = False
    retried: int = 0
    recovering: bool = False


@final
@dataclass(frozen=True, slots=True)
class OverflowPoint:
    """An overflow point to judge, decided at ``seq``, after ``prior_overflows`` earlier ``CONTEXT_WINDOW_EXCEEDED``
    failures of its ``priorFailures`` (D08: recoveries that retried); not ``stated`` when what decides it is stated
    neither by the log nor by the deployment (it is then listed as not decided, not judged)."""

    seq: int
    prior_overflows: int
    stated: bool = True


def _failure_code(turn_end: Event) -> str | None:
    """The failure a ``turn/end`` error logs (``reason.failure.code``, else ``reason.code``); None if none."""
    reason = get(turn_end.data, "reason")
    failure = get(reason, "failure")
    logged = get(failure, "code") if failure is not ABSENT else get(reason, "code")
    return logged if isinstance(logged, str) else None


def _aborted(event: Event) -> bool:
    """A ``turn/end`` whose turn's signal was aborted (CMP-7: recovery only if "the signal is not aborted")."""
    return event.type == "turn/end" and get(get(event.data, "reason"), "kind") in ABORTED_KINDS


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
        if code == CONTEXT_WINDOW_EXCEEDED and None not in track.failures and not _aborted(event):
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
    """DIA-7: the listener runs inside the step, at the failed attempt's ``CONTEXT_WINDOW_EXCEEDED`` finish
    (:func:`~sessionspec.model.compaction.point_places.overflow_finish`), and its budget is the recoveries that
    retried since the last ``assistant/message`` (compact-basic ``index.ts:173-177, 188-189``).  That count is 0 at a
    turn's start: a turn ends after its last step's message, or by a thrown failure that takes the agent idle
    (``agent.ts:210-222``; ``index.ts:167-169``)."""
    point = _d08_decided(track, event, acts) if track.open else None
    _d08_count_retry(track, event)
    if event.type in ("assistant/message", "turn/start"):
        track.retried = 0
    track.open = track.open or overflow_finish(event, False)
    return point


def _d08_decided(track: OverflowTrack, event: Event, acts: bool) -> OverflowPoint | None:
    """The open point is decided at its first compaction event (``acts``), else where the log shows the listeners
    returned with none (:data:`D08_OVERFLOW_CLOSES`); not judged in a turn aborted, nor after ``llm/retry`` (not
    ``stated``: whether compaction's listener ran first is the provider's retry policy and the listeners' order)."""
    if not acts and event.type not in D08_OVERFLOW_CLOSES:
        return None
    track.open, track.recovering = False, acts
    if _aborted(event):
        return None
    return OverflowPoint(event.seq, track.retried, stated=event.type != "llm/retry")


def _d08_count_retry(track: OverflowTrack, event: Event) -> None:
    """A recovery retried when it replaced surface (``replaceGeneration`` advanced: the listener returns
    ``{kind: "retry"}`` and counts it, ``index.ts:201-207, 218-222``, also after a prune when the summary then
    failed); one that reached the retry's request or the turn's end with no replacement did not."""
    if not track.recovering:
        return
    if get(event.surface_op, "op") == "replace":
        track.retried, track.recovering = track.retried + 1, False
    elif event.type in D08_OVERFLOW_CLOSES:
        track.recovering = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PointRules:
    """What a dialect changes in where ``compactIfNeeded`` runs: its places (the pressure window, the overflow point
    and the rules naming them, :mod:`sessionspec.model.compaction.point_places`' one definition, which ``check``
    also lists by), what the overflow budget counts, and the overflow point's fold."""

    places: PointPlaces
    counted: str
    overflow_step: Callable[[OverflowTrack, Event, bool], OverflowPoint | None]


A55_POINTS: Final = PointRules(places=A55_PLACES, counted="earlier overflow(s)", overflow_step=a55_overflow_step)
D08_POINTS: Final = PointRules(places=D08_PLACES, counted="earlier recovery(ies) that retried", overflow_step=d08_overflow_step)


def point_rules(dialect: Dialect) -> PointRules:
    """A55's trigger points, or D08's overlay (DIA-6, DIA-7)."""
    match dialect:
        case Dialect.A55:
            return A55_POINTS
        case Dialect.D08:
            return D08_POINTS
