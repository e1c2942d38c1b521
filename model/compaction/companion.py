"""The compaction companion's judgement of a log (CMP-25, DIA-19) and the bracket's record as a log shows it
(CMP-14, CMP-15, CMP-10, CMP-20, CMP-21, CMP-22, DIA-16), decided event by event.

The harness's dev companion (``packages/compact/compact/src/invariant.ts``; D08 ``compaction/src/invariant.ts``)
vetoes every append that would break a bracket's lifecycle; the region transaction (:mod:`model.compaction.region`)
writes brackets it accepts.  :class:`BracketWatch` is what a log has shown so far (the open turn, the open
bracket); the functions below decide one event against it, each for the events of its type.  The D08 differences are an overlay
(:mod:`model.compaction.companion_d08`'s functions replacing the A55 ones of :data:`A55_COMPANION`), selected
once in :mod:`model.compaction.companion_dialect`; no rule body branches on the dialect.

``sessionspec check`` runs these definitions over a log (``sessionspec/check/compaction_audit.py`` drives one
watch); the region transaction writes the brackets they accept (``tests/model/test_compaction_companion.py``
holds the two together both ways).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, final

from sessionspec.model.compaction.brackets import is_checkpoint_source
from sessionspec.model.compaction.lock import turn_owner
from sessionspec.model.compaction.records import Owner
from sessionspec.model.compaction.region import region_positions
from sessionspec.model.compaction.summary import check_summary_smaller, frame_summary
from sessionspec.model.header import EpochHeader, header_holds_placeholder
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, is_safe_int, json_eq
from sessionspec.model.log import Event
from sessionspec.model.placeholder import mentions_placeholder
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

Findings = tuple[Rejected, ...]
NONE: Final[Findings] = ()


class PricedNodes(Protocol):
    """The priced surface before the event judged (MTR-7, :class:`model.meter.PricedSurface`): the node seqs, the
    priced total of a range of positions (CMP-15's ``shadowedTokenCount``), and whether a range splits a
    tool-call/result pair (CMP-10's counter, :func:`model.compaction.retention.balanced_cuts`; a corrupt
    surface, its first node named)."""

    @property
    def seqs(self) -> list[int]: ...

    def range_tokens(self, start_idx: int, end_idx: int) -> int: ...

    def splits(self, start_idx: int, end_idx: int) -> bool | Rejected: ...


@dataclass(slots=True)
class LoggedBracket:
    """An open bracket as the log has shown it so far: its start, owner turn and id, its summary and checkpoint."""

    start: Event
    turn: Json | Absent
    compaction_id: Json | Absent
    summary: Event | None = None
    checkpoint: Event | None = None
    shadowed: tuple[int, ...] = ()


@dataclass(slots=True)
class BracketWatch:
    """What the companion has seen of a log: the open turn and the open bracket.  Mutable, like a loop ``Turn``:
    one per log, owned by whoever folds it (made by :func:`model.compaction.companion_dialect.bracket_watch`).
    ``rules``: the dialect's companion; ``types``: its bracket event names (CMP-1, DIA-1)."""

    rules: CompanionRules
    types: tuple[str, str, str]
    # The open turn/start's ``turn`` as logged; None: no open turn (the real invariant's ``openTurn``).
    open_turn: Json | Absent = None
    bracket: LoggedBracket | None = None


def _veto(rule: str, event: Event, why: str) -> Rejected:
    return Rejected(rule=rule, seq=event.seq, reason=why)


def take_turn_start(watch: BracketWatch, event: Event) -> Findings:
    """A ``turn/start`` opens its turn (the owner a bracket names, CMP-14)."""
    watch.open_turn = get(event.data, "turn")
    return NONE


def take_turn_end(watch: BracketWatch, event: Event) -> Findings:
    """A ``turn/end`` closes its turn; Q-12: an orphan start never blocks a later turn (the lock scan is turn-local)."""
    watch.open_turn = None
    watch.bracket = None
    return NONE


@decides("CMP-14")
def check_owner(watch: BracketWatch, event: Event) -> Findings:
    """CMP-14: the bracket names the owner the writer's lock gives it (:func:`model.compaction.lock.turn_owner`);
    with none (no open turn, a ``null`` or absent ``turn``) the writer opens no bracket."""
    return owner_findings(event, turn_owner(watch.open_turn), "CMP-14")


def owner_findings(event: Event, owner: Owner | Rejected, rule: str) -> Findings:
    """The bracket's ``turn`` against the ``owner`` the writer's lock gives (either dialect's), named ``rule``."""
    if isinstance(owner, Rejected):
        return (_veto(rule, event, f"compaction bracket the writer would not open: {owner.reason}"),)
    if not json_eq(get(event.data, "turn"), owner.turn):
        return (_veto(rule, event, "compaction bracket not owned by the open turn"),)
    return NONE


def same_bracket(event: Event, bracket: LoggedBracket) -> Findings:
    """A55 brackets carry no id: every event of the open bracket is its own."""
    return NONE


def checkpoint_placed(event: Event, bracket: LoggedBracket, summary: Event) -> Findings:
    """A55 places no demand on the checkpoint beyond CMP-22's."""
    return NONE


def end_placed(event: Event, bracket: LoggedBracket) -> Findings:
    """A55 places no demand on the end beyond CMP-25's and CMP-22's."""
    return NONE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompanionRules:
    """The companion's functions a dialect may modify (each field names the A55 function)."""

    take_turn_start: Callable[[BracketWatch, Event], Findings]
    take_turn_end: Callable[[BracketWatch, Event], Findings]
    check_owner: Callable[[BracketWatch, Event], Findings]
    same_bracket: Callable[[Event, LoggedBracket], Findings]
    checkpoint_placed: Callable[[Event, LoggedBracket, Event], Findings]
    end_placed: Callable[[Event, LoggedBracket], Findings]


A55_COMPANION: Final = CompanionRules(
    take_turn_start=take_turn_start,
    take_turn_end=take_turn_end,
    check_owner=check_owner,
    same_bracket=same_bracket,
    checkpoint_placed=checkpoint_placed,
    end_placed=end_placed,
)


def on_turn_start(watch: BracketWatch, event: Event) -> Findings:
    """A ``turn/start``, by the dialect's companion (D08: DIA-19)."""
    return watch.rules.take_turn_start(watch, event)


def on_turn_end(watch: BracketWatch, event: Event) -> Findings:
    """A ``turn/end``, by the dialect's companion (D08: DIA-19)."""
    return watch.rules.take_turn_end(watch, event)


def clear_bracket(watch: BracketWatch) -> Findings:
    """DIA-19: "On replay `session/end-seed` clears an open bracket" (A55's seed is replayed the same way)."""
    watch.bracket = None
    return NONE


@decides("CMP-25", "FMT-4", "P-CMP-7")
@implements("CMP-25")
def check_start(watch: BracketWatch, event: Event) -> Findings:
    """CMP-25: "(dev companion) When loaded, it MUST veto: `compact/start` while a bracket is open; `compact/summary`
    without an open start, or a second one in the bracket, or with empty `shadowedSeqs`, `shadowedRange.start !=
    shadowedSeqs[0]`, `shadowedRange.end != shadowedSeqs[-1]`, or `shadowedTokenCount` not a non-negative safe
    integer; `compact/end` without an open start, with a different `turn`, or without `error` and without a prior
    summary."

    The start's clause, then the owner (CMP-14; D08: DIA-3, DIA-19); the start opens the bracket.  The summary's
    clauses are :func:`check_summary`'s, the end's :func:`check_end`'s."""
    found = (_veto("CMP-25", event, "compaction start while a bracket is open"),) if watch.bracket is not None else NONE
    found += watch.rules.check_owner(watch, event)
    watch.bracket = LoggedBracket(start=event, turn=get(event.data, "turn"), compaction_id=get(event.data, "compactionId"))
    return found


@decides("CMP-25", "CMP-15", "CMP-13", "CMP-10", "P-CMP-3")
def check_summary(watch: BracketWatch, event: Event, surface: PricedNodes, header: EpochHeader | Absent,
                  before: Sequence[Event]) -> Findings:
    """CMP-25's summary clauses, then CMP-15 against the surface before ``event``: the recorded range is a region of
    it (CMP-13's positions, :func:`model.compaction.region.region_positions`), ``shadowedSeqs`` its nodes, the range
    splits no tool pair (CMP-10) and ``shadowedTokenCount`` is their priced sum.  FMT-6: a scrubbed header or
    shadowed node makes the price unknown, so a count the meter disagrees with is not judged (asked only then: a
    count it agrees with is no finding whatever the walk finds).  ``before``: the events before ``event``, by seq."""
    bracket = watch.bracket
    if bracket is None:
        return (_veto("CMP-25", event, "summary without an open compaction start"),)
    found = watch.rules.same_bracket(event, bracket)
    if bracket.summary is not None:
        return (*found, _veto("CMP-25", event, "second summary in one bracket"))
    bracket.summary = event
    data = event.data
    seqs, rng, count = get(data, "shadowedSeqs"), get(data, "shadowedRange"), get(data, "shadowedTokenCount")
    start, end = get(rng, "start"), get(rng, "end")
    if not isinstance(seqs, tuple) or not seqs or start != seqs[0] or end != seqs[-1]:
        return (*found, _veto("CMP-25", event, "shadowedSeqs/shadowedRange malformed"))
    if not is_safe_int(count) or not isinstance(count, int) or count < 0:
        return (*found, _veto("CMP-25", event, "shadowedTokenCount is not a non-negative safe integer"))
    nodes = surface.seqs
    positions = region_positions(nodes, start, end)
    if isinstance(positions, Rejected):
        return (*found, _veto("CMP-15", event, "shadowedRange is not a range of the current surface"))
    i, j = positions
    shadowed = tuple(nodes[i : j + 1])
    if shadowed != seqs:
        return (*found, _veto("CMP-15", event, "shadowedSeqs differ from the surface range"))
    bracket.shadowed = shadowed
    splits = surface.splits(i, j)
    if isinstance(splits, Rejected):
        found += (splits,)
    elif splits:
        found += (_veto("CMP-10", event, "compacted range splits a tool-call/result pair"),)
    recomputed = surface.range_tokens(i, j)
    if recomputed != count and not (header_holds_placeholder(header) or any(mentions_placeholder(before[s].data) for s in shadowed)):
        found += (_veto("CMP-15", event, f"shadowedTokenCount {count} != recomputed {recomputed}"),)
    return found


def is_logged_checkpoint(event: Event) -> bool:
    """A checkpoint as compaction writes it (CMP-2, CMP-22): a checkpoint-sourced ``user/message`` replace."""
    return event.type == "user/message" and is_checkpoint_source(get(event.data, "source")) and isinstance(event.surface_op, JsonObject)


@decides("CMP-22", "CMP-20", "CMP-21", "P-CMP-1", "P-CMP-6", "FMT-4")
def check_checkpoint(watch: BracketWatch, event: Event) -> Findings:
    """A checkpoint replace inside a bracket, against its summary: CMP-22's range and provenance ``[startSeq,
    summarySeq] ++ shadowed``, CMP-20's framed content, CMP-21's shrink (the framed summary priced below
    ``shadowedTokenCount``).  Outside any bracket a checkpoint-sourced replace is not one compaction wrote (real
    snapshot fixtures plant such nodes, e.g. acp-agent agent-instructions): the surface fold validated it."""
    bracket = watch.bracket
    if bracket is None:
        return NONE
    summary = bracket.summary
    bracket.checkpoint = event
    if summary is None:
        return (_veto("CMP-22", event, "checkpoint replace inside a bracket before its summary"),)
    found = NONE
    op, rng = event.surface_op, get(summary.data, "shadowedRange")
    if get(op, "start") != get(rng, "start") or get(op, "end") != get(rng, "end"):
        found += (_veto("CMP-22", event, "checkpoint replace range differs from shadowedRange"),)
    if not json_eq(event.source_event_seqs, (bracket.start.seq, summary.seq, *bracket.shadowed)):
        found += (_veto("CMP-22", event, "checkpoint provenance is not [start, summary] ++ shadowed"),)
    content, raw = get(event.data, "content"), get(summary.data, "summary")
    if not isinstance(raw, tuple) or not json_eq(content, frame_summary(raw)):
        found += (_veto("CMP-20", event, "checkpoint content is not the framed summary"),)
    count = get(summary.data, "shadowedTokenCount")
    if isinstance(count, int) and isinstance(content, tuple) and not isinstance(check_summary_smaller(content, count), int):
        found += (_veto("CMP-21", event, "framed summary is not smaller than the shadowed content"),)
    return found + watch.rules.checkpoint_placed(event, bracket, summary)


@decides("CMP-25", "CMP-22", "FMT-4")
def check_end(watch: BracketWatch, event: Event) -> Findings:
    """CMP-25's end clauses (an open start, the start's turn, a summary unless it failed) and CMP-22's (a
    successful end follows its checkpoint).  The end closes the bracket."""
    bracket, watch.bracket = watch.bracket, None
    if bracket is None:
        return (_veto("CMP-25", event, "end without an open compaction start"),)
    found = watch.rules.same_bracket(event, bracket)
    if get(event.data, "turn") != bracket.turn:
        found += (_veto("CMP-25", event, "end turn differs from start turn"),)
    if get(event.data, "error") is ABSENT:
        if bracket.summary is None:
            found += (_veto("CMP-25", event, "successful end without a summary"),)
        if bracket.checkpoint is None:
            found += (_veto("CMP-22", event, "successful end without a checkpoint"),)
    return found + watch.rules.end_placed(event, bracket)
