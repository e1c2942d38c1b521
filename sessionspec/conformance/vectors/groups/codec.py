"""The ``codec`` group: the operations below the loop (the chunk-row writer, crash repair,
out-of-band appends, the token meter, compact-basic's entry points, seed loading).
"""

from __future__ import annotations

import json
from typing import Any, Final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.vectors.build import Op, Step, Vector, events_pattern, message, record, text
from sessionspec.conformance.vectors.format import (
    FormatError,
    eq,
    exact_object,
    reject,
    rejection_rules,
    to_plain,
)
from sessionspec.conformance.vectors.groups.data import SNAPSHOTS, Row, first_index, gt_lines, gt_rows, real_lines, row_lines
from sessionspec.conformance.vectors.groups.decisions import decision_vectors
from sessionspec.conformance.vectors.groups.rules import d08_compaction_rows
from sessionspec.model.codec import serialize_event
from sessionspec.replay import LoadError, load_log_text

# --------------------------------------------------------------------------- codec and session operations


def _chunk(seq: int, time: int, chunk: dict[str, Any], turn: int = 1, step: int = 1) -> Row:
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": turn, "step": step, "chunk": chunk}}


def _delta(index: int, t: str, kind: str = "text-delta") -> dict[str, Any]:
    return {"type": kind, "index": index, "text": t}


def _call_delta(index: int, call_id: str, args: str, name: str | None = None) -> dict[str, Any]:
    return {"type": "tool-call-delta", "index": index, "id": call_id, **({} if name is None else {"name": name}), "argumentsDelta": args}


def _pack_cases() -> list[tuple[str, tuple[str, ...], list[Row], list[Row]]]:
    """Hand-made chunk logs and the storage lines CHK-2/3/4 say the writer produces."""
    three = [_chunk(0, 100, _delta(0, "a")), _chunk(1, 105, _delta(0, "b")), _chunk(2, 103, _delta(0, "c"))]
    row = {"type": "text-chunks", "seq0": 0, "time0": 100, "data": {"turn": 1, "step": 1, "index": 0, "dt": [5, -2], "texts": ["a", "b", "c"]}}
    two = [_chunk(0, 1, _delta(1, "x")), _chunk(1, 2, _delta(1, "y")), _chunk(2, 2, {"type": "block-end", "index": 1, "block": {"type": "text", "text": "xy"}})]
    named = [_chunk(0, 120, _call_delta(2, "c1", "", "echo")), _chunk(1, 121, _call_delta(2, "c1", "{")),
             _chunk(2, 122, _call_delta(2, "c1", "}")), _chunk(3, 122, _call_delta(2, "c1", ""))]
    named_row = {"type": "tool-call-chunks", "seq0": 1, "time0": 121,
                 "data": {"turn": 1, "step": 1, "index": 2, "dt": [1, 0], "id": "c1", "args": ["{", "}", ""]}}
    extra = [_chunk(0, 5, _delta(3, "p", "reasoning-delta")), _chunk(1, 5, {**_delta(3, "q", "reasoning-delta"), "extra": 1}),
             _chunk(2, 5, _delta(3, "r", "reasoning-delta")), _chunk(3, 5, _delta(3, "s", "reasoning-delta"))]
    turns = [_chunk(0, 7, _delta(4, "1")), _chunk(1, 7, _delta(4, "2")), _chunk(2, 7, _delta(4, "3"), turn=2)]
    return [
        ("three-deltas", ("CHK-4", "CHK-3"), three, [row]),
        ("two-deltas-and-block-end", ("CHK-4",), two, two),
        ("name-presence-splits-run", ("CHK-3", "CHK-2"), named, [named[0], named_row]),
        ("extra-chunk-key-not-packable", ("CHK-2", "CHK-4"), extra, extra),
        ("turn-change-splits-run", ("CHK-3",), turns, turns),
    ]


def _expanded_lines(source: str) -> list[str]:
    """A real file's events one per line (rows expanded): the writer's input."""
    loaded = load_log_text("".join(line + "\n" for line in real_lines(source)))
    assert not isinstance(loaded, LoadError), source
    return [serialize_event(e) for e in loaded.events]


def _repair_cut(name: str, type_name: str, nth: int = 0) -> list[str]:
    """A recorded log cut just after its ``nth`` event of ``type_name`` (a crash)."""
    rows = gt_rows(name)
    return row_lines(rows[: first_index(rows, type_name, nth) + 1])


def _usage_anchored_log() -> list[str]:
    """a-single-turn-no-prefix with provider usage larger than the estimate
    (1000 in + 10 out), so its assistant/message anchors a ``usage`` baseline (MTR-8)."""
    rows = gt_rows("a-single-turn-no-prefix")
    usage = {"inputTokens": 1000, "outputTokens": 10}
    for row in rows:
        if row["type"] == "assistant/message":
            row["data"]["usage"] = usage
        elif row["type"] == "assistant/chunk" and row["data"]["chunk"]["type"] == "usage":
            row["data"]["chunk"]["usage"] = usage
    return row_lines(rows)


COMPACT: Final = {"thresholdRatio": {"$number": "0.1"}, "retainTokens": 10, "compactionRetries": 0, "contextWindow": 1000,
                  "summaries": [text("CHECKPOINT")] * 2, "instruction": "condense the conversation above"}
IDS: Final = [{"compactionId": "compaction-1", "messageId": "message-1"}, {"compactionId": "compaction-2", "messageId": "message-2"}]


def compact_vectors() -> list[Vector]:
    """compact-basic's entry points on a log (``compact``): where the automatic
    trigger may run (CMP-6 vs DIA-6), manual compaction (DIA-20), the region
    transaction's validation (CMP-13), and the D08 summarizer request (DIA-17)."""
    d08 = d08_compaction_rows()
    between_steps = row_lines(d08[: first_index(d08, "step/end") + 1])
    inside_step = row_lines(d08[: first_index(d08, "step/start", 1) + 1])
    whole = row_lines(d08)

    def compact(lines: list[str], trigger: str, dialect: str = "D08", **extra: Any) -> Op:
        return {"op": "compact", "log": lines, "dialect": dialect, "trigger": trigger, "compaction": COMPACT, "ids": IDS, **extra}

    out = [
        record("codec/compact/d08-pressure-before-step-start", ("DIA-6", "DIA-17", "DIA-2", "DIA-4", "DIA-16"),
               "D08 pressure compaction runs in pre-step, outside any step; the summarizer input carries no prefix and "
               "the instruction message is sourced from dsh-compaction-basic", {}, [compact(between_steps, "pressure")]),
        record("codec/compact/d08-pressure-inside-a-step", ("DIA-6",), "D08 pressure compaction never runs after step/start",
               {}, [compact(inside_step, "pressure")]),
        record("codec/compact/a55-pressure-outside-a-step", ("CMP-6", "DIA-6"),
               "A55 pressure compaction runs in post-step, inside the step: outside a step it is refused", {},
               [compact(gt_lines("a-single-turn-no-prefix"), "pressure", "A55")]),
        record("codec/compact/d08-pressure-already-aborted", ("CMP-26",), "the automatic trigger skips when already aborted",
               {}, [compact(between_steps, "pressure", aborted=True)]),
        record("codec/compact/d08-manual-when-idle", ("DIA-20", "DIA-3"),
               "manual compaction on an idle session: owner turn null, retainTokens 0 (everything balanced is shadowed)",
               {}, [compact(whole, "manual")]),
        record("codec/compact/d08-manual-when-busy", ("DIA-20", "DIA-3"), "manual compaction inside an open turn is refused (busy)",
               {}, [compact(between_steps, "manual")]),
    ]
    b_rows = gt_rows("b-prefix-idioms-tool-roundtrip")
    open_turn = row_lines(b_rows[: first_index(b_rows, "step/end", 1) + 1])
    call_message = next(r["seq"] for r in b_rows if r["type"] == "assistant/message"
                        and any(c.get("type") == "tool-call" for c in r["data"]["content"]))
    result = _first_pruned_or_result(b_rows)
    first_user = b_rows[first_index(b_rows, "user/message")]["seq"]
    regions = (
        ("start-not-on-surface", first_user + 1, result, "CMP-13"),
        ("start-after-end", result, first_user, "CMP-13"),
        ("end-splits-a-tool-pair", first_user, call_message, "CMP-13"),
        ("balanced-range-passes-validation", first_user, result, None),
    )
    for name, start, end, rule in regions:
        op = compact(open_turn, "region", "A55", region={"start": start, "end": end})
        if rule is not None and rule not in (rejection_rules(InProcessAdapter().call(op)) or []):
            raise FormatError(f"codec/compact/region-{name}: the model does not reject with {rule}")
        out.append(record(f"codec/compact/region-{name}", ("CMP-13",),
                          f"compactRegion({start}, {end}) on an open turn: {name.replace('-', ' ')}", {}, [op]))
    return out


def _first_pruned_or_result(rows: list[Row]) -> int:
    """The seq of the first tool/result (the end of the first tool pair)."""
    return int(rows[first_index(rows, "tool/result")]["seq"])


TRIGGER: Final = {"kind": "injection", "source": {"kind": "plugin", "plugin": "titles"}}


def codec_vectors() -> list[Vector]:
    """Operations below the loop: the chunk-row writer (``pack``), crash repair
    (``repair``), out-of-band appends (``append-out-of-band``) and seed loading."""
    out: list[Vector] = []
    for name, rules, events, lines in _pack_cases():
        out.append(Vector(id=f"codec/pack/{name}", rules=rules, initial={},
                          description=f"the chunk-row writer on {name.replace('-', ' ')}",
                          steps=(Step(op={"op": "pack", "log": row_lines(events)}, expect=exact_object({"lines": eq(lines)})),)))
    for source in (f"a55f148516/{SNAPSHOTS}/packed-chunks/session.jsonl", f"611615650f/{SNAPSHOTS}/packed-chunks/session.jsonl"):
        real = [to_plain(json.loads(line)) for line in real_lines(source) if not line.startswith('{"type":"session",')]
        out.append(Vector(id=f"codec/pack/real/{source.split('/')[0]}", rules=("CHK-1", "CHK-2", "CHK-3", "CHK-4"), initial={},
                          description=f"packing the events of {source} gives the real file's lines (header excluded)",
                          steps=(Step(op={"op": "pack", "log": _expanded_lines(source)}, expect=exact_object({"lines": eq(real)})),)))
    repairs = (
        ("open-step", "a-single-turn-no-prefix", "assistant/chunk", 2),
        ("tool-call-not-started", "b-prefix-idioms-tool-roundtrip", "assistant/message", 1),
        ("tool-call-started", "b-prefix-idioms-tool-roundtrip", "tool/call", 0),
        ("between-steps", "b-prefix-idioms-tool-roundtrip", "step/end", 1),
        ("closed-log", "a-single-turn-no-prefix", "turn/end", 0),
    )
    for name, scenario, type_name, nth in repairs:
        out.append(record(f"codec/repair/{name}", ("LOG-14",), f"crash repair of {scenario} cut after {type_name} #{nth + 1}",
                          {}, [{"op": "repair", "log": _repair_cut(scenario, type_name, nth)}]))
    closed, open_turn = gt_lines("a-single-turn-no-prefix"), _repair_cut("a-single-turn-no-prefix", "step/end")
    title = {"title": "a title"}
    out.append(record("codec/out-of-band/between-turns", ("LOG-16",),
                      "an out-of-band append with no open turn is wrapped in a synthetic turn", {},
                      [{"op": "append-out-of-band", "log": closed, "type": "session/title", "data": title, "trigger": TRIGGER}]))
    out.append(record("codec/out-of-band/inside-turn", ("LOG-16",), "an out-of-band append inside an open turn is a plain append", {},
                      [{"op": "append-out-of-band", "log": open_turn, "type": "session/title", "data": title, "trigger": TRIGGER}]))
    out.append(record("codec/out-of-band/surface-type", ("LOG-16",), "surface types never go out of band", {},
                      [{"op": "append-out-of-band", "log": closed, "type": "user/message",
                        "data": {"content": text("x"), "source": {"kind": "user"}}, "trigger": TRIGGER}]))
    # MTR-11 through measure(session, override): a provider-usage anchor survives an override that equals the
    # folded header (tools [] vs absent included) and is dropped for any canonical envelope difference.
    anchored = _usage_anchored_log()
    header = next(r for r in (json.loads(line) for line in anchored) if r["type"] == "request/header")["data"]["header"]
    overrides: tuple[tuple[str, dict[str, Any] | None], ...] = (
        ("no-override", None), ("same-header", header), ("empty-tools", {**header, "tools": []}),
        ("message-prefix", {**header, "messagePrefix": [message("a prefix")]}), ("system", {**header, "system": "another system"}),
        ("model", {**header, "config": {**header["config"], "model": "another-model"}}))
    for name, override in overrides:
        op: Op = {"op": "measure", "log": anchored}
        if override is not None:
            op["override"] = override
        out.append(record(f"codec/measure/{name}", ("MTR-11", "MTR-10", "MTR-8"),
                          f"measure a log whose last request anchored provider usage, override: {name}", {}, [op]))
    out += compact_vectors()
    bad_seed = list(closed)
    # One entry failing step (1) (a textual -0 in the line) and step (2) (the legacy header-delta type).
    bad_seed[3] = bad_seed[3].replace('"type":"request/header"', '"type":"request/header-delta"').replace('"time":', '"time":-0,"x":', 1)
    out.append(Vector(id="codec/seed/rejected-seed-leaves-the-session", rules=("LOG-5", "LOG-6", "LOG-4"), initial={"log": closed},
                      description="a seed entry failing the data snapshot (LOG-4) and the legacy check (LEG-1) is rejected by "
                                  "the first step (LOG-5); the rejected seed leaves the session unchanged (LOG-6)",
                      steps=(Step(op={"op": "init", "log": bad_seed}, expect=reject("LOG-4")),
                             Step(op={"op": "log"}, expect=exact_object({"log": events_pattern(json.loads(line) for line in closed)})))))
    out += decision_vectors("codec")  # issue 43: the decision search's traces below the loop
    return out
