"""Property predicates of RULES §16 for the derivation (DER): the cache, log-only events, empty assistants, replaces.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules it checks.  :data:`PROPERTY_PREDICATES`
maps each P-ID to its main predicate; ``tests/model/test_core_properties.py`` feeds them generated inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.derive import derive, derive_nodes, project
from sessionspec.model.jsonval import Absent, Json, JsonObject, get, js_stringify
from sessionspec.model.log import Dialect, Event, make_event, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface
from sessionspec.spec.derivation_cache import CacheFactory, messages_eq


@implements("P-DER-1")
def incremental_equals_scratch(events: Sequence[Event], dialect: Dialect = Dialect.A55, *,
                               cache: CacheFactory) -> str | None:
    """P-DER-1 (DER-4, DER-7): at every prefix of an accepted log the cached
    derivation equals ``derive`` from scratch (JSONEQ), ``derive`` is
    deterministic, and a list the caller holds never changes."""
    derivation = cache(dialect)
    held: list[tuple[tuple[JsonObject, ...], str]] = []
    for index, event in enumerate(events):
        if derivation.append(event) is not None:
            if isinstance(derive(events[: index + 1], dialect), Rejected):
                return None
            return f"P-DER-1: the cache rejects seq {event.seq}, derive accepts"
        cached = derivation.messages()
        scratch = derive(events[: index + 1], dialect)
        again = derive(events[: index + 1], dialect)
        if isinstance(scratch, Rejected) or isinstance(again, Rejected):
            return f"P-DER-1: derive rejects the log up to seq {event.seq}, the cache accepts"
        if not messages_eq(cached, scratch) or not messages_eq(scratch, again):
            return f"P-DER-1: after seq {event.seq} the cached derivation differs from derive (or derive is not deterministic)"
        held.append((cached, js_stringify(cached)))
    if not all(js_stringify(messages) == text for messages, text in held):
        return "P-DER-1: a derivation the caller held changed"
    return None


def insert_log_only(events: Sequence[Event], position: int, type_name: str, data: Json) -> tuple[Event, ...]:
    """``events`` with a log-only event inserted at ``position``; later seqs,
    provenance and replace endpoints are renumbered so the log stays valid."""

    def shift(seq: Json) -> Json:
        return seq + 1 if isinstance(seq, int) and not isinstance(seq, bool) and seq >= position else seq

    out: list[Event] = list(events[:position])
    out.append(make_event(type_name, seq=position, time=0, data=data))
    for event in events[position:]:
        prov: Json | Absent = event.source_event_seqs
        if isinstance(prov, tuple):
            prov = tuple(shift(s) for s in prov)
        op: Json | Absent = event.surface_op
        if isinstance(op, JsonObject):
            op = JsonObject((k, shift(v) if k in ("start", "end") else v) for k, v in op.items())
        out.append(
            make_event(
                event.type,
                seq=event.seq + 1,
                time=event.time,
                data=event.data,
                source_event_seqs=prov,
                surface_op=op,
                op_first=event.op_first,
            )
        )
    return tuple(out)


@implements("P-DER-2")
def log_only_never_changes_derivation(events: Sequence[Event], position: int, type_name: str, data: Json) -> str | None:
    """P-DER-2 (DER-4, SURF-11): inserting a log-only event anywhere never
    changes ``derive``."""
    if type_name in surface_types(Dialect.A55) or not 0 <= position <= len(events):
        return None
    before = derive(events)
    after = derive(insert_log_only(events, position, type_name, data))
    if isinstance(before, Rejected):
        return None
    if isinstance(after, Rejected) or not messages_eq(before, after):
        return f"P-DER-2: inserting {type_name} at {position} changes the derivation"
    return None


def _is_empty_assistant(event: Event) -> bool:
    return event.type == "assistant/message" and get(event.data, "content") == ()


@implements("P-DER-3")
def empty_assistant_stays_silent(events: Sequence[Event]) -> str | None:
    """P-DER-3 (DER-5): empty-content assistant nodes stay on the surface (an
    append always pushes them) and yield no message."""
    fold = fold_surface(events)
    derived = derive(events)
    if isinstance(fold, Rejected) or isinstance(derived, Rejected):
        return None
    nodes = fold.state.nodes
    shadowed = {s for r in fold.replacements for s in r.shadowed}
    for event in events:
        if _is_empty_assistant(event) and event.surface_op == "append" and event.seq not in shadowed:
            if event.seq not in nodes:
                return f"P-DER-3: the empty assistant message at seq {event.seq} left the surface"
    silent = sum(1 for s in nodes if _is_empty_assistant(events[s]))
    if len(derived) != len(nodes) - silent:
        return "P-DER-3: an empty assistant message yields a message (or a node yields none)"
    return None


@implements("P-DER-4")
def replace_splices_messages(events: Sequence[Event]) -> str | None:
    """P-DER-4 (SURF-8, DER-4): a replace removes exactly the shadowed nodes'
    messages and puts the replacement's message at the start position."""
    for index, event in enumerate(events):
        if not isinstance(event.surface_op, JsonObject):
            continue
        before_fold = fold_surface(events[:index])
        after = derive(events[: index + 1])
        if isinstance(before_fold, Rejected) or isinstance(after, Rejected):
            return None
        nodes = before_fold.state.nodes
        start, end = get(event.surface_op, "start"), get(event.surface_op, "end")
        if start not in nodes or end not in nodes:
            return f"P-DER-4: the accepted replace at seq {event.seq} names a node not on the surface"
        i, j = nodes.index(start), nodes.index(end)
        head = derive_nodes(nodes[:i], events)
        tail = derive_nodes(nodes[j + 1 :], events)
        middle = project(event)
        if isinstance(head, Rejected) or isinstance(tail, Rejected) or isinstance(middle, Rejected):
            return f"P-DER-4: the surface around the replace at seq {event.seq} does not derive"
        expected = (*head, *(() if middle is None else (middle,)), *tail)
        if not messages_eq(after, expected):
            return f"P-DER-4: the replace at seq {event.seq} is not head ++ [its message] ++ tail"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-DER-1": incremental_equals_scratch,
    "P-DER-2": log_only_never_changes_derivation,
    "P-DER-3": empty_assistant_stays_silent,
    "P-DER-4": replace_splices_messages,
}
