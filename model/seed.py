"""Seed and persistence-load validation (LOG-8, LOG-17, LEG-1..6).

The codec already enforces lossless JSON (LOG-4) and the envelope (LOG-3,
with ``request/header-delta`` first, LEG-1) on every line it parses.  What is
left for a seed is, per entry ``i`` and in exactly the LOG-8 order:

3. the current LLM shape (HDR-8, LEG-5, LEG-6);
4. the current turn-end shape (LEG-4);
5. the ``fallback`` header reason (LEG-2);
6. ``seq == i`` (LOG-1);
7. surface validation (SURF-9).

The first failing check of the first failing entry is the reported one.  A
persistence load (LOG-17) additionally refuses ``mode/set`` (LEG-3); the
session-header ``version`` check lives in :func:`model.codec.parse_session_header`.

Both functions are total and pure: they never raise and never build state the
caller can observe (a rejected seed leaves nothing behind, LOG-6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sessionspec.model.header import check_llm_shape
from sessionspec.model.jsonval import JsonObject, get
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import SurfaceState, step_surface


@implements("LEG-1")
def check_not_header_delta(event: Event) -> Rejected | None:
    """LEG-1: "Any event of type `request/header-delta` MUST be rejected at append, seed (checked before the
    envelope) and persistence load ("uses unsupported legacy request/header-delta format"), whatever its
    payload."

    LEG-1: any ``request/header-delta`` is rejected "whatever its payload".

    The codec rejects it before the envelope; this repeats the check for
    events built in memory (e.g. ``make_event("request/header-delta", ...)``).
    """
    if event.type == "request/header-delta":
        return Rejected(rule="LEG-1", seq=event.seq, reason="uses unsupported legacy request/header-delta format")
    return None


@implements("LEG-4")
def check_turn_end_shape(event: Event) -> Rejected | None:
    """LEG-4: "A `turn/end` whose `reason.kind == "aborted"` with any key besides `kind` MUST be rejected at
    seed/load ("uses unsupported reason-bearing aborted format")."
    """
    if event.type != "turn/end":
        return None
    reason = get(event.data, "reason")
    if isinstance(reason, JsonObject) and get(reason, "kind") == "aborted" and set(reason.keys()) != {"kind"}:
        return Rejected(rule="LEG-4", seq=event.seq, reason="uses unsupported reason-bearing aborted format")
    return None


@implements("LEG-2")
def check_not_fallback(event: Event) -> Rejected | None:
    """LEG-2: "A `request/header` with `data.reason == "fallback"` MUST be rejected at append, seed and load
    ("uses unsupported legacy request/header reason \\"fallback\\"")."

    LEG-2: a ``request/header`` with ``data.reason == "fallback"`` is
    rejected at append, seed and load."""
    if event.type == "request/header" and get(event.data, "reason") == "fallback":
        return Rejected(rule="LEG-2", seq=event.seq, reason='uses unsupported legacy request/header reason "fallback"')
    return None


@implements("LEG-3")
def check_not_mode_set(event: Event) -> Rejected | None:
    """LEG-3: "Any `mode/set` event MUST be rejected at persistence load (append/seed through `Session` accept
    it as a plugin type)."

    LEG-3: any ``mode/set`` event is rejected at persistence load (a
    ``Session`` seed accepts it as a plugin type)."""
    if event.type == "mode/set":
        return Rejected(rule="LEG-3", seq=event.seq, reason="mode/set is rejected at persistence load")
    return None


def _header_llm_shape(event: Event) -> Rejected | None:
    return check_llm_shape(event) if event.type == "request/header" else None


def llm_shape_check(dialect: Dialect) -> Callable[[Event], Rejected | None]:
    """HDR-8's LLM shape (:func:`sessionspec.model.header.check_llm_shape`), selected by dialect: a D08 assistant
    message carries its provider inside ``message.source`` (DIA-10, after DIA-13's migration), a shape HDR-8's A55
    check does not read; headers keep the A55 config shape in both dialects."""
    match dialect:
        case Dialect.A55:
            return check_llm_shape
        case Dialect.D08:
            return _header_llm_shape


@implements("LOG-8")
def validate_seed(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> Rejected | None:
    """LOG-8: "Each seed entry `i` MUST be validated in this order: (1) lossless JSON (LOG-4); (2) envelope
    (LOG-3), with a `request/header-delta` type checked first (LEG-1); (3) current LLM shape (HDR-8, LEG-5,
    LEG-6); (4) current turn-end shape (LEG-4); (5) the `fallback` reason (LEG-2); (6) `seq == i` (LOG-1);
    (7) surface validation (SURF-9), a failure being wrapped as "invalid seed event at index i: …"."

    Steps (1) and (2) are the codec's (an :class:`Event` is already lossless
    JSON with a valid envelope), except LEG-1, repeated here for in-memory
    events.  Plugin types pass through except for SURF-2 (inside SURF-9).
    LEG-4 is an A55 rule (D08 overrides it, DIA-14), so it is skipped in D08.
    """
    state = SurfaceState()
    llm_shape = llm_shape_check(dialect)
    for index, event in enumerate(events):
        bad = check_not_header_delta(event) or llm_shape(event)
        if bad is None and dialect is Dialect.A55:
            bad = check_turn_end_shape(event)
        bad = bad or check_not_fallback(event)
        if bad is None and event.seq != index:
            bad = Rejected(rule="LOG-1", seq=event.seq, reason=f"seed must be contiguous from 0: entry {index} has seq {event.seq}")
        if bad is not None:
            return bad
        stepped = step_surface(state, event, log_view(events, index), dialect)
        if isinstance(stepped, Rejected):
            return Rejected(
                rule=stepped.rule,
                seq=stepped.seq,
                reason=f"invalid seed event at index {index}: {stepped.reason}",
                kind=stepped.kind,
            )
        state = stepped
    return None


@implements("LOG-17")
def validate_load(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> Rejected | None:
    """LOG-17: "A persistence load MUST reject a session header `version` other than `0`
    (`SESSION_FORMAT_VERSION`), any `request/header-delta`, any `mode/set`, and any `request/header` with
    reason `fallback`."

    LOG-17: a persistence load rejects any ``request/header-delta``, any
    ``mode/set`` and any ``request/header`` with reason ``fallback``, then
    validates the events as a seed (LOG-8).

    The load-only refusals are checked first over the whole log: the
    coordinator screens the records before it constructs the ``Session``.
    The header ``version`` (also LOG-17) is checked on the header line by
    :func:`model.codec.parse_session_header`.
    """
    for event in events:
        bad = check_not_header_delta(event) or check_not_mode_set(event) or check_not_fallback(event)
        if bad is not None:
            return bad
    return validate_seed(events, dialect)


__all__ = [
    "check_not_fallback",
    "check_not_header_delta",
    "check_not_mode_set",
    "check_turn_end_shape",
    "llm_shape_check",
    "validate_load",
    "validate_seed",
]
