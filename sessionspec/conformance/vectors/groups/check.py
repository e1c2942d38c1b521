"""The ``check`` group's hand-written part: ``valid`` verdicts for real logs and one targeted
corruption of a valid log per rule (``reject {rule}``), plus the row-editing helpers they share.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from sessionspec.conformance.vectors.build import GROUNDTRUTH, Step, Vector
from sessionspec.conformance.vectors.format import (
    eq,
    exact_object,
    reject,
)
from sessionspec.conformance.vectors.groups.data import (
    SNAPSHOTS,
    Row,
    dump_row,
    first_index,
    gt_lines,
    gt_rows,
    real_lines,
    real_rows,
    row_lines,
)
from sessionspec.conformance.vectors.groups.decisions import decision_vectors

# --------------------------------------------------------------------------- log verdicts


def _mutated(name: str, change: Callable[[list[Row]], list[Row] | None]) -> list[str]:
    rows = copy.deepcopy(gt_rows(name))
    changed = change(rows)
    return row_lines(rows if changed is None else changed)


def _set(path: Sequence[str | int], value: Any, type_name: str, nth: int = 0, **data: Any) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[first_index(rows, type_name, nth, **data)]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: Sequence[str], type_name: str, nth: int = 0) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[first_index(rows, type_name, nth)]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _swap_types(rows: list[Row]) -> None:
    start = first_index(rows, "step/start")
    chunk = first_index(rows, "assistant/chunk")
    rows.insert(chunk, rows.pop(start))
    for seq, row in enumerate(rows):
        row["seq"] = seq


def _duplicate_seq(rows: list[Row]) -> None:
    rows[5]["seq"] = rows[4]["seq"]


def drop_type(type_name: str) -> Callable[[list[Row]], list[Row]]:
    def change(rows: list[Row]) -> list[Row]:
        index = first_index(rows, type_name)
        gone = rows[index]["seq"]
        out = []
        for i, row in enumerate(rows):
            if i == index:
                continue
            if row["seq"] > gone:
                row["seq"] -= 1
            if "sourceEventSeqs" in row:
                row["sourceEventSeqs"] = [s - 1 if s > gone else s for s in row["sourceEventSeqs"] if s != gone]
                if not row["sourceEventSeqs"]:
                    del row["sourceEventSeqs"]
            op = row.get("surfaceOp")
            if isinstance(op, dict):
                op["start"] -= op["start"] > gone
                op["end"] -= op["end"] > gone
            out.append(row)
        return out

    return change


# Real logs the checker must accept (source under tests/data/real, rules beyond FMT-7 they exercise).
REAL_VALID: Final = (
    (f"a55f148516/{SNAPSHOTS}/text-turn/session.jsonl", ("FMT-1", "FMT-3")),
    (f"a55f148516/{SNAPSHOTS}/packed-chunks/session.jsonl", ("CHK-1", "CHK-5", "CHK-6", "CHK-8", "FMT-5")),
    (f"a55f148516/{SNAPSHOTS}/todo-write/session.jsonl", ("LOG-13",)),
    (f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl", ("FMT-10",)),
    (f"611615650f/{SNAPSHOTS}/packed-chunks/session.jsonl", ("FMT-10", "CHK-6", "FMT-5")),
    ("611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", ("FMT-10", "DIA-1", "DIA-19")),
)


# (id, rules, scenario, corruption, the rule the corruption breaks)
CORRUPTIONS: Final[tuple[tuple[str, str, str, Callable[[list[Row]], list[Row] | None]], ...]] = (
    # An unanswered call is the loop's pairing (LOOP-12), not a companion veto: step/end clears the pending calls.
    ("drop-tool-result", "LOOP-12", "b-prefix-idioms-tool-roundtrip", drop_type("tool/result")),
    ("drop-tool-call", "LOG-13", "b-prefix-idioms-tool-roundtrip", drop_type("tool/call")),
    ("step-start-after-chunk", "LOG-13", "a-single-turn-no-prefix", _swap_types),
    ("duplicate-seq", "LOG-1", "a-single-turn-no-prefix", _duplicate_seq),
    ("wrong-turn-number", "LOG-13", "b-prefix-idioms-tool-roundtrip", _set(["data", "turn"], 7, "turn/start", 1)),
    ("reason-bearing-aborted", "LEG-4", "d-cancel-during-composition-then-recompose",
     _set(["data", "reason"], {"kind": "aborted", "reason": {"kind": "user"}}, "turn/end")),
    ("surface-op-on-log-only-event", "SURF-2", "a-single-turn-no-prefix", _set(["surfaceOp"], "append", "step/start")),
    ("second-initial-header", "FMT-9", "h1-resume-no-drift", _set(["data", "reason"], "initial", "request/header", reason="resume")),
    ("fallback-header-reason", "LEG-2", "a-single-turn-no-prefix", _set(["data", "reason"], "fallback", "request/header")),
    ("header-without-provider", "HDR-8", "a-single-turn-no-prefix", _delete(["data", "header", "config", "provider"], "request/header")),
    ("header-delta", "LEG-1", "a-single-turn-no-prefix", _set(["type"], "request/header-delta", "request/header")),
)


def _replace_first(old: str, new: str, line: int = 0) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        assert old in lines[line], (old, lines[line][:80])
        return lines[:line] + [lines[line].replace(old, new, 1)] + lines[line + 1:]

    return change


def _surface_op_extra_key(lines: list[str]) -> list[str]:
    row = json.loads(lines[1])
    row["surfaceOp"] = {"op": "replace", "start": 1, "end": 1, "x": 1}
    return [lines[0], dump_row(row), *lines[2:]]


def _session_header(version: int) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        return [dump_row({"type": "session", "version": version, "id": "vector", "createdAt": 0}), *lines]

    return change


# Corruptions of the raw text (id, the rule broken, scenario, change); None: the result stays valid.
RAW_CORRUPTIONS: Final[tuple[tuple[str, str | None, str, Callable[[list[str]], list[str]]], ...]] = (
    ("textual-minus-zero", "LOG-4", "a-single-turn-no-prefix", _replace_first('"time":', '"time":-0,"x":')),
    ("duplicate-key", "FMT-2", "a-single-turn-no-prefix", _replace_first('{"type":"turn/start",', '{"type":"turn/start","type":"turn/start",')),
    ("surface-op-extra-key", "SURF-3", "a-single-turn-no-prefix", _surface_op_extra_key),
    ("session-header-version-1", "LOG-17", "a-single-turn-no-prefix", _session_header(1)),
    ("mode-set-event", "LEG-3", "a-single-turn-no-prefix", _replace_first('"type":"turn/start"', '"type":"mode/set"')),
    ("empty-reasoning-effort", "LEG-6", "a-single-turn-no-prefix", _replace_first('"config":{', '"config":{"reasoningEffort":"",', 3)),
    ("session-header-line", None, "a-single-turn-no-prefix", _session_header(0)),
)


def _gt_check_lines(name: str) -> list[str]:
    """The recorded log as the checker reads it beside its sessions.json: a seeded log
    gets its session header line, so its seed (written elsewhere) is not judged as live."""
    lines = gt_lines(name)
    sidecar = GROUNDTRUTH / name / "sessions.json"
    entries = json.loads(sidecar.read_text(encoding="utf-8")).values() if sidecar.exists() else []
    for entry in entries:
        header = entry.get("header", {})
        if entry.get("file") == "session.jsonl" and "seedLength" in header:
            return [dump_row({"type": "session", **header}), *lines]
    return lines


def _reorder(rows: list[Row], order: list[int]) -> list[Row]:
    """``rows`` in ``order`` (indices; one may repeat: a copy), seqs renumbered by position; every
    reference (sourceEventSeqs, replace ranges) follows its event, and a copy cites what its original cites."""
    new_seq: dict[int, int] = {}
    for position, index in enumerate(order):
        new_seq.setdefault(rows[index]["seq"], position)
    out = []
    for position, index in enumerate(order):
        row = copy.deepcopy(rows[index])
        row["seq"] = position
        if "sourceEventSeqs" in row:
            row["sourceEventSeqs"] = [new_seq.get(s, s) for s in row["sourceEventSeqs"]]
        if isinstance(row.get("surfaceOp"), dict):
            row["surfaceOp"]["start"], row["surfaceOp"]["end"] = new_seq[row["surfaceOp"]["start"]], new_seq[row["surfaceOp"]["end"]]
        out.append(row)
    return out


def _duplicated(type_name: str) -> Callable[[list[Row]], list[Row]]:
    def change(rows: list[Row]) -> list[Row]:
        at = first_index(rows, type_name)
        return _reorder(rows, [*range(at + 1), at, *range(at + 1, len(rows))])

    return change


def _api_built_step(rows: list[Row]) -> list[Row]:
    """Every chunk of the first step dropped: its message then cites nothing (drop_type deletes the emptied list)."""
    step_end = first_index(rows, "step/end")
    for _ in range(sum(1 for r in rows[:step_end] if r["type"] == "assistant/chunk")):
        rows = drop_type("assistant/chunk")(rows)
    return rows


def _prune_after_step_end(rows: list[Row]) -> list[Row]:
    at = next(i for i, r in enumerate(rows) if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))
    assert rows[at + 1]["type"] == "step/end"
    return _reorder(rows, [*range(at), at + 1, at, *range(at + 2, len(rows))])


def _real_changed(source: str, change: Callable[[list[Row]], object]) -> list[str]:
    rows = real_rows(source)
    change(rows)
    return row_lines(rows)


def _set_turn_end(reason: object) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        rows[first_index(rows, "turn/end")]["data"]["reason"] = reason

    return change


def _legacy_user_message(rows: list[Row]) -> None:
    data = rows[first_index(rows, "user/message")]["data"]
    del data["role"], data["id"]


def _d08_user_message(rows: list[Row]) -> None:
    rows[first_index(rows, "user/message")]["data"].update(role="user", id="m-1")


def _swapped_at(type_name: str) -> Callable[[list[Row]], list[Row]]:
    """The first ``type_name`` event swapped with the event after it."""
    def change(rows: list[Row]) -> list[Row]:
        at = first_index(rows, type_name)
        return _reorder(rows, [*range(at), at + 1, at, *range(at + 2, len(rows))])

    return change


def _real_reordered(source: str, change: Callable[[list[Row]], list[Row]]) -> list[str]:
    """A real log's events reordered by ``change`` (packed rows expanded first), behind its header line."""
    lines = real_lines(source)
    header, rows = lines[:1], [json.loads(line) for line in lines[1:]]
    assert json.loads(header[0])["type"] == "session" and all("seq" in r for r in rows), source
    return header + row_lines(change(rows))


def _seed_with_a_nesting_break() -> list[str]:
    """The fork child's seed (its sidecar seedLength, behind a header line) with its first turn/end
    before that turn's step/end: the companion replays the seed (QF-12)."""
    lines = _gt_check_lines("k-fork-seeded-child")
    rows = [json.loads(line) for line in lines[1:]]
    return lines[:1] + row_lines(_swapped_at("step/end")(rows))


D08_TEXT: Final = f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"
D08_CANCEL: Final = f"611615650f/{SNAPSHOTS}/cancel/session.jsonl"
# Issue 25: a writer's rule binds only the events that writer wrote (rule book FMT-7, "Writers"); (id, rules, log, the rule broken or None).
WRITER_CASES: Final[tuple[tuple[str, tuple[str, ...], Callable[[], list[str]], str | None], ...]] = (
    ("api-built-step", ("FMT-7", "LOOP-11"), lambda: _mutated("b-prefix-idioms-tool-roundtrip", _api_built_step), None),
    ("d08-error-turn-end-with-an-llm-failure", ("DIA-14", "LOG-11"),
     lambda: _real_changed(D08_TEXT, _set_turn_end({"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}})), None),
    ("d08-blocked-turn-end", ("DIA-14", "LOG-11"), lambda: _real_changed(D08_TEXT, _set_turn_end({"kind": "blocked"})), None),
    ("two-messages-in-one-step", ("LOOP-11", "FMT-8"), lambda: _mutated("a-single-turn-no-prefix", _duplicated("assistant/message")), "LOOP-11"),
    ("two-prompt-blocked-in-one-turn", ("LOOP-3",), lambda: _mutated("l-blocked-prompt-then-turn", _duplicated("prompt/blocked")), "LOOP-3"),
    ("prune-after-a-successful-step-end", ("PRN-6", "CMP-6"), lambda: _mutated("j2-tool-result-prune", _prune_after_step_end), "PRN-6"),
    ("legacy-user-message-in-a-d08-turn", ("DIA-13", "FMT-7"), lambda: _real_changed(D08_TEXT, _legacy_user_message), "DIA-13"),
    ("d08-user-message-in-an-a55-turn", ("LOG-12", "FMT-7"), lambda: _mutated("a-single-turn-no-prefix", _d08_user_message), "LOG-12"),
    ("d08-entering-message-before-step-start", ("DIA-12",), lambda: _real_reordered(D08_CANCEL, _swapped_at("step/start")), "DIA-12"),
    ("seed-with-a-nesting-break", ("LOG-13", "LOG-8"), _seed_with_a_nesting_break, "LOG-13"),
)


def check_vectors() -> list[Vector]:
    out: list[Vector] = []
    for name, rules, log, broken in WRITER_CASES:
        expect = reject(broken) if broken is not None else exact_object({"verdict": eq("valid")})
        out.append(Vector(id=f"check/writer/{name}", rules=rules,
                          description=f"{name.replace('-', ' ')}: " + (f"breaks {broken}" if broken else "a log a writer of the harness writes, valid"),
                          initial={}, steps=(Step(op={"op": "check", "log": log()}, expect=expect),)))
    for directory in sorted(p for p in GROUNDTRUTH.iterdir() if p.is_dir()):
        plugin = ("LOG-10",) if any('"type":"compact/' in line for line in gt_lines(directory.name)) else ()
        out.append(Vector(id=f"check/valid/{directory.name}", rules=("FMT-7", *plugin),
                          description=f"the recorded log of {directory.name} is valid",
                          initial={}, steps=(Step(op={"op": "check", "log": _gt_check_lines(directory.name)},
                                                  expect=exact_object({"verdict": eq("valid")})),)))
    for source, rules in REAL_VALID:
        out.append(Vector(id=f"check/valid/{source}", rules=("FMT-7", *rules),
                          description=f"the real log {source} is valid",
                          initial={}, steps=(Step(op={"op": "check", "log": real_lines(source)},
                                                  expect=exact_object({"verdict": eq("valid")})),)))
    for name, broken, scenario, edit in RAW_CORRUPTIONS:
        lines = edit(gt_lines(scenario))
        if broken is None:
            out.append(Vector(id=f"check/valid/{name}", rules=("FMT-1", "LOG-18"),
                              description=f"{scenario} behind a session header line: the header sits outside the log",
                              initial={}, steps=(Step(op={"op": "check", "log": lines}, expect=exact_object({"verdict": eq("valid")})),)))
            continue
        out.append(Vector(id=f"check/{broken}/{name}", rules=(broken, "FMT-7"),
                          description=f"{scenario} with one corruption ({name}) breaks {broken}",
                          initial={}, steps=(Step(op={"op": "check", "log": lines}, expect=reject(broken)),)))
    for name, rule, scenario, change in CORRUPTIONS:
        out.append(Vector(id=f"check/{rule}/{name}", rules=(rule, "FMT-7"),
                          description=f"{scenario} with one corruption ({name}) breaks {rule}",
                          initial={}, steps=(Step(op={"op": "check", "log": _mutated(scenario, change)}, expect=reject(rule)),)))
    out += decision_vectors("check")  # issue 43: the decision search's check traces
    return out
