"""Property predicates of RULES §16 for the request header (HDR): canonical form, the fold, headerEq.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules it checks.  :data:`PROPERTY_PREDICATES`
maps each P-ID to its main predicate; ``tests/model/test_core_properties.py`` feeds them generated inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.header import EpochHeader, canonical, fold_header, header_eq, header_of_event
from sessionspec.model.jsonval import ABSENT, Absent, Json, js_stringify, json_eq
from sessionspec.model.log import Event
from sessionspec.model.rules import implements


def _is_empty(v: Json | Absent) -> bool:
    return v == "" or v == ()


@implements("P-HDR-1")
def canonical_idempotent(h: EpochHeader) -> str | None:
    """P-HDR-1 (HDR-2): ``canonical`` is idempotent, removes empty
    system/tools/prefix, keeps populated ones and passes config through."""
    c = canonical(h)
    if canonical(c) != c or c.config is not h.config:
        return "P-HDR-1: canonical is not idempotent or does not pass config through"
    for raw, kept in ((h.system, c.system), (h.tools, c.tools), (h.message_prefix, c.message_prefix)):
        if _is_empty(raw) or raw is ABSENT:
            if kept is not ABSENT:
                return f"P-HDR-1: canonical keeps the empty field {js_stringify(raw) if raw is not ABSENT else 'absent'}"
        elif kept is not raw:
            return "P-HDR-1: canonical drops or copies a populated field"
    return None


@implements("P-HDR-1")
def fold_is_last_canonical(events: Sequence[Event], baseline: EpochHeader | Absent = ABSENT) -> str | None:
    """P-HDR-1 (HDR-5): ``fold`` is the canonical last snapshot, else the
    baseline by identity (Q-9)."""
    folded = fold_header(events, baseline)
    last = next((e for e in reversed(events) if e.type == "request/header"), None)
    if last is None:
        return None if folded is baseline else "P-HDR-1: with no snapshot the fold is not the baseline"
    expected = header_of_event(last)
    if isinstance(folded, EpochHeader) and isinstance(expected, EpochHeader) and folded == expected:
        return None
    return f"P-HDR-1: the fold is not the canonical snapshot at seq {last.seq}"


@implements("P-HDR-2")
def header_eq_laws(a: EpochHeader, b: EpochHeader) -> str | None:
    """P-HDR-2 (HDR-3, HDR-4): on canonical headers ``headerEq`` is reflexive
    and symmetric, absent ≡ empty, and distinguishes tool order and every
    canonical field."""
    ca, cb = canonical(a), canonical(b)
    if not header_eq(ca, ca) or header_eq(ca, cb) != header_eq(cb, ca):
        return "P-HDR-2: headerEq is not reflexive and symmetric"
    # absent and empty prefix/tools compare equal.
    emptied = EpochHeader(config=ca.config, system=ca.system, tools=ca.tools if ca.tools is not ABSENT else (),
                          message_prefix=ca.message_prefix if ca.message_prefix is not ABSENT else ())
    if not header_eq(ca, emptied):
        return "P-HDR-2: absent and empty prefix/tools differ"
    tools = ca.tools
    if isinstance(tools, tuple) and len(tools) >= 2 and not json_eq(tools[0], tools[1]):
        swapped = EpochHeader(config=ca.config, system=ca.system, tools=(tools[1], tools[0], *tools[2:]),
                              message_prefix=ca.message_prefix)
        if header_eq(ca, swapped):
            return "P-HDR-2: headerEq ignores tool order"
    other_system = EpochHeader(config=ca.config, system=f"{ca.system if isinstance(ca.system, str) else ''}!",
                               tools=ca.tools, message_prefix=ca.message_prefix)
    return "P-HDR-2: headerEq ignores the system prompt" if header_eq(ca, other_system) else None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-HDR-1": canonical_idempotent,
    "P-HDR-2": header_eq_laws,
}
