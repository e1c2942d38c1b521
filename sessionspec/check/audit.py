"""What a session log alone shows about its own correctness (FMT-7, FMT-9, LOG-13).

:func:`audit_log` runs every log-alone check of the checker pipeline (FMT-7)
over an event list that is already decoded (rows expanded) and, in D08 mode,
migrated (DIA-13).  It returns *all* findings it can establish, not only the
first: each check is independent, so one corruption may show under several
rules.  Checks that depend on a valid surface (derivation, request points)
are skipped when the surface fold fails, so they never report knock-on noise.

The checks, each its own function:

* seed/load shape (LOG-8 order: LEG-2, LEG-3, LEG-4, HDR-8/LEG-5/LEG-6, LOG-11);
* the surface fold (SURF-*, LOG-1);
* turn/step nesting and tool pairing as the session invariant companion
  vetoes them (LOG-13), live events only;
* the header-reason audit (FMT-9 a..g) with instances partitioned by their
  ``initial``/``resume`` anchors, and prefix invariance inside an instance
  (PFX-15, A55 only);
* request points (FMT-8, INV-7): each has a header in force naming a provider
  and model, and its request can be built (prefix first, WIRE-2);
* the compaction/prune audit (``sessionspec.check.compaction_audit``);
* the writers' own rules (issue 17), each a fold in its own module: data
  shapes (``shape_audit``), the loop (``loop_audit``), provenance
  (``provenance_audit``), crash repair (``repair_audit``), compaction
  triggers and ranges (``compaction_rules_audit``, ``retention_audit``); the
  rule-by-rule table is ``audit_table``.

Placeholders (FMT-6, LEG-8) are opaque: headers holding one are compared by
string identity, never through HDR-4 (Q-15).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from model.codec import serialize_event
from model.header import EpochHeader, HeaderReason, check_llm_shape, header_of_event, opt_header_eq
from model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, json_eq
from model.log import Dialect, Event
from model.log import json_int as _int
from model.placeholder import is_placeholder
from model.rejected import Rejected
from model.surface import SurfacePlan
from sessionspec.check.audits import audits
from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.check.compaction_rules_audit import audit_compaction_rules
from sessionspec.check.loop_audit import audit_loop
from sessionspec.check.opaque import is_opaque
from sessionspec.check.provenance_audit import audit_provenance
from sessionspec.check.repair_audit import audit_repair
from sessionspec.check.retention_audit import audit_zero_retention
from sessionspec.check.shape_audit import audit_shapes
from sessionspec.check.surface_pass import surface_transitions
from sessionspec.fast.request_points import request_points

A55_TURN_END_KINDS: Final = frozenset({"completed", "aborted", "error", "disposed", "max-tokens", "rejected", "interrupted"})
TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
UNANSWERED: Final = "step/end leaves tool call"
D08_TURN_BOUND_TYPES: Final = frozenset({"user/message", "prompt/blocked", "todo/write", "request/header", "request/context"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """All findings of one log, plus notes (never verdict-changing) and the
    quirks of the real code the log shows (§17: notes by default, findings
    under ``--strict-quirks``)."""

    findings: tuple[Rejected, ...]
    notes: tuple[str, ...] = ()
    quirks: tuple[Rejected, ...] = ()
    # Why the log is outside what the model decides (LEG-7): the verdict is
    # ``unknown`` with this reason unless a finding makes it ``invalid``.
    outside: tuple[str, ...] = ()


def _sorted(findings: Sequence[Rejected]) -> tuple[Rejected, ...]:
    """Deterministic order: by seq (file-level first), then rule, then reason; duplicates dropped."""
    unique = {(f.seq, f.rule, f.reason, f.kind.value): f for f in findings}
    return tuple(unique[k] for k in sorted(unique, key=lambda k: (-1 if k[0] is None else k[0], k[1], k[2], k[3])))


# --------------------------------------------------------------------------- LOG-8 shapes


@audits("LOG-8", "LEG-2", "LEG-3", "LEG-4", "LOG-11", "P-LOG-4")
def check_load_shapes(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """LOG-8 (strict load): the legacy ``fallback`` reason (LEG-2), ``mode/set``
    (LEG-3), a reason-bearing A55 ``aborted`` (LEG-4), the LLM shape (HDR-8,
    LEG-5, LEG-6; D08 assistant provenance lives in ``message.source``,
    checked with its shape by DIA-10), the header field types (HDR-1/DIA-8,
    FMT-6), the A55 ``turn/end`` reason kinds (LOG-11) and the D08 aborted
    reasons (DIA-14)."""
    found: list[Rejected] = []
    for event in events:
        data = event.data
        match event.type:
            case "request/header":
                if get(data, "reason") == "fallback":
                    found.append(Rejected(rule="LEG-2", seq=event.seq, reason='uses unsupported legacy request/header reason "fallback"'))
                shape = check_llm_shape(event)
                if shape is not None:
                    found.append(shape)
                found += check_header_types(event, dialect)
            case "mode/set":
                found.append(Rejected(rule="LEG-3", seq=event.seq, reason="mode/set is rejected at persistence load"))
            case "assistant/message" if dialect is Dialect.A55:
                shape = check_llm_shape(event)
                if shape is not None:
                    found.append(shape)
            case "turn/end" if dialect is Dialect.A55:
                reason = get(data, "reason")
                kind = get(reason, "kind")
                if kind == "aborted" and isinstance(reason, JsonObject) and len(reason) != 1:
                    found.append(Rejected(rule="LEG-4", seq=event.seq, reason="uses unsupported reason-bearing aborted format"))
                elif not isinstance(kind, str) or kind not in A55_TURN_END_KINDS:
                    found.append(Rejected(rule="LOG-11", seq=event.seq, reason=f"turn/end reason kind {js_stringify(kind if kind is not ABSENT else None)} is not an A55 kind"))
            case "turn/end":
                aborted = check_d08_turn_end(event)
                if aborted is not None:
                    found.append(aborted)
            case _:
                pass
    return found


# --------------------------------------------------------------------------- HDR-1 / FMT-6 header types


def _is_list_of_objects(v: Json, *, placeholders: bool = False) -> bool:
    return isinstance(v, tuple) and all(isinstance(x, JsonObject) or (placeholders and is_placeholder(x)) for x in v)


@audits("HDR-1", "DIA-8", "FMT-6")
def check_header_types(event: Event, dialect: Dialect) -> list[Rejected]:
    """HDR-1: an A55 ``EpochHeader`` is ``{config, system?, tools?,
    messagePrefix?}`` with ``system`` a string, ``tools`` a list of
    ``ToolSchema`` objects and ``messagePrefix`` a list of ``Message``
    objects; ``config`` is ``{provider, model, reasoningEffort?,
    temperature?, maxTokens?, stop?: string[]}``.  DIA-8: the D08 header is
    ``{config, adapterDefaults?, system?, tools?}`` (a logged
    ``messagePrefix`` is dropped, so it is not typed there).  FMT-6: "Fields
    holding a placeholder skip type checks" -- every other field is checked.
    A non-object header or config is reported by ``header_of_event``."""
    header = get(event.data, "header")
    config = get(header, "config")
    rule = "HDR-1" if dialect is Dialect.A55 else "DIA-8"
    wrong: list[str] = []

    def expect(name: str, value: Json | Absent, ok: Callable[[Json], bool], what: str) -> None:
        if value is ABSENT or is_opaque(name, value) or ok(value):
            return
        wrong.append(f"{name} is {js_stringify(value)[:40]}, not {what}")

    expect("system", get(header, "system"), lambda v: isinstance(v, str), "a string")
    expect("tools", get(header, "tools"), _is_list_of_objects, "a list of tool schemas")
    if dialect is Dialect.A55:
        # LEG-8: entries may each be the "{{messagePrefix}}" placeholder.
        expect("messagePrefix", get(header, "messagePrefix"), lambda v: _is_list_of_objects(v, placeholders=True), "a list of messages")
    else:
        expect("adapterDefaults", get(header, "adapterDefaults"), lambda v: isinstance(v, JsonObject), "an object")
    expect("config.temperature", get(config, "temperature"), lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
    expect("config.maxTokens", get(config, "maxTokens"), lambda v: _int(v) is not None, "an integer")
    expect("config.stop", get(config, "stop"), lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v), "a list of strings")
    return [Rejected(rule=rule, seq=event.seq, reason=f"request/header {why} (FMT-6: only placeholder fields skip type checks)") for why in wrong]


# --------------------------------------------------------------------------- DIA-10 / DIA-14 (D08 shapes)


DIA14_ABORT_REASONS: Final = frozenset({"user", "parent", "hook", "disposed", "legacy"})


@audits("DIA-14")
def check_d08_turn_end(event: Event) -> Rejected | None:
    """DIA-14: "``turn/end`` aborted MUST be ``{kind:"aborted",
    reason:{kind:"user"|"parent"|"hook"|"disposed"}}``; disposal is aborted
    with reason ``disposed``; coarse legacy records read as
    ``reason:{kind:"legacy"}``" (the migration, run before this, writes
    ``legacy``).  Other kinds are not constrained by DIA-14."""
    reason = get(event.data, "reason")
    if get(reason, "kind") != "aborted":
        return None
    why = get(reason, "reason")
    inner = get(why, "kind")
    if isinstance(inner, str) and inner in DIA14_ABORT_REASONS:
        return None
    shown = js_stringify(None if isinstance(why, Absent) else why)
    return Rejected(rule="DIA-14", seq=event.seq, reason=f"aborted turn/end reason {shown[:60]} is not user, parent, hook or disposed")


def _nonempty_str(v: Json | Absent) -> bool:
    return isinstance(v, str) and bool(v)


def _user_message_flaws(data: Json) -> list[str]:
    flaws: list[str] = []
    if not isinstance(get(data, "content"), tuple):
        flaws.append("no content list")
    if not isinstance(get(data, "source"), JsonObject):
        flaws.append("no source")
    if get(data, "role") != "user":
        flaws.append('role is not "user"')
    if not _nonempty_str(get(data, "id")):
        flaws.append("no id")
    return flaws


def _message_identity_flaws(data: Json, role: str) -> tuple[JsonObject | None, list[str]]:
    """DIA-10's ``message:{id, role}`` of an assistant message or a tool result: the message
    object (None when missing) and what is wrong with its identity."""
    message = get(data, "message")
    if not isinstance(message, JsonObject):
        return None, ["no message object"]
    flaws: list[str] = []
    if not _nonempty_str(get(message, "id")):
        flaws.append("no message.id")
    if get(message, "role") != role:
        flaws.append(f'message.role is not "{role}"')
    return message, flaws


def _assistant_message_flaws(data: Json) -> list[str]:
    message, flaws = _message_identity_flaws(data, "assistant")
    if message is None:
        return flaws
    if not isinstance(get(message, "content"), tuple):
        flaws.append("no message.content list")
    source = get(message, "source")
    if not isinstance(source, JsonObject):
        flaws.append("no message.source")
    elif get(source, "kind") != "model" or not (_nonempty_str(get(source, "provider")) and _nonempty_str(get(source, "model"))):
        flaws.append('message.source is not {kind:"model", provider, model}')
    return flaws


def _tool_result_flaws(data: Json) -> list[str]:
    message, flaws = _message_identity_flaws(data, "user")
    if message is None:
        return flaws
    content = get(message, "content")
    if not (isinstance(content, tuple) and content and get(content[0], "type") == "tool-result"):
        flaws.append("message.content is not [tool-result block]")
    source = get(message, "source")
    if get(source, "kind") != "tool" or not isinstance(get(source, "callId"), str):
        flaws.append('message.source is not {kind:"tool", callId}')
    return flaws


@audits("DIA-10")
def check_d08_message_shapes(events: Sequence[Event]) -> list[Rejected]:
    """DIA-10: "Message shapes MUST carry identity: ``user/message.data`` =
    ``{content, source, role:"user", id}``; ``assistant/message.data`` =
    ``{turn, step, message:{id, role:"assistant", content,
    source:{kind:"model", provider, model, …}}, usage?, interrupted?}``;
    ``tool/result.data`` = ``{turn, step, message:{id, role:"user",
    content:[tool-result block], source:{kind:"tool", callId}}, error?,
    meta?}``."  Run on the migrated events (DIA-13 gives legacy shapes their
    identity first), seed included (LOG-8 validates the whole list)."""
    found: list[Rejected] = []
    for event in events:
        match event.type:
            case "user/message":
                flaws = _user_message_flaws(event.data)
            case "assistant/message":
                flaws = _assistant_message_flaws(event.data)
            case "tool/result":
                flaws = _tool_result_flaws(event.data)
            case _:
                flaws = []
        if flaws:
            found.append(Rejected(rule="DIA-10", seq=event.seq, reason=f"{event.type} lacks its D08 identity shape: {', '.join(flaws)}"))
    return found


# --------------------------------------------------------------------------- DIA-7 (D08 retries)


def _finish_kind(event: Event) -> Json | Absent | None:
    """The finish reason kind of a ``finish`` chunk; None for any other chunk."""
    chunk = get(event.data, "chunk")
    if get(chunk, "type") != "finish":
        return None
    return get(get(chunk, "reason"), "kind")


@audits("DIA-7")
def check_retry_attempts(events: Sequence[Event]) -> list[Rejected]:
    """DIA-7: "Overflow recovery MUST retry inside the same step: failed
    attempt's chunks (error finish) stay, no ``assistant/message``, [...] the
    retry streams again and its ``assistant/message`` cites only the retry's
    chunks."  An attempt is the chunks since ``step/start`` or the previous
    ``finish``; an attempt whose finish is ``error`` has failed.  Vetoed: an
    ``assistant/message`` right after a failed attempt (before any chunk of
    the next one), and any ``assistant/message`` citing a failed attempt's
    chunk.  The transient LLM-layer retry (``llm/retry``) follows the same
    shape in the real logs.  An ``interrupted`` message (DIA-15, a cancelled
    stream) is governed by DIA-15, not here."""
    found: list[Rejected] = []
    failed: set[int] = set()
    attempt: list[int] = []
    failed_finish: int | None = None
    for event in events:
        match event.type:
            case "step/start":
                failed.clear()
                attempt.clear()
                failed_finish = None
            case "assistant/chunk":
                attempt.append(event.seq)
                failed_finish = None
                kind = _finish_kind(event)
                if kind == "error":
                    failed.update(attempt)
                    failed_finish = event.seq
                if kind is not None:
                    attempt.clear()
            case "assistant/message" if get(event.data, "interrupted") is not True and not _is_replace(event):
                if failed_finish is not None:
                    found.append(Rejected(rule="DIA-7", seq=event.seq, reason=f"assistant/message for the failed attempt ending at seq {failed_finish} (a failed attempt writes none)"))
                cited = event.source_event_seqs
                stale = sorted(s for s in cited if isinstance(s, int) and s in failed) if isinstance(cited, tuple) else []
                if stale:
                    found.append(Rejected(rule="DIA-7", seq=event.seq, reason=f"assistant/message cites chunks {stale[:5]} of a failed attempt (it cites only the retry's chunks)"))
            case _:
                pass
    return found


# --------------------------------------------------------------------------- LEG-7


@audits("LEG-7")
def pre_a55_designs(events: Sequence[Event]) -> list[str]:
    """LEG-7: "Pre-A55 designs MUST be recognized only for diagnostics, never
    produced: per-step ``agent/request-advice {before, after}`` and
    ``EpochHeader.messageSuffix`` [...]".  Unlike LEG-1..LEG-6 ("MUST be
    rejected") the rule rejects nothing: the real loader takes
    ``agent/request-advice`` as a plugin type (LOG-8) and canonicalization
    drops ``messageSuffix`` (HDR-2), yet both changed the request of the
    design that wrote them, so the model cannot decide such a log's
    requests.  The result names what was recognized; the checker's verdict
    is ``unknown`` with it as the reason (unless a rule makes the log
    invalid).  ``request/header-delta`` and ``fallback`` are rejected by
    LEG-1/LEG-2 and not repeated here."""
    advice = next((e.seq for e in events if e.type == "agent/request-advice"), None)
    suffix = next((e.seq for e in events if e.type == "request/header" and get(get(e.data, "header"), "messageSuffix") is not ABSENT), None)
    found: list[str] = []
    if advice is not None:
        found.append(f"agent/request-advice at seq {advice}")
    if suffix is not None:
        found.append(f"a request/header with messageSuffix at seq {suffix}")
    if not found:
        return []
    return [f"a pre-A55 design (LEG-7, recognized for diagnostics only): {' and '.join(found)}; the model does not decide its requests"]


# --------------------------------------------------------------------------- LOG-13


def _result_call_id(event: Event, dialect: Dialect) -> Json | Absent:
    if dialect is Dialect.D08:
        return get(get(get(event.data, "message"), "source"), "callId")
    return get(event.data, "callId")


def _is_not_started(event: Event) -> bool:
    return get(get(event.data, "error"), "code") == TOOL_NOT_STARTED


def _is_replace(event: Event) -> bool:
    return get(event.surface_op, "op") == "replace"


@dataclass(slots=True)
class _Nesting:
    """The session invariant companion's state (LOG-13)."""

    turn: int | None = None
    last_turn: int = 0
    step: int | None = None
    next_step: int = 1
    last_seq: int = -1
    pending: dict[str, int] = field(default_factory=dict)
    # D08: a manual compaction bracket (owner null) runs between turns (DIA-3).
    manual_bracket: bool = False


@audits("LOG-13", "LOOP-2", "LOOP-15", "LOOP-17", "MTR-6", "DIA-3", "P-LOOP-4", "P-LOOP-7", "P-PRN-3")
def check_nesting(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """LOG-13: the vetoes of the session invariant companion, for every event:
    the seed too, which the companion replays through the same validation on
    ``session/created`` (``core/session/src/invariant.ts`` lines 196-210 at
    ``a55f148516``, ``seedSession``; QF-12).

    ``seq`` increases; ``turn/start`` opens turn last+1 when none is open;
    ``turn/end`` closes it with no step open; ``step/start`` opens the next
    step of the open turn; ``step/end`` closes it and clears pending calls;
    chunks, assistant messages and tool calls name the open turn and step; a
    ``tool/result`` append names them and answers a pending call (or is a
    synthetic TOOL_NOT_STARTED); a replace needs an open turn; every other
    event lies in an open turn.  D08 exceptions: ``session/end-seed`` (written
    by the constructor, DIA-5) and events of a manual (owner ``null``)
    compaction bracket (DIA-3)."""
    found: list[Rejected] = []
    s = _Nesting()
    for event in events:
        why = _nesting_step(s, event, dialect)
        if why is not None:
            # An unanswered call at step/end is the loop's pairing (LOOP-12): the companion's step/end
            # only clears the pending calls (core/session/src/invariant.ts lines 107-112 at a55f148516).
            rule = "LOOP-12" if why.startswith(UNANSWERED) else "LOG-13"
            found.append(Rejected(rule=rule, seq=event.seq, reason=why if event.seq >= first_live_seq else f"{why} (in the seed)"))
    return found


def _names_open_step(s: _Nesting, event: Event) -> str | None:
    turn, step = _int(get(event.data, "turn")), _int(get(event.data, "step"))
    if s.turn is None or s.step is None:
        return f"{event.type} outside an open step"
    if turn != s.turn or step != s.step:
        return f"{event.type} names turn {turn} step {step}, but turn {s.turn} step {s.step} is open"
    return None


def _nesting_step(s: _Nesting, event: Event, dialect: Dialect) -> str | None:
    """Advance the companion state by one event; the veto reason, if any.
    The state always advances (so one bad event does not cascade)."""
    data = event.data
    why: str | None = None
    if event.seq <= s.last_seq:
        why = f"seq {event.seq} does not increase (previous {s.last_seq})"
    s.last_seq = max(s.last_seq, event.seq)
    match event.type:
        case "turn/start":
            turn = _int(get(data, "turn"))
            if s.turn is not None:
                why = why or f"turn/start while turn {s.turn} is open"
            elif turn != s.last_turn + 1:
                why = why or f"turn/start {turn} is not the next turn {s.last_turn + 1}"
            s.turn = turn if turn is not None else s.last_turn + 1
            s.last_turn = s.turn
            s.step, s.next_step = None, 1
            s.pending.clear()
        case "turn/end":
            if s.turn is None:
                why = why or "turn/end with no open turn"
            elif s.step is not None:
                why = why or f"turn/end while step {s.step} is open"
            elif _int(get(data, "turn")) != s.turn:
                why = why or f"turn/end names turn {_int(get(data, 'turn'))}, but turn {s.turn} is open"
            s.turn, s.step = None, None
            s.pending.clear()
        case "step/start":
            step = _int(get(data, "step"))
            if s.turn is None:
                why = why or "step/start with no open turn"
            elif _int(get(data, "turn")) != s.turn:
                why = why or f"step/start names turn {_int(get(data, 'turn'))}, but turn {s.turn} is open"
            elif s.step is not None:
                why = why or f"step/start while step {s.step} is open"
            elif step != s.next_step:
                why = why or f"step/start {step} is not the next step {s.next_step}"
            s.step = step if step is not None else s.next_step
            s.next_step = s.step + 1
        case "step/end":
            why = why or _names_open_step(s, event)
            if why is None and s.pending:
                # Pairing: a closed step must have answered its calls (the
                # repair, LOG-14, only closes calls of the still-open step).
                why = f"{UNANSWERED} {next(iter(s.pending))!r} without a tool/result"
            s.step = None
            s.pending.clear()
        case "assistant/chunk" | "assistant/message":
            why = why or _names_open_step(s, event)
        case "tool/call":
            why = why or _names_open_step(s, event)
            call_id = get(data, "callId")
            if isinstance(call_id, str):
                s.pending[call_id] = event.seq
        case "tool/result" if _is_replace(event):
            if s.turn is None and not s.manual_bracket:
                why = why or "tool/result replace outside an open turn"
        case "tool/result":
            why = why or _names_open_step(s, event)
            call_id = _result_call_id(event, dialect)
            if isinstance(call_id, str) and call_id in s.pending:
                del s.pending[call_id]
            elif not _is_not_started(event):
                why = why or f"tool/result answers {js_stringify(call_id if call_id is not ABSENT else None)}, which is not a pending call"
        case "session/end-seed" if dialect is Dialect.D08:
            s.manual_bracket = False
        case "compaction/start" if dialect is Dialect.D08 and get(data, "turn") is None:
            # A null owner inside an open turn is the compaction companion's veto (DIA-19, reported by the
            # compaction audit), not the session companion's: inside a turn any event is turn-enclosed.
            s.manual_bracket = s.turn is None
        case "compaction/end" if dialect is Dialect.D08 and s.manual_bracket:
            s.manual_bracket = False
        case _:
            # D08 writes session-level plugin records (agent/inbox/spliced,
            # approval/policy, subagent/descriptor, ...) between turns; the
            # rule book states the turn requirement for A55 only, so in D08 it
            # binds the core types alone.
            bound = dialect is Dialect.A55 or event.type in D08_TURN_BOUND_TYPES
            if s.turn is None and not s.manual_bracket and bound:
                why = why or f"{event.type} outside an open turn"
    return why


# --------------------------------------------------------------------------- FMT-9


def _opaque_header(h: EpochHeader) -> bool:
    """A header with a scrubbed field (sessionspec.check.opaque)."""
    return any(is_opaque(f, v) for f, v in (("system", h.system), ("tools", h.tools), ("messagePrefix", h.message_prefix)))


@dataclass(slots=True)
class _HeaderAudit:
    fold: EpochHeader | Absent = ABSENT
    instance_prefix: Json | Absent = ABSENT
    anchored: bool = False
    step_open: bool = False
    step_chunked: bool = False
    step_header: int | None = None
    # D08: an attempt streams between its header and its finish (DIA-7 retries write a header each).
    attempt_open: bool = False


@audits("FMT-9", "PFX-15", "HDR-7", "PFX-7")
def check_header_reasons(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """FMT-9 (loop logs): (a) a header lies after a ``step/start`` and before
    that step's first chunk, at most one per step; (b) ``initial`` iff no
    earlier header exists; (c) a ``change`` differs (HDR-4) from the fold
    before it; (d) ``initial``/``resume`` anchor an instance and may equal the
    fold; (e) the first header an instance writes is its anchor, so anchors
    partition the requests; (f) all headers of one instance carry JSONEQ
    ``messagePrefix`` (PFX-15, A55).  The loop writes only the three reasons
    (HDR-7).  Seed headers (seq < first_live_seq) set the fold, unaudited.
    D08 retries inside a step (DIA-7) may write one header per attempt."""
    found: list[Rejected] = []
    a = _HeaderAudit()
    live_headers = 0
    for event in events:
        match event.type:
            case "step/start":
                a.step_open, a.step_chunked, a.step_header, a.attempt_open = True, False, None, False
            case "step/end":
                a.step_open = False
            case "assistant/chunk" if a.step_open:
                a.step_chunked = True
                a.attempt_open = get(get(event.data, "chunk"), "type") != "finish"
            case "request/header":
                header = header_of_event(event, dialect)
                if isinstance(header, Rejected):
                    found.append(header)
                    continue
                if event.seq >= first_live_seq:
                    found += _audit_one_header(a, event, header, dialect, live_headers == 0)
                    live_headers += 1
                a.fold = header
                if event.seq < first_live_seq:
                    a.instance_prefix = header.message_prefix
            case _:
                pass
    return found


def _audit_one_header(a: _HeaderAudit, event: Event, header: EpochHeader, dialect: Dialect, first_live: bool) -> list[Rejected]:
    found: list[Rejected] = []
    seq = event.seq
    reason = get(event.data, "reason")
    # (a) placement inside the step, before its first chunk (D08: per attempt).
    if not a.step_open:
        found.append(Rejected(rule="FMT-9", seq=seq, reason="request/header outside a step (the loop writes it after step/start)"))
    elif a.step_chunked and (dialect is Dialect.A55 or a.attempt_open):
        # D08 (DIA-12): the header precedes its attempt's dispatch; only a retry after a finish writes another.
        found.append(Rejected(rule="FMT-9", seq=seq, reason="request/header after the step's first chunk" if dialect is Dialect.A55
                              else "request/header inside a streaming attempt (after its first chunk, before its finish)"))
    elif a.step_header is not None and not a.step_chunked:
        found.append(Rejected(rule="FMT-9", seq=seq, reason=f"second request/header in one step (first at seq {a.step_header})"))
    a.step_header = seq
    if dialect is Dialect.D08:
        a.step_chunked = False
    reasons = {r.value for r in HeaderReason}
    if not isinstance(reason, str) or reason not in reasons:
        found.append(Rejected(rule="HDR-7", seq=seq, reason=f"request/header reason {js_stringify(reason if reason is not ABSENT else None)} is not one the loop writes"))
        return found
    earlier = a.fold is not ABSENT
    # (b) initial iff no earlier header exists in the log.
    if reason == HeaderReason.INITIAL.value and earlier:
        found.append(Rejected(rule="FMT-9", seq=seq, reason="initial header although an earlier header exists (expected resume or change)"))
    if reason != HeaderReason.INITIAL.value and not earlier:
        found.append(Rejected(rule="FMT-9", seq=seq, reason=f"{reason} header with no earlier header (expected initial)"))
    if reason == HeaderReason.CHANGE.value:
        # (e) an instance's first header is its anchor.
        if first_live and not a.anchored:
            found.append(Rejected(rule="FMT-9", seq=seq, reason="change header before any initial/resume anchor of this instance"))
        # (c) a change must be a real difference.
        # A scrubbed field (FMT-6) hides whether it changed: no finding may depend on it.
        opaque = _opaque_header(header) or (isinstance(a.fold, EpochHeader) and _opaque_header(a.fold))
        if earlier and not opaque and opt_header_eq(a.fold, header, dialect):
            found.append(Rejected(rule="FMT-9", seq=seq, reason="change header equal to the header in force (HDR-4)"))
        # (f) never a prefix change inside an instance.
        if dialect is Dialect.A55 and a.anchored and not json_eq(a.instance_prefix, header.message_prefix):
            found.append(Rejected(rule="PFX-15", seq=seq, reason="messagePrefix changed inside a loop instance (only an anchor may change it)"))
    else:
        a.anchored = True
        a.instance_prefix = header.message_prefix
    return found


@audits("LEG-8")
def placeholder_notes(events: Sequence[Event]) -> list[str]:
    """FMT-6/LEG-8: header fields scrubbed to placeholders are opaque; the
    requests are then known only up to those fields (a note, not a failure)."""
    fields: dict[str, int] = {}
    for event in events:
        if event.type != "request/header":
            continue
        header = get(event.data, "header")
        for key in ("system", "tools", "messagePrefix"):
            if key not in fields and is_opaque(key, get(header, key)):
                fields[key] = event.seq
    if not fields:
        return []
    listed = ", ".join(f"{key} (first at seq {seq})" for key, seq in fields.items())
    return [f"placeholder header fields are opaque, no finding depends on them (FMT-6, LEG-8): {listed}"]


@audits("DIA-5")
def check_end_seed(events: Sequence[Event], seed_length: int) -> list[Rejected]:
    """DIA-5 (D08): "The Session constructor MUST append ``session/end-seed {}`` after a seed unless
    the seed already ends with one."  A seed of ``seed_length`` events is followed by, or ends with,
    a ``session/end-seed``.  (The rule's compaction-lock half is in-process: no log shows it.)"""
    if seed_length <= 0 or seed_length > len(events):
        return []  # no seed, or a seed not all read (FMT-11 says which)
    if events[seed_length - 1].type == "session/end-seed":
        return []
    if seed_length < len(events) and events[seed_length].type == "session/end-seed":
        return []
    after = f"{events[seed_length].type} at seq {events[seed_length].seq}" if seed_length < len(events) else "the end of the log"
    return [Rejected(rule="DIA-5", seq=events[seed_length - 1].seq,
                     reason=f"the {seed_length}-event seed is followed by {after}, not session/end-seed")]


# --------------------------------------------------------------------------- requests


@audits("FMT-8", "INV-7", "HDR-9", "P-INV-1")
def check_request_points(
    events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0, plans: Sequence[SurfacePlan | None] | None = None
) -> list[Rejected]:
    """FMT-8/INV-7: every live request point has a header in force (HDR-9,
    FMT-9 g) naming a provider and model, and its request (prefix first,
    WIRE-2, then the boundary derivation) can be built.

    The requests are not materialized: ``build_request`` (WIRE-1) is total on
    a header and a boundary, and ``request_points`` fails (INV-7) when a
    boundary cannot be derived, so a point with a header in force has a
    request.  Copying every boundary (``RequestPoint.request()``) would cost
    the history length per request, quadratic in the log.  ``plans``: the
    events' surface transitions, when the checker's one surface fold made them."""
    points = request_points(events, dialect, first_live_seq, plans)
    if isinstance(points, Rejected):
        return [points]
    found: list[Rejected] = []
    for point in points:
        at = point.first_chunk_seq if point.first_chunk_seq is not None else point.step_start_seq
        if point.header is ABSENT:
            found.append(Rejected(rule="FMT-9", seq=at, reason=f"request of the step at seq {point.step_start_seq} has no request/header in force"))
            continue
        config = point.header.config
        provider, model = get(config, "provider"), get(config, "model")
        if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
            found.append(Rejected(rule="HDR-8", seq=at, reason="request header in force lacks provider/model"))
    return found


# --------------------------------------------------------------------------- FMT-11


@audits("FMT-11", "LOG-15", "P-LOG-7")
def check_fork_seed(child: Sequence[Event], parent: Sequence[Event], seed_length: int) -> list[Rejected]:
    """FMT-11: a fork child's first ``seedLength`` events equal the parent's
    first ``seedLength`` events (byte-equal as logged, time included: the seed
    is a copy); LOG-15: the seed ends at a ``turn/end`` of the source."""
    if seed_length <= 0:
        return []
    if seed_length > len(parent):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the parent's {len(parent)} events")]
    if seed_length > len(child):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the child's {len(child)} events")]
    for index in range(seed_length):
        if serialize_event(child[index]) != serialize_event(parent[index]):
            return [Rejected(rule="FMT-11", seq=child[index].seq, reason=f"seed event {index} differs from the parent's event {index}")]
    if parent[seed_length - 1].type != "turn/end":
        return [Rejected(rule="LOG-15", seq=seed_length - 1, reason=f"the fork boundary is a {parent[seed_length - 1].type}, not a turn/end")]
    return []


# --------------------------------------------------------------------------- §17 quirks


@audits("Q-4", "Q-17")
def quirk_observations(events: Sequence[Event], first_live_seq: int = 0) -> list[Rejected]:
    """§17: "the model follows the real code and the checker reports the quirk
    as a ``note``, never as ``invalid``, unless a flag (``--strict-quirks``)
    asks for the 'intended' behaviour."  The quirks a log alone shows, for
    live events, each named by its quirk ID:

    * Q-4: "A failure in composition, assembly or pre-step yields
      ``turn/end {kind:"error", step: n}`` with no ``step/start`` for ``n``;
      a prompt-submit failure yields ``step: 0``."
    * Q-17: "Refreshed snapshots reuse timestamps; never assert time order":
      an event whose ``time`` is earlier than the previous event's.
    """
    found: list[Rejected] = []
    started: set[int] = set()
    previous_time: int | None = None
    for event in events:
        live = event.seq >= first_live_seq
        if live and previous_time is not None and event.time < previous_time:
            found.append(Rejected(rule="Q-17", seq=event.seq, reason=f"time {event.time} is earlier than the previous event's {previous_time}"))
        previous_time = event.time
        match event.type:
            case "turn/start":
                started.clear()
            case "step/start":
                step = _int(get(event.data, "step"))
                if step is not None:
                    started.add(step)
            case "turn/end" if live:
                reason = get(event.data, "reason")
                step = _int(get(reason, "step"))
                if get(reason, "kind") == "error" and step is not None and step not in started:
                    found.append(Rejected(rule="Q-4", seq=event.seq, reason=f"turn/end error names step {step}, which never started"))
            case _:
                pass
    return found


# --------------------------------------------------------------------------- compaction


# --------------------------------------------------------------------------- all


@audits("FMT-7")
def audit_events(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> Audit:
    """FMT-7 (after decoding/migration): load shapes, D08 message shapes and
    retries (DIA-10, DIA-7), surface, nesting, header reasons, request
    points, compaction — every finding, in a stable order; pre-A55 designs
    (LEG-7) as the reason the log is outside the model."""
    found: list[Rejected] = []
    notes: list[str] = []
    found += check_load_shapes(events, dialect)
    if dialect is Dialect.D08:
        found += check_d08_message_shapes(events)
        found += check_retry_attempts(events)
    notes += placeholder_notes(events)
    # Issue 26: the surface is folded once (DIA-11's rejection is fold_surface's, see
    # surface_pass); the request points and the compaction audit reuse its plans.
    transitions = surface_transitions(events, dialect)
    if isinstance(transitions, Rejected):
        found.append(transitions)
    found += check_nesting(events, dialect, first_live_seq)
    found += check_header_reasons(events, dialect, first_live_seq)
    # Issue 17: the writers' own rules (shapes, loop, provenance, repair, compaction triggers).
    found += audit_shapes(events, dialect, first_live_seq)
    found += audit_loop(events, dialect, first_live_seq)
    found += audit_provenance(events, dialect, first_live_seq)
    found += audit_repair(events, dialect, first_live_seq)
    if not isinstance(transitions, Rejected):
        found += audit_compaction_rules(events, dialect, first_live_seq)
        found += audit_zero_retention(events, dialect, first_live_seq)
        found += check_request_points(events, dialect, first_live_seq, transitions.plans)
        found += audit_compactions(events, dialect, transitions.plans)
    return Audit(
        findings=_sorted(found),
        notes=tuple(notes),
        quirks=_sorted(quirk_observations(events, first_live_seq)),
        outside=tuple(pre_a55_designs(events)),
    )


def audit_log(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> tuple[Rejected, ...]:
    """Every log-alone finding of ``events`` (see :func:`audit_events`)."""
    return audit_events(events, dialect, first_live_seq).findings
