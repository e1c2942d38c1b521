"""Log lines <-> events (LOG-3, LOG-4, FMT-1..5) and packed chunk rows (CHK).

Parsing is total: every text gives an event list or a :class:`Rejected` that
names the rule.  Serialization writes the real key order
``type, seq, time, data, sourceEventSeqs?, surfaceOp?`` (or the repair closers'
``surfaceOp`` first), so ``serialize(parse(line)) == line`` for lines the real
harness wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.jsonval import (
    ABSENT,
    MAX_SAFE_INTEGER,
    Absent,
    Json,
    JsonObject,
    JsonParseFailure,
    get,
    is_safe_int,
    js_stringify,
    parse_json,
)
from sessionspec.model.log import AssistantChunk, Event, make_event
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.rules import decides, implements

ENVELOPE_KEYS: Final = frozenset({"type", "seq", "time", "data"})
SURFACE_META_KEYS: Final = frozenset({"sourceEventSeqs", "surfaceOp"})
ROW_TAGS: Final = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
MIN_RUN: Final = 3


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHeader:
    """LOG-18: the storage header line ``{type:"session", version:0, id, ...}``."""

    value: JsonObject

    @property
    def id(self) -> Json:
        return self.value.get("id")

    @property
    def seed_length(self) -> int:
        v = get(self.value, "seedLength")
        return v if is_safe_int(v) and isinstance(v, int) else 0


def parse_value(text: str) -> Json | Rejected:
    """One line as a JSON value, or the rejection (LOG-4, FMT-1, FMT-2)."""
    value = parse_json(text)
    if isinstance(value, JsonParseFailure):
        kind = FailureKind.LIMIT if value.limit else FailureKind.INVALID
        return Rejected(rule=value.rule, reason=value.reason, kind=kind)
    return value


@decides("LOG-17", "LOG-18")
@implements("LOG-18", "FMT-1")
def parse_session_header(value: JsonObject) -> SessionHeader | Rejected:
    """LOG-17/18: the header line; a version other than 0 is rejected.
    LOG-18: "The session header MUST sit outside the log: `{version:0, id, createdAt, cwd?, parentSession?,
    seedLength?, delegationDepth?}`."
    FMT-1: "A raw log file MUST be UTF-8 JSONL: line 1 is the session header
    `{"type":"session","version":0,"id":…,"createdAt":…,
    "cwd"?,"parentSession"?,"seedLength"?,"delegationDepth"?}` (not an event); every further non-empty line is
    one storage record (an event or a packed row)."
    """
    if get(value, "version") != 0 or isinstance(get(value, "version"), bool):
        return Rejected(rule="LOG-17", reason=f"session header version {js_stringify(value.get('version'))} is not 0")
    if not isinstance(get(value, "id"), str):
        return Rejected(rule="LOG-18", reason="session header has no string id")
    seed = get(value, "seedLength")
    if seed is not ABSENT and not is_safe_int(seed):
        # seedLength is a count of events: a non-negative integer (a bad one
        # would silently shift where the live session starts).
        return Rejected(rule="LOG-18", reason=f"session header seedLength {js_stringify(seed)} is not a non-negative integer")
    return SessionHeader(value=value)


@decides("LOG-2", "LOG-3", "LEG-1")
@implements("LOG-3", "LOG-2")
def event_from_json(value: Json) -> Event | Rejected:
    """LOG-2: "`time` MUST be a non-negative safe integer (at most 2^53−1)."
    LOG-3: "An event envelope MUST have exactly the keys `type, seq, time, data`, plus `sourceEventSeqs`
    and/or `surfaceOp` on surface-eligible types only."

    LOG-3: exactly ``type, seq, time, data`` plus optional surface metadata;
    a string type, non-negative safe-integer seq and time (LOG-2).  A
    ``request/header-delta`` is rejected before the envelope (LEG-1)."""
    if not isinstance(value, JsonObject):
        return Rejected(rule="LOG-3", reason="invalid event envelope: not an object")
    type_name = get(value, "type")
    seq_value = get(value, "seq")
    seq = seq_value if is_safe_int(seq_value) and isinstance(seq_value, int) else None
    if type_name == "request/header-delta":
        return Rejected(rule="LEG-1", seq=seq, reason="uses unsupported legacy request/header-delta format")
    if not isinstance(type_name, str):
        return Rejected(rule="LOG-3", seq=seq, reason="invalid event envelope: type is not a string")
    extra = set(value.keys()) - ENVELOPE_KEYS - SURFACE_META_KEYS
    if extra or not value.keys() >= ENVELOPE_KEYS:
        what = f"unexpected key {sorted(extra)[0]!r}" if extra else "missing type/seq/time/data"
        return Rejected(rule="LOG-3", seq=seq, reason=f"invalid event envelope: {what}")
    time = value["time"]
    if seq is None:
        return Rejected(rule="LOG-3", reason="invalid event envelope: seq is not a non-negative safe integer")
    if not is_safe_int(time) or not isinstance(time, int):
        return Rejected(rule="LOG-2", seq=seq, reason="time is not a non-negative safe integer")
    keys = list(value.keys())
    op_first = (
        "surfaceOp" in value
        and "sourceEventSeqs" in value
        and keys.index("surfaceOp") < keys.index("sourceEventSeqs")
    )
    return make_event(
        type_name,
        seq=seq,
        time=time,
        data=value["data"],
        source_event_seqs=get(value, "sourceEventSeqs"),
        surface_op=get(value, "surfaceOp"),
        op_first=op_first,
    )


@implements("FMT-3")
def event_to_json(event: Event) -> JsonObject:
    """FMT-3: "Envelope key order on disk: `type, seq, time, data, sourceEventSeqs?, surfaceOp?` — provenance
    **before** the op — except repair closers, which write `surfaceOp` then `sourceEventSeqs` (LOG-14)."

    The envelope in the order the harness writes it (FMT-3).
    """
    pairs: list[tuple[str, Json]] = [
        ("type", event.type),
        ("seq", event.seq),
        ("time", event.time),
        ("data", event.data),
    ]
    meta: list[tuple[str, Json]] = []
    if event.source_event_seqs is not ABSENT:
        meta.append(("sourceEventSeqs", event.source_event_seqs))
    if event.surface_op is not ABSENT:
        meta.append(("surfaceOp", event.surface_op))
    if event.op_first:
        meta.reverse()
    return JsonObject(pairs + meta)


def serialize_event(event: Event) -> str:
    return js_stringify(event_to_json(event))


@implements("CHK-7", "FMT-5")
def decode_record(value: Json) -> tuple[Event, ...] | Rejected:
    """CHK-7: "A JSON value whose `type` is not one of the three row tags MUST pass through the decoder
    unvalidated (session-event validation happens later, LOG-8)."
    FMT-5: "Packed rows (CHK) MUST be expanded before any event validation; the header line is never a row."

    FMT-5: "Packed rows (CHK) MUST be expanded before any event validation"; CHK-7: "A JSON value
    whose ``type`` is not one of the three row tags MUST pass through the decoder unvalidated."
    One storage record as events (a row expands to chunks)."""
    if isinstance(value, JsonObject) and get(value, "type") in ROW_TAGS:
        return expand_row(value)
    event = event_from_json(value)
    return event if isinstance(event, Rejected) else (event,)


def parse_event_line(text: str) -> tuple[Event, ...] | Rejected:
    """One storage line (an event or a packed row) as events; total."""
    value = parse_value(text)
    if isinstance(value, Rejected):
        return value
    return decode_record(value)


# --------------------------------------------------------------------------- CHK


_ROW_KEYS: Final = {
    "text-chunks": ({"turn", "step", "index", "dt", "texts"},),
    "reasoning-chunks": ({"turn", "step", "index", "dt", "texts"},),
    "tool-call-chunks": (
        {"turn", "step", "index", "id", "dt", "args"},
        {"turn", "step", "index", "id", "name", "dt", "args"},
    ),
}


def _is_number(v: Json | Absent) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_js_safe_int(v: Json | Absent) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_SAFE_INTEGER


@decides("CHK-5", "CHK-6", "FMT-5", "P-CHK-1")
@implements("CHK-5", "CHK-6")
def expand_row(row: JsonObject) -> tuple[Event, ...] | Rejected:
    """CHK-5: "A row-tagged value MUST be validated strictly before expansion, else rejected "malformed <tag>
    storage row": envelope key set exactly `{type, seq0, time0, data}`; `seq0` non-negative safe integer;
    `time0` safe integer; `data` an object with the exact key set of CHK-1 (tool-call: with or without
    `name`); turn/step/index numbers; id (and name) strings; payload a **non-empty** string array; `dt` an
    array of safe integers of length `len(payload) − 1`; `seq0 + len − 1` and every running time safe
    integers."
    CHK-6: "Expansion MUST produce, for member `k`, `{type:"assistant/chunk", seq: seq0 + k, time: time0 + Σ
    dt[0..k−1], data:{turn, step, chunk}}` with chunk `{type:"text-delta"|"reasoning-delta", index, text}`
    or `{type:"tool-call-delta", index, id, name?, argumentsDelta}` (keys in these orders)."

    CHK-5: validate a packed row strictly; CHK-6: expand it to chunk events.
    """
    tag = row["type"]
    assert isinstance(tag, str)
    seq0, time0, data = get(row, "seq0"), get(row, "time0"), get(row, "data")

    def bad(why: str) -> Rejected:
        return Rejected(rule="CHK-5", seq=seq0 if isinstance(seq0, int) else None, reason=f"malformed {tag} storage row: {why}")

    if set(row.keys()) != {"type", "seq0", "time0", "data"}:
        return bad("envelope keys")
    if not is_safe_int(seq0) or not isinstance(seq0, int):
        return bad("seq0")
    if not _is_js_safe_int(time0) or not isinstance(time0, int):
        return bad("time0")
    if not isinstance(data, JsonObject) or set(data.keys()) not in [set(k) for k in _ROW_KEYS[tag]]:
        return bad("data keys")
    if not all(_is_number(data[k]) for k in ("turn", "step", "index")):
        return bad("turn/step/index")
    is_tool = tag == "tool-call-chunks"
    if is_tool and (not isinstance(data["id"], str) or ("name" in data and not isinstance(data["name"], str))):
        return bad("id/name")
    payload = data["args"] if is_tool else data["texts"]
    if not isinstance(payload, tuple) or not payload or not all(isinstance(p, str) for p in payload):
        return bad("payload must be a non-empty string array")
    dt = data["dt"]
    if not isinstance(dt, tuple) or len(dt) != len(payload) - 1 or not all(_is_js_safe_int(d) for d in dt):
        return bad("dt")
    if seq0 + len(payload) - 1 > MAX_SAFE_INTEGER:
        return bad("seq range")
    events: list[Event] = []
    time = time0
    for k, text in enumerate(payload):
        if k:
            step = dt[k - 1]
            assert isinstance(step, int)
            time += step
            if not _is_js_safe_int(time):
                return bad("running time")
        if is_tool:
            chunk_pairs: list[tuple[str, Json]] = [("type", "tool-call-delta"), ("index", data["index"]), ("id", data["id"])]
            if "name" in data:
                chunk_pairs.append(("name", data["name"]))
            chunk_pairs.append(("argumentsDelta", text))
        else:
            delta = "text-delta" if tag == "text-chunks" else "reasoning-delta"
            chunk_pairs = [("type", delta), ("index", data["index"]), ("text", text)]
        events.append(
            AssistantChunk(
                seq=seq0 + k,
                time=time,
                data=JsonObject((("turn", data["turn"]), ("step", data["step"]), ("chunk", JsonObject(chunk_pairs)))),
            )
        )
    return tuple(events)


@final
@dataclass(frozen=True, slots=True)
class _RunKey:
    tag: str
    turn: Json
    step: Json
    index: Json
    id: Json
    name: Json


@implements("CHK-2")
def _packable(event: Event) -> _RunKey | None:
    """CHK-2: "An event MUST be packable iff: type `assistant/chunk`; envelope key set exactly `{type, seq,
    time, data}`; `seq` a non-negative safe integer and `time` a safe integer; `data` key set exactly
    `{turn, step, chunk}` with numeric turn/step; `chunk.index` numeric; and `chunk` key set exactly `{type,
    index, text}` with string text for `text-delta`/`reasoning-delta`, or exactly `{type, index, id,
    argumentsDelta}` or `{type, index, id, name, argumentsDelta}` with string id, argumentsDelta (and name)
    for `tool-call-delta`."

    CHK-2: key *sets* are checked, not order (Q-22).
    """
    if event.type != "assistant/chunk" or event.source_event_seqs is not ABSENT or event.surface_op is not ABSENT:
        return None
    data = event.data
    if not isinstance(data, JsonObject) or set(data.keys()) != {"turn", "step", "chunk"}:
        return None
    chunk = data["chunk"]
    if not _is_number(data["turn"]) or not _is_number(data["step"]) or not isinstance(chunk, JsonObject):
        return None
    if not _is_number(get(chunk, "index")):
        return None
    kind = get(chunk, "type")
    keys = set(chunk.keys())
    if kind in ("text-delta", "reasoning-delta") and keys == {"type", "index", "text"} and isinstance(chunk["text"], str):
        tag = "text-chunks" if kind == "text-delta" else "reasoning-chunks"
        return _RunKey(tag, data["turn"], data["step"], chunk["index"], None, None)
    if kind == "tool-call-delta" and keys in ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"}):
        name = get(chunk, "name")
        if not isinstance(chunk["id"], str) or not isinstance(chunk["argumentsDelta"], str):
            return None
        if name is not ABSENT and not isinstance(name, str):
            return None
        return _RunKey("tool-call-chunks", data["turn"], data["step"], chunk["index"], chunk["id"], "\x00absent" if name is ABSENT else name)
    return None


@implements("CHK-1", "CHK-3", "CHK-4")
def pack_chunk_runs(events: Sequence[Event]) -> tuple[JsonObject, ...]:
    """CHK-3: "A packable event MUST extend the current run iff same kind, `seq == prev.seq + 1`, `time −
    prev.time` is a safe integer, same turn, step and index, and for tool-call deltas same `id` and same
    presence and value of `name`."

    CHK-3/4: runs of >= 3 contiguous packable chunks become one row each;
    everything else is written verbatim, in order.
    CHK-1: "A storage row MUST be one of `{type:"text-chunks"|"reasoning-chunks", seq0, time0, data:{turn,
    step, index, dt, texts}}` or `{type:"tool-call-chunks", seq0, time0, data:{turn, step, index, id, name?,
    dt, args}}` (keys in these orders)."
    CHK-4: "A run MUST become one row iff it has `>= 3` members (`MIN_RUN`); shorter runs and all other events
    are written verbatim, in order."
    """
    out: list[JsonObject] = []
    run: list[Event] = []
    run_key: _RunKey | None = None

    def flush() -> None:
        if len(run) >= MIN_RUN and run_key is not None:
            out.append(_build_row(run, run_key))
        else:
            out.extend(event_to_json(e) for e in run)
        run.clear()

    for event in events:
        key = _packable(event)
        if (
            key is not None
            and run
            and key == run_key
            and event.seq == run[-1].seq + 1
            and abs(event.time - run[-1].time) <= MAX_SAFE_INTEGER
        ):
            run.append(event)
            continue
        flush()
        run_key = key
        if key is not None:
            run.append(event)
        else:
            out.append(event_to_json(event))
    flush()
    return tuple(out)


def _build_row(run: Sequence[Event], key: _RunKey) -> JsonObject:
    first = run[0]
    dt = tuple(b.time - a.time for a, b in zip(run, run[1:]))
    chunks = [get(e.data, "chunk") for e in run]
    pairs: list[tuple[str, Json]] = [("turn", key.turn), ("step", key.step), ("index", key.index)]
    if key.tag == "tool-call-chunks":
        # Real rows put `dt` before `id`/`name` (every row of both dialects in
        # the corpus); the CHK-1 text lists them the other way (QF-2).
        pairs += [("dt", dt), ("id", key.id)]
        if key.name != "\x00absent":
            pairs.append(("name", key.name))
        pairs.append(("args", tuple(_text(get(c, "argumentsDelta")) for c in chunks)))
    else:
        pairs += [("dt", dt), ("texts", tuple(_text(get(c, "text")) for c in chunks))]
    return JsonObject(
        (("type", key.tag), ("seq0", first.seq), ("time0", first.time), ("data", JsonObject(pairs)))
    )


def _text(v: Json | Absent) -> str:
    return v if isinstance(v, str) else ""
