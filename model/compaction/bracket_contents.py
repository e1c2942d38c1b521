"""What a compaction bracket in a log holds (CMP-2, CMP-12, CMP-19, CMP-23, DIA-2), and the walk that decides a
log's brackets event by event with :mod:`sessionspec.model.compaction.trigger_place`.

The checkpoint's source is what the writer writes (:func:`sessionspec.model.compaction.brackets.checkpoint_source`;
D08: the overlay's, naming the bracket, DIA-2); the range is the retention walk's
(:func:`sessionspec.model.compaction.retention.select_range`: head-anchored, the retained tail never empty); a
bracket whose summarization saw the surface change, or which failed, commits no checkpoint (CMP-19, CMP-23).
:func:`take_event` is the acceptor: one event, the place moved on, each finding of the rules above appended.

``sessionspec check`` runs it over a log (``sessionspec/check/compaction_rules_audit.py``);
``tests/model/test_trigger_place.py`` holds it against the loop that writes the brackets, both ways.
"""

from __future__ import annotations

from typing import Final

from sessionspec.model.compaction.brackets import checkpoint_source, is_checkpoint_source
from sessionspec.model.compaction.records import NO_IDS
from sessionspec.model.compaction.trigger_place import (
    TriggerPlace,
    check_bracket_closed,
    check_bracket_placement,
    check_overflow_retry,
    check_prune_placement,
    take_bracket_event,
    take_chunk,
)
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop_log.track import show
from sessionspec.model.record_keys import key_flaw
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

# The A55 checkpoint source, as the writer writes it (A55 carries no ids).
A55_CHECKPOINT_SOURCE: Final = checkpoint_source(NO_IDS)
# DIA-2's source keys in order, and whether each is required.
D08_SOURCE_KEYS: Final = (("kind", True), ("plugin", True), ("compactionId", True), ("sourceCommandId", False))


def a55_source_flaw(source: Json | Absent) -> str | None:
    """CMP-2: the source is exactly the one :func:`checkpoint_source` writes."""
    return None if json_eq(source, A55_CHECKPOINT_SOURCE) else "is not exactly {kind:\"plugin\", plugin:\"compact\"}"


def d08_source_flaw(source: Json | Absent) -> str | None:
    """DIA-2: ``{kind, plugin, compactionId, sourceCommandId?}`` in that order, the id a non-empty string."""
    flaw = key_flaw(source, D08_SOURCE_KEYS)
    compaction_id = get(source, "compactionId")
    if flaw is None and not (isinstance(compaction_id, str) and compaction_id):
        return f"has the compactionId {show(compaction_id)}, not a non-empty string"
    return flaw


@decides("CMP-2", "DIA-2")
def check_checkpoint_source(checkpoint: Event, dialect: Dialect) -> Rejected | None:
    """A checkpoint's ``source`` (a ``user/message`` replace inside a bracket whose source
    :func:`is_checkpoint_source`) is the writer's: :func:`a55_source_flaw` (CMP-2), D08 :func:`d08_source_flaw` (DIA-2)."""
    source = get(checkpoint.data, "source")
    match dialect:
        case Dialect.A55:
            flaw, rule = a55_source_flaw(source), "CMP-2"
        case Dialect.D08:
            flaw, rule = d08_source_flaw(source), "DIA-2"
    if flaw is None:
        return None
    return Rejected(rule=rule, seq=checkpoint.seq, reason=f"checkpoint source {flaw}")


@decides("CMP-12", "P-CMP-4")
def check_range_anchoring(place: TriggerPlace, summary: Event) -> Rejected | None:
    """A summary's ``shadowedRange`` is one :func:`select_range` can give: it starts at the surface head ("start =
    current surface head", CMP-12) and ends before the last node (the retention walk, ``retention_cut``, keeps at
    least one node, CMP-11).  Its size needs ``retainTokens``, not logged.  A55 compactions are all automatic; a
    D08 manual one selects through the same walk (DIA-20)."""
    rng = get(summary.data, "shadowedRange")
    start, end = get(rng, "start"), get(rng, "end")
    if start is ABSENT or end is ABSENT or place.head is None:
        return None  # CMP-1/CMP-25 report the shape
    if start != place.head:
        return Rejected(rule="CMP-12", seq=summary.seq, reason=f"compaction range starts at seq {start!r}, not at the surface head {place.head} (automatic ranges are head-anchored)")
    if end == place.last:
        return Rejected(rule="CMP-12", seq=summary.seq, reason=f"compaction range ends at the last surface node {place.last} (the retention walk keeps at least one node)")
    return None


@decides("CMP-19", "CMP-23", "P-CMP-2")
def check_bracket_body(place: TriggerPlace, end: Event, failed: bool) -> Rejected | None:
    """At a bracket's end.  CMP-19: a surface append while the summarizer ran makes the commit fail ("session
    surface changed during summarization"), so a bracket with such an append has no checkpoint; CMP-23: a failed
    bracket leaves the surface unchanged, so it has no checkpoint."""
    if place.checkpoint is None:
        return None
    if failed:
        return Rejected(rule="CMP-23", seq=end.seq, reason=f"failed compaction end after the checkpoint at seq {place.checkpoint} (a failure leaves the surface unchanged)")
    if place.surface_append is not None:
        return Rejected(rule="CMP-19", seq=end.seq, reason=f"compaction committed although the surface changed during summarization (append at seq {place.surface_append})")
    return None


def _add(found: list[Rejected], bad: Rejected | None) -> None:
    if bad is not None:
        found.append(bad)


def take_event(place: TriggerPlace, event: Event, live: bool, found: list[Rejected]) -> None:
    """One event of the log (``live``: after the seed, where findings are made): each decision it reaches is run
    and its finding appended to ``found``, and the place moves on.  Only a boundary (:func:`take_boundary`) and a
    surface event (:func:`take_surface`) do either."""
    if event.type in place.boundaries:
        take_boundary(place, event, live, found)
    if event.surface_op is not ABSENT:
        take_surface(place, event, live, found)


def take_boundary(place: TriggerPlace, event: Event, live: bool, found: list[Rejected]) -> None:
    """A header, a step or turn boundary, a chunk, or a bracket event: the bracket's closing while it is open, its
    start's place, its end's body and the overflow it commits, the retry a turn end owes, the release of the lock,
    the summary's range.  Then the step's boundary: a ``step/start`` opens a step; its ``step/end`` closes it,
    failed when it appended no message (its failure code the attempt's, :func:`take_chunk`); a ``turn/start``
    leaves no step."""
    kind = event.type
    if kind == "request/header":
        place.header = True
    if place.bracket and live and kind in ("step/start", "step/end", "turn/end", place.end_type):
        _add(found, check_bracket_closed(place, event))
    if live and kind == place.start_type:
        _add(found, check_bracket_placement(place, event))
        place.bracket, place.surface_append, place.checkpoint, place.step_end_in_bracket = True, None, None, None
    elif kind == place.end_type and place.bracket:
        failed = get(event.data, "error") is not ABSENT
        if live:
            _add(found, check_bracket_body(place, event, failed))
        committed = place.rules.committed_overflow(place, event, failed)
        if committed is not None:
            place.overflow_committed = committed
        place.bracket = False
    elif live and kind == "turn/end" and place.overflow_committed is not None:
        _add(found, check_overflow_retry(place, event))
    elif kind in place.releasing:
        place.bracket = False
    elif live and kind == place.summary_type:
        _add(found, check_range_anchoring(place, event))
    match kind:
        case "step/start":
            place.overflow_committed = None
            place.in_step, place.message, place.message_event, place.results, place.failed_attempt = True, False, None, 0, False
            place.failure_code = ABSENT
        case "step/end":
            place.last_step_failed = not place.message
            place.last_failure_code = place.failure_code if not place.message else ABSENT
            place.in_step = False
        case "turn/start":
            place.in_step, place.last_step_failed = False, False
        case "assistant/chunk":
            take_chunk(place, event)
        case _:
            pass


def take_surface(place: TriggerPlace, event: Event, live: bool, found: list[Rejected]) -> None:
    """A surface event: a replace outside a bracket is a prune (its place judged), one inside a bracket with a
    checkpoint source the checkpoint (its source judged); an append is the step's message or result; inside a
    bracket either is the bracket's.  Then the surface's head and last node (SURF-8): an append extends the tail; a
    replace changes them only when it starts at the head or ends at the last node."""
    op, kind, seq = event.surface_op, event.type, event.seq
    if isinstance(op, JsonObject):
        if live and kind == "tool/result" and not place.bracket:
            _add(found, check_prune_placement(place, event))
        elif live and kind == "user/message" and place.bracket and is_checkpoint_source(get(event.data, "source")):
            _add(found, check_checkpoint_source(event, place.dialect))
    elif op == "append":
        if kind == "assistant/message":
            place.message, place.message_event = True, event
        elif kind == "tool/result":
            place.results += 1
    if place.bracket:
        take_bracket_event(place, event)
    if kind not in place.eligible:
        return
    if op == "append":
        place.head = seq if place.size == 0 else place.head
        place.last = seq
        place.size += 1
        return
    if get(op, "start") == place.head:
        place.head = seq
    if get(op, "end") == place.last:
        place.last = seq
