"""``check/rule/*``: one vector for each rule no other vector reaches (D08 reading and compaction
brackets, prune records, header equality, legacy and synthetic logs, surface validation order).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.vectors.build import Op, Step, Vector, message, text
from sessionspec.conformance.vectors.format import (
    FormatError,
    eq,
    exact_object,
    match,
    one_of,
    reject,
)
from sessionspec.conformance.vectors.groups.check import drop_type
from sessionspec.conformance.vectors.groups.data import SNAPSHOTS, Row, first_index, gt_rows, real_rows, row_lines

# --------------------------------------------------------------------------- one vector per remaining rule


HEADLESS: Final = "611615650f/examples/headless-agent/tests/snapshots"
# The D08 overflow compaction of the corpus (rows 20-23: start, summary, checkpoint, end; row 0 is the session header).
D08_COMPACTION: Final = f"{HEADLESS}/compaction-recovery/session.jsonl"
D08_CHILD: Final = f"{HEADLESS}/subagent-settlement/child.expected.jsonl"


def d08_compaction_rows() -> list[Row]:
    """The D08 compaction log with its 17 kB system prompt and tool list cut
    short (the header is not part of any rule these vectors exercise; the log
    stays valid)."""
    rows = real_rows(D08_COMPACTION)
    header = rows[first_index(rows, "request/header")]["data"]["header"]
    header["system"] = "You are headless-agent (system prompt shortened for the vectors)."
    header["tools"] = header["tools"][:1]
    return rows


def _shift(value: int, at: int) -> int:
    return value + 1 if value >= at else value


def _insert_row(rows: list[Row], index: int, row: Row) -> list[Row]:
    """``row`` inserted before ``rows[index]``, taking its seq; every later seq
    and every reference to one (provenance, surface ranges, compaction ranges)
    moves up by one, so the rest of the log stays consistent."""
    at = next(r["seq"] for r in rows[index:] if "seq" in r)
    for r in rows:
        if "seq" not in r:
            continue
        r["seq"] = _shift(r["seq"], at)
        if "sourceEventSeqs" in r:
            r["sourceEventSeqs"] = [_shift(s, at) for s in r["sourceEventSeqs"]]
        for ranged in (r.get("surfaceOp"), r.get("data", {}).get("shadowedRange")):
            if isinstance(ranged, dict):
                ranged["start"], ranged["end"] = _shift(ranged["start"], at), _shift(ranged["end"], at)
        if isinstance(r.get("data", {}).get("shadowedSeqs"), list):
            r["data"]["shadowedSeqs"] = [_shift(s, at) for s in r["data"]["shadowedSeqs"]]
    rows.insert(index, {**row, "seq": at})
    return rows


def _edit_rows(rows: list[Row], edit: Callable[[list[Row]], list[Row] | None]) -> list[str]:
    rows = copy.deepcopy(rows)
    changed = edit(rows)
    return row_lines(rows if changed is None else changed)


def _with_prune_records(rows: list[Row]) -> list[Row]:
    """DIA-18: a ``compaction/prune`` record immediately before each prune replacement."""
    for index in reversed([i for i, r in enumerate(rows) if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict)]):
        seq = rows[index]["surfaceOp"]["start"]
        _insert_row(rows, index, {"type": "compaction/prune", "time": rows[index]["time"], "data": {
            "shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq], "shadowedTokenCount": 1}})
    return rows


def _first_pruned(rows: list[Row]) -> Row:
    return next(r for r in rows if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))


def _set_path(path: Sequence[str | int], value: Any, index: int) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[index]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _del_path(path: Sequence[str | int], index: int) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[index]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _each(*edits: Callable[[list[Row]], list[Row] | None]) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        for edit in edits:
            edit(rows)

    return change


def _in_type(type_name: str, edit: Callable[[Row], None], nth: int = 0) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        edit(rows[first_index(rows, type_name, nth)])

    return change


def _title(title: str) -> Row:
    return {"type": "session/title", "time": 0, "data": {"title": title}}


def _unbalanced_user_replace(rows: list[Row]) -> None:
    """SURF-12: a plugin ``user/message`` replacing the tool-call assistant message
    of turn 2 but not its tool result (an unbalanced range), before the last turn/end."""
    call = next(r for r in rows if r["type"] == "assistant/message"
                and any(b.get("type") == "tool-call" for b in r["data"]["content"]))["seq"]
    _insert_row(rows, len(rows) - 1, {"type": "user/message", "time": rows[-1]["time"], "data": {
        "content": text("condensed notes"), "source": {"kind": "plugin", "plugin": "notes"}},
        "sourceEventSeqs": [call], "surfaceOp": {"op": "replace", "start": call, "end": call}})


def _prefix_placeholders(rows: list[Row]) -> None:
    """LEG-8: the acp/web snapshot scrubber writes each prefix entry as ``"{{messagePrefix}}"``."""
    for row in rows:
        header = row["data"].get("header") if row["type"] == "request/header" else None
        if isinstance(header, dict) and "messagePrefix" in header:
            header["messagePrefix"] = ["{{messagePrefix}}"] * len(header["messagePrefix"])


def _second_header_from_first(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[list[Row]], None]:
    """The second ``request/header`` (a ``change``) becomes ``change(first header)``."""
    def edit(rows: list[Row]) -> None:
        first, second = (rows[first_index(rows, "request/header", n)] for n in (0, 1))
        second["data"]["header"] = change(copy.deepcopy(first["data"]["header"]))

    return edit


def _orphan_start(index: int) -> Callable[[list[Row]], list[Row]]:
    def change(rows: list[Row]) -> list[Row]:
        return _insert_row(rows, index, {"type": "compaction/start", "time": 0, "data": {"compactionId": "orphan-1", "turn": None}})

    return change


# (id, rules exercised, source rows, edit, dialect, expected: None = valid, "valid|unknown", or the rule named)
RuleCheck = tuple[str, tuple[str, ...], Callable[[], list[Row]], Callable[[list[Row]], list[Row] | None], str | None, str | None]


def _gt(name: str) -> Callable[[], list[Row]]:
    return lambda: gt_rows(name)


def _real(source: str) -> Callable[[], list[Row]]:
    return lambda: real_rows(source)


def _unchanged(rows: list[Row]) -> None:
    return None


RULE_CHECKS: Final[tuple[RuleCheck, ...]] = (
    # D08 reading: A55 logs migrate on load (LEG-9, DIA-13, DIA-14) and then fold as D08 shapes.
    ("d08/reads-a55-tool-roundtrip", ("LEG-9", "DIA-13", "DIA-10", "DIA-11"), _gt("b-prefix-idioms-tool-roundtrip"), _unchanged, "D08", None),
    ("d08/reads-a55-steering-and-reasoning", ("LEG-9", "DIA-13"), _gt("m-steering-empty-assistant-reasoning"), _unchanged, "D08", None),
    ("d08/reads-a55-coarse-aborted", ("LEG-9", "DIA-13", "DIA-14"), _gt("d-cancel-during-composition-then-recompose"), _unchanged, "D08", None),
    ("d08/compaction-shortened-header", ("DIA-2", "DIA-4", "DIA-7", "DIA-16", "DIA-19"), d08_compaction_rows, _unchanged, None, None),
    ("d08/reads-a55-disposed", ("LEG-9", "DIA-14"), _gt("e-dispose-during-composition"), _unchanged, "D08", None),
    # The A55 model does not migrate: D08 shapes (message under data.message) are not A55 shapes.
    ("a55/does-not-migrate-d08", ("LEG-9", "DIA-10", "DER-1"), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"), _unchanged, "A55", "DER-1"),
    # DIA-18 / DIA-11: a tool-result prune in D08 is recorded by compaction/prune immediately before the replacement.
    ("d08/prune-without-record", ("DIA-18", "LEG-9"), _gt("j2-tool-result-prune"), _unchanged, "D08", "DIA-18"),
    ("d08/prune-with-record", ("DIA-18", "DIA-11", "DIA-13"), _gt("j2-tool-result-prune"), _with_prune_records, "D08", None),
    ("d08/prune-changes-is-error", ("DIA-11", "SURF-7"), _gt("j2-tool-result-prune"),
     lambda rows: _in_type("tool/result", lambda r: r["data"].__setitem__("isError", True), 1)(_with_prune_records(rows)), "D08", "SURF-7"),
    # DIA-2 / DIA-19: one compactionId on start, summary, end and the checkpoint source.
    ("d08/summary-other-compaction-id", ("DIA-2", "DIA-19"), d08_compaction_rows, _set_path(["data", "compactionId"], "other-id", 21), None, "DIA-19"),
    ("d08/checkpoint-without-compaction-id", ("DIA-2", "DIA-19"), d08_compaction_rows, _del_path(["data", "source", "compactionId"], 22), None, "DIA-19"),
    ("d08/empty-compaction-id", ("DIA-2", "DIA-19"), d08_compaction_rows,
     _each(*(_set_path(["data", "compactionId"], "", i) for i in (20, 21, 23)), _set_path(["data", "source", "compactionId"], "", 22)), None, "DIA-19"),
    # DIA-3: a null owner (manual compaction) needs no open turn.
    ("d08/manual-compaction-inside-turn", ("DIA-3", "DIA-19"), d08_compaction_rows, _set_path(["data", "turn"], None, 20), None, "DIA-19"),
    # DIA-4: the summary carries shadowedRange.
    ("d08/summary-without-shadowed-range", ("DIA-4", "CMP-25"), d08_compaction_rows, _del_path(["data", "shadowedRange"], 21), None, "CMP-25"),
    # DIA-16: summary, checkpoint and end are adjacent.
    ("d08/event-between-summary-and-checkpoint", ("DIA-16",), d08_compaction_rows, lambda rows: _insert_row(rows, 22, _title("x")), None, "DIA-16"),
    ("d08/event-between-checkpoint-and-end", ("DIA-16",), d08_compaction_rows, lambda rows: _insert_row(rows, 23, _title("x")), None, "DIA-16"),
    # DIA-5: session/end-seed clears an unmatched compaction/start; without it the lock stays live.
    ("d08/end-seed-clears-orphan-start", ("DIA-5", "DIA-3"), _real(D08_CHILD), _orphan_start(2), None, None),
    ("d08/orphan-start-after-end-seed", ("DIA-5", "DIA-19"), _real(D08_CHILD), _orphan_start(3), None, "DIA-19"),
    # DIA-21: a session header with origin.
    ("d08/header-with-origin", ("DIA-21", "LOG-18"), _real(D08_CHILD), _unchanged, None, None),
    # CHK-7: a JSON value whose type is no row tag passes the decoder; event validation (LOG-3) rejects it.
    ("a55/not-a-row-tag", ("CHK-7", "LOG-3"), _gt("a-single-turn-no-prefix"),
     lambda rows: [*rows[:5], {"type": "text-chunk", "seq0": 5, "time0": 0, "data": {}}, *rows[5:]], None, "LOG-3"),
    # LEG-5: pre-provider logs are rejected (HDR-8).
    ("a55/header-config-model-only", ("LEG-5", "HDR-8"), _gt("a-single-turn-no-prefix"),
     _in_type("request/header", lambda r: r["data"]["header"].__setitem__("config", {"model": "mock-1"})), None, "HDR-8"),
    ("a55/assistant-without-provider", ("LEG-5", "HDR-8"), _gt("a-single-turn-no-prefix"),
     _in_type("assistant/message", lambda r: r["data"]["provenance"].pop("provider")), None, "HDR-8"),
    # LEG-10: synthetic fixtures are rejected, not repaired.
    ("a55/seq-hole", ("LEG-10", "LOG-1"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{**r, "seq": r["seq"] + (3 if i >= 5 else 0)} for i, r in enumerate(rows)], None, "LOG-1"),
    ("a55/starts-at-seq-1", ("LEG-10", "LOG-1"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{**r, "seq": r["seq"] + 1} for r in rows], None, "LOG-1"),
    ("a55/header-without-version", ("LEG-10", "LOG-17"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{"type": "session", "id": "vector", "createdAt": 0}, *rows], None, "LOG-17"),
    # LOG-9: tool/call is a core type but not surface-eligible.
    ("a55/surface-op-on-tool-call", ("LOG-9", "SURF-2"), _gt("b-prefix-idioms-tool-roundtrip"),
     _in_type("tool/call", lambda r: r.__setitem__("surfaceOp", "append")), None, "SURF-2"),
    # SURF-9: eligibility (step 2) is checked before the replace range (step 4); the shape before the range.
    ("a55/ineligible-replace-with-bad-range", ("SURF-9", "SURF-2"), _gt("a-single-turn-no-prefix"),
     _in_type("step/start", lambda r: r.__setitem__("surfaceOp", {"op": "replace", "start": 50, "end": 40})), None, "SURF-2"),
    ("a55/bad-shape-with-bad-range", ("SURF-9", "SURF-3"), _gt("a-single-turn-no-prefix"),
     _in_type("assistant/message", lambda r: r.__setitem__("surfaceOp", {"op": "replace", "start": 50, "end": 40, "x": 1})), None, "SURF-3"),
    # SURF-12: the fold does not validate tool pairing; a user/message replace may shadow an unbalanced range.
    ("a55/user-replace-shadows-unbalanced-range", ("SURF-12", "SURF-6"), _gt("b-prefix-idioms-tool-roundtrip"), _unbalanced_user_replace, None, None),
    # LEG-8: messagePrefix placeholders are "N messages of unknown content", never a failure.
    ("a55/message-prefix-placeholders", ("LEG-8", "FMT-6"), _gt("b-prefix-idioms-tool-roundtrip"), _prefix_placeholders, None, "valid|unknown"),
    # DIA-8: a logged messagePrefix is dropped by D08 canonicalization, so a change header differing only there equals
    # the header in force (FMT-9(c)); DIA-9: adapterDefaults take part in D08 header equality.
    ("d08/change-header-differs-only-in-message-prefix", ("DIA-8", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     _second_header_from_first(lambda h: {**h, "messagePrefix": [message("another prefix")]}), "D08", "FMT-9"),
    ("d08/change-header-differs-only-in-adapter-defaults", ("DIA-9", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     # (adapterDefaults in its canonical place, DIA-8: right after config)
     _second_header_from_first(lambda h: {"config": h["config"], "adapterDefaults": {"maxTokens": True},
                                          **{k: v for k, v in h.items() if k != "config"}}), "D08", None),
    ("d08/change-header-equal-to-the-first", ("DIA-8", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     _second_header_from_first(lambda h: h), "D08", "FMT-9"),
    # INV-2 (5): a request with no request/header in force cannot be reconstructed; the checker names FMT-9(g).
    ("a55/request-without-header", ("INV-2", "FMT-9"), _gt("a-single-turn-no-prefix"), drop_type("request/header"), None, "FMT-9"),
    # HDR-1 / FMT-6: a header field that holds no placeholder must have its type (system is a string).
    ("a55/header-system-not-a-string", ("HDR-1", "FMT-6"), _gt("a-single-turn-no-prefix"),
     _in_type("request/header", lambda r: r["data"]["header"].__setitem__("system", 5)), None, "HDR-1"),
    # DIA-10: D08 messages carry their identity (message.id).
    ("d08/assistant-message-without-id", ("DIA-10",), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"),
     _in_type("assistant/message", lambda r: r["data"]["message"].pop("id")), None, "DIA-10"),
    # DIA-14: an aborted turn/end names who aborted (user, parent, hook, disposed).
    ("d08/aborted-turn-end-with-a-bogus-reason", ("DIA-14",), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"),
     _in_type("turn/end", lambda r: r["data"].__setitem__("reason", {"kind": "aborted", "reason": {"kind": "bogus"}})), None, "DIA-14"),
)


def rule_check_vectors() -> list[Vector]:
    """``check`` vectors for rules no loop or replay vector reaches: D08 reading
    (migrations, compaction brackets, prune records), legacy and synthetic logs,
    surface validation order.  Each expectation is reasoned from the rule text;
    generation re-verifies the model agrees."""
    model = InProcessAdapter()
    out: list[Vector] = []
    for name, rules, source, edit, dialect, expected in RULE_CHECKS:
        op: Op = {"op": "check", "log": _edit_rows(source(), edit)}
        if dialect is not None:
            op["dialect"] = dialect
        match expected:
            case None:
                pattern = exact_object({"verdict": eq("valid")})
            case "valid|unknown":
                pattern = exact_object({"verdict": one_of("valid", "unknown")})
            case rule:
                pattern = reject(rule)
        problems = match(pattern, model.call(op))
        if problems:
            raise FormatError(f"check/rule/{name}: the model disagrees: {problems[0]}")
        out.append(Vector(id=f"check/rule/{name}", rules=rules, initial={}, steps=(Step(op=op, expect=pattern),),
                          description=f"{name.replace('-', ' ')} ({', '.join(rules)})"))
    return out
