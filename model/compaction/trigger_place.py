"""Where a compaction bracket or a prune lies in a log, relative to the loop's steps (CMP-5..7, CMP-22, CMP-23,
DIA-6, PRN-6), decided event by event.

``compactIfNeeded`` runs only where its triggers call it: A55 in ``agent/post-step`` (CMP-6,
:func:`sessionspec.model.compaction.run.pressure_compaction`) and after a failed step's ``step/end`` (CMP-7,
:func:`sessionspec.model.compaction.run.recover_overflow`); D08 in ``agent/pre-step`` (DIA-6) and inside the step of
a failed attempt (DIA-7).  :class:`TriggerPlace` is what the log so far shows of that place: the open step (its
message, its tool results, its attempt's failure), the last step's failure, the open bracket, and the surface's head
and last node (for the range, :mod:`sessionspec.model.compaction.bracket_contents`).  The deciding functions judge
a bracket's start, a prune replacement, a step boundary inside a bracket and a turn end after a committed recovery
against it.  The dialect differences are one overlay, :func:`place_rules` (DIA-5, DIA-6, DIA-7).

``sessionspec check`` runs these definitions over a log (``sessionspec/check/compaction_rules_audit.py`` keeps a
TriggerPlace and hands it the events); ``tests/model/test_trigger_place.py`` holds them against the loop that
writes the brackets, both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.compaction.brackets import is_checkpoint_source
from sessionspec.model.compaction.dialect import compaction_type
from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.compaction.zero_retention import BracketPlace, zero_retention_rule
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.message_shape import message_content
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

# The reasons a turn may end with a bracket still open (Q-12: a failure to append the error end) and
# the ones that end a turn without the retry a committed recovery asks for (CMP-7: "not aborted").
_FAILING_ENDS: Final = ("error", "aborted", "disposed", "interrupted")
_INTERRUPTED_ENDS: Final = ("aborted", "disposed", "interrupted")


@dataclass(slots=True)
class TriggerPlace:
    """What the log so far shows of the place a compaction or a prune would run at: the surface's head and last
    node (SURF-8), the open step (its appended message, its tool results, its attempt's failure), the last
    step's failure, whether a ``request/header`` routed a target (CMP-5), and the open bracket (the appends
    during it, its checkpoint, a ``step/end`` inside it).  Mutable, owned by whoever folds the log."""

    dialect: Dialect
    head: int | None = None
    last: int | None = None
    size: int = 0
    in_step: bool = False
    message: bool = False
    # The step's last assistant/message append (its tool calls are counted where a decision reads them).
    message_event: Event | None = None
    results: int = 0
    failed_attempt: bool = False
    failure_code: Json | Absent = ABSENT
    last_step_failed: bool = False
    last_failure_code: Json | Absent = ABSENT
    header: bool = False
    bracket: bool = False
    surface_append: int | None = None
    checkpoint: int | None = None
    overflow_committed: int | None = None
    step_end_in_bracket: int | None = None
    eligible: frozenset[str] = field(init=False)
    start_type: str = field(init=False)
    summary_type: str = field(init=False)
    end_type: str = field(init=False)
    rules: PlaceRules = field(init=False)
    # The events after which no bracket is open any more (the dialect's ``PlaceRules.releasing``).
    releasing: frozenset[str] = field(init=False)
    # The event types that move the place or are judged other than as surface events (most events are neither).
    boundaries: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.eligible = surface_types(self.dialect)
        self.start_type, self.summary_type, self.end_type = (compaction_type(self.dialect, part) for part in ("start", "summary", "end"))
        self.rules = place_rules(self.dialect)
        self.releasing = self.rules.releasing
        self.boundaries = frozenset({self.start_type, self.summary_type, self.end_type, *self.releasing, "request/header",
                                     "step/start", "step/end", "turn/start", "turn/end", "assistant/chunk"})

    def calls(self) -> int:
        """The tool calls of the step's ``assistant/message``: read only at a bracket or a prune inside a step."""
        return 0 if self.message_event is None else _tool_calls(self.message_event, self.dialect)


def _tool_calls(event: Event, dialect: Dialect) -> int:
    """The tool-call blocks of a message (its content: :func:`sessionspec.model.message_shape.message_content`)."""
    content = message_content(event, dialect)
    return sum(1 for b in content if get(b, "type") == "tool-call") if isinstance(content, tuple) else 0


def take_chunk(place: TriggerPlace, event: Event) -> None:
    """A chunk ends an attempt at its ``finish``: failed with an error (DIA-7), whose failure code CMP-7 reads;
    every other chunk moves nothing."""
    # Read in place: this runs at every chunk, where a call per read was most of its cost.
    data = event.data
    chunk = data.get("chunk", ABSENT) if type(data) is JsonObject else ABSENT
    if type(chunk) is JsonObject and chunk.get("type") == "finish":
        reason = get(chunk, "reason")
        place.failed_attempt = get(reason, "kind") == "error"
        place.failure_code = get(get(reason, "failure"), "code")


def take_bracket_event(place: TriggerPlace, event: Event) -> None:
    """Surface appends and the checkpoint inside the open bracket (CMP-19, CMP-22)."""
    if event.surface_op is ABSENT:
        return
    if isinstance(event.surface_op, str):
        place.surface_append = place.surface_append if place.surface_append is not None else event.seq
    elif event.type == "user/message" and is_checkpoint_source(get(event.data, "source")):
        place.checkpoint = event.seq


def written_by(place: TriggerPlace, start: Event, dialect: Dialect) -> str | None:
    """Which trigger writes a bracket starting here in a ``dialect`` log: the rule its range answers to by
    :func:`sessionspec.model.compaction.zero_retention.zero_retention_rule` (the one definition of it: "CMP-9" the
    overflow recovery, "DIA-20" a D08 manual compaction), None the pressure trigger."""
    view = BracketPlace(dialect, step_open=place.in_step, message=place.message, failed_attempt=place.failed_attempt)
    return zero_retention_rule(view, start)


def a55_bracket_place(place: TriggerPlace, event: Event) -> Rejected | None:
    """A55: pressure compaction runs in ``agent/post-step``, inside the step after the assistant message and the
    tool results, before ``step/end`` (CMP-6, :func:`sessionspec.model.compaction.lock.pressure_gate`); the only
    bracket outside a step is the overflow recovery after a failed step (CMP-7), and only for a logged
    ``CONTEXT_WINDOW_EXCEEDED`` (or an unlogged failure)."""
    if written_by(place, event, Dialect.A55) is None:
        if not place.message:
            return Rejected(rule="CMP-6", seq=event.seq, reason="pressure compaction bracket before the step's assistant/message (it runs in post-step)")
        if place.results < place.calls():
            return Rejected(rule="CMP-6", seq=event.seq, reason="pressure compaction bracket before the step's last tool result")
        return None
    if not place.last_step_failed:
        return Rejected(rule="CMP-6", seq=event.seq, reason="compaction bracket after the step/end of a successful step (pressure runs before step/end; only overflow recovery follows a failed step)")
    if place.last_failure_code is not ABSENT and place.last_failure_code != CONTEXT_WINDOW_EXCEEDED:
        return Rejected(rule="CMP-7", seq=event.seq, reason=f"overflow compaction after a failure with code {place.last_failure_code!r}, not {CONTEXT_WINDOW_EXCEEDED}")
    return None


def d08_bracket_place(place: TriggerPlace, event: Event) -> Rejected | None:
    """DIA-6: D08 pressure runs in ``agent/pre-step``, before ``step/start``
    (:func:`sessionspec.model.compaction.d08.pressure_gate`); inside a step only the overflow recovery of a failed
    attempt (DIA-7), before the retry's message; a manual bracket (owner ``null``) lies between turns (DIA-3)."""
    if written_by(place, event, Dialect.D08) is None and place.in_step:
        return Rejected(rule="DIA-6", seq=event.seq, reason="compaction bracket inside a step that is not recovering a failed attempt (D08 pressure runs in pre-step)")
    return None


def d08_prune_place(place: TriggerPlace, prune: Event) -> Rejected | None:
    """DIA-6 for a prune, with DIA-13: a D08 log may hold legacy turns the A55 loop wrote, whose windows are A55's."""
    bad = d08_bracket_place(place, prune)
    return None if bad is None or a55_bracket_place(place, prune) is None else bad


def a55_bracket_closed(place: TriggerPlace, event: Event) -> Rejected | None:
    """A55: every bracket is closed by ``compact/end`` -- on success after the checkpoint (CMP-22), on failure
    with its error (CMP-23) -- before the loop goes on: a pressure bracket before its step's ``step/end``
    (CMP-6), an overflow bracket before the retry's ``step/start``.  Only a failure to append the error end
    leaves the start open (Q-12); the turn then ends in error (or the crash repair closes it)."""
    rule = "CMP-22" if place.checkpoint is not None else "CMP-23"
    match event.type:
        case "step/end":
            place.step_end_in_bracket = event.seq
        case "step/start":
            return Rejected(rule=rule, seq=event.seq, reason="compaction bracket still open at the next step/start (every outcome closes it with compact/end)")
        case "turn/end" if get(get(event.data, "reason"), "kind") not in _FAILING_ENDS:
            return Rejected(rule=rule, seq=event.seq, reason="compaction bracket still open when the turn ends normally (every outcome closes it with compact/end)")
        case kind if kind == place.end_type and place.step_end_in_bracket is not None:
            return Rejected(rule="CMP-6", seq=event.seq, reason=f"compaction bracket closes after its step's step/end at seq {place.step_end_in_bracket} (pressure compaction runs before step/end)")
        case _:
            pass
    return None


def d08_bracket_closed(place: TriggerPlace, event: Event) -> Rejected | None:
    """DIA-5, DIA-7: a D08 bracket is not held to the step's boundaries: the overflow recovery lies inside the
    failed step and the lock (an unmatched ``compaction/start``) lasts until ``session/end-seed``."""
    return None


def a55_committed_overflow(place: TriggerPlace, event: Event, failed: bool) -> int | None:
    """CMP-7: a committed bracket outside a step is an overflow recovery, whose retry the turn owes."""
    return event.seq if not place.in_step and not failed and place.checkpoint is not None else None


def d08_committed_overflow(place: TriggerPlace, event: Event, failed: bool) -> int | None:
    """DIA-7: D08 retries inside the same step, so no turn end is owed a retry step."""
    return None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PlaceRules:
    """The functions a dialect modifies in where compaction runs (each field names the A55 function)."""

    bracket_place: Callable[[TriggerPlace, Event], Rejected | None]
    prune_place: Callable[[TriggerPlace, Event], Rejected | None]
    bracket_closed: Callable[[TriggerPlace, Event], Rejected | None]
    committed_overflow: Callable[[TriggerPlace, Event, bool], int | None]
    # The events after which no bracket is open any more (the A55 lock is turn-local, Q-12; DIA-5's lasts to the seed's end).
    releasing: frozenset[str]


A55_PLACE: Final = PlaceRules(bracket_place=a55_bracket_place, prune_place=a55_bracket_place, bracket_closed=a55_bracket_closed,
                              committed_overflow=a55_committed_overflow, releasing=frozenset({"session/end-seed", "turn/end"}))
D08_PLACE: Final = PlaceRules(bracket_place=d08_bracket_place, prune_place=d08_prune_place, bracket_closed=d08_bracket_closed,
                              committed_overflow=d08_committed_overflow, releasing=frozenset({"session/end-seed"}))


def place_rules(dialect: Dialect) -> PlaceRules:
    """A55's place of compaction, or D08's overlay (DIA-5, DIA-6, DIA-7)."""
    match dialect:
        case Dialect.A55:
            return A55_PLACE
        case Dialect.D08:
            return D08_PLACE


@decides("CMP-5", "CMP-6", "CMP-7", "DIA-6", "P-CMP-11")
def check_bracket_placement(place: TriggerPlace, start: Event) -> Rejected | None:
    """A bracket's ``start`` lies where the dialect's triggers run (:func:`a55_bracket_place`, CMP-6 and CMP-7;
    :func:`d08_bracket_place`, DIA-6), and an automatic one after a ``request/header`` (CMP-5: with no routed
    target ``compactIfNeeded`` returns none)."""
    bad = place.rules.bracket_place(place, start)
    if bad is None and not place.header and get(start.data, "turn") is not None:
        return Rejected(rule="CMP-5", seq=start.seq, reason="automatic compaction with no request/header before it (no routed target: compactIfNeeded returns none)")
    return bad


@decides("PRN-6")
def check_prune_placement(place: TriggerPlace, prune: Event) -> Rejected | None:
    """PRN-6: "A prune MUST run only from ``compactIfNeeded`` (pressure after the threshold qualifies, or
    overflow)", so a prune replacement outside a bracket lies where a bracket may start
    (:func:`a55_bracket_place`; D08: :func:`d08_prune_place`)."""
    bad = place.rules.prune_place(place, prune)
    if bad is None:
        return None
    where = bad.reason.replace("pressure compaction bracket", "").replace("compaction bracket", "").strip()
    return Rejected(rule="PRN-6", seq=prune.seq, reason=f"prune replacement outside the windows where compactIfNeeded runs ({bad.rule}: {where})")


@decides("CMP-6", "CMP-22", "CMP-23")
def check_bracket_closed(place: TriggerPlace, event: Event) -> Rejected | None:
    """A step or turn boundary, or the bracket's end, while a bracket is open: the dialect's
    :func:`a55_bracket_closed` (D08: :func:`d08_bracket_closed`)."""
    return place.rules.bracket_closed(place, event)


@decides("CMP-7", "P-CMP-10")
def check_overflow_retry(place: TriggerPlace, turn_end: Event) -> Rejected | None:
    """CMP-7: the overflow listener "returns ``retry`` iff not aborted and ``replaceGeneration > g0``": after a
    committed overflow compaction (:func:`a55_committed_overflow`) the turn runs a retry step, unless it was
    interrupted."""
    at = place.overflow_committed
    place.overflow_committed = None
    kind = get(get(turn_end.data, "reason"), "kind")
    if kind in _INTERRUPTED_ENDS:
        return None
    return Rejected(rule="CMP-7", seq=turn_end.seq, reason=f"turn ends {kind!r} after the overflow compaction committed at seq {at} (recovery retries the step)")
