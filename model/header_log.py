"""The ``request/header`` records a log shows, decided record by record: their data and canonical header (HDR-7,
HDR-2), their field types (HDR-1, DIA-8, FMT-6) and their reasons and placement (FMT-9, HDR-7, PFX-15).

The loop writes a header after ``step/start`` and before the step's request streams (``model.loop.step``'s
``request_header``), ``initial`` for the first, ``resume`` for a new instance's anchor and ``change`` when the
header in force changes (``model.loop.instance.header_record``).  What a record is judged against is what the
log so far shows: the header in force, the instance's prefix and anchor, and where the open step stands
(:class:`HeaderTrack`).  D08 is an overlay (:class:`HeaderShapes`): its typed fields, a header per retry attempt
(DIA-7, DIA-12) and no ``messagePrefix`` (DIA-8).

``sessionspec check`` runs these definitions over a log (``sessionspec/check/header_audit.py``; the data and the
canonical header through :func:`sessionspec.model.event_shape.check_type_shape`); ``tests/model/test_header_log.py``
and ``tests/model/test_event_shape.py`` hold them against the loop that writes headers, both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.header import EpochHeader, HeaderReason, opt_header_eq
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_length, js_stringify
from sessionspec.model.log import Dialect, Event, json_int
from sessionspec.model.placeholder import is_opaque_field, is_placeholder
from sessionspec.model.record_keys import Keys, key_flaw
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

HEADER_REASONS: Final = frozenset(r.value for r in HeaderReason)

# (field, its value's test, what it must be): a field a dialect adds to the typed header.
TypedField = tuple[str, Callable[[Json], bool], str]


def _is_list_of_objects(v: Json, *, placeholders: bool = False) -> bool:
    return isinstance(v, tuple) and all(isinstance(x, JsonObject) or (placeholders and is_placeholder(x)) for x in v)


@dataclass(slots=True)
class HeaderTrack:
    """What the log so far shows of headers: the header in force (the fold), the prefix of the open instance and
    whether it was anchored, and the open step: the seq of its header and its latest chunk since it opened (D08:
    since its last header).  Mutable, owned by whoever folds the log; ``last_chunk`` is the one fact a chunk
    gives, and the folder sets it to each chunk as it comes (a chunk is the log's most common event: a call per
    chunk would cost the checker 1 % of its instructions), read only when a header comes (:func:`streamed`)."""

    fold: EpochHeader | Absent = ABSENT
    instance_prefix: Json | Absent = ABSENT
    anchored: bool = False
    step_open: bool = False
    step_header: int | None = None
    last_chunk: Event | None = None
    # The instance prefix's JS text, once asked (PFX-15 compares texts: JSONEQ).
    instance_prefix_text: str | None = None


def streamed(track: HeaderTrack) -> bool:
    """Has the open step's request streamed: a chunk since the step opened (D08: since its last header)?"""
    return track.last_chunk is not None


def attempt_streaming(track: HeaderTrack) -> bool:
    """Is an attempt streaming: its latest chunk is no ``finish``?"""
    chunk = track.last_chunk
    return chunk is not None and get(get(chunk.data, "chunk"), "type") != "finish"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderShapes:
    """What a dialect changes in the header records (:func:`header_shapes`)."""

    dialect: Dialect
    types_rule: str
    own_field: TypedField
    canonical_keys: tuple[str, ...]
    misplaced: Callable[[HeaderTrack], str | None]
    header_taken: Callable[[HeaderTrack], None]
    prefix_change: Callable[[HeaderTrack, EpochHeader, int], Rejected | None]


def _a55_misplaced(track: HeaderTrack) -> str | None:
    return "request/header after the step's first chunk" if streamed(track) else None


def _d08_misplaced(track: HeaderTrack) -> str | None:
    """DIA-12: the header precedes its attempt's dispatch; only a retry after a finish (DIA-7) writes another."""
    if attempt_streaming(track):
        return "request/header inside a streaming attempt (after its first chunk, before its finish)"
    return None


def _one_per_step(track: HeaderTrack) -> None:
    """A55: the step's one request follows its header."""


def _opens_attempt(track: HeaderTrack) -> None:
    """DIA-12: a header opens the next attempt: the step's chunks so far were the previous attempt's."""
    track.last_chunk = None


def _a55_prefix_change(track: HeaderTrack, header: EpochHeader, seq: int) -> Rejected | None:
    """PFX-15: the instance's prefix, JSONEQ (its text written once per instance)."""
    if not track.anchored or header.message_prefix is track.instance_prefix:
        return None
    if track.instance_prefix_text is None:
        track.instance_prefix_text = "" if track.instance_prefix is ABSENT else js_stringify(track.instance_prefix)
    text = "" if header.message_prefix is ABSENT else js_stringify(header.message_prefix)
    if text != track.instance_prefix_text:
        return Rejected(rule="PFX-15", seq=seq, reason="messagePrefix changed inside a loop instance (only an anchor may change it)")
    return None


def _no_prefix(track: HeaderTrack, header: EpochHeader, seq: int) -> Rejected | None:
    """DIA-8: no ``messagePrefix`` exists in D08."""
    return None


A55_HEADERS: Final = HeaderShapes(
    dialect=Dialect.A55, types_rule="HDR-1", misplaced=_a55_misplaced, header_taken=_one_per_step, prefix_change=_a55_prefix_change,
    canonical_keys=("config", "system", "tools", "messagePrefix"),
    # LEG-8: entries may each be the "{{messagePrefix}}" placeholder.
    own_field=("messagePrefix", lambda v: _is_list_of_objects(v, placeholders=True), "a list of messages"),
)
D08_HEADERS: Final = HeaderShapes(
    dialect=Dialect.D08, types_rule="DIA-8", misplaced=_d08_misplaced, header_taken=_opens_attempt, prefix_change=_no_prefix,
    # D08 reads A55 logs (DIA-13): their headers' messagePrefix is dropped by canonicalization (DIA-8).
    canonical_keys=("config", "adapterDefaults", "system", "tools", "messagePrefix"),
    own_field=("adapterDefaults", lambda v: isinstance(v, JsonObject), "an object"),
)


def header_shapes(dialect: Dialect) -> HeaderShapes:
    """The one place the header records are selected by dialect: DIA-8's header (``adapterDefaults``, no
    ``messagePrefix`` of its own) and DIA-12's header per attempt."""
    match dialect:
        case Dialect.A55:
            return A55_HEADERS
        case Dialect.D08:
            return D08_HEADERS


@decides("HDR-1", "DIA-8", "FMT-6")
@implements("HDR-1")
def check_header_types(event: Event, dialect: Dialect) -> list[Rejected]:
    """HDR-1: "An A55 `EpochHeader` MUST be `{config, system?, tools?, messagePrefix?}`."

    With ``system`` a string, ``tools`` a list of ``ToolSchema`` objects and ``messagePrefix`` a list of
    ``Message`` objects; ``config`` is ``{provider, model, reasoningEffort?, temperature?, maxTokens?, stop?:
    string[]}``.  DIA-8's header types ``adapterDefaults`` instead of ``messagePrefix`` (the overlay's
    ``own_field``).  FMT-6: a field holding a placeholder skips its type check (:func:`is_opaque_field`); every
    other field is checked.  A non-object header or config is ``header_of_event``'s."""
    shapes = header_shapes(dialect)
    header = get(event.data, "header")
    config = get(header, "config")
    own, own_ok, own_what = shapes.own_field
    fields: tuple[tuple[str, Json | Absent, Callable[[Json], bool], str], ...] = (
        ("system", get(header, "system"), lambda v: isinstance(v, str), "a string"),
        ("tools", get(header, "tools"), _is_list_of_objects, "a list of tool schemas"),
        (own, get(header, own), own_ok, own_what),
        ("config.temperature", get(config, "temperature"), lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
        ("config.maxTokens", get(config, "maxTokens"), lambda v: json_int(v) is not None, "an integer"),
        ("config.stop", get(config, "stop"), lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v), "a list of strings"),
    )
    return [Rejected(rule=shapes.types_rule, seq=event.seq, reason=f"request/header {name} is {js_stringify(value)[:40]}, not {what} (FMT-6: only placeholder fields skip type checks)")
            for name, value, ok, what in fields if not (isinstance(value, Absent) or is_opaque_field(name, value) or ok(value))]


HEADER_DATA_KEYS: Final[Keys] = (("header", True), ("reason", True))
# The fields canonical(h) keeps only when present with length > 0 (HDR-2).
LENGTHY_FIELDS: Final = ("system", "tools", "messagePrefix")


@decides("HDR-7")
@implements("HDR-7")
def check_header_data(event: Event) -> Rejected | None:
    """HDR-7: "A `request/header` event MUST have `data = {header, reason}`, be log-only, and have no surface metadata."

    The keys, in this order; log-only is :func:`sessionspec.model.log.surface_types`' (no header is surface
    eligible) and surface metadata on a log-only event SURF-2's; the reasons the loop writes are
    :func:`check_header_record`'s."""
    flaw = key_flaw(event.data, HEADER_DATA_KEYS)
    return None if flaw is None else Rejected(rule="HDR-7", seq=event.seq, reason=f"request/header data {flaw}")


@decides("HDR-2", "DIA-8", "PFX-10", "P-PFX-7")
def check_canonical_header(event: Event, dialect: Dialect) -> list[Rejected]:
    """HDR-7's "The loop writes ``header`` already canonical, in HDR-2 key order": :func:`sessionspec.model.header.
    canonical`'s keys (its definition, with HDR-2's and DIA-8's quotes), in its order, and ``system``, ``tools``
    and ``messagePrefix`` present only with length > 0 (so PFX-10's empty composition leaves ``messagePrefix``
    out, P-PFX-7).  D08's order is DIA-8's (the overlay's ``canonical_keys``).  A placeholder (FMT-6) has its own
    length, so it stays canonical (Q-15); ``messageSuffix`` is LEG-7's (recognized, not judged here).  A header
    that is no object is :func:`sessionspec.model.header.header_of_event`'s."""
    header = get(event.data, "header")
    if not isinstance(header, JsonObject):
        return []
    order = header_shapes(dialect).canonical_keys
    found: list[Rejected] = []
    keys = [k for k in header if k != "messageSuffix"]
    for key in keys:
        if key not in order:
            found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header has the key {key!r}, which the canonical header never carries"))
    known = [k for k in keys if k in order]
    if [order.index(k) for k in known] != sorted(order.index(k) for k in known):
        found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header keys out of canonical order ({', '.join(known)})"))
    for key in LENGTHY_FIELDS:
        value = get(header, key)
        if value is ABSENT or is_opaque_field(key, value):
            continue
        if js_length(value) == 0:
            found.append(Rejected(rule="HDR-2", seq=event.seq, reason=f"request/header header carries an empty {key} (canonical headers leave it out)"))
    return found


def open_step(track: HeaderTrack) -> None:
    """``step/start``: a step opens, no chunk and no header yet."""
    track.step_open, track.step_header, track.last_chunk = True, None, None


def close_step(track: HeaderTrack) -> None:
    """``step/end``: no step is open."""
    track.step_open = False


def take_seed_header(track: HeaderTrack, header: EpochHeader) -> None:
    """A header of a fork's seed (judged where it was written): it is in force, with its prefix."""
    track.fold, track.instance_prefix, track.instance_prefix_text = header, header.message_prefix, None


def _opaque_header(h: EpochHeader) -> bool:
    """FMT-6: a header with a scrubbed field hides whether it changed."""
    return any(is_opaque_field(f, v) for f, v in (("system", h.system), ("tools", h.tools), ("messagePrefix", h.message_prefix)))


def check_placement(track: HeaderTrack, seq: int, shapes: HeaderShapes) -> Rejected | None:
    """FMT-9 (a): after a ``step/start``, before the step's request streams, at most one per step (D08: per
    attempt, the overlay's ``misplaced``)."""
    if not track.step_open:
        return Rejected(rule="FMT-9", seq=seq, reason="request/header outside a step (the loop writes it after step/start)")
    misplaced = shapes.misplaced(track)
    if misplaced is not None:
        return Rejected(rule="FMT-9", seq=seq, reason=misplaced)
    if track.step_header is not None and not streamed(track):
        return Rejected(rule="FMT-9", seq=seq, reason=f"second request/header in one step (first at seq {track.step_header})")
    return None


@decides("FMT-9", "HDR-7", "PFX-15", "PFX-7")
@implements("FMT-9")
def check_header_record(track: HeaderTrack, event: Event, header: EpochHeader, shapes: HeaderShapes, first_live: bool) -> list[Rejected]:
    """FMT-9: "Header-reason audit (A55, loop logs): (a) every `request/header` lies after a `step/start` and
    before that step's first chunk, at most one per step; (b) reason `initial` iff no earlier header exists in the
    log; (c) a `change` header MUST differ (HDR-4) from the fold before it; (d) `initial`/`resume` headers are
    instance anchors and MAY equal the fold; (e) every instance that made a request wrote exactly one anchor, so
    anchors partition requests into instances (instances that never reached a request are invisible); (f) all
    headers of one instance carry JSONEQ `messagePrefix` (PFX-15); (g) requests without a header event in their
    step use the carried fold (HDR-9)."

    A live header (``header``, canonical) against the ``track`` before it, which it then moves on: (a) is
    :func:`check_placement`; the reason must be one the loop writes (HDR-7); (e) is judged on the log's first
    live header (``first_live``: an earlier instance's anchor may lie in a fork's seed); (f) is PFX-15's (the
    trace of PFX-7: one prefix per instance); a scrubbed field (FMT-6) decides no (c).  (g) is the request
    points'.  D08 (DIA-7, DIA-12): a header per attempt, and no prefix."""
    seq = event.seq
    reason = get(event.data, "reason")
    misplaced = check_placement(track, seq, shapes)
    found = [] if misplaced is None else [misplaced]
    track.step_header = seq
    shapes.header_taken(track)
    if not isinstance(reason, str) or reason not in HEADER_REASONS:
        found.append(Rejected(rule="HDR-7", seq=seq, reason=f"request/header reason {js_stringify(reason if reason is not ABSENT else None)} is not one the loop writes"))
        track.fold = header
        return found
    earlier = track.fold is not ABSENT
    if reason == HeaderReason.INITIAL.value and earlier:
        found.append(Rejected(rule="FMT-9", seq=seq, reason="initial header although an earlier header exists (expected resume or change)"))
    if reason != HeaderReason.INITIAL.value and not earlier:
        found.append(Rejected(rule="FMT-9", seq=seq, reason=f"{reason} header with no earlier header (expected initial)"))
    if reason == HeaderReason.CHANGE.value:
        if first_live and not track.anchored:
            found.append(Rejected(rule="FMT-9", seq=seq, reason="change header before any initial/resume anchor of this instance"))
        opaque = _opaque_header(header) or (isinstance(track.fold, EpochHeader) and _opaque_header(track.fold))
        if earlier and not opaque and opt_header_eq(track.fold, header, shapes.dialect):
            found.append(Rejected(rule="FMT-9", seq=seq, reason="change header equal to the header in force (HDR-4)"))
        prefix = shapes.prefix_change(track, header, seq)
        if prefix is not None:
            found.append(prefix)
    else:
        track.anchored, track.instance_prefix, track.instance_prefix_text = True, header.message_prefix, None
    track.fold = header
    return found
