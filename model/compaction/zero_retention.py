"""The range a compaction selected with ``retainTokens = 0`` takes, decided in a log (CMP-9, CMP-11, DIA-20).

An overflow recovery (``compact_after_overflow``, CMP-9) and a D08 manual compaction (``compact_manually``, DIA-20)
select their range with ``retainTokens = 0``.  The retention walk (CMP-11, :func:`retention_cut`) then keeps the
last node whatever the prices, so such a range is decided from the log alone: :func:`select_range` over the
surface with every price 0.  Pressure ranges depend on ``retainTokens`` (not logged) and are not judged here.

Which bracket was selected so is read from where it lies (:class:`BracketPlace`, moved on by
:func:`take_bracket_event`): A55 writes an overflow recovery between steps (the request-error listener); D08
writes it inside the failed step, after the failed attempt's error ``finish`` (DIA-7), and a manual compaction
with owner ``null`` (DIA-20).  The one dialect difference is :func:`zero_retention_rule`'s ``match``.

``sessionspec check`` runs these definitions over a log (``sessionspec/check/retention_audit.py``);
``tests/model/test_zero_retention.py`` holds them against the loop that writes the brackets, both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sessionspec.model.compaction.dialect import compaction_type
from sessionspec.model.compaction.records import Range
from sessionspec.model.compaction.retention import select_range
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides


@dataclass(slots=True)
class BracketPlace:
    """Where a bracket opening now would lie in a ``dialect`` log: inside a step, after the step's appended
    message, after a failed attempt of the step (D08: its latest ``finish`` carried an error); and the rule the
    open bracket's range answers to (:func:`zero_retention_rule`).  Mutable, owned by whoever folds the log."""

    dialect: Dialect
    step_open: bool = False
    message: bool = False
    failed_attempt: bool = False
    rule: str | None = None
    start_type: str = field(init=False)
    summary_type: str = field(init=False)
    # The event types that move the place (:func:`take_bracket_event` leaves it as it is for any other).
    moved_by: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.start_type, self.summary_type = compaction_type(self.dialect, "start"), compaction_type(self.dialect, "summary")
        self.moved_by = _moving_types(self.dialect) | {self.start_type, self.summary_type}


def _moving_types(dialect: Dialect) -> frozenset[str]:
    """The boundaries of steps and turns and the appended message; DIA-7: in D08 the ``finish`` chunks too (only
    D08 reads a failed attempt, :func:`zero_retention_rule`)."""
    boundaries = frozenset({"step/start", "step/end", "turn/start", "turn/end", "assistant/message"})
    match dialect:
        case Dialect.A55:
            return boundaries
        case Dialect.D08:
            return boundaries | {"assistant/chunk"}


def take_bracket_event(place: BracketPlace, event: Event) -> str | None:
    """Move ``place`` on by one event (an event of none of its ``moved_by`` types changes nothing the rule is read
    from, so a folder may hand it only those), and return
    the rule a summary's range answers to when ``event`` is the summary of a bracket selected with
    ``retainTokens = 0`` (else None).  A ``step/start`` opens a step, its end
    or a turn's start or end closes it, an appended ``assistant/message`` is the step's message, a ``finish``
    chunk ends an attempt, failed when its reason is an error (DIA-7; only D08 reads the mark), and a bracket's
    start fixes the rule of its range."""
    kind = event.type
    match kind:
        case "assistant/chunk":
            chunk = get(event.data, "chunk")
            if get(chunk, "type") == "finish":
                place.failed_attempt = get(get(chunk, "reason"), "kind") == "error"
            return None
        case "step/start":
            place.step_open, place.message, place.failed_attempt = True, False, False
        case "step/end" | "turn/end" | "turn/start":
            place.step_open, place.message, place.failed_attempt = False, False, False
        case "assistant/message" if event.surface_op == "append":
            place.message = True
        case _:
            pass
    if kind == place.start_type:
        place.rule = zero_retention_rule(place, event)
    elif kind == place.summary_type:
        rule, place.rule = place.rule, None
        return rule
    return None


def zero_retention_rule(place: BracketPlace, start: Event) -> str | None:
    """The rule the range of the bracket opened by ``start`` answers to when it was selected with
    ``retainTokens = 0`` (None: a pressure bracket, whose ``retainTokens`` is not logged).  A55: a bracket between
    steps is the overflow recovery's (CMP-9).  DIA-20: a D08 bracket with owner ``null`` is a manual compaction;
    DIA-7: one inside the step after its failed attempt, before any message, the overflow recovery's (CMP-9)."""
    match place.dialect:
        case Dialect.A55:
            return None if place.step_open else "CMP-9"
        case Dialect.D08:
            if get(start.data, "turn") is None:
                return "DIA-20"
            return "CMP-9" if place.step_open and place.failed_attempt and not place.message else None


def zero_retention_range(nodes: Sequence[int], events: Sequence[Event], dialect: Dialect) -> Range | None | Rejected:
    """The range :func:`select_range` gives the surface ``nodes`` (their events readable by seq in ``events``) with
    ``retainTokens = 0``: the walk stops at the last node whatever its price (CMP-11), so every price is 0 here."""
    return select_range([(seq, 0) for seq in nodes], nodes, events, 0, dialect)


@decides("CMP-9", "CMP-11", "DIA-20")
def check_zero_retention_summary(summary: Event, rule: str, nodes: Sequence[int], events: Sequence[Event],
                                 dialect: Dialect) -> Rejected | None:
    """The summary of a bracket selected with ``retainTokens = 0`` (``rule``: :func:`zero_retention_rule`) over
    the surface ``nodes`` shadows the range :func:`zero_retention_range` selects: its ``shadowedRange`` ends where
    that range ends.  A surface the selection refuses (CMP-10's corrupt pairing) is that rule's finding, not this
    one's; a summary without a range end is the record shape's."""
    end = get(get(summary.data, "shadowedRange"), "end")
    if end is ABSENT:
        return None
    selected = zero_retention_range(nodes, events, dialect)
    if isinstance(selected, Rejected):
        return None
    want = None if selected is None else selected.end
    if end == want:
        return None
    what = "no range (every cut before the last node splits a tool pair)" if want is None else f"a range ending at seq {want}"
    return Rejected(rule=rule, seq=summary.seq, reason=f"a compaction selected with retainTokens 0 ends at seq {end!r}; the retention walk gives {what}")
