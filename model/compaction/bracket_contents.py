"""What a compaction bracket in a log holds (CMP-2, CMP-12, CMP-19, CMP-23, DIA-2), and the walk that decides a
log's brackets event by event with :mod:`sessionspec.model.compaction.trigger_place`.

The checkpoint's source is what the writer writes (:func:`sessionspec.model.compaction.brackets.checkpoint_source`;
D08: the overlay's, naming the bracket, DIA-2); the range is the retention walk's
(:func:`sessionspec.model.compaction.retention.select_range`: head-anchored, the retained tail never empty); a
bracket whose summarization saw the surface change, or which failed, commits no checkpoint (CMP-19, CMP-23).
:func:`take_event` is the acceptor: one event, the place moved on, each finding of the rules above appended
(the range's, which needs the priced surface, is :func:`check_range_selectable`, run at a summary by the fold
that prices it, ``sessionspec/check/compaction_audit.py``).

``sessionspec check`` runs it over a log (``sessionspec/check/compaction_rules_audit.py``);
``tests/model/test_trigger_place.py`` holds it against the loop that writes the brackets, both ways.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.brackets import is_checkpoint_source
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.records import Ids
from sessionspec.model.compaction.region import region_positions
from sessionspec.model.compaction.retention import retention_cut
from sessionspec.model.compaction.trigger_place import (
    TriggerPlace,
    check_bracket_closed,
    check_bracket_placement,
    check_overflow_retry,
    check_prune_placement,
    take_bracket_event,
    take_chunk,
)
from sessionspec.model.header import EpochHeader, header_holds_placeholder
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop_log.track import show
from sessionspec.model.placeholder import mentions_placeholder
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides


def logged_ids(source: Json | Absent) -> Ids:
    """The ids a checkpoint source shows (DIA-2's ``compactionId`` and ``sourceCommandId``), as the writer holds
    them: a value no writer holds (not a string) is read as none, so the source rebuilt from them differs there."""
    compaction_id, command_id = get(source, "compactionId"), get(source, "sourceCommandId")
    return Ids(compaction_id=compaction_id if isinstance(compaction_id, str) else "",
               source_command_id=command_id if isinstance(command_id, str) else None)


def source_difference(source: Json | Absent, written: JsonObject) -> str:
    """What differs between a logged checkpoint ``source`` and the one the writer writes (for the finding's words)."""
    if not isinstance(source, JsonObject):
        return "is not an object"
    if "compactionId" in written:
        # The writer writes ids (D08): a logged id that is no string is none it holds (logged_ids).
        odd = next((key for key in ("compactionId", "sourceCommandId") if key in source and not isinstance(source[key], str)), None)
        if odd is not None:
            return f"has the {odd} {show(source[odd])}, not a non-empty string"
    extra = [key for key in source if key not in written]
    if extra:
        return f"has the unexpected key {extra[0]!r}"
    missing = [key for key in written if key not in source]
    if missing:
        return f"lacks {missing[0]!r}"
    if tuple(source) != tuple(written):
        return f"has its keys out of order ({', '.join(source)}; expected {', '.join(written)})"
    key = next(k for k in written if not json_eq(source[k], written[k]))
    return f"has the {key} {show(source[key])}, not {show(written[key])}"


@decides("CMP-2", "DIA-2")
def check_checkpoint_source(checkpoint: Event, dialect: Dialect) -> Rejected | None:
    """A checkpoint's ``source`` (a ``user/message`` replace inside a bracket whose source
    :func:`is_checkpoint_source`) is exactly the one the writer writes (``checkpoint_message``'s source: CMP-2's
    ``{kind:"plugin", plugin:"compact"}``; D08's :func:`sessionspec.model.compaction.d08.checkpoint_source`, DIA-2)
    for the ids the log shows (:func:`logged_ids`), as JSON text (key order included).  The writer's
    ``compactionId`` is a random UUID: an empty one is no id it writes (DIA-2, "a non-empty string")."""
    source = get(checkpoint.data, "source")
    match dialect:
        case Dialect.A55:
            rule = "CMP-2"
        case Dialect.D08:
            rule = "DIA-2"
    written = get(rules_of(dialect).checkpoint_message((), logged_ids(source)), "source")
    assert isinstance(written, JsonObject)
    if not json_eq(source, written):
        flaw = source_difference(source, written)
    elif get(written, "compactionId") == "":
        flaw = 'has the compactionId "", not a non-empty string'
    else:
        return None
    return Rejected(rule=rule, seq=checkpoint.seq, reason=f"checkpoint source {flaw}")


@decides("CMP-12", "P-CMP-4")
def check_range_selectable(summary: Event, nodes: Sequence[int], tokens: Sequence[int], balanced: Sequence[bool],
                           header: EpochHeader | Absent, before: Sequence[Event]) -> Rejected | None:
    """A summary's ``shadowedRange`` is one :func:`~sessionspec.model.compaction.retention.select_range` gives
    for some ``retainTokens`` (not logged) on the priced surface before it (``nodes``, their ``tokens``, and
    CMP-10's ``balanced`` cuts).  The retention walk's cut never rises as ``retainTokens`` grows; one above the
    tokens after the range stops head-ward of its end, one at most them keeps at least as much as they do; so
    the range's end is selectable iff :func:`retention_cut` at exactly those tokens keeps from the node after
    it.  Not judged: a range not on the surface or malformed (CMP-15, CMP-25), an unbalanced cut (CMP-10's
    finding), a scrubbed header or retained node (FMT-6: their prices are unknown)."""
    rng = get(summary.data, "shadowedRange")
    start, end = get(rng, "start"), get(rng, "end")
    positions = None if start is ABSENT or end is ABSENT else region_positions(nodes, start, end)
    if positions is None or isinstance(positions, Rejected):
        return None
    start_idx, end_idx = positions
    keep = end_idx + 1
    if start_idx != 0:
        return Rejected(rule="CMP-12", seq=summary.seq, reason=f"compaction range starts at seq {nodes[start_idx]}, not at the surface head {nodes[0]} (automatic ranges are head-anchored)")
    if not balanced[keep]:
        return None
    if keep == len(nodes):
        return Rejected(rule="CMP-12", seq=summary.seq, reason=f"compaction range ends at the last surface node {nodes[-1]} (the retention walk keeps at least one node)")
    retained = sum(tokens[keep:])
    cut = retention_cut(tokens, balanced, retained)
    # Prices are known only without placeholders; the walk is asked first, as it is cheaper than the scan.
    if cut == keep or header_holds_placeholder(header) or any(mentions_placeholder(before[seq].data) for seq in nodes[keep:]):
        return None
    # The walk stops at or after ``keep`` and rounds to a balanced cut no earlier than ``keep`` (balanced): it keeps less.
    return Rejected(rule="CMP-12", seq=summary.seq, reason=f"compaction range ends at seq {nodes[end_idx]}, which no retainTokens selects "
                                                         f"(retaining the {retained} tokens after it, the retention walk keeps from seq {nodes[cut]})")


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
