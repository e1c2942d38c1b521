"""Codec: log lines <-> events (LOG-2, LOG-3, LOG-4, LOG-17, LOG-18, LEG-1) and packed chunk rows (CHK)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.codec import (
    event_to_json,
    expand_row,
    pack_chunk_runs,
    parse_event_line,
    parse_session_header,
    parse_value,
    serialize_event,
)
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, js_stringify, obj
from sessionspec.model.log import AssistantChunk, Event, OpaqueEvent, ToolResult, make_event
from sessionspec.model.rejected import Rejected
from tests.support import DATA

ROW_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")


def _lines() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(DATA.rglob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                out.append((str(path.relative_to(DATA)), number, line))
    return out


LINES = _lines()
EVENT_LINES = [(p, n, line) for p, n, line in LINES if not any(f'"type":"{t}"' in line[:30] for t in (*ROW_TAGS, "session"))]
ROW_LINES = [(p, n, line) for p, n, line in LINES if any(line.startswith(f'{{"type":"{t}"') for t in ROW_TAGS)]
HEADER_LINES = [(p, n, line) for p, n, line in LINES if line.startswith('{"type":"session"')]


def _one(line: str) -> Event:
    events = parse_event_line(line)
    assert not isinstance(events, Rejected), events
    assert len(events) == 1
    return events[0]


# --------------------------------------------------------------------------- corpus round trip


def test_corpus_is_present() -> None:
    assert len(EVENT_LINES) > 4000 and len(ROW_LINES) > 100 and len(HEADER_LINES) > 100


def test_FMT_3_every_corpus_event_line_round_trips_byte_exact() -> None:
    """serialize(parse(line)) == line for every event line of tests/data (real and ground truth)."""
    failures = []
    for path, number, line in EVENT_LINES:
        events = parse_event_line(line)
        if isinstance(events, Rejected) or len(events) != 1 or serialize_event(events[0]) != line:
            failures.append(f"{path}:{number}")
    assert failures == []


def test_LOG_18_every_corpus_header_line_is_a_version_0_session_header() -> None:
    for path, number, line in HEADER_LINES:
        value = parse_value(line)
        assert isinstance(value, JsonObject), (path, number)
        assert not isinstance(parse_session_header(value), Rejected), (path, number)


def test_CHK_6_every_corpus_row_expands_to_contiguous_chunks() -> None:
    """Packed rows never crash the codec and expand to contiguous assistant/chunk events (CHK-6, CHK-8)."""
    for path, number, line in ROW_LINES:
        events = parse_event_line(line)
        assert not isinstance(events, Rejected), (path, number, events)
        row = parse_value(line)
        assert isinstance(row, JsonObject)
        seq0 = row["seq0"]
        assert [e.seq for e in events] == [seq0 + k for k in range(len(events))]  # type: ignore[operator]
        assert all(isinstance(e, AssistantChunk) for e in events)


def test_CHK_4_text_rows_of_the_corpus_repack_byte_exact() -> None:
    """P-CHK-1 on real data: pack(expand(row)) == row for text/reasoning rows of >= 3 members."""
    checked = 0
    for path, number, line in ROW_LINES:
        if line.startswith('{"type":"tool-call-chunks"'):
            continue
        events = parse_event_line(line)
        assert not isinstance(events, Rejected)
        if len(events) >= 3:
            packed = pack_chunk_runs(events)
            assert len(packed) == 1 and js_stringify(packed[0]) == line, (path, number)
            checked += 1
    assert checked > 50


def test_CHK_1_tool_call_rows_of_the_corpus_repack_byte_exact() -> None:
    """Real rows order tool-call data as turn, step, index, dt, id, name?, args (QF-2)."""
    rows = [line for _, _, line in ROW_LINES if line.startswith('{"type":"tool-call-chunks"')]
    assert rows
    for line in rows:
        events = parse_event_line(line)
        assert not isinstance(events, Rejected)
        packed = pack_chunk_runs(events)
        assert len(packed) == 1 and js_stringify(packed[0]) == line


# --------------------------------------------------------------------------- envelope


def test_LOG_3_rejects_extra_envelope_key() -> None:
    result = parse_event_line('{"type":"turn/start","seq":0,"time":0,"data":{},"extra":1}')
    assert isinstance(result, Rejected) and result.rule == "LOG-3"


def test_LOG_3_rejects_missing_data() -> None:
    result = parse_event_line('{"type":"turn/start","seq":0,"time":0}')
    assert isinstance(result, Rejected) and result.rule == "LOG-3"


def test_LOG_3_rejects_non_string_type_and_negative_seq() -> None:
    for line in ('{"type":1,"seq":0,"time":0,"data":{}}', '{"type":"a","seq":-1,"time":0,"data":{}}'):
        result = parse_event_line(line)
        assert isinstance(result, Rejected) and result.rule == "LOG-3"


def test_LOG_2_rejects_negative_or_fractional_time() -> None:
    for time in ("-1", "1.5"):
        result = parse_event_line(f'{{"type":"a","seq":0,"time":{time},"data":{{}}}}')
        assert isinstance(result, Rejected) and result.rule == "LOG-2"


def test_LOG_3_serializes_envelope_in_real_key_order() -> None:
    event = make_event("tool/result", seq=5, time=1, data=obj(), surface_op="append", source_event_seqs=(3,))
    assert serialize_event(event) == '{"type":"tool/result","seq":5,"time":1,"data":{},"sourceEventSeqs":[3],"surfaceOp":"append"}'


def test_LOG_3_keeps_repair_closer_order_surface_op_first() -> None:
    line = '{"type":"tool/result","seq":5,"time":1,"data":{},"surfaceOp":"append","sourceEventSeqs":[3]}'
    event = _one(line)
    assert event.op_first and isinstance(event, ToolResult)
    assert serialize_event(event) == line


def test_LOG_4_rejects_textual_minus_zero_and_non_finite() -> None:
    for text in ("-0", "-0.0", "NaN", "Infinity", "1e400"):
        result = parse_event_line(f'{{"type":"a","seq":0,"time":0,"data":{text}}}')
        assert isinstance(result, Rejected) and result.rule == "LOG-4", text


def test_LOG_4_rejects_integers_beyond_2_53() -> None:
    result = parse_event_line('{"type":"a","seq":0,"time":0,"data":9007199254740993}')
    assert isinstance(result, Rejected) and result.rule == "LOG-4"


def test_LEG_1_rejects_header_delta_before_envelope() -> None:
    # The envelope is also broken (extra key): LEG-1 must win (checked first).
    result = parse_event_line('{"type":"request/header-delta","seq":0,"time":0,"data":{},"x":1}')
    assert isinstance(result, Rejected) and result.rule == "LEG-1"


def test_LOG_10_plugin_types_parse_as_opaque_events() -> None:
    event = _one('{"type":"plugin/event","seq":0,"time":0,"data":null}')
    assert isinstance(event, OpaqueEvent) and event.type == "plugin/event" and event.data is None


def test_LOG_17_rejects_session_header_version_other_than_0() -> None:
    for version in ("1", '"0"', "true"):
        value = parse_value(f'{{"type":"session","version":{version},"id":"x","createdAt":0}}')
        assert isinstance(value, JsonObject)
        result = parse_session_header(value)
        assert isinstance(result, Rejected) and result.rule == "LOG-17", version


def test_FMT_1_invalid_json_is_rejected_not_raised() -> None:
    result = parse_event_line("{not json")
    assert isinstance(result, Rejected) and result.rule == "FMT-1"


def test_FMT_2_duplicate_keys_are_rejected() -> None:
    result = parse_event_line('{"type":"a","seq":0,"seq":0,"time":0,"data":{}}')
    assert isinstance(result, Rejected) and result.rule == "FMT-2"


# --------------------------------------------------------------------------- CHK


def _chunk(seq: int, time: int, text: str, *, index: int = 0, step: int = 1, kind: str = "text-delta") -> Event:
    chunk = obj((("type", kind), ("index", index), ("text", text)))
    return make_event("assistant/chunk", seq=seq, time=time, data=obj((("turn", 1), ("step", step), ("chunk", chunk))))


def _tool_delta(seq: int, time: int, args: str, name: str | None = None) -> Event:
    pairs: list[tuple[str, object]] = [("type", "tool-call-delta"), ("index", 1), ("id", "c1")]
    if name is not None:
        pairs.append(("name", name))
    pairs.append(("argumentsDelta", args))
    chunk = obj(pairs)  # type: ignore[arg-type]
    return make_event("assistant/chunk", seq=seq, time=time, data=obj((("turn", 1), ("step", 1), ("chunk", chunk))))


def test_CHK_4_runs_shorter_than_3_stay_verbatim() -> None:
    events = [_chunk(0, 5, "a"), _chunk(1, 6, "b")]
    assert pack_chunk_runs(events) == tuple(event_to_json(e) for e in events)


def test_CHK_4_run_of_3_becomes_one_row_with_dt() -> None:
    events = [_chunk(4, 10, "a"), _chunk(5, 12, "b"), _chunk(6, 11, "c")]
    (row,) = pack_chunk_runs(events)
    assert js_stringify(row) == (
        '{"type":"text-chunks","seq0":4,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[2,-1],"texts":["a","b","c"]}}'
    )


def test_CHK_3_run_breaks_on_seq_gap_index_or_kind() -> None:
    gap = [_chunk(0, 0, "a"), _chunk(1, 0, "b"), _chunk(3, 0, "c")]
    assert all(get(r, "type") == "assistant/chunk" for r in pack_chunk_runs(gap))
    index = [_chunk(0, 0, "a"), _chunk(1, 0, "b"), _chunk(2, 0, "c", index=1)]
    assert all(get(r, "type") == "assistant/chunk" for r in pack_chunk_runs(index))
    kinds = [_chunk(0, 0, "a"), _chunk(1, 0, "b"), _chunk(2, 0, "c", kind="reasoning-delta")]
    assert all(get(r, "type") == "assistant/chunk" for r in pack_chunk_runs(kinds))


def test_CHK_3_tool_call_run_needs_same_name_presence() -> None:
    mixed = [_tool_delta(0, 0, "{", "bash"), _tool_delta(1, 0, "}"), _tool_delta(2, 0, "")]
    assert all(get(r, "type") == "assistant/chunk" for r in pack_chunk_runs(mixed))
    same = [_tool_delta(0, 0, "{"), _tool_delta(1, 0, "}"), _tool_delta(2, 0, "")]
    (row,) = pack_chunk_runs(same)
    assert get(row, "type") == "tool-call-chunks"


def test_CHK_2_non_packable_chunks_never_pack() -> None:
    block = obj((("type", "block-start"), ("index", 0), ("blockType", "text")))
    events = [
        make_event("assistant/chunk", seq=i, time=0, data=obj((("turn", 1), ("step", 1), ("chunk", block)))) for i in range(3)
    ]
    assert [get(r, "type") for r in pack_chunk_runs(events)] == ["assistant/chunk"] * 3


def test_CHK_5_rejects_malformed_rows() -> None:
    bad_rows = [
        '{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}',
        '{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a"]}}',
        '{"type":"text-chunks","seq0":-1,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}',
        '{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[1]}}',
        '{"type":"text-chunks","seq0":0,"time0":0,"x":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}',
        '{"type":"tool-call-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"args":["a"]}}',
    ]
    for line in bad_rows:
        result = parse_event_line(line)
        assert isinstance(result, Rejected) and result.rule == "CHK-5", line


def test_CHK_6_expansion_accepts_short_rows_Q_29() -> None:
    line = '{"type":"reasoning-chunks","seq0":7,"time0":100,"data":{"turn":2,"step":3,"index":1,"dt":[5],"texts":["x","y"]}}'
    events = parse_event_line(line)
    assert not isinstance(events, Rejected)
    assert [serialize_event(e) for e in events] == [
        '{"type":"assistant/chunk","seq":7,"time":100,"data":{"turn":2,"step":3,"chunk":{"type":"reasoning-delta","index":1,"text":"x"}}}',
        '{"type":"assistant/chunk","seq":8,"time":105,"data":{"turn":2,"step":3,"chunk":{"type":"reasoning-delta","index":1,"text":"y"}}}',
    ]


def test_CHK_7_unknown_tags_pass_to_event_validation() -> None:
    result = parse_event_line('{"type":"other-chunks","seq0":0,"time0":0,"data":{}}')
    assert isinstance(result, Rejected) and result.rule == "LOG-3"


_batch_item = st.one_of(
    st.tuples(st.just("text-delta"), st.integers(0, 1), st.text(max_size=3)),
    st.tuples(st.just("reasoning-delta"), st.integers(0, 1), st.text(max_size=3)),
    st.tuples(st.just("block-end"), st.integers(0, 1), st.just("")),
)


@given(st.lists(st.tuples(_batch_item, st.integers(-3, 3), st.booleans()), max_size=12))
def test_P_CHK_1_CHK_8_pack_then_decode_reproduces_every_batch(items: list[tuple[tuple[str, int, str], int, bool]]) -> None:
    """CHK-4..8: JS(decode(pack(batch))) == JS(batch); expanded seqs are contiguous."""
    events: list[Event] = []
    seq, time = 0, 1_000
    for (kind, index, text), dt, skip in items:
        seq += 2 if skip else 1  # a seq gap splits a run
        time += dt
        if kind == "block-end":
            chunk = obj((("type", kind), ("index", index), ("block", obj((("type", "text"), ("text", text))))))
        else:
            chunk = obj((("type", kind), ("index", index), ("text", text)))
        events.append(make_event("assistant/chunk", seq=seq, time=time, data=obj((("turn", 1), ("step", 1), ("chunk", chunk)))))
    decoded: list[Event] = []
    for record in pack_chunk_runs(events):
        expanded = parse_event_line(js_stringify(record))
        assert not isinstance(expanded, Rejected)
        if get(record, "type") in ROW_TAGS:
            seqs = [e.seq for e in expanded]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert len(seqs) >= 3
        decoded.extend(expanded)
    assert [serialize_event(e) for e in decoded] == [serialize_event(e) for e in events]
    assert all(e.source_event_seqs is ABSENT for e in decoded)



def test_LOG_9_core_types_get_their_classes_and_plugin_types_stay_opaque() -> None:
    core = (
        "turn/start", "turn/end", "step/start", "step/end", "user/message", "prompt/blocked", "assistant/chunk",
        "assistant/message", "tool/call", "tool/result", "steering/message", "todo/write", "request/header",
    )
    for type_name in core:
        event = make_event(type_name, seq=0, time=0, data=None)
        assert not isinstance(event, OpaqueEvent) and event.type == type_name
    for type_name in ("compact/start", "session/title", "llm/retry", "mode/set"):
        assert isinstance(make_event(type_name, seq=0, time=0, data=None), OpaqueEvent)


# ---------------------------------------------------------------- CHK-2 packing, CHK-5 storage rows


def _chunk_event(seq: int, **extra: object) -> object:
    data = freeze({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{seq}"}})
    return make_event("assistant/chunk", seq=seq, time=seq, data=data, **extra)  # type: ignore[arg-type]


def test_CHK_2_a_chunk_with_provenance_is_not_packable() -> None:
    """CHK-2: the envelope key set must be exactly {type, seq, time, data}; a chunk that cites sources is
    written verbatim, so a run of three packs only when none of them carries provenance."""
    plain = [_chunk_event(i) for i in range(3)]
    assert len(pack_chunk_runs(plain)) == 1  # type: ignore[arg-type]
    cited = [_chunk_event(0), _chunk_event(1, source_event_seqs=(0,)), _chunk_event(2)]
    assert len(pack_chunk_runs(cited)) == 3  # type: ignore[arg-type]


MAX_SAFE = 2**53 - 1


THREE_TEXTS = {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]}


def _text_chunks_row(seq0: int, data: dict[str, object], time0: object = 0) -> JsonObject:
    value = parse_value(json.dumps({"type": "text-chunks", "seq0": seq0, "time0": time0, "data": data}))
    assert isinstance(value, JsonObject)
    return value


def test_CHK_5_a_row_whose_last_seq_passes_2_53_is_refused_naming_the_seq_range() -> None:
    """Three texts from seq0 = 2^53 - 2 end at 2^53: not a safe integer (LOG-4), so CHK-5 refuses the row."""
    refused = expand_row(_text_chunks_row(MAX_SAFE - 1, THREE_TEXTS))
    assert isinstance(refused, Rejected) and refused.rule == "CHK-5" and refused.seq == MAX_SAFE - 1
    assert refused.reason == "malformed text-chunks storage row: seq range"
    accepted = expand_row(_text_chunks_row(MAX_SAFE - 2, THREE_TEXTS))  # ends exactly at 2^53 - 1
    assert not isinstance(accepted, Rejected) and [e.seq for e in accepted] == [MAX_SAFE - 2, MAX_SAFE - 1, MAX_SAFE]


def test_CHK_5_the_reason_names_the_bad_dt_and_the_bad_time0() -> None:
    """CHK-5: "rejected 'malformed <tag> storage row'"; the model appends which check failed."""
    bad_dt = expand_row(_text_chunks_row(5, {"turn": 1, "step": 1, "index": 0, "dt": [0], "texts": ["a", "b", "c"]}))
    assert isinstance(bad_dt, Rejected) and (bad_dt.rule, bad_dt.seq) == ("CHK-5", 5)
    assert bad_dt.reason == "malformed text-chunks storage row: dt"
    bad_time = expand_row(_text_chunks_row(5, {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]}, time0=1.5))
    assert isinstance(bad_time, Rejected) and bad_time.reason == "malformed text-chunks storage row: time0"
