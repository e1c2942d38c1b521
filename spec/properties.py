"""Property predicates of RULES §16 (log, surface, derivation, header).

Each predicate is a pure, total function named after what it protects,
carries ``@implements`` with its property ID, and returns ``None`` when the
property holds for its input, else the violation in words (starting with the
P-ID).  The Hypothesis tests (``tests/model/test_core_properties.py``) and other
helpers feed them generated inputs.  Docstrings name the P-ID and the rules it
checks.  :data:`PROPERTY_PREDICATES` maps each P-ID to its main predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

from model.codec import event_to_json, parse_event_line, serialize_event
from model.derive import derive, derive_nodes, project
from model.header import EpochHeader, canonical, fold_header, header_eq, header_of_event
from model.jsonval import ABSENT, Absent, Json, JsonObject, deep_eq, get, js_stringify, json_eq, obj, parse_json
from model.log import Dialect, Event, make_event, surface_types
from model.rejected import Rejected
from model.repair import repair_closers, scan_for_repair
from model.rules import implements
from model.seed import validate_seed
from model.surface import SurfaceState, fold_surface, plan_surface_event


class DerivationCache(Protocol):
    """What P-LOG-2, P-SURF-5 and P-DER-1 ask of a caching implementation of
    the derivation (DER-7 constrains such implementations; the property is
    stated here and the implementation under test is passed in, so spec/ needs
    no implementation)."""

    @property
    def events(self) -> Sequence[Event]: ...

    @property
    def nodes(self) -> tuple[int, ...]: ...

    @property
    def replace_generation(self) -> int: ...

    def append(self, event: Event) -> Rejected | None: ...

    def messages(self) -> tuple[JsonObject, ...]: ...


# A fresh, empty cache for a dialect (the checker's ``sessionspec.fast.derivation`` is one).
CacheFactory = Callable[[Dialect], DerivationCache]


def _messages_eq(a: Sequence[Json], b: Sequence[Json]) -> bool:
    return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))


# --------------------------------------------------------------------------- LOG


@implements("P-LOG-1")
def seq_contiguous(events: Sequence[Event]) -> str | None:
    """P-LOG-1 (LOG-1): ``events[i].seq == i`` for every accepted log."""
    if validate_seed(events) is not None:
        return None
    wrong = next((index for index, event in enumerate(events) if event.seq != index), None)
    return None if wrong is None else f"P-LOG-1: accepted event {wrong} has seq {events[wrong].seq}"


@implements("P-LOG-2")
def rejected_append_leaves_state(events: Sequence[Event], candidate: Event, *, cache: CacheFactory) -> str | None:
    """P-LOG-2 (LOG-6, SURF-9): a rejected append leaves the log, the nodes,
    ``replaceGeneration`` and the derivation cache unchanged."""
    derivation = cache(Dialect.A55)
    for event in events:
        if derivation.append(event) is not None:
            return None  # not an accepted log: nothing to check
    before = (tuple(derivation.events), tuple(derivation.nodes), derivation.replace_generation, derivation.messages())
    if derivation.append(candidate) is None:
        return None
    after = (tuple(derivation.events), tuple(derivation.nodes), derivation.replace_generation, derivation.messages())
    if before[:3] != after[:3] or not _messages_eq(before[3], after[3]):
        return f"P-LOG-2: the rejected append of seq {candidate.seq} changed the log, nodes, generation or derivation"
    return None


@implements("P-LOG-3")
def lossless_json(events: Sequence[Event]) -> str | None:
    """P-LOG-3 (LOG-4): every accepted event is lossless JSON: its text parses
    back to a JSON-equal value."""
    for event in events:
        value = event_to_json(event)
        reparsed = parse_json(js_stringify(value))
        if not isinstance(reparsed, (JsonObject, tuple, str, int, float, bool, type(None))) or not json_eq(reparsed, value):
            return f"P-LOG-3: event {event.seq} does not survive its JSON text"
    return None


def _reseed(events: Sequence[Event]) -> tuple[Event, ...] | None:
    out: list[Event] = []
    for event in events:
        parsed = parse_event_line(serialize_event(event))
        if isinstance(parsed, Rejected):
            return None
        out.extend(parsed)
    return tuple(out)


@implements("P-LOG-5")
def reseed_reproduces(events: Sequence[Event]) -> str | None:
    """P-LOG-5 (LOG-8, SURF-10, DER-4, HDR-5): re-seeding an accepted log
    (through its stored text) reproduces nodes, generation, derivation and
    header fold."""
    if validate_seed(events) is not None:
        return None
    again = _reseed(events)
    if again is None or validate_seed(again) is not None:
        return "P-LOG-5: the re-seeded log is not accepted"
    fold_a, fold_b = fold_surface(events), fold_surface(again)
    if isinstance(fold_a, Rejected) or isinstance(fold_b, Rejected) or fold_a.state != fold_b.state:
        return "P-LOG-5: re-seeding changes the surface"
    derived_a, derived_b = derive(events), derive(again)
    if isinstance(derived_a, Rejected) or isinstance(derived_b, Rejected) or not _messages_eq(derived_a, derived_b):
        return "P-LOG-5: re-seeding changes the derivation"
    header_a, header_b = fold_header(events), fold_header(again)
    if isinstance(header_a, EpochHeader) and isinstance(header_b, EpochHeader):
        same = header_eq(header_a, header_b)
    else:
        same = header_a is ABSENT and header_b is ABSENT
    return None if same else "P-LOG-5: re-seeding changes the header fold"


@implements("P-LOG-6")
def repair_closes_everything(events: Sequence[Event]) -> str | None:
    """P-LOG-6 (LOG-14): ``log ++ closers(log)`` has no open turn or step,
    answers every pending call of the open step, is still a valid seed, and the
    closers are deterministic (a second repair adds nothing)."""
    closers = repair_closers(events)
    if closers != repair_closers(events):
        return "P-LOG-6: the closers are not deterministic"
    scan = scan_for_repair(events)
    repaired = tuple(events) + closers
    after = scan_for_repair(repaired)
    if after.open_turn or after.open_step or after.pending or repair_closers(repaired):
        return "P-LOG-6: the repaired log still has an open turn, step or pending call"
    answered = [get(e.data, "callId") for e in closers if e.type == "tool/result"]
    if [c.call_id for c in scan.pending] != answered:
        return "P-LOG-6: the closers do not answer exactly the pending calls, in order"
    if validate_seed(events) is None and validate_seed(repaired) is not None:
        return "P-LOG-6: the repaired log is no longer a valid seed"
    return None


# --------------------------------------------------------------------------- SURF


@implements("P-SURF-1")
def surface_marker_iff_eligible(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> str | None:
    """P-SURF-1 (SURF-2, SURF-3): in an accepted log, ``surfaceOp`` is present
    iff the type is surface-eligible, and ``sourceEventSeqs`` only on eligible types."""
    if isinstance(fold_surface(events, dialect), Rejected):
        return None
    eligible = surface_types(dialect)
    for event in events:
        if (event.surface_op is not ABSENT) != (event.type in eligible):
            return f"P-SURF-1: {event.type} at seq {event.seq} has surfaceOp iff it is not eligible"
        if event.source_event_seqs is not ABSENT and event.type not in eligible:
            return f"P-SURF-1: log-only {event.type} at seq {event.seq} carries sourceEventSeqs"
    return None


@implements("P-SURF-2")
def replaces_well_formed(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> str | None:
    """P-SURF-2 (SURF-4..6): every accepted replace has current endpoints in
    position order, and provenance that covers the shadowed seqs, is unique
    and cites only earlier seqs."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return None
    for r in fold.replacements:
        prov = events[r.seq].source_event_seqs
        if not isinstance(prov, tuple) or len(set(prov)) != len(prov):
            return f"P-SURF-2: the replace at seq {r.seq} has no unique provenance"
        if not all(isinstance(s, int) and 0 <= s < r.seq for s in prov):
            return f"P-SURF-2: the replace at seq {r.seq} cites a seq that is not earlier"
        if not set(r.shadowed) <= set(prov) or not r.shadowed:
            return f"P-SURF-2: the replace at seq {r.seq} does not cite every shadowed seq"
        if r.shadowed[0] != r.start or r.shadowed[-1] != r.end:
            return f"P-SURF-2: the replace at seq {r.seq} shadows a range other than start..end"
    return None


@implements("P-SURF-3")
def positional_range_accepted_iff_ordered(events: Sequence[Event], start: int, end: int) -> str | None:
    """P-SURF-3 (SURF-5, SURF-8): on the surface of an accepted log, a
    ``user/message`` replace ``{start, end}`` citing every node is accepted iff
    both seqs are current and ``index(start) <= index(end)`` — whatever the
    numeric order of the seqs."""
    fold = fold_surface(events)
    if isinstance(fold, Rejected):
        return None
    nodes = fold.state.nodes
    data = obj((("content", ()), ("source", obj((("kind", "user"),)))))
    op = obj((("op", "replace"), ("start", start), ("end", end)))
    candidate = make_event(
        "user/message", seq=len(events), time=0, data=data, source_event_seqs=tuple(nodes) or (0,), surface_op=op
    )
    plan = plan_surface_event(nodes, candidate, events)
    expected = start in nodes and end in nodes and nodes.index(start) <= nodes.index(end)
    accepted = not isinstance(plan, Rejected)
    if accepted != (expected and bool(nodes)):
        return f"P-SURF-3: replace {{start:{start}, end:{end}}} on surface {list(nodes)} accepted={accepted}"
    return None


def _without_content(data: Json) -> Json:
    if isinstance(data, JsonObject):
        return JsonObject((k, v) for k, v in data.items() if k != "content")
    return data


@implements("P-SURF-4")
def tool_result_replaces_single(events: Sequence[Event]) -> str | None:
    """P-SURF-4 (SURF-7): an accepted ``tool/result`` replace shadows exactly
    one current ``tool/result`` and changes only ``content``."""
    fold = fold_surface(events)
    if isinstance(fold, Rejected):
        return None
    for r in fold.replacements:
        event = events[r.seq]
        if event.type != "tool/result":
            continue
        if len(r.shadowed) != 1 or events[r.shadowed[0]].type != "tool/result":
            return f"P-SURF-4: the tool/result replace at seq {r.seq} does not shadow exactly one tool/result"
        if not deep_eq(_without_content(event.data), _without_content(events[r.shadowed[0]].data)):
            return f"P-SURF-4: the tool/result replace at seq {r.seq} changes more than content"
    return None


@implements("P-SURF-5")
def fold_equals_incremental(events: Sequence[Event], dialect: Dialect = Dialect.A55, *,
                            cache: CacheFactory) -> str | None:
    """P-SURF-5 (SURF-8, SURF-10): ``foldSurface`` equals the incremental
    manager after the same appends, and ``replaceGeneration`` is the number of
    accepted replaces."""
    fold = fold_surface(events, dialect)
    derivation = cache(dialect)
    for event in events:
        if derivation.append(event) is not None:
            return None if isinstance(fold, Rejected) else f"P-SURF-5: the incremental fold rejects seq {event.seq}, foldSurface accepts"
    if isinstance(fold, Rejected):
        return "P-SURF-5: foldSurface rejects a log the incremental fold accepts"
    replaces = sum(1 for e in events if isinstance(e.surface_op, JsonObject))
    if fold.state != SurfaceState(nodes=tuple(derivation.nodes), replace_generation=derivation.replace_generation):
        return "P-SURF-5: foldSurface and the incremental fold differ"
    if not fold.state.replace_generation == replaces == len(fold.replacements):
        return "P-SURF-5: replaceGeneration is not the number of accepted replaces"
    return None


# --------------------------------------------------------------------------- DER


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
        if not _messages_eq(cached, scratch) or not _messages_eq(scratch, again):
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
    if isinstance(after, Rejected) or not _messages_eq(before, after):
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
        if not _messages_eq(after, expected):
            return f"P-DER-4: the replace at seq {event.seq} is not head ++ [its message] ++ tail"
    return None


# --------------------------------------------------------------------------- HDR


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
    "P-LOG-1": seq_contiguous,
    "P-LOG-2": rejected_append_leaves_state,
    "P-LOG-3": lossless_json,
    "P-LOG-5": reseed_reproduces,
    "P-LOG-6": repair_closes_everything,
    "P-SURF-1": surface_marker_iff_eligible,
    "P-SURF-2": replaces_well_formed,
    "P-SURF-3": positional_range_accepted_iff_ordered,
    "P-SURF-4": tool_result_replaces_single,
    "P-SURF-5": fold_equals_incremental,
    "P-DER-1": incremental_equals_scratch,
    "P-DER-2": log_only_never_changes_derivation,
    "P-DER-3": empty_assistant_stays_silent,
    "P-DER-4": replace_splices_messages,
    "P-HDR-1": canonical_idempotent,
    "P-HDR-2": header_eq_laws,
}
