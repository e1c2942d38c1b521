"""Where compaction runs, which range it takes, what its bracket holds (CMP-5, CMP-6, DIA-6, CMP-12, CMP-19, CMP-23), one fold.

Complements the compaction audit (bracket shapes, lock, provenance,
balance): the trigger placement of a bracket relative to the loop's steps,
and the automatic range's anchoring.  State: the surface's head and last
node (O(1) per event: a replace changes them only when it starts at the head
or ends at the last node), and the open step's message/answer counts.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import CHUNK, WalkFold
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction import compaction_type, is_checkpoint_source
from sessionspec.model.jsonval import Absent, Json, JsonObject, json_eq, obj
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.record_keys import key_flaw
from sessionspec.model.rejected import Rejected

OVERFLOW: Final = "CONTEXT_WINDOW_EXCEEDED"
CHECKPOINT_SOURCE: Final = obj((("kind", "plugin"), ("plugin", "compact")))

# The class as a constant of this module (compiled, an imported name is a dictionary lookup at each read).
_OBJECT: Final = JsonObject


@dataclass(slots=True)
class _State:
    head: int | None = None
    last: int | None = None
    size: int = 0
    in_step: bool = False
    message: bool = False
    # The step's last assistant/message append (its tool calls are counted where a check reads them).
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
    dialect: Dialect = A55  # the log's: how a message holds its content

    def calls(self) -> int:
        """The tool calls of the step's assistant/message: read only at a bracket or a prune inside
        a step, not at every message."""
        return 0 if self.message_event is None else _tool_calls(self.message_event, self.dialect)


def _fold_surface(s: _State, event: Event, eligible: frozenset[str]) -> None:
    """The head and last node of the surface (SURF-8)."""
    if event.type not in eligible:
        return
    op = event.surface_op
    if op == "append":
        s.head = event.seq if s.size == 0 else s.head
        s.last = event.seq
        s.size += 1
        return
    start, end = get(op, "start"), get(op, "end")
    if start == s.head:
        s.head = event.seq
    if end == s.last:
        s.last = event.seq


def _tool_calls(event: Event, dialect: Dialect) -> int:
    content = get(event.data, "content") if dialect is A55 else get(get(event.data, "message"), "content")
    return sum(1 for b in content if get(b, "type") == "tool-call") if isinstance(content, tuple) else 0


@audits("CMP-6", "CMP-7", "DIA-6", "P-CMP-11")
def check_bracket_placement(s: _State, event: Event, dialect: Dialect) -> Rejected | None:
    """CMP-6 (A55): pressure compaction runs in ``agent/post-step`` -- "inside
    the step, after the assistant message, tool results, deferred context
    and the post-stream steering drain, **before ``step/end``**"; the only
    bracket outside a step is the overflow recovery (CMP-7) after a failed
    step.  DIA-6 (D08): pressure runs in ``agent/pre-step``, before
    ``step/start``; inside a step only the overflow recovery of a failed
    attempt (DIA-7), before the retry's message; manual brackets (owner
    ``null``) lie between turns (DIA-3)."""
    if dialect is A55:
        if s.in_step and not s.message:
            return Rejected(rule="CMP-6", seq=event.seq, reason="pressure compaction bracket before the step's assistant/message (it runs in post-step)")
        if s.in_step and s.results < s.calls():
            return Rejected(rule="CMP-6", seq=event.seq, reason="pressure compaction bracket before the step's last tool result")
        if not s.in_step and not s.last_step_failed:
            return Rejected(rule="CMP-6", seq=event.seq, reason="compaction bracket after the step/end of a successful step (pressure runs before step/end; only overflow recovery follows a failed step)")
        if not s.in_step and s.last_failure_code is not ABSENT and s.last_failure_code != OVERFLOW:
            # CMP-7: recovery is attempted "only if failure.code == CONTEXT_WINDOW_EXCEEDED".
            return Rejected(rule="CMP-7", seq=event.seq, reason=f"overflow compaction after a failure with code {s.last_failure_code!r}, not {OVERFLOW}")
        return None
    if get(event.data, "turn") is None:
        return None
    if s.in_step and (s.message or not s.failed_attempt):
        return Rejected(rule="DIA-6", seq=event.seq, reason="compaction bracket inside a step that is not recovering a failed attempt (D08 pressure runs in pre-step)")
    return None


@audits("PRN-6")
def check_prune_placement(s: _State, event: Event, dialect: Dialect) -> Rejected | None:
    """PRN-6: "A prune MUST run only from ``compactIfNeeded`` (pressure after the threshold
    qualifies, or overflow)", so a prune replacement (a ``tool/result`` replace) outside a
    compaction bracket lies where ``compactIfNeeded`` runs: A55 in ``agent/post-step`` after the
    step's message and results (CMP-6) or after a failed step's ``step/end`` (CMP-7); D08 in
    ``agent/pre-step`` outside a step (DIA-6) or inside the step of a failed attempt (DIA-7).
    The windows are the bracket's (``check_bracket_placement``); a finding names PRN-6."""
    bad = check_bracket_placement(s, event, dialect)
    if bad is not None and dialect is D08 and check_bracket_placement(s, event, A55) is None:
        bad = None  # a D08 log may hold legacy turns the A55 loop wrote (DIA-13): their windows are A55's
    if bad is None:
        return None
    where = bad.reason.replace("pressure compaction bracket", "").replace("compaction bracket", "").strip()
    return Rejected(rule="PRN-6", seq=event.seq, reason=f"prune replacement outside the windows where compactIfNeeded runs ({bad.rule}: {where})")


@audits("CMP-12", "P-CMP-4")
def check_range_anchoring(s: _State, event: Event) -> Rejected | None:
    """CMP-12: "Automatic ranges MUST be head-anchored (start = current
    surface head [...])"; CMP-11: the retention walk keeps at least one node
    ("the retained tail has at least one node"), so a range never ends at
    the last node.  Every A55 compaction is automatic; a D08 manual one
    selects with ``retainTokens = 0`` through the same walk (DIA-20)."""
    rng = get(event.data, "shadowedRange")
    start, end = get(rng, "start"), get(rng, "end")
    if start is ABSENT or end is ABSENT or s.head is None:
        return None  # CMP-1/CMP-25 report the shape
    if start != s.head:
        return Rejected(rule="CMP-12", seq=event.seq, reason=f"compaction range starts at seq {start!r}, not at the surface head {s.head} (automatic ranges are head-anchored)")
    if end == s.last:
        return Rejected(rule="CMP-12", seq=event.seq, reason=f"compaction range ends at the last surface node {s.last} (the retention walk keeps at least one node)")
    return None


@audits("CMP-19", "CMP-23", "P-CMP-2")
def check_bracket_body(s: _State, event: Event, failed: bool) -> Rejected | None:
    """At a bracket's end.  CMP-19: a surface append while the summarizer ran
    makes the commit fail ("session surface changed during summarization"),
    so a bracket with such an append has no checkpoint; CMP-23: a failed
    bracket leaves the surface unchanged, so it has no checkpoint."""
    if s.checkpoint is None:
        return None
    if failed:
        return Rejected(rule="CMP-23", seq=event.seq, reason=f"failed compaction end after the checkpoint at seq {s.checkpoint} (a failure leaves the surface unchanged)")
    if s.surface_append is not None:
        return Rejected(rule="CMP-19", seq=event.seq, reason=f"compaction committed although the surface changed during summarization (append at seq {s.surface_append})")
    return None


@audits("CMP-2", "DIA-2")
def check_checkpoint_source(event: Event, dialect: Dialect) -> Rejected | None:
    """CMP-2: "The checkpoint source MUST be exactly ``{kind:"plugin",
    plugin:"compact"}``"; DIA-2 (D08): ``{kind:"plugin", plugin:"compact",
    compactionId, sourceCommandId?}`` (key order as listed), the id a
    non-empty string."""
    source = get(event.data, "source")
    if dialect is A55:
        if json_eq(source, CHECKPOINT_SOURCE):
            return None
        return Rejected(rule="CMP-2", seq=event.seq, reason="checkpoint source is not exactly {kind:\"plugin\", plugin:\"compact\"}")
    flaw = key_flaw(source, (("kind", True), ("plugin", True), ("compactionId", True), ("sourceCommandId", False)))
    if flaw is None and not (isinstance(get(source, "compactionId"), str) and get(source, "compactionId")):
        flaw = "has an empty compactionId"
    if flaw is None:
        return None
    return Rejected(rule="DIA-2", seq=event.seq, reason=f"checkpoint source {flaw}")


def _bracket_event(s: _State, event: Event) -> None:
    """Surface appends and the checkpoint inside the open bracket (the walk calls it only there)."""
    if event.surface_op is ABSENT:
        return
    if isinstance(event.surface_op, str):
        s.surface_append = s.surface_append if s.surface_append is not None else event.seq
    elif event.type == "user/message" and is_checkpoint_source(get(event.data, "source")):
        s.checkpoint = event.seq


@audits("CMP-6", "CMP-22", "CMP-23")
def check_bracket_closed(s: _State, event: Event, end_t: str) -> Rejected | None:
    """A55: every bracket is closed by ``compact/end`` -- on success after the
    checkpoint (CMP-22), on failure with its error (CMP-23) -- before the loop
    goes on: a pressure bracket before its step's ``step/end`` (CMP-6), an
    overflow bracket before the retry's ``step/start``.  Only a failure to
    append the error end leaves the start open (Q-12); the turn then ends in
    error (or the crash repair closes it)."""
    rule = "CMP-22" if s.checkpoint is not None else "CMP-23"
    match event.type:
        case "step/end":
            s.step_end_in_bracket = event.seq
        case "step/start":
            return Rejected(rule=rule, seq=event.seq, reason="compaction bracket still open at the next step/start (every outcome closes it with compact/end)")
        case "turn/end" if get(get(event.data, "reason"), "kind") not in ("error", "aborted", "disposed", "interrupted"):
            return Rejected(rule=rule, seq=event.seq, reason="compaction bracket still open when the turn ends normally (every outcome closes it with compact/end)")
        case _ if event.type == end_t and s.step_end_in_bracket is not None:
            return Rejected(rule="CMP-6", seq=event.seq, reason=f"compaction bracket closes after its step's step/end at seq {s.step_end_in_bracket} (pressure compaction runs before step/end)")
        case _:
            pass
    return None


@audits("CMP-7", "P-CMP-10")
def check_overflow_retry(s: _State, event: Event) -> Rejected | None:
    """CMP-7: the overflow listener "returns ``retry`` iff not aborted and
    ``replaceGeneration > g0``": after a committed overflow compaction the turn
    runs a retry step, unless it was interrupted."""
    at = s.overflow_committed
    s.overflow_committed = None
    kind = get(get(event.data, "reason"), "kind")
    if kind in ("aborted", "disposed", "interrupted"):
        return None
    return Rejected(rule="CMP-7", seq=event.seq, reason=f"turn ends {kind!r} after the overflow compaction committed at seq {at} (recovery retries the step)")


def _step_event(s: _State, event: Event) -> None:
    match event.type:
        case "step/start":
            s.overflow_committed = None
            s.in_step, s.message, s.message_event, s.results, s.failed_attempt = True, False, None, 0, False
            s.failure_code = ABSENT
        case "step/end":
            s.last_step_failed = not s.message
            s.last_failure_code = s.failure_code if not s.message else ABSENT
            s.in_step = False
        case "turn/start":
            s.in_step, s.last_step_failed = False, False
        case "assistant/message" if event.surface_op == "append":
            s.message, s.message_event = True, event
        case "tool/result" if event.surface_op == "append":
            s.results += 1
        case "assistant/chunk":
            _chunk_event(s, event)
        case _:
            pass


def _chunk_event(s: _State, event: Event) -> None:
    """A chunk ends an attempt at its ``finish``: failed with an error (DIA-7), whose failure code
    CMP-7 reads; every other chunk moves nothing."""
    # Read in place: this runs at every chunk, where a call per read was most of its cost.
    data = event.data
    chunk = data.get("chunk", ABSENT) if type(data) is _OBJECT else ABSENT
    if type(chunk) is _OBJECT and chunk.get("type") == "finish":
        s.failed_attempt = get(get(chunk, "reason"), "kind") == "error"
        s.failure_code = get(get(get(chunk, "reason"), "failure"), "code")


class CompactionRulesAudit(WalkFold):
    """Trigger placement and range anchoring of every live bracket."""

    # Run only on a surface that folds (the brackets' ranges are surface ranges).
    NEEDS_SURFACE = True
    # A packed row's chunks come as one ChunkRun, which moves nothing here (see the walk).
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        s = _State(dialect=dialect)
        eligible = surface_types(dialect)
        start_t, summary_t, end_t = (compaction_type(dialect, part) for part in ("start", "summary", "end"))
        while (event := (yield)) is not None:
            if isinstance(event, ChunkRun):
                continue  # CHK-6: a row's chunks are deltas, no ``finish``, and carry no surfaceOp
            kind = event.type
            if kind == CHUNK and event.surface_op is ABSENT:
                # A chunk only moves the step's attempt state; no check below reads it (issue 26).
                _chunk_event(s, event)
                continue
            live = event.seq >= first_live_seq
            if kind == "request/header":
                s.header = True
            if dialect is A55 and s.bracket and live and kind in ("step/start", "step/end", "turn/end", end_t):
                bad = check_bracket_closed(s, event, end_t)
                found += [bad] if bad is not None else []
            if live and kind == start_t:
                bad = check_bracket_placement(s, event, dialect)
                if bad is None and not s.header and get(event.data, "turn") is not None:
                    bad = Rejected(rule="CMP-5", seq=event.seq, reason="automatic compaction with no request/header before it (no routed target: compactIfNeeded returns none)")
                found += [bad] if bad is not None else []
                s.bracket, s.surface_append, s.checkpoint, s.step_end_in_bracket = True, None, None, None
            elif kind == end_t and s.bracket:
                failed = get(event.data, "error") is not ABSENT
                bad = check_bracket_body(s, event, failed) if live else None
                found += [bad] if bad is not None else []
                if dialect is A55 and not s.in_step and not failed and s.checkpoint is not None:
                    s.overflow_committed = event.seq
                s.bracket = False
            elif live and kind == "turn/end" and s.overflow_committed is not None:
                bad = check_overflow_retry(s, event)
                found += [bad] if bad is not None else []
            elif kind == "session/end-seed" or (kind == "turn/end" and dialect is A55):
                s.bracket = False
            elif live and kind == summary_t:
                bad = check_range_anchoring(s, event)
                found += [bad] if bad is not None else []
            if live and not s.bracket and kind == "tool/result" and isinstance(event.surface_op, JsonObject):
                bad = check_prune_placement(s, event, dialect)
                found += [bad] if bad is not None else []
            _step_event(s, event)
            if live and s.bracket and kind == "user/message" and isinstance(event.surface_op, JsonObject):
                bad = check_checkpoint_source(event, dialect) if is_checkpoint_source(get(event.data, "source")) else None
                found += [bad] if bad is not None else []
            if s.bracket:
                _bracket_event(s, event)
            if event.surface_op is not ABSENT:
                _fold_surface(s, event, eligible)
        return found


audits("CMP-2", "CMP-5", "CMP-6", "CMP-7", "CMP-12", "CMP-19", "CMP-23", "DIA-2", "DIA-6", "PRN-6")(CompactionRulesAudit)


def audit_compaction_rules(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`CompactionRulesAudit` run alone."""
    return run_alone(CompactionRulesAudit, events, dialect, first_live_seq)
