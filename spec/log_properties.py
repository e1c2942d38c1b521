"""Property predicates of RULES §16 for the log (LOG): seqs, rejected appends, lossless JSON, re-seeding, repair.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules it checks.  :data:`PROPERTY_PREDICATES`
maps each P-ID to its main predicate; ``tests/model/test_core_properties.py`` feeds them generated inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.codec import event_to_json, parse_event_line, serialize_event
from sessionspec.model.derive import derive
from sessionspec.model.header import EpochHeader, fold_header, header_eq
from sessionspec.model.jsonval import ABSENT, JsonObject, get, js_stringify, json_eq, parse_json
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import repair_closers, scan_for_repair
from sessionspec.model.rules import implements
from sessionspec.model.seed import validate_seed
from sessionspec.model.surface import fold_surface
from sessionspec.spec.derivation_cache import CacheFactory, messages_eq


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
    if before[:3] != after[:3] or not messages_eq(before[3], after[3]):
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
    if isinstance(derived_a, Rejected) or isinstance(derived_b, Rejected) or not messages_eq(derived_a, derived_b):
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


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-LOG-1": seq_contiguous,
    "P-LOG-2": rejected_append_leaves_state,
    "P-LOG-3": lossless_json,
    "P-LOG-5": reseed_reproduces,
    "P-LOG-6": repair_closes_everything,
}
