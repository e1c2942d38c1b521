"""Data shapes the harness writes (LOG-9, LOG-11, LOG-12, HDR-2, HDR-7, CMP-1, DIA-4).

One pass, no state beyond the current event: each live event of a core type
(and each compaction event) is held to the ``data`` keys, in the logged order,
that the rule book's table lists for it.  The loader does not check these
(LOG-8 validates envelopes, LLM shape and the ``aborted`` form only), so a
log breaking them loads, but no writer of the harness could have written it.

Shapes are judged in the dialect's own form: a D08 log is audited after the
migrations (DIA-13), so only the types D08 did not reshape are held to the
A55 table there (message identity is DIA-10's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.chunk_shape import chunk_flaw, well_formed_chunk
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import AuditFold
from sessionspec.check.opaque import is_opaque
from sessionspec.check.shape_keys import Keys, key_flaw, valid_orders
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get, keys_in
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_length, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan

TURN_STEP: Final[Keys] = (("turn", True), ("step", True))
A55_DATA_KEYS: Final[dict[str, Keys]] = {
    "turn/start": (("turn", True), ("trigger", True)),
    "turn/end": (("turn", True), ("reason", True)),
    "step/start": TURN_STEP,
    "step/end": TURN_STEP,
    "prompt/blocked": (("content", True), ("source", True), ("reason", True)),
    "assistant/chunk": (("turn", True), ("step", True), ("chunk", True)),
    "assistant/message": (("turn", True), ("step", True), ("content", True), ("provenance", True), ("usage", False)),
    "tool/call": (("turn", True), ("step", True), ("callId", True), ("name", True), ("arguments", True)),
    "tool/result": (("turn", True), ("step", True), ("callId", True), ("content", True), ("isError", True), ("error", False), ("meta", False)),
    "todo/write": (("todos", True),),
}
# D08 keeps these shapes (DIA-10/13 reshape the messages and turn/start).
D08_DATA_KEYS: Final[dict[str, Keys]] = {
    name: A55_DATA_KEYS[name] for name in ("turn/end", "step/start", "step/end", "assistant/chunk", "tool/call", "todo/write")
}
# Every key order each type's table allows (the D08 table is a part of the A55 one).
DATA_ORDERS: Final = {name: tuple(sorted(valid_orders(keys))) for name, keys in A55_DATA_KEYS.items()}
# LOG-10 gives the shape of session/title; DIA-9 that of request/context (D08).
PLUGIN_KEYS: Final[dict[str, tuple[str, Keys]]] = {
    "session/title": ("LOG-10", (("title", True), ("messageSeqs", True), ("source", True))),
    "request/context": ("DIA-9", (("provider", True), ("model", True), ("contextWindow", False))),
}
PROMPT_KEYS: Final[Keys] = (("content", True), ("source", True), ("envelope", False), ("meta", False))
TRIGGER_KINDS: Final = frozenset({"message", "injection"})
TODO_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
BARE_END_KINDS: Final = frozenset({"completed", "disposed", "max-tokens", "interrupted"})
A55_HEADER_KEYS: Final = ("config", "system", "tools", "messagePrefix")
# D08 reads A55 logs (DIA-13): their headers' messagePrefix is dropped by canonicalization (DIA-8).
D08_HEADER_KEYS: Final = ("config", "adapterDefaults", "system", "tools", "messagePrefix")
CMP1_KEYS: Final[dict[str, Keys]] = {
    "compact/start": (("turn", True),),
    "compact/summary": (("summary", True), ("shadowedRange", True), ("shadowedSeqs", True), ("shadowedTokenCount", True),
                        ("provider", True), ("model", True), ("maxTokens", False)),
    "compact/end": (("turn", True), ("error", False)),
}
# The types check_compaction_shape reads (it finds nothing on any other).
COMPACTION_TYPES: Final = frozenset({*CMP1_KEYS, "compaction/summary"})
DIA4_KEYS: Final[Keys] = (
    ("compactionId", True), ("sourceCommandId", False), ("summary", True), ("rawOutput", False), ("llmStreamCall", False),
    ("shadowedRange", True), ("shadowedSeqs", True), ("shadowedTokenCount", True), ("provider", True), ("model", True),
    ("maxTokens", False), ("usage", False),
)


def _is_int(v: Json | Absent) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str(v: Json | Absent) -> bool:
    return isinstance(v, str)


def _is_list(v: Json | Absent) -> bool:
    return isinstance(v, tuple)


def _is_object(v: Json | Absent) -> bool:
    return isinstance(v, JsonObject)


def _is_list_of_objects(v: Json | Absent) -> bool:
    return isinstance(v, tuple) and all(isinstance(b, JsonObject) for b in v)


ERROR_KEYS: Final[Keys] = (("name", True), ("code", True))
PROVENANCE_KEYS: Final[Keys] = (("provider", True), ("model", True), ("replayState", False))
TODO_KEYS: Final[Keys] = (("content", True), ("status", True))
TRIGGER_KEYS: Final[Keys] = (("kind", True), ("source", True))

NO_FIELDS: Final = JsonObject()
# A field's LOG-9 type: its key, the test its value passes, what it is said not to be.
Field = tuple[str, Callable[[Json | Absent], bool], str]
TURN: Final[Field] = ("turn", _is_int, "an integer")
TURN_STEP_INTS: Final[tuple[Field, ...]] = (TURN, ("step", _is_int, "an integer"))
# The typed fields of each core A55 type but turn/start and todo/write, in the order their flaws are told.
FIELD_TYPES: Final[dict[str, tuple[Field, ...]]] = {
    "turn/end": (TURN,),
    "step/start": TURN_STEP_INTS,
    "step/end": TURN_STEP_INTS,
    "assistant/chunk": TURN_STEP_INTS,
    "prompt/blocked": (("content", _is_list, "a list"), ("source", _is_object, "an object"), ("reason", _is_str, "a string")),
    "tool/call": (*TURN_STEP_INTS, ("callId", _is_str, "a string"), ("name", _is_str, "a string"), ("arguments", _is_str, "a string")),
    "tool/result": (
        *TURN_STEP_INTS, ("callId", _is_str, "a string"), ("content", _is_list, "a list"),
        ("isError", lambda v: isinstance(v, bool), "a boolean"),
        ("error", lambda v: v is ABSENT or key_flaw(v, ERROR_KEYS) is None, "{name, code}"),
    ),
    "assistant/message": (
        # LOG-9: content is ContentBlock[]; a block that is not an object is no block (the file load's
        # repair walk reads block.type and throws on it, QF-13).
        *TURN_STEP_INTS, ("content", _is_list_of_objects, "a list of objects"),
        ("provenance", lambda v: key_flaw(v, PROVENANCE_KEYS) is None, "{provider, model, replayState?}"),
        ("usage", lambda v: v is ABSENT or _is_object(v), "an object"),
    ),
}


def _type_flaws(event: Event) -> list[str]:
    """LOG-9 field types of the core A55 types."""
    data = event.data
    match event.type:
        case "turn/start":
            trigger = get(data, "trigger")
            if key_flaw(trigger, TRIGGER_KEYS) is not None or get(trigger, "kind") not in TRIGGER_KINDS or not _is_object(get(trigger, "source")):
                return [f"trigger {js_stringify(trigger if trigger is not ABSENT else None)[:60]} is not {{kind: message|injection, source}}"]
            return [] if _is_int(get(data, "turn")) else ["turn is not an integer"]
        case "todo/write":
            todos = get(data, "todos")
            ok = isinstance(todos, tuple) and all(key_flaw(t, TODO_KEYS) is None and get(t, "status") in TODO_STATUSES for t in todos)
            return [] if ok else ["todos is not a list of {content, status: pending|in_progress|completed}"]
        case kind:
            # get(data, key) without a call per field: data.get(key, ABSENT), every key absent from a non-object.
            values = data if isinstance(data, JsonObject) else NO_FIELDS
            return [f"{key} is not {what}" for key, ok_type, what in FIELD_TYPES.get(kind, ()) if not ok_type(values.get(key, ABSENT))]


@audits("LOG-9")
def check_core_shape(event: Event, dialect: Dialect) -> list[Rejected]:
    """LOG-9: "The core A55 vocabulary MUST be exactly these 13 types", each
    with the ``data`` keys of the table, in the logged order, and their types
    (``arguments`` a string, ``isError`` a boolean, trigger ``{kind:
    "message"|"injection", source}``, the chunk kinds ...)."""
    kind = event.type
    keys = (A55_DATA_KEYS if dialect is A55 else D08_DATA_KEYS).get(kind)
    if keys is None:
        return []
    flaws = _type_flaws(event)
    data = event.data
    # Keys in an order the table allows: key_flaw's own first answer, without hashing the table per event.
    in_order = isinstance(data, JsonObject) and keys_in(data, DATA_ORDERS[kind])
    flaw = None if in_order else key_flaw(data, keys)
    if flaw is not None:
        flaws.insert(0, f"data {flaw}")
    if kind == "assistant/chunk" and (chunk := chunk_flaw(event)) is not None:
        flaws.append(chunk)
    return [Rejected(rule="LOG-9", seq=event.seq, reason=f"{kind} {why}") for why in flaws]


@audits("LOG-11")
def check_turn_end_reason(event: Event, dialect: Dialect = A55) -> Rejected | None:
    """LOG-11: ``completed``, ``disposed``, ``max-tokens`` and ``interrupted``
    are bare ``{kind}``; ``error`` is ``{kind, step, failure}`` (an LLM
    failure with at least ``message`` and ``code``) or ``{kind, step,
    message, code?}``; ``rejected`` is ``{kind, reason}``.  (An unknown A55
    kind and a reason-bearing ``aborted`` are LOG-8's load checks.)  D08 keeps
    LOG-11 but for ``aborted`` (DIA-14: with its reason) and ``disposed``
    (now an aborted reason), so an unknown kind is reported here."""
    reason = get(event.data, "reason")
    kind = get(reason, "kind")
    flaw: str | None = None
    if dialect is D08 and kind == "aborted":
        return None  # DIA-14's
    if dialect is D08 and kind not in BARE_END_KINDS | {"error", "rejected", "blocked"}:
        flaw = "is not a turn/end reason kind"
    elif dialect is D08 and kind == "error" and isinstance(reason, JsonObject) and "error" in reason:
        flaw = d08_error_end_flaw(reason)
    elif kind in BARE_END_KINDS or (dialect is D08 and kind == "blocked"):
        flaw = key_flaw(reason, (("kind", True),))
    elif kind == "rejected":
        flaw = key_flaw(reason, (("kind", True), ("reason", True)))
        if flaw is None and not isinstance(get(reason, "reason"), str):
            flaw = "has a reason that is not a string"
    elif kind == "error":
        if isinstance(reason, JsonObject) and "failure" in reason:
            flaw = key_flaw(reason, (("kind", True), ("step", True), ("failure", True)))
            failure = get(reason, "failure")
            if flaw is None and not (isinstance(get(failure, "message"), str) and get(failure, "code") is not ABSENT):
                flaw = "has a failure without message and code"
        else:
            flaw = key_flaw(reason, (("kind", True), ("step", True), ("message", True), ("code", False)))
        if flaw is None and not _is_int(get(reason, "step")):
            flaw = "has a step that is not an integer"
    if flaw is None:
        return None
    return Rejected(rule="LOG-11", seq=event.seq, reason=f"turn/end reason {js_stringify(kind if kind is not ABSENT else None)} {flaw}")


LLM_FAILURE_KEYS: Final[Keys] = (("message", True), ("code", True), ("status", False), ("providerRetryAfterMs", False), ("requestId", False))


def d08_error_end_flaw(reason: JsonObject) -> str | None:
    """The D08 loop ends a failed turn with ``{kind:"error", error: LlmFailure}`` (``agent-loop/src/
    agent.ts`` lines 303-313 at ``611615650f``: the ``LlmError`` facts, or ``{message: errorChain,
    code:"UNKNOWN"}``); ``LlmFailure`` is ``{message, code, status?, providerRetryAfterMs?,
    requestId?}`` (``llm/src/types.ts`` lines 40-51).  Its reader keeps this form as it is
    (``coordinator.ts`` line 415) and rewrites the A55 forms into it."""
    flaw = key_flaw(reason, (("kind", True), ("error", True)))
    if flaw is not None:
        return flaw
    failure = get(reason, "error")
    if key_flaw(failure, LLM_FAILURE_KEYS) is not None or not (_is_str(get(failure, "message")) and _is_str(get(failure, "code"))):
        return "has an error that is not an LLM failure {message, code, status?, providerRetryAfterMs?, requestId?}"
    return None


@audits("LOG-12")
def check_prompt_shape(event: Event) -> list[Rejected]:
    """LOG-12: "Prompt data (``user/message``, and ``steering/message``
    without its ``turn``) MUST be ``{content, source, envelope?, meta?}``";
    ``envelope = {displayContent, prefixContexts: [{source, meta?}]}``."""
    data = event.data
    if event.type == "steering/message":
        if not isinstance(data, JsonObject) or next(iter(data), None) != "turn":
            return [Rejected(rule="LOG-12", seq=event.seq, reason="steering/message data does not start with its turn")]
        data = JsonObject((k, v) for k, v in data.items() if k != "turn")
    flaws: list[str] = []
    flaw = key_flaw(data, PROMPT_KEYS)
    if flaw is not None:
        flaws.append(f"data {flaw}")
    if not isinstance(get(data, "content"), tuple):
        flaws.append("content is not a list")
    if not isinstance(get(get(data, "source"), "kind"), str):
        flaws.append("source is not an object with a kind")
    envelope = get(data, "envelope")
    if envelope is not ABSENT:
        contexts = get(envelope, "prefixContexts")
        if key_flaw(envelope, (("displayContent", True), ("prefixContexts", True))) is not None or not (
            isinstance(contexts, tuple) and all(key_flaw(c, (("source", True), ("meta", False))) is None for c in contexts)
        ):
            flaws.append("envelope is not {displayContent, prefixContexts: [{source, meta?}]}")
    return [Rejected(rule="LOG-12", seq=event.seq, reason=f"{event.type} {why}") for why in flaws]


@audits("HDR-7", "HDR-2", "DIA-8", "PFX-10", "P-PFX-7")
def check_header_canonical(event: Event, dialect: Dialect) -> list[Rejected]:
    """HDR-7: "A ``request/header`` event MUST have ``data = {header,
    reason}`` [...] The loop writes ``header`` already canonical, in HDR-2 key
    order": ``config, system?, tools?, messagePrefix?`` (D08, DIA-8: ``config,
    adapterDefaults?, system?, tools?``), with ``system``, ``tools`` and
    ``messagePrefix`` present only with length > 0.  A placeholder (FMT-6)
    has its own length, so it stays canonical (Q-15).  ``messageSuffix`` is
    LEG-7's (recognized, not judged here)."""
    found: list[Rejected] = []
    flaw = key_flaw(event.data, (("header", True), ("reason", True)))
    if flaw is not None:
        found.append(Rejected(rule="HDR-7", seq=event.seq, reason=f"request/header data {flaw}"))
    header = get(event.data, "header")
    if not isinstance(header, JsonObject):
        return found
    order = A55_HEADER_KEYS if dialect is A55 else D08_HEADER_KEYS
    keys = [k for k in header if k != "messageSuffix"]
    for key in keys:
        if key not in order:
            found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header has the key {key!r}, which the canonical header never carries"))
    known = [k for k in keys if k in order]
    if [order.index(k) for k in known] != sorted(order.index(k) for k in known):
        found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header keys out of canonical order ({', '.join(known)})"))
    for key in ("system", "tools", "messagePrefix"):
        value = get(header, key)
        if value is ABSENT or is_opaque(key, value):
            continue
        if js_length(value) == 0:
            found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header carries an empty {key} (canonical headers leave it out)"))
    return found


@audits("CMP-1", "DIA-4")
def check_compaction_shape(event: Event, dialect: Dialect) -> Rejected | None:
    """CMP-1: ``compact/start {turn}``, ``compact/summary {summary,
    shadowedRange:{start,end}, shadowedSeqs, shadowedTokenCount, provider,
    model, maxTokens?}`` (keys in this order), ``compact/end {turn,
    error?}``.  DIA-4 (D08): ``compaction/summary {compactionId,
    sourceCommandId?, summary, rawOutput?, llmStreamCall?, shadowedRange,
    shadowedSeqs, shadowedTokenCount, provider, model, maxTokens?,
    usage?}``."""
    if dialect is A55 and event.type in CMP1_KEYS:
        rule, keys = "CMP-1", CMP1_KEYS[event.type]
    elif dialect is D08 and event.type == "compaction/summary":
        rule, keys = "DIA-4", DIA4_KEYS
    else:
        return None
    flaw = key_flaw(event.data, keys)
    if flaw is None and event.type.endswith("/summary"):
        if key_flaw(get(event.data, "shadowedRange"), (("start", True), ("end", True))) is not None:
            flaw = "has a shadowedRange that is not {start, end}"
        elif not all(isinstance(get(event.data, k), str) and get(event.data, k) for k in ("provider", "model")):
            flaw = "has an empty provider or model"
    if flaw is None:
        return None
    return Rejected(rule=rule, seq=event.seq, reason=f"{event.type} data {flaw}")


@audits("LOG-10", "DIA-9")
def check_plugin_shape(event: Event) -> Rejected | None:
    """LOG-10: ``session/title {title, messageSeqs, source}``; DIA-9:
    ``request/context {provider, model, contextWindow?}`` (strings, a
    positive window).  Other plugin types are opaque."""
    rule, keys = PLUGIN_KEYS[event.type]
    flaw = key_flaw(event.data, keys)
    data = event.data
    if flaw is None and event.type == "request/context":
        window = get(data, "contextWindow")
        if not (isinstance(get(data, "provider"), str) and isinstance(get(data, "model"), str)):
            flaw = "has a provider or model that is not a string"
        elif window is not ABSENT and not (_is_int(window) and isinstance(window, int) and window > 0):
            flaw = "has a contextWindow that is not a positive integer"
    elif flaw is None and not (isinstance(get(data, "title"), str) and isinstance(get(data, "messageSeqs"), tuple)):
        flaw = "has a title or messageSeqs of the wrong type"
    return None if flaw is None else Rejected(rule=rule, seq=event.seq, reason=f"{event.type} data {flaw}")


class ShapeAudit(AuditFold):
    """Every live event held to the shape its writer gives it (see the module
    docstring).  Seed events were judged where they were written.  No state beyond
    the current event."""

    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.found: list[Rejected] = []

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        if event.seq < self.first_live_seq or (event.type == "assistant/chunk" and well_formed_chunk(event.data)):
            return
        dialect = self.dialect
        found = self.found
        found += check_core_shape(event, dialect)
        match event.type:
            case "turn/end":
                end = check_turn_end_reason(event, dialect)
                if end is not None:
                    found.append(end)
            case "user/message" | "steering/message" if dialect is A55:
                found += check_prompt_shape(event)
            case "request/header":
                found += check_header_canonical(event, dialect)
            case "session/title" | "request/context":
                plugin = check_plugin_shape(event)
                if plugin is not None:
                    found.append(plugin)
            case "user/message" if not isinstance(get(get(event.data, "source"), "kind"), str):
                found.append(Rejected(rule="LOG-9", seq=event.seq, reason="user/message source is not a MessageSource {kind, ...}"))
            case kind if kind in COMPACTION_TYPES:
                shape = check_compaction_shape(event, dialect)
                if shape is not None:
                    found.append(shape)
            case _:
                pass

    def step_run(self, run: ChunkRun) -> None:
        """``step`` of each member of a packed row.  CHK-6: the members differ only in seq, time and
        their text, which ``well_formed_chunk`` does not read: when the first passes, every member
        does, and a member in the seed is skipped anyway.  Else each member takes the full check."""
        if well_formed_chunk(run.members[0].data):
            return
        for event in run.members:
            self.step(event, None)

    def finish(self) -> list[Rejected]:
        return self.found


audits("LOG-9", "LOG-11", "LOG-12", "HDR-7", "CMP-1")(ShapeAudit)


def audit_shapes(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`ShapeAudit` run alone."""
    return run_alone(ShapeAudit, events, dialect, first_live_seq)
