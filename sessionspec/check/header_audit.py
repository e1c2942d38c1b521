"""The header audits of a log: header field types (HDR-1, DIA-8, FMT-6) and the header-reason audit
(FMT-9 a..g, PFX-15 prefix invariance per instance, HDR-7), instances partitioned by their
``initial``/``resume`` anchors.  Placeholders (FMT-6, LEG-8) are opaque: headers holding one are
compared by string identity, never through HDR-4 (Q-15)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.check.opaque import is_opaque
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get, is_placeholder
from sessionspec.fast.jsonget import json_int as _int
from sessionspec.model.header import EpochHeader, HeaderReason, header_of_event, opt_header_eq
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

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
    rule = "HDR-1" if dialect is A55 else "DIA-8"
    wrong: list[str] = []

    def expect(name: str, value: Json | Absent, ok: Callable[[Json], bool], what: str) -> None:
        if value is ABSENT or is_opaque(name, value) or ok(value):
            return
        wrong.append(f"{name} is {js_stringify(value)[:40]}, not {what}")

    expect("system", get(header, "system"), lambda v: isinstance(v, str), "a string")
    expect("tools", get(header, "tools"), _is_list_of_objects, "a list of tool schemas")
    if dialect is A55:
        # LEG-8: entries may each be the "{{messagePrefix}}" placeholder.
        expect("messagePrefix", get(header, "messagePrefix"), lambda v: _is_list_of_objects(v, placeholders=True), "a list of messages")
    else:
        expect("adapterDefaults", get(header, "adapterDefaults"), lambda v: isinstance(v, JsonObject), "an object")
    expect("config.temperature", get(config, "temperature"), lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
    expect("config.maxTokens", get(config, "maxTokens"), lambda v: _int(v) is not None, "an integer")
    expect("config.stop", get(config, "stop"), lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v), "a list of strings")
    return [Rejected(rule=rule, seq=event.seq, reason=f"request/header {why} (FMT-6: only placeholder fields skip type checks)") for why in wrong]


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


class HeaderReasonAudit(WalkFold):
    """FMT-9 (loop logs): (a) a header lies after a ``step/start`` and before
    that step's first chunk, at most one per step; (b) ``initial`` iff no
    earlier header exists; (c) a ``change`` differs (HDR-4) from the fold
    before it; (d) ``initial``/``resume`` anchor an instance and may equal the
    fold; (e) the first header an instance writes is its anchor, so anchors
    partition the requests; (f) all headers of one instance carry JSONEQ
    ``messagePrefix`` (PFX-15, A55).  The loop writes only the three reasons
    (HDR-7).  Seed headers (seq < first_live_seq) set the fold, unaudited.
    D08 retries inside a step (DIA-7) may write one header per attempt."""

    EVENT_TYPES = frozenset({"step/start", "step/end", "assistant/chunk", "request/header"})
    TAKES_RUNS = True

    def walk(self) -> Generator[None, Event | ChunkRun | None, list[Rejected]]:
        dialect, first_live_seq = self.dialect, self.first_live_seq
        found: list[Rejected] = []
        a = _HeaderAudit()
        live_headers = 0
        while (event := (yield)) is not None:
            match event.type:
                case "step/start":
                    a.step_open, a.step_chunked, a.step_header, a.attempt_open = True, False, None, False
                case "step/end":
                    a.step_open = False
                case "assistant/chunk" if a.step_open:
                    # A packed row's chunks (CHK-6) are deltas, never a finish: each member leaves this state.
                    a.step_chunked = True
                    a.attempt_open = type(event) is ChunkRun or not _is_finish(event.data)
                case "request/header":
                    assert not isinstance(event, ChunkRun)  # a run holds chunks only
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


audits("FMT-9", "PFX-15", "HDR-7", "PFX-7")(HeaderReasonAudit)


def check_header_reasons(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`HeaderReasonAudit` run alone."""
    return run_alone(HeaderReasonAudit, events, dialect, first_live_seq)


def _is_finish(data: Json) -> bool:
    """Whether a chunk event's data holds a ``finish`` chunk (``get(get(data, "chunk"), "type") == "finish"``,
    with dict lookups: an absent key reads None, never ``"finish"``)."""
    chunk = data.get("chunk") if isinstance(data, JsonObject) else None
    return isinstance(chunk, JsonObject) and chunk.get("type") == "finish"


HEADER_REASONS: Final = frozenset(r.value for r in HeaderReason)


def _audit_one_header(a: _HeaderAudit, event: Event, header: EpochHeader, dialect: Dialect, first_live: bool) -> list[Rejected]:
    found: list[Rejected] = []
    seq = event.seq
    reason = get(event.data, "reason")
    # (a) placement inside the step, before its first chunk (D08: per attempt).
    if not a.step_open:
        found.append(Rejected(rule="FMT-9", seq=seq, reason="request/header outside a step (the loop writes it after step/start)"))
    elif a.step_chunked and (dialect is A55 or a.attempt_open):
        # D08 (DIA-12): the header precedes its attempt's dispatch; only a retry after a finish writes another.
        found.append(Rejected(rule="FMT-9", seq=seq, reason="request/header after the step's first chunk" if dialect is A55
                              else "request/header inside a streaming attempt (after its first chunk, before its finish)"))
    elif a.step_header is not None and not a.step_chunked:
        found.append(Rejected(rule="FMT-9", seq=seq, reason=f"second request/header in one step (first at seq {a.step_header})"))
    a.step_header = seq
    if dialect is D08:
        a.step_chunked = False
    if not isinstance(reason, str) or reason not in HEADER_REASONS:
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
        if dialect is A55 and a.anchored and not same_json(a.instance_prefix, header.message_prefix):
            found.append(Rejected(rule="PFX-15", seq=seq, reason="messagePrefix changed inside a loop instance (only an anchor may change it)"))
    else:
        a.anchored = True
        a.instance_prefix = header.message_prefix
    return found
