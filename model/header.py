"""The request header (HDR): ``EpochHeader`` snapshots in ``request/header`` events.

Field values stay the logged JSON values: test fixtures replace whole fields
with placeholder strings (``"{{tools}}"``, FMT-6) and the real canonicalization
keeps them (Q-15), so the model does too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_length, js_stringify, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.placeholder import holds_placeholder
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements


class HeaderReason(Enum):
    """HDR-7: the reasons the loop writes (``fallback`` is legacy, LEG-2)."""

    INITIAL = "initial"
    RESUME = "resume"
    CHANGE = "change"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EpochHeader:
    """HDR-1: ``{config, system?, tools?, messagePrefix?}`` (D08: ``adapterDefaults?``)."""

    config: Json
    system: Json | Absent = ABSENT
    tools: Json | Absent = ABSENT
    message_prefix: Json | Absent = ABSENT
    adapter_defaults: Json | Absent = ABSENT


CONFIG_SCALARS: Final = ("provider", "model", "reasoningEffort", "temperature", "maxTokens")


def _present(v: Json | Absent) -> bool:
    """'present with length > 0' in JS terms (HDR-2)."""
    if v is ABSENT:
        return False
    length = js_length(v)
    return length is not None and length > 0


@implements("HDR-2", "DIA-8")
def canonical(h: EpochHeader, dialect: Dialect = Dialect.A55) -> EpochHeader:
    """DIA-8: "`messagePrefix` and `agent/session-prefix` MUST NOT exist: the canonical header is `{config,
    adapterDefaults?, system?, tools?}` (`adapterDefaults {reasoningEffort?: true, maxTokens?: true}`); a
    logged `messagePrefix` is dropped by canonicalization; request messages are exactly the derivation."
    HDR-2: "`canonical(h)` MUST return a new object with key order `config, system?, tools?,
    messagePrefix?`."

    HDR-2: keep system/tools/messagePrefix only when present with length > 0;
    config passes through unchanged.  D08 drops any messagePrefix (DIA-8).

    post: __return__.config is h.config
    post: __return__.system is ABSENT or __return__.system is h.system
    post: __return__.tools is ABSENT or __return__.tools is h.tools
    post: __return__.message_prefix is ABSENT or (dialect is Dialect.A55 and __return__.message_prefix is h.message_prefix)
    post: all(v is ABSENT or (js_length(v) or 0) > 0 for v in (__return__.system, __return__.tools, __return__.message_prefix))
    post: canonical(__return__, dialect) == __return__
    """
    prefix = h.message_prefix if dialect is Dialect.A55 and _present(h.message_prefix) else ABSENT
    defaults = h.adapter_defaults if dialect is Dialect.D08 else ABSENT
    return EpochHeader(
        config=h.config,
        system=h.system if _present(h.system) else ABSENT,
        tools=h.tools if _present(h.tools) else ABSENT,
        message_prefix=prefix,
        adapter_defaults=defaults,
    )


def header_from_json(v: Json, seq: int | None = None) -> EpochHeader | Rejected:
    """Read ``data.header`` (raw, not canonicalized)."""
    if not isinstance(v, JsonObject):
        return Rejected(rule="HDR-1", seq=seq, reason="request/header header is not an object")
    config = get(v, "config")
    if not isinstance(config, JsonObject):
        return Rejected(rule="HDR-1", seq=seq, reason="request/header header.config is not an object")
    return EpochHeader(
        config=config,
        system=get(v, "system"),
        tools=get(v, "tools"),
        message_prefix=get(v, "messagePrefix"),
        adapter_defaults=get(v, "adapterDefaults"),
    )


def header_to_json(h: EpochHeader) -> JsonObject:
    """The header in the logged key order ``config, adapterDefaults?, system?, tools?, messagePrefix?``."""
    pairs: list[tuple[str, Json]] = [("config", h.config)]
    for key, value in (
        ("adapterDefaults", h.adapter_defaults),
        ("system", h.system),
        ("tools", h.tools),
        ("messagePrefix", h.message_prefix),
    ):
        if value is not ABSENT:
            pairs.append((key, value))
    return JsonObject(pairs)


@implements("HDR-3")
def config_eq(a: Json, b: Json) -> bool:
    """HDR-3: "`configEq(a, b)` MUST compare exactly `provider`, `model`, `reasoningEffort`, `temperature` and
    `maxTokens`, by strict equality (absent equals only absent), and `stop`."

    HDR-3: provider, model, reasoningEffort, temperature, maxTokens strictly
    equal (absent only equals absent), and stop element-wise; other keys ignored.

    post: __return__ == config_eq(b, a)
    post: not __return__ or ((get(a, "stop") is ABSENT) == (get(b, "stop") is ABSENT))
    post: not __return__ or all((get(a, k) is ABSENT) == (get(b, k) is ABSENT) for k in CONFIG_SCALARS)
    """
    for key in CONFIG_SCALARS:
        x, y = get(a, key), get(b, key)
        if x is ABSENT or y is ABSENT:
            if x is not y:
                return False
        elif not _strict_eq(x, y):
            return False
    sa, sb = get(a, "stop"), get(b, "stop")
    if sa is ABSENT or sb is ABSENT:
        return sa is sb
    if not isinstance(sa, tuple) or not isinstance(sb, tuple):
        return _strict_eq(sa, sb)
    return len(sa) == len(sb) and all(_strict_eq(x, y) for x, y in zip(sa, sb))


def _strict_eq(x: Json, y: Json) -> bool:
    """JS ``===``: primitives by type and value; objects/arrays never (identity)."""
    if isinstance(x, (tuple, JsonObject)) or isinstance(y, (tuple, JsonObject)):
        return False
    if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
        return x is y
    if isinstance(x, str) or isinstance(y, str):
        return isinstance(x, str) and isinstance(y, str) and x == y
    return x == y


def header_holds_placeholder(h: EpochHeader | Absent) -> bool:
    """FMT-6, LEG-8: the header's system, tools or messagePrefix was scrubbed to a placeholder."""
    if h is ABSENT:
        return False
    return any(holds_placeholder(v) for v in (h.system, h.tools, h.message_prefix))


@implements("HDR-4", "DIA-9", "Q-15")
def header_eq(a: EpochHeader, b: EpochHeader, dialect: Dialect = Dialect.A55) -> bool:
    """DIA-9: "Header equality MUST also compare `adapterDefaults`; `request/context {provider, model,
    contextWindow?}` is log-only and excluded from equality and reconstruction."
    HDR-4: "`headerEq(a, b)` is defined on canonical headers."

    HDR-4 on canonical headers: configEq, system equal, JSONEQ prefixes
    (absent = []), tools same length and pairwise JSONEQ in order (absent = []).
    D08 also compares adapterDefaults (DIA-9).  Q-15 / FMT-6: a header holding
    a placeholder is compared by JSON identity of the whole header, never
    element-wise.

    post: __return__ == header_eq(b, a, dialect)
    post: not __return__ or config_eq(a.config, b.config)
    post: __return__ == all(hdr4_clauses(a, b, dialect))
    """
    if header_holds_placeholder(a) or header_holds_placeholder(b):
        return json_eq(header_to_json(a), header_to_json(b))
    if not config_eq(a.config, b.config):
        return False
    if a.system is ABSENT or b.system is ABSENT:
        if a.system is not b.system:
            return False
    elif not _strict_eq(a.system, b.system):
        return False
    prefix_a = () if a.message_prefix is ABSENT else a.message_prefix
    prefix_b = () if b.message_prefix is ABSENT else b.message_prefix
    if not json_eq(prefix_a, prefix_b):
        return False
    tools_a = () if a.tools is ABSENT else a.tools
    tools_b = () if b.tools is ABSENT else b.tools
    if not isinstance(tools_a, tuple) or not isinstance(tools_b, tuple):
        # Placeholder strings: the real code would fail here; the model
        # compares them by identity of text instead (FMT-6).
        if not json_eq(tools_a, tools_b):
            return False
    elif len(tools_a) != len(tools_b) or not all(json_eq(x, y) for x, y in zip(tools_a, tools_b)):
        return False
    if dialect is Dialect.D08 and not json_eq(a.adapter_defaults, b.adapter_defaults):
        return False
    return True


def hdr4_clauses(a: EpochHeader, b: EpochHeader, dialect: Dialect = Dialect.A55) -> tuple[bool, ...]:
    """HDR-4 restated clause by clause for :func:`header_eq`'s contract (the definition, not the code):
    ``configEq``; ``system`` strictly equal, absent only to absent; ``JSONEQ(prefix or [])``; the tool lists
    (absent = ``[]``) of equal length and pairwise JSONEQ in order; D08 also ``adapterDefaults`` (DIA-9).
    A header holding a placeholder: JSON identity of the whole header (Q-15, FMT-6).  Strict equality of
    two primitives is equality of their JS texts (JS ``===``); an array or object is never ``===``."""
    if header_holds_placeholder(a) or header_holds_placeholder(b):
        return (js_stringify(header_to_json(a)) == js_stringify(header_to_json(b)),)

    def primitive(v: Json) -> bool:
        return not isinstance(v, (tuple, JsonObject))

    def as_list(v: Json | Absent) -> Json:
        return () if v is ABSENT else v

    sa, sb = a.system, b.system
    tools_a, tools_b = as_list(a.tools), as_list(b.tools)
    if isinstance(tools_a, tuple) and isinstance(tools_b, tuple):
        tools = len(tools_a) == len(tools_b) and all(js_stringify(x) == js_stringify(y) for x, y in zip(tools_a, tools_b))
    else:
        tools = js_stringify(tools_a) == js_stringify(tools_b)
    return (
        config_eq(a.config, b.config),
        (sa is ABSENT and sb is ABSENT) or (sa is not ABSENT and sb is not ABSENT and primitive(sa) and primitive(sb)
                                            and js_stringify(sa) == js_stringify(sb)),
        js_stringify(as_list(a.message_prefix)) == js_stringify(as_list(b.message_prefix)),
        tools,
        dialect is not Dialect.D08 or json_eq(a.adapter_defaults, b.adapter_defaults),
    )


@implements("MTR-11")
def opt_header_eq(a: EpochHeader | Absent, b: EpochHeader | Absent, dialect: Dialect = Dialect.A55) -> bool:
    """MTR-11: "`optHeaderEq(a, b)` MUST be: both absent → true; one absent → false; else `headerEq` (HDR-4)."

    MTR-11: both absent -> true; one absent -> false; else headerEq.

    post: (a is ABSENT and b is ABSENT) <= __return__
    post: not ((a is ABSENT) != (b is ABSENT) and __return__)
    """
    if a is ABSENT or b is ABSENT:
        return a is b
    return header_eq(a, b, dialect)


def header_event_reason(event: Event) -> Json | Absent:
    """The logged reason of a request/header event (any string but fallback is
    accepted by the Session core, Q-7).  Only reads the key: the rules on it
    are checked where the work is done -- HDR-7 by the header-reason audit
    (``sessionspec.check.audit.check_header_reasons``), LEG-2 by the load's
    refusals (``model.load_shape``), LEG-1 by ``model.codec``/``model.seed``."""
    return get(event.data, "reason")


def header_of_event(event: Event, dialect: Dialect = Dialect.A55) -> EpochHeader | Rejected:
    """``canonical(event.data.header)``."""
    header = get(event.data, "header")
    raw = header_from_json(None if header is ABSENT else header, event.seq)
    if isinstance(raw, Rejected):
        return raw
    return canonical(raw, dialect)


@implements("HDR-5", "HDR-6", "HDR-9")
def fold_header(
    events: Sequence[Event],
    baseline: EpochHeader | Absent = ABSENT,
    dialect: Dialect = Dialect.A55,
) -> EpochHeader | Absent | Rejected:
    """HDR-5: "`fold(events, from=ABSENT)` MUST return `canonical(e.data.header)` for the last `request/header`
    event `e`."

    HDR-5: canonical header of the last request/header event, else
    ``baseline`` unchanged (not canonicalized, Q-9).
    HDR-6: "`requestHeader(session)` MUST equal `fold(session.events)` over the whole current log, whoever
    wrote the header."
    HDR-9: "The header of a step MUST be `fold(log[0 : s])`, where `s` is the seq of that step's first
    `assistant/chunk`."
    """
    for event in reversed(events):
        if event.type == "request/header":
            return header_of_event(event, dialect)
    return baseline


@decides("HDR-8", "LEG-5", "LEG-6")
@implements("HDR-8", "LEG-5", "LEG-6")
def check_llm_shape(event: Event) -> Rejected | None:
    """HDR-8: "At seed or load, each `request/header` MUST have:"

    HDR-8 (seed/load): headers name a non-empty provider and model and a
    non-empty-string reasoningEffort when present; assistant messages carry
    provider/model provenance.
    LEG-5: "A seeded `request/header` without non-empty `config.provider`/`config.model`, or a seeded
    `assistant/message` without non-empty `provenance.provider`/`.model`, MUST be rejected (HDR-8)."
    LEG-6: "A seeded `reasoningEffort` that is present but not a non-empty string MUST be rejected (HDR-8)."
    """
    data = event.data
    if event.type == "request/header":
        config = get(get(data, "header"), "config")
        provider, model = get(config, "provider"), get(config, "model")
        if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
            return Rejected(rule="HDR-8", seq=event.seq, reason="request/header lacks provider/model")
        effort = get(config, "reasoningEffort")
        if effort is not ABSENT and not (isinstance(effort, str) and effort):
            return Rejected(rule="LEG-6", seq=event.seq, reason="request/header has an invalid reasoningEffort")
    elif event.type == "assistant/message":
        provenance = get(data, "provenance")
        provider, model = get(provenance, "provider"), get(provenance, "model")
        if not (isinstance(provider, str) and provider and isinstance(model, str) and model):
            return Rejected(rule="HDR-8", seq=event.seq, reason="assistant/message lacks provider/model provenance")
    return None


def prefix_messages(h: EpochHeader | Absent) -> tuple[Json, ...]:
    """``h.messagePrefix or []`` as a tuple (a placeholder string counts as unknown: empty here).

    post: h is not ABSENT or __return__ == ()
    post: h is ABSENT or __return__ == () or __return__ is h.message_prefix
    """
    if h is ABSENT:
        return ()
    prefix = h.message_prefix
    return prefix if isinstance(prefix, tuple) else ()


def latest_header(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> EpochHeader | Absent | Rejected:
    """``requestHeader()``: the canonical header of the latest request/header (HDR-5's fold from nothing)."""
    return fold_header(events, ABSENT, dialect)
