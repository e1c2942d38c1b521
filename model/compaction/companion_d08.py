"""The D08 compaction companion (``611615650f`` ``compaction/src/invariant.ts``), as overrides of the A55 one.

Each function here is a *Modified* function of :mod:`model.compaction.companion` of the same name and signature;
everything not listed is the A55 definition unchanged.  :mod:`model.compaction.companion_dialect` is the one place
that selects these.
"""

from __future__ import annotations

from sessionspec.model.compaction.companion import NONE, BracketWatch, Findings, LoggedBracket, owner_findings
from sessionspec.model.compaction.d08 import turn_owner
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Event
from sessionspec.model.loop_log.track import show
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements


def _veto(event: Event, why: str, rule: str = "DIA-19") -> Findings:
    return (Rejected(rule=rule, seq=event.seq, reason=why),)


@decides("DIA-19")
@implements("DIA-19")
def take_turn_start(watch: BracketWatch, event: Event) -> Findings:
    """DIA-19: "The D08 compaction companion additionally MUST veto: empty `compactionId`; mismatched id or
    `sourceCommandId` within a bracket; owner violations (`null` needs no open turn, a number needs that open
    turn); a checkpoint-sourced **replace** `user/message` that does not name the open bracket's id;
    `turn/start`/`turn/end` while a bracket is open. On replay `session/end-seed` clears an open bracket."

    Modified :func:`model.compaction.companion.take_turn_start`: no turn boundary inside a bracket."""
    found = _veto(event, "turn/start while a compaction bracket is open") if watch.bracket is not None else NONE
    watch.open_turn = get(event.data, "turn")
    return found


@decides("DIA-19")
def take_turn_end(watch: BracketWatch, event: Event) -> Findings:
    """Modified :func:`model.compaction.companion.take_turn_end` (DIA-19): no turn boundary inside a bracket, and
    the bracket stays open (D08 has no Q-12 reset)."""
    watch.open_turn = None
    return _veto(event, "turn/end while a compaction bracket is open") if watch.bracket is not None else NONE


@decides("DIA-19")
def check_owner(watch: BracketWatch, event: Event) -> Findings:
    """Modified :func:`model.compaction.companion.check_owner` (DIA-19, DIA-3): the bracket names the owner the
    writer's lock gives it (:func:`model.compaction.d08.turn_owner`: a ``turn: null`` bracket is manual and needs
    no open turn, a numbered one that open turn, as the real invariant's ``validateOwner``); the ``compactionId``
    is non-empty."""
    manual = get(event.data, "turn") is None
    # A numbered bracket's owner is A55's rule (CMP-14), kept; the manual one is D08's own (DIA-19).
    found = owner_findings(event, turn_owner(watch.open_turn, manual=manual), "DIA-19" if manual else "CMP-14")
    cid = get(event.data, "compactionId")
    return found + _veto(event, f"compactionId {show(cid)}, not a non-empty string") if not isinstance(cid, str) or not cid else found


@decides("DIA-19")
def same_bracket(event: Event, bracket: LoggedBracket) -> Findings:
    """Modified :func:`model.compaction.companion.same_bracket` (DIA-19): one ``compactionId`` per bracket."""
    if get(event.data, "compactionId") != bracket.compaction_id:
        return _veto(event, "compactionId differs within the bracket")
    return NONE


@decides("DIA-19", "DIA-16", "P-DIA-2")
def checkpoint_placed(event: Event, bracket: LoggedBracket, summary: Event) -> Findings:
    """Modified :func:`model.compaction.companion.checkpoint_placed`: DIA-19, the source names the bracket's
    ``compactionId``; DIA-16, the checkpoint is adjacent to its summary."""
    found = NONE
    if get(get(event.data, "source"), "compactionId") != bracket.compaction_id:
        found += _veto(event, "checkpoint does not name the open bracket's compactionId")
    if event.seq != summary.seq + 1:
        found += _veto(event, "checkpoint is not adjacent to its summary", "DIA-16")
    return found


@decides("DIA-16", "P-DIA-2")
def end_placed(event: Event, bracket: LoggedBracket) -> Findings:
    """Modified :func:`model.compaction.companion.end_placed` (DIA-16): a successful end is adjacent to its checkpoint."""
    if get(event.data, "error") is ABSENT and bracket.checkpoint is not None and event.seq != bracket.checkpoint.seq + 1:
        return _veto(event, "end is not adjacent to its checkpoint", "DIA-16")
    return NONE
