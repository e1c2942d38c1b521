"""Core Hypothesis properties (RULES §16.1, P-HDR-1/2) over generated well-formed A55 logs.

(1) incremental derivation == derivation from scratch at every prefix (P-DER-1);
(2) a rejected append leaves the surface unchanged (P-LOG-2);
(3) serialize(parse(line)) == line (here for generated logs; every real line is in test_codec);
(4) header canonicalization is idempotent, equality reflexive and symmetric (P-HDR-1, P-HDR-2);
plus the other predicates of spec/log_properties.py, surface_properties.py, derivation_properties.py,
header_properties.py and request_points == rebuild_request_at.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.fast.request_points import request_points
from sessionspec.model.codec import pack_chunk_runs, parse_event_line, serialize_event
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, js_stringify, obj
from sessionspec.model.log import Event, make_event
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from sessionspec.model.wire import request_to_json
from sessionspec.spec import derivation_properties, header_properties, log_properties, surface_properties
from sessionspec.spec.header_strategies import canonical_headers, headers
from sessionspec.spec.json_strategies import json_values
from sessionspec.spec.log_builder import replace_op
from sessionspec.spec.log_strategies import log_only_events, well_formed_logs

LOGS = well_formed_logs()


def test_PROPERTY_PREDICATES_names_every_required_property() -> None:
    required = {"P-LOG-1", "P-LOG-2", "P-LOG-3", "P-LOG-5", "P-LOG-6"}
    required |= {f"P-SURF-{i}" for i in range(1, 6)} | {f"P-DER-{i}" for i in range(1, 5)} | {"P-HDR-1", "P-HDR-2"}
    table = {**log_properties.PROPERTY_PREDICATES, **surface_properties.PROPERTY_PREDICATES,
             **derivation_properties.PROPERTY_PREDICATES, **header_properties.PROPERTY_PREDICATES}
    assert set(table) == required
    for pid, predicate in table.items():
        assert predicate.__doc__ is not None and pid in predicate.__doc__


# --------------------------------------------------------------------------- (1) P-DER-1


@given(LOGS)
def test_P_DER_1_incremental_equals_scratch_at_every_prefix(events: tuple[Event, ...]) -> None:
    assert derivation_properties.incremental_equals_scratch(events, cache=IncrementalDerivation) is None


# --------------------------------------------------------------------------- (2) P-LOG-2


def _candidate(events: tuple[Event, ...], kind: int, pick: int) -> Event:
    """An append that the surface must reject (one of several SURF/LOG rules)."""
    seq = len(events)
    fold = fold_surface(events)
    assert not isinstance(fold, Rejected)
    nodes = fold.state.nodes
    shadowed = [s for r in fold.replacements for s in r.shadowed]
    user = obj((("content", "x"), ("source", obj((("kind", "user"),)))))
    match kind:
        case 0:  # LOG-1: wrong seq
            return make_event("user/message", seq=seq + 1 + pick % 3, time=0, data=user, surface_op="append")
        case 1:  # SURF-2: log-only type with a marker
            return make_event("step/end", seq=seq, time=0, data=obj(), surface_op="append")
        case 2:  # SURF-2: eligible type without a marker
            return make_event("user/message", seq=seq, time=0, data=user)
        case 3:  # SURF-4: duplicate provenance
            return make_event("user/message", seq=seq, time=0, data=user, surface_op="append", source_event_seqs=(0, 0))
        case 4:  # SURF-5: replace of a seq that is not current (shadowed, or log-only seq 0)
            gone = shadowed[pick % len(shadowed)] if shadowed else 0
            end = nodes[-1] if nodes else 0
            return make_event("user/message", seq=seq, time=0, data=user, surface_op=replace_op(gone, end), source_event_seqs=(gone, end))
        case 5:  # SURF-6: replace missing coverage (or SURF-5 on an empty surface)
            first = nodes[0] if nodes else 0
            last = nodes[-1] if nodes else 0
            return make_event("user/message", seq=seq, time=0, data=user, surface_op=replace_op(first, last), source_event_seqs=(seq - 1,) if first != seq - 1 else (0,))
        case _:  # SURF-5: start after end by position
            if len(nodes) >= 2:
                a, b = nodes[-1], nodes[0]
            else:
                a, b = 999_999, 0
            return make_event("user/message", seq=seq, time=0, data=user, surface_op=replace_op(a, b), source_event_seqs=(a, b) if a < seq else (b,))


@given(LOGS, st.integers(0, 6), st.integers(0, 50))
def test_P_LOG_2_rejected_append_leaves_state_unchanged(events: tuple[Event, ...], kind: int, pick: int) -> None:
    candidate = _candidate(events, kind, pick)
    # The candidate really is rejected (so the property is not vacuous) ...
    assert isinstance(fold_surface((*events, candidate)), Rejected)
    # ... and the rejection leaves log, nodes, generation and cache unchanged.
    assert log_properties.rejected_append_leaves_state(events, candidate, cache=IncrementalDerivation) is None


# --------------------------------------------------------------------------- (3) codec round trip


@given(LOGS)
def test_FMT_3_generated_lines_round_trip_and_pack_losslessly(events: tuple[Event, ...]) -> None:
    decoded: list[Event] = []
    for event in events:
        line = serialize_event(event)
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected) and len(parsed) == 1
        assert serialize_event(parsed[0]) == line
    for record in pack_chunk_runs(events):
        expanded = parse_event_line(js_stringify(record))
        assert not isinstance(expanded, Rejected)
        decoded.extend(expanded)
    assert [serialize_event(e) for e in decoded] == [serialize_event(e) for e in events]


@given(LOGS)
def test_P_LOG_3_accepted_events_are_lossless_json(events: tuple[Event, ...]) -> None:
    assert log_properties.lossless_json(events) is None


@given(json_values())
def test_LOG_4_json_values_survive_text(value: Json) -> None:
    line = js_stringify(obj((("type", "plugin/x"), ("seq", 0), ("time", 0), ("data", value))))
    parsed = parse_event_line(line)
    assert not isinstance(parsed, Rejected)
    assert serialize_event(parsed[0]) == line


# --------------------------------------------------------------------------- (4) header laws


@given(headers())
def test_P_HDR_1_canonical_is_idempotent(h: EpochHeader) -> None:
    assert header_properties.canonical_idempotent(h) is None


@given(LOGS, st.one_of(st.just(ABSENT), headers()))
def test_P_HDR_1_fold_is_the_last_canonical_snapshot_or_the_baseline(events: tuple[Event, ...], baseline: EpochHeader) -> None:
    assert header_properties.fold_is_last_canonical(events, baseline) is None


@given(canonical_headers(), canonical_headers())
def test_P_HDR_2_header_eq_laws(a: EpochHeader, b: EpochHeader) -> None:
    assert header_properties.header_eq_laws(a, b) is None


@given(st.from_type(EpochHeader))
def test_registered_type_strategy_gives_canonical_headers(h: EpochHeader) -> None:
    assert header_properties.canonical_idempotent(h) is None
    assert h.system != "" and h.tools != () and h.message_prefix != ()


# --------------------------------------------------------------------------- other log/surface/derivation properties


@given(LOGS)
def test_P_LOG_1_P_LOG_5_seqs_contiguous_and_reseed_reproduces(events: tuple[Event, ...]) -> None:
    assert log_properties.seq_contiguous(events) is None
    assert log_properties.reseed_reproduces(events) is None


@given(LOGS, st.data())
def test_P_LOG_6_repair_closes_every_truncation(events: tuple[Event, ...], data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(events)))
    assert log_properties.repair_closes_everything(events[:cut]) is None


@given(LOGS)
def test_P_SURF_1_2_4_5_surface_properties(events: tuple[Event, ...]) -> None:
    assert surface_properties.surface_marker_iff_eligible(events) is None
    assert surface_properties.replaces_well_formed(events) is None
    assert surface_properties.tool_result_replaces_single(events) is None
    assert surface_properties.fold_equals_incremental(events, cache=IncrementalDerivation) is None


@given(LOGS, st.data())
def test_P_SURF_3_positional_ranges(events: tuple[Event, ...], data: st.DataObject) -> None:
    fold = fold_surface(events)
    assert not isinstance(fold, Rejected)
    candidates = st.sampled_from(fold.state.nodes) if fold.state.nodes else st.just(0)
    start = data.draw(st.one_of(candidates, st.integers(0, len(events))))
    end = data.draw(st.one_of(candidates, st.integers(0, len(events))))
    assert surface_properties.positional_range_accepted_iff_ordered(events, start, end) is None


@given(LOGS, st.data())
def test_P_DER_2_log_only_events_never_change_derive(events: tuple[Event, ...], data: st.DataObject) -> None:
    position = data.draw(st.integers(0, len(events)))
    type_name, payload = data.draw(log_only_events())
    assert derivation_properties.log_only_never_changes_derivation(events, position, type_name, payload) is None


@given(LOGS)
def test_P_DER_3_P_DER_4_empty_assistants_and_replace_splices(events: tuple[Event, ...]) -> None:
    assert derivation_properties.empty_assistant_stays_silent(events) is None
    assert derivation_properties.replace_splices_messages(events) is None


# --------------------------------------------------------------------------- reconstruction


@given(well_formed_logs(headers_on=True))
def test_INV_5_request_points_equal_rebuild_request_at(events: tuple[Event, ...]) -> None:
    points = request_points(events)
    assert not isinstance(points, Rejected)
    starts = [p.step_start_seq for p in points]
    # Every step whose stream left a chunk is a request (FMT-8); chunkless steps
    # followed by a retry step also count (LOOP-14), so this is an inclusion.
    assert {e.seq for e in events if e.type == "step/start" and _first_chunk(events, e.seq) is not None} <= set(starts)
    for point in points:
        fast = point.request()
        assert point.first_chunk_seq == _first_chunk(events, point.step_start_seq)
        # HDR-9: without a chunk the header is the fold at the step's step/end.
        upto = len(events) if point.first_chunk_seq is not None else _step_end(events, point.step_start_seq) + 1
        slow = rebuild_request_at(events[:upto], point.step_start_seq, point.first_chunk_seq)
        assert fast is not None and not isinstance(slow, Rejected)
        assert js_stringify(request_to_json(fast)) == js_stringify(request_to_json(slow))


def _first_chunk(events: tuple[Event, ...], step_start: int) -> int | None:
    for event in events[step_start + 1 :]:
        if event.type == "assistant/chunk":
            return event.seq
        if event.type == "step/end":
            return None
    return None


def _step_end(events: tuple[Event, ...], step_start: int) -> int:
    return next(e.seq for e in events[step_start + 1 :] if e.type == "step/end")


def _log13_violation(events: tuple[Event, ...]) -> str | None:
    """The first breach of the LOG-13 session companion's relations, or None."""
    turn: object = None
    step: object = None
    next_turn, next_step = 1, 1
    pending: set[object] = set()
    for event in events:
        data = event.data if isinstance(event.data, JsonObject) else obj()
        t, s = data.get("turn"), data.get("step")
        match event.type:
            case "turn/start":
                if turn is not None or t != next_turn:
                    return f"{event.seq}: turn/start"
                turn, next_turn, next_step = t, next_turn + 1, 1
            case "turn/end":
                if turn is None or step is not None:
                    return f"{event.seq}: turn/end"
                turn = None
            case "step/start":
                if turn is None or t != turn or step is not None or s != next_step:
                    return f"{event.seq}: step/start"
                step, next_step = s, next_step + 1
            case "step/end":
                if t != turn or s != step or step is None:
                    return f"{event.seq}: step/end"
                step = None
                pending.clear()
            case "assistant/chunk" | "assistant/message" | "tool/call":
                if step is None or t != turn or s != step:
                    return f"{event.seq}: {event.type} outside the open step"
                if event.type == "tool/call":
                    pending.add(data.get("callId"))
            case "tool/result" if event.surface_op == "append":
                if step is None or t != turn or s != step or data.get("callId") not in pending:
                    return f"{event.seq}: tool/result append"
                pending.discard(data.get("callId"))
            case _:
                if turn is None:
                    return f"{event.seq}: {event.type} outside a turn"
    return None


@given(LOGS)
def test_LOG_13_generated_logs_satisfy_the_session_companion(events: tuple[Event, ...]) -> None:
    assert _log13_violation(events) is None


def test_strategies_produce_replaces_and_prunes() -> None:
    """Guard against a strategy regression that would make the properties vacuous."""
    seen: set[str] = set()

    @given(LOGS)
    def collect(events: tuple[Event, ...]) -> None:
        for event in events:
            if isinstance(event.surface_op, JsonObject):
                seen.add(event.type)
            if event.type == "assistant/message" and event.data is not None and isinstance(event.data, JsonObject):
                if event.data.get("content") == ():
                    seen.add("empty-assistant")
            if event.type == "request/header":
                seen.add("header")

    collect()
    assert {"tool/result", "user/message", "empty-assistant", "header"} <= seen
