"""Issue 17: one corruption of a valid real or ground-truth log per MUST rule the
writers' audits decide, each reasoned from the rule text (spec/rulebook.md), and
for rules with allowed variants a valid edit that must stay valid.

Logs: ground truth ``b-prefix-idioms-tool-roundtrip`` (``B``; seqs: turn 1 =
0..22, its message 20 citing chunks 4..19 with usage chunk 18; turn 2 = 23..55,
tool-call message 35, ``tool/call`` 36, ``tool/result`` 37, step 2 = 39..54,
message 53), ``l-blocked-prompt-then-turn``, ``m-steering-empty-assistant-reasoning``,
``j1-pressure-compaction``, and real A55/D08 corpus logs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from sessionspec.check.checker import Verdict
from sessionspec.model.loop import Placement, Prompt, PromptContext, prompt_message_data
from sessionspec.model.repair import repair_closers
from tests.support import (
    A55_SNAPSHOTS,
    D08_HEADLESS,
    D08_SNAPSHOTS,
    Row,
    check,
    events_to_rows,
    gt,
    index,
    load,
    permute,
    renumber_insert,
    rows_to_events,
    rules,
    rules_after,
)

Edit = Callable[[list[Row]], list[Row] | None]
FAIL = {"message": "boom", "code": "SERVER"}


def B() -> list[Row]:
    return gt("b-prefix-idioms-tool-roundtrip")


def _set(seq: int, path: str, value: Any) -> Edit:
    """Set ``data.<path>`` (dot-separated) of the event at ``seq``."""

    def edit(rows: list[Row]) -> None:
        target: Any = rows[seq]["data"]
        *parents, last = path.split(".")
        for key in parents:
            target = target[key]
        target[last] = value

    return edit


def _envelope(seq: int, key: str, value: Any) -> Edit:
    def edit(rows: list[Row]) -> None:
        if value is None:
            del rows[seq][key]
        else:
            rows[seq][key] = value

    return edit


def _both(*edits: Edit) -> Edit:
    def edit(rows: list[Row]) -> None:
        for e in edits:
            e(rows)

    return edit


def _reorder_header(rows: list[Row]) -> None:
    header = rows[3]["data"]["header"]
    rows[3]["data"]["header"] = {k: header[k] for k in ("tools", "config", "system", "messagePrefix")}


def _replace_with_plugin_event(seq: int) -> Edit:
    """Turn the event at ``seq`` into a log-only plugin event (no renumbering)."""

    def edit(rows: list[Row]) -> None:
        rows[seq] = {"type": "test/note", "seq": seq, "time": rows[seq]["time"], "data": {}}

    return edit


# rule -> (case id, base log, edit): each edit breaks exactly what the comment says.
CORRUPTIONS: list[tuple[str, str, Callable[[], list[Row]], Edit]] = [
    # LOG-9: tool/call `arguments` is a string; tool/result `isError` a boolean; trigger kind message|injection.
    ("LOG-9", "arguments-object", B, _set(36, "arguments", {"text": "ping"})),
    ("LOG-9", "isError-string", B, _set(37, "isError", "false")),
    ("LOG-9", "unknown-trigger-kind", B, _set(0, "trigger", {"kind": "timer", "source": {"kind": "user"}})),
    ("LOG-9", "unknown-chunk-type", B, _set(5, "chunk", {"type": "text-piece", "index": 0, "text": "f"})),
    ("LOG-9", "step-extra-key", B, _set(2, "extra", 1)),
    # LOG-11: an error turn/end is {kind, step, failure} or {kind, step, message, code?}.
    ("LOG-11", "error-without-step", B, _set(55, "reason", {"kind": "error", "message": "boom"})),
    ("LOG-11", "completed-with-extra-key", B, _set(55, "reason", {"kind": "completed", "why": "x"})),
    # LOG-11: "max-tokens takes precedence over completed": a max-tokens finish, then completed.
    ("LOG-11", "max-tokens-then-completed", B, _set(52, "chunk", {"type": "finish", "reason": {"kind": "max-tokens"}})),
    ("LOG-11", "max-tokens-without-finish", B, _set(55, "reason", {"kind": "max-tokens"})),
    # LOG-12: prompt data is {content, source, envelope?, meta?}.
    ("LOG-12", "prompt-extra-key", B, _set(1, "extra", 1)),
    ("LOG-12", "prompt-without-source", B, lambda rows: rows[1]["data"].pop("source") and None),
    # HDR-2 / HDR-7: the loop writes canonical headers, data {header, reason}.
    ("HDR-2", "empty-tools", B, _set(3, "header.tools", [])),
    ("HDR-2", "empty-system", B, _set(3, "header.system", "")),
    ("HDR-2", "empty-prefix", B, _set(3, "header.messagePrefix", [])),
    ("HDR-2", "keys-out-of-order", B, _reorder_header),
    ("HDR-2", "unknown-header-key", B, _set(3, "header.extra", 1)),
    ("HDR-7", "extra-data-key", B, _set(3, "extra", 1)),
    # LOOP-3: a message-triggered turn appends its prompt before any step.
    ("LOOP-3", "steps-without-prompt", B, _replace_with_plugin_event(24)),
    # LOOP-9: a second anchor after this turn already sent a request (step 1 of turn 2 streamed).
    ("LOOP-9", "resume-anchor-in-step-2", B, lambda rows: renumber_insert(
        rows, 40, {"type": "request/header", "time": 0, "data": copy.deepcopy(dict(rows[3]["data"], reason="resume"))})),
    # LOOP-10: an error finish is a request error: no assistant/message.
    ("LOOP-10", "message-after-error-finish", B, _set(19, "chunk", {"type": "finish", "reason": {"kind": "error", "failure": FAIL}})),
    # LOOP-11: provenance from the header config; usage the last usage chunk; sourceEventSeqs recorded.
    ("LOOP-11", "provenance-model", B, _set(20, "provenance.model", "mock-2")),
    ("LOOP-11", "usage-not-last-chunk", B, _set(20, "usage", {"inputTokens": 10, "outputTokens": 13})),
    ("LOOP-11", "usage-dropped", B, lambda rows: rows[20]["data"].pop("usage") and None),
    ("LOOP-11", "sourceEventSeqs-absent", B, _envelope(20, "sourceEventSeqs", None)),
    # LOOP-11: on a max-tokens finish tool-call blocks are dropped and no tools run.
    ("LOOP-11", "tool-after-max-tokens", B, _set(34, "chunk", {"type": "finish", "reason": {"kind": "max-tokens"}})),
    # LOOP-12: tool/call carries its block's callId and name, after the message.
    ("LOOP-12", "call-name", B, _set(36, "name", "shout")),
    ("LOOP-12", "call-arguments", B, _set(36, "arguments", "{\"text\":\"pong\"}")),
    ("LOOP-12", "call-before-message", B, lambda rows: permute(rows, [*range(35), 36, 35, *range(37, 56)])),
    # LOOP-14: a failed step (no message) ends the turn in error (or retries), never completed.
    ("LOOP-14", "failed-step-then-completed", B, _both(
        _set(19, "chunk", {"type": "finish", "reason": {"kind": "error", "failure": FAIL}}), _replace_with_plugin_event(20))),
    # SURF-13 / MTR-9 / INV-7: a message cites its own stream's chunks, in order, all of them.
    ("SURF-13", "skips-a-chunk", B, _envelope(20, "sourceEventSeqs", [4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19])),
    ("SURF-13", "reversed", B, _envelope(20, "sourceEventSeqs", list(range(19, 3, -1)))),
    ("MTR-9", "cites-another-steps-chunks", B, _envelope(53, "sourceEventSeqs", list(range(26, 35)))),
    ("MTR-9", "cites-a-non-chunk", B, _envelope(20, "sourceEventSeqs", list(range(3, 20)))),
    ("INV-7", "drops-the-last-chunk", B, _envelope(20, "sourceEventSeqs", list(range(4, 19)))),
    # SURF-13: tool/result cites [callSeq], not the assistant message.
    ("SURF-13", "result-cites-message", B, _envelope(37, "sourceEventSeqs", [35])),
    ("SURF-13", "result-cites-nothing", B, _envelope(37, "sourceEventSeqs", None)),
    # LOOP-3: a blocked prompt's turn has zero steps and ends rejected with the block's reason.
    ("LOOP-3", "blocked-turn-completed", lambda: gt("l-blocked-prompt-then-turn"), _set(2, "reason", {"kind": "completed"})),
    ("LOOP-3", "blocked-reason-differs", lambda: gt("l-blocked-prompt-then-turn"), _set(2, "reason.reason", "other")),
    ("LOG-11", "rejected-without-reason", lambda: gt("l-blocked-prompt-then-turn"), _set(2, "reason", {"kind": "rejected"})),
    ("LOOP-3", "blocked-turn-gets-a-step", lambda: gt("l-blocked-prompt-then-turn"), lambda rows: renumber_insert(
        renumber_insert(rows, 2, {"type": "step/start", "time": 0, "data": {"turn": 1, "step": 1}}),
        3, {"type": "step/end", "time": 0, "data": {"turn": 1, "step": 1}})),
]


@pytest.mark.parametrize(("rule", "case", "base", "edit"), CORRUPTIONS, ids=[f"{r}-{c}" for r, c, _, _ in CORRUPTIONS])
def test_corruption_names_its_rule(rule: str, case: str, base: Callable[[], list[Row]], edit: Edit) -> None:
    found = rules_after(base(), edit)
    assert rule in found, (case, found)


# Allowed variants (the rule permits them): each edit must stay valid.
VARIANTS: list[tuple[str, Callable[[], list[Row]], Edit]] = [
    # LOG-9: trigger kind "injection" is allowed; tool/result may carry error and meta.
    ("injection-trigger", B, _set(23, "trigger", {"kind": "injection", "source": {"kind": "plugin", "plugin": "x"}})),
    ("result-error-and-meta", B, _both(_set(37, "isError", True), _set(37, "error", {"name": "E", "code": "X"}),
                                       _set(37, "meta", {"k": 1}))),
    # LOG-11 / LOOP-11: a max-tokens finish with no tool calls ends the turn max-tokens.
    ("max-tokens-turn", B, _both(_set(52, "chunk", {"type": "finish", "reason": {"kind": "max-tokens"}}),
                                 _set(55, "reason", {"kind": "max-tokens"}))),
    # LOG-11: error {kind, step, failure} after a failed step (LOOP-14's fail path).
    ("failed-step-then-error", B, _both(
        _set(19, "chunk", {"type": "finish", "reason": {"kind": "error", "failure": FAIL}}), _replace_with_plugin_event(20),
        _set(22, "reason", {"kind": "error", "step": 1, "failure": FAIL}))),
    # LOG-12: prompt meta is durable data.
    ("prompt-meta", B, _set(1, "meta", {"rpcId": 7})),
    # HDR-2: absent tools are canonical.
    ("header-without-tools", B, lambda rows: rows[3]["data"]["header"].pop("tools") and None),
]


@pytest.mark.parametrize(("case", "base", "edit"), VARIANTS, ids=[c for c, _, _ in VARIANTS])
def test_allowed_variant_stays_valid(case: str, base: Callable[[], list[Row]], edit: Edit) -> None:
    rows = base()
    out = edit(rows)
    report = check(out if out is not None else rows)
    assert report.verdict is Verdict.VALID, (case, [f.text(case) for f in report.findings])


# --------------------------------------------------------------------------- LOOP-4 (prompt-prefix contexts)


def _baked(rows: list[Row]) -> None:
    """The first prompt of B written as the loop writes it with one prompt-prefix context (LOOP-4)."""
    from sessionspec.model.jsonval import freeze, thaw

    content, context = freeze(rows[1]["data"]["content"]), freeze([{"type": "text", "text": "<ctx>"}])
    assert isinstance(content, tuple) and isinstance(context, tuple)
    prompt = Prompt(content=content, source=freeze(rows[1]["data"]["source"]),
                    contexts=(PromptContext(content=context, source=freeze({"kind": "plugin", "plugin": "ctx"}),
                                            placement=Placement.PROMPT_PREFIX),))
    rows[1]["data"] = thaw(prompt_message_data(prompt))


def test_loop_writes_prompt_prefix_contexts_validly() -> None:
    rows = B()
    _baked(rows)
    assert rows[1]["data"]["envelope"]["prefixContexts"], rows[1]
    report = check(rows)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


@pytest.mark.parametrize("case", ["no-delimiter", "no-contexts", "display-differs"])
def test_prefix_context_without_its_block_is_loop_4(case: str) -> None:
    """LOOP-4: content = context blocks, the delimiter block, then displayContent."""
    rows = B()
    _baked(rows)
    data = rows[1]["data"]
    if case == "no-delimiter":
        data["content"] = [b for b in data["content"] if b.get("text") != "\n\n## My request:\n"]
    elif case == "no-contexts":
        data["envelope"]["prefixContexts"] = []
    else:
        data["envelope"]["displayContent"] = [{"type": "text", "text": "something else"}]
    assert "LOOP-4" in rules(check(rows))


# --------------------------------------------------------------------------- LOOP-13 (steering)


def test_steering_naming_the_wrong_turn_is_loop_13() -> None:
    rows = gt("m-steering-empty-assistant-reasoning")
    at = index(rows, "steering/message")
    assert "LOOP-13" in rules_after(rows, _set(at, "turn", rows[at]["data"]["turn"] + 1))


# --------------------------------------------------------------------------- LOOP-12 (parallel results)


def test_parallel_results_out_of_model_order_are_loop_12() -> None:
    """Results keep model order: swap the two results of a parallel batch (seqs stay in order)."""
    rows = load(A55_SNAPSHOTS / "parallel-tool-calls" / "session.jsonl")
    first = index(rows, "tool/result")
    second = next(i for i in range(first + 1, len(rows)) if rows[i]["type"] == "tool/result")
    order = list(range(len(rows) - 1))
    order[first - 1], order[second - 1] = order[second - 1], order[first - 1]
    assert rows[first]["data"]["step"] == rows[second]["data"]["step"]
    assert "LOOP-12" in rules_after(rows, lambda r: permute(r, order))


# --------------------------------------------------------------------------- LOG-14 and LOOP-9 (crash repair)


def _crashed(upto: int) -> list[Row]:
    """B cut after seq ``upto`` (turn 2 open), closed by the model's LOG-14 closers."""
    rows = B()[: upto + 1]
    return rows + events_to_rows(repair_closers(rows_to_events(rows)))


def _next_turn(rows: list[Row], *, anchor: str | None) -> list[Row]:
    """Turn 1 of B replayed as turn 3 after ``rows``: a new loop instance, whose
    header (``anchor``: the reason, or None for no header) is its anchor."""
    offset = rows[-1]["seq"] + 1
    turn = [copy.deepcopy(r) for r in B()[:23]]
    out = list(rows)
    for r in turn:
        if r["type"] == "request/header":
            if anchor is None:
                r = {"type": "test/note", "seq": r["seq"], "time": r["time"], "data": {}}
            else:
                r["data"]["reason"] = anchor
        r["seq"] += offset
        if "sourceEventSeqs" in r:
            r["sourceEventSeqs"] = [s + offset for s in r["sourceEventSeqs"]]
        if "turn" in r["data"]:
            r["data"]["turn"] = 3
        out.append(r)
    return out


def test_repaired_logs_stay_valid() -> None:
    """LOG-14 variants: a started call (TOOL_OUTCOME_UNKNOWN citing [callSeq]) and an unstarted one (TOOL_NOT_STARTED)."""
    for upto in (36, 35, 33):
        rows = _crashed(upto)
        assert rows[-1]["data"]["reason"] == {"kind": "interrupted"}
        report = check(rows)
        assert report.verdict is Verdict.VALID, (upto, [f.text("x") for f in report.findings])
        report = check(_next_turn(rows, anchor="resume"))
        assert report.verdict is Verdict.VALID, (upto, [f.text("x") for f in report.findings])


@pytest.mark.parametrize("case", ["not-started-for-started", "unknown-for-unstarted", "time", "text", "provenance"])
def test_wrong_repair_closers_are_log_14(case: str) -> None:
    rows = _crashed(36 if case != "unknown-for-unstarted" else 35)
    result = next(r for r in rows if r["type"] == "tool/result" and r["data"].get("error"))
    if case == "not-started-for-started":
        result["data"]["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    elif case == "unknown-for-unstarted":
        result["data"]["error"] = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    elif case == "time":
        result["time"] += 5
    elif case == "provenance":
        result.pop("sourceEventSeqs")
    else:
        result["data"]["content"] = [{"type": "text", "text": "it broke"}]
    assert "LOG-14" in rules(check(rows)), case


def test_request_without_anchor_after_a_crash_repair_is_loop_9() -> None:
    """LOOP-9: after turn/end {interrupted} a new instance runs; its first request follows its resume anchor."""
    rows = _next_turn(_crashed(36), anchor=None)
    assert "LOOP-9" in rules(check(rows))


# --------------------------------------------------------------------------- compaction (CMP-1, CMP-6, CMP-12, CMP-19, CMP-23)


def J1() -> list[Row]:
    """j1 up to the step/end after its first compaction, then the turn's end
    (so a corrupted first range has no knock-on effect on the second)."""
    rows = gt("j1-pressure-compaction")
    cut = index(rows, "compact/end") + 1
    assert rows[cut]["type"] == "step/end"
    return rows[: cut + 1] + [{"type": "turn/end", "seq": cut + 1, "time": rows[cut]["time"], "data": {"turn": 1, "reason": {"kind": "completed"}}}]


def _summary_edit(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Edit:
    def edit(rows: list[Row]) -> None:
        at = index(rows, "compact/summary")
        rows[at]["data"] = change(rows[at]["data"])

    return edit


def _rerange(start: int, shadowed: list[int]) -> Edit:
    """Make the first compaction of J1 shadow ``shadowed`` from ``start`` (summary and checkpoint agree)."""

    def edit(rows: list[Row]) -> None:
        at = index(rows, "compact/summary")
        rows[at]["data"]["shadowedRange"] = {"start": start, "end": shadowed[-1]}
        rows[at]["data"]["shadowedSeqs"] = shadowed
        checkpoint = rows[at + 1]
        checkpoint["surfaceOp"] = {"op": "replace", "start": start, "end": shadowed[-1]}
        checkpoint["sourceEventSeqs"] = checkpoint["sourceEventSeqs"][:2] + shadowed

    return edit


def _step_end_before_bracket(rows: list[Row]) -> list[Row]:
    start = index(rows, "compact/start")
    step_end = start + 4
    assert rows[step_end]["type"] == "step/end"
    return permute(rows, [*range(start), step_end, *range(start, step_end), *range(step_end + 1, len(rows))])


COMPACTION: list[tuple[str, str, Edit]] = [
    # CMP-1: compact/summary {summary, shadowedRange, shadowedSeqs, shadowedTokenCount, provider, model, maxTokens?}, in order.
    ("CMP-1", "summary-without-provider", _summary_edit(lambda d: {k: v for k, v in d.items() if k != "provider"})),
    ("CMP-1", "summary-keys-out-of-order", _summary_edit(lambda d: dict(reversed(list(d.items()))))),
    # CMP-6: pressure runs in post-step, before step/end.
    ("CMP-6", "bracket-after-step-end", _step_end_before_bracket),
    # CMP-12: head-anchored; CMP-11: at least one node retained.
    ("CMP-12", "not-head-anchored", _rerange(13, [13, 15, 27, 29])),
    ("CMP-12", "whole-surface", _rerange(1, [1, 13, 15, 27, 29, 41, 43, 55, 57])),
    # CMP-23: a failed bracket leaves the surface unchanged (no checkpoint before an error end).
    ("CMP-23", "error-end-after-checkpoint", lambda rows: rows[index(rows, "compact/end")]["data"].update(error="boom")),
]


@pytest.mark.parametrize(("rule", "case", "edit"), COMPACTION, ids=[f"{r}-{c}" for r, c, _ in COMPACTION])
def test_compaction_corruption_names_its_rule(rule: str, case: str, edit: Edit) -> None:
    found = rules_after(J1(), edit)
    assert rule in found, (case, found)


def test_surface_append_during_summarization_is_cmp_19() -> None:
    """CMP-19: a surface append between compact/start and the commit makes the commit fail."""
    rows = J1()
    start = index(rows, "compact/start")
    note = {"type": "user/message", "time": 0, "data": {"content": [{"type": "text", "text": "late"}], "source": {"kind": "user"}},
            "surfaceOp": "append"}
    assert "CMP-19" in rules_after(rows, lambda r: renumber_insert(r, start + 1, note))


def test_log_only_append_during_summarization_stays_valid() -> None:
    """CMP-19 tolerates log-only appends while the surface is stable."""
    rows = J1()
    start = index(rows, "compact/start")
    out = renumber_insert(rows, start + 1, {"type": "session/title", "time": 0, "data": {"title": "t", "messageSeqs": [], "source": {"kind": "fallback"}}})
    report = check(out)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


# --------------------------------------------------------------------------- D08 (the same rules on the later dialect)


def _d08(name: str) -> Callable[[], list[Row]]:
    return lambda: load(D08_SNAPSHOTS / name / "session.jsonl")


def _first(type_name: str, change: Callable[[Row], None]) -> Edit:
    def edit(rows: list[Row]) -> None:
        change(rows[index(rows, type_name)])

    return edit


def _d08_bracket_after_message(rows: list[Row]) -> list[Row]:
    """compaction-recovery: move the bracket after the retry's assistant message (still inside step 2)."""
    start = index(rows, "compaction/start")
    message = index(rows, "assistant/message", 1)
    body = list(range(start, start + 4))
    rest = [i for i in range(1, len(rows)) if i not in body]
    order = []
    for i in rest:
        order.append(i)
        if i == message:
            order.extend(body)
    return permute(rows, [i - 1 for i in order])


D08: list[tuple[str, str, Callable[[], list[Row]], Edit]] = [
    ("LOG-9", "arguments-object", _d08("tool-call-turn"), _first("tool/call", lambda r: r["data"].update(arguments={}))),
    ("LOOP-11", "provenance-model", _d08("tool-call-turn"), _first("assistant/message", lambda r: r["data"]["message"]["source"].update(model="x"))),
    ("LOOP-11", "sourceEventSeqs-absent", _d08("text-turn"), _first("assistant/message", lambda r: r.pop("sourceEventSeqs") and None)),
    ("LOOP-12", "call-name", _d08("tool-call-turn"), _first("tool/call", lambda r: r["data"].update(name="other"))),
    ("SURF-13", "result-cites-message", _d08("tool-call-turn"), lambda rows: rows[index(rows, "tool/result")].update(
        sourceEventSeqs=[rows[index(rows, "assistant/message")]["seq"]])),
    ("HDR-2", "empty-tools", _d08("text-turn"), _first("request/header", lambda r: r["data"]["header"].update(tools=[]))),
    # DIA-8: the D08 header is {config, adapterDefaults?, system?, tools?}; adapterDefaults an object, in its place.
    ("DIA-8", "adapterDefaults-not-an-object", _d08("text-turn"), _first("request/header", lambda r: r["data"]["header"].update(
        adapterDefaults="yes"))),
    ("HDR-2", "adapterDefaults-after-tools", _d08("text-turn"), _first("request/header", lambda r: r["data"]["header"].update(
        adapterDefaults={"maxTokens": True}))),
    ("DIA-4", "summary-keys-out-of-order", lambda: load(D08_HEADLESS / "compaction-recovery" / "session.jsonl"),
     _first("compaction/summary", lambda r: r.update(data=dict(reversed(list(r["data"].items())))))),
    ("DIA-6", "bracket-after-message", lambda: load(D08_HEADLESS / "compaction-recovery" / "session.jsonl"), _d08_bracket_after_message),
]


@pytest.mark.parametrize(("rule", "case", "base", "edit"), D08, ids=[f"{r}-{c}" for r, c, _, _ in D08])
def test_d08_corruption_names_its_rule(rule: str, case: str, base: Callable[[], list[Row]], edit: Edit) -> None:
    rows = base()
    assert check(rows).dialect is not None and check(rows).dialect.name == "D08"  # type: ignore[union-attr]
    found = rules_after(rows, edit)
    assert rule in found, (case, found)


# --------------------------------------------------------------------------- LOOP-5, LOOP-12 callId, LOOP-16, DIA-15, CMP-7

STEER = {"type": "steering/message", "time": 0,
         "data": {"turn": 2, "content": [{"type": "text", "text": "also"}], "source": {"kind": "plugin", "plugin": "goal"}},
         "surfaceOp": "append"}


def test_steering_inside_a_step_before_its_message_is_loop_5() -> None:
    """LOOP-5/LOOP-13: the drain runs before assembly (before step/start) or after the stream and tools."""
    assert "LOOP-5" in rules_after(B(), lambda rows: renumber_insert(rows, 26, copy.deepcopy(STEER)))


def test_steering_after_the_tools_stays_valid() -> None:
    """The post-stream drain: after the step's message and its tool results, before step/end."""
    report = check(renumber_insert(B(), 38, copy.deepcopy(STEER)))
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


def test_tool_call_id_differing_from_its_block_is_loop_12() -> None:
    assert "LOOP-12" in rules_after(B(), _set(36, "callId", "call-2"))


@pytest.mark.parametrize(("step", "valid"), [(2, True), (3, True), (5, False), (0, False)])
def test_error_turn_end_names_the_step_counter(step: int, valid: bool) -> None:
    """LOOP-16: step = the current step counter: the last started step (2), or the pending next one (3, quirk Q-4)."""
    rows = B()
    rows[55]["data"]["reason"] = {"kind": "error", "step": step, "message": "boom"}
    found = rules(check(rows))
    assert ("LOOP-16" not in found) is valid, found
    if valid:
        assert check(rows).verdict is Verdict.VALID


def test_interrupted_message_with_tool_calls_is_dia_15() -> None:
    """DIA-15: a cancelled stream keeps its text/reasoning prefix only, no tool calls."""
    rows = load(D08_SNAPSHOTS / "cancel" / "session.jsonl")
    at = next(i for i, r in enumerate(rows) if r.get("type") == "assistant/message" and r["data"].get("interrupted"))
    block = {"type": "tool-call", "id": "c9", "name": "read", "arguments": "{}"}
    assert "DIA-15" in rules_after(rows, lambda r: r[at]["data"]["message"]["content"].append(block))


@pytest.mark.parametrize(("code", "rule"), [("SERVER", "CMP-7"), ("CONTEXT_WINDOW_EXCEEDED", None)])
def test_overflow_bracket_needs_a_context_window_failure(code: str, rule: str | None) -> None:
    """CMP-7: overflow recovery runs "only if failure.code == CONTEXT_WINDOW_EXCEEDED" (j3's failed step, its failure logged)."""
    rows = gt("j3-overflow-compaction-retry")
    step_end = index(rows, "step/end", 1)
    finish = {"type": "assistant/chunk", "time": 0,
              "data": {"turn": 2, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"message": "x", "code": code}}}}}
    report = check(renumber_insert(rows, step_end, finish))
    if rule is None:
        assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]
    else:
        assert rule in rules(report)


# --------------------------------------------------------------------------- more compaction writers (CMP-2, CMP-5, CMP-20, DIA-2, PRN-3/4)


def _checkpoint(rows: list[Row]) -> Row:
    return rows[index(rows, "compact/summary") + 1]


@pytest.mark.parametrize(("rule", "change"), [
    # CMP-2: the checkpoint source is exactly {kind:"plugin", plugin:"compact"}.
    ("CMP-2", lambda r: _checkpoint(r)["data"]["source"].update(extra=1)),
    # CMP-20: the checkpoint content is the framed summary.
    ("CMP-20", lambda r: _checkpoint(r)["data"]["content"].pop()),
])
def test_checkpoint_corruption_names_its_rule(rule: str, change: Callable[[list[Row]], object]) -> None:
    def edit(rows: list[Row]) -> None:
        change(rows)  # in place (the lambdas' values are not rows)

    assert rule in rules_after(J1(), edit)


def test_automatic_compaction_without_a_routed_header_is_cmp_5() -> None:
    """CMP-5: with no header, compactIfNeeded returns "no compaction" without events."""
    rows = J1()
    header = index(rows, "request/header")
    rows[header] = {"type": "test/note", "seq": rows[header]["seq"], "time": 0, "data": {}}
    found = rules(check(rows))
    assert "CMP-5" in found, found


def test_d08_checkpoint_source_keys_are_dia_2() -> None:
    """DIA-2: the D08 checkpoint source is {kind, plugin, compactionId, sourceCommandId?} in this order."""
    rows = load(D08_HEADLESS / "compaction-recovery" / "session.jsonl")
    at = index(rows, "compaction/summary") + 1
    source = rows[at]["data"]["source"]
    assert "DIA-2" in rules_after(rows, lambda r: r[at]["data"].update(source=dict(reversed(list(source.items())))))


@pytest.mark.parametrize(("rule", "change"), [
    # PRN-4: a prune replacement cites [originalSeq] (an extra earlier seq still satisfies SURF-6).
    ("PRN-4", lambda row: row.update(sourceEventSeqs=[*row["sourceEventSeqs"], 0])),
    # PRN-3: the pruned content is pruneContent of the original.
    ("PRN-3", lambda row: row["data"]["content"][0].update(text="short")),
])
def test_prune_corruption_names_its_rule(rule: str, change: Callable[[Row], None]) -> None:
    rows = gt("j2-tool-result-prune")
    at = next(i for i, r in enumerate(rows) if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))
    found = rules_after(rows, lambda r: change(r[at]))
    assert rule in found, found


def _d08_pruned(with_record: bool) -> list[Row]:
    """D08 tool-call-turn with a long tool result pruned before step 2 (DIA-6 pre-step), as DIA-18 writes it."""
    from sessionspec.model.jsonval import JsonObject, freeze, thaw
    from sessionspec.model.prune import prune_content, resolve_prune_config

    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    at = index(rows, "tool/result")
    seq = rows[at]["seq"]
    block = rows[at]["data"]["message"]["content"][0]
    block["content"] = [{"type": "text", "text": "H" * 5000 + "T" * 5000}]
    config = resolve_prune_config(JsonObject())
    pruned = prune_content(freeze(block["content"]), config)  # type: ignore[arg-type]
    assert isinstance(pruned, tuple)
    replacement = copy.deepcopy(rows[at])
    replacement["data"]["message"]["content"][0]["content"] = thaw(pruned)
    replacement["sourceEventSeqs"] = [seq]
    replacement["surfaceOp"] = {"op": "replace", "start": seq, "end": seq}
    record = {"type": "compaction/prune", "time": 0,
              "data": {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq], "shadowedTokenCount": 2520}}
    step2 = index(rows, "step/start", 1)
    out = renumber_insert(rows, step2, replacement)
    if with_record:
        out = renumber_insert(out, step2, record)
    return out


def test_d08_prune_with_its_record_is_valid_and_without_is_dia_18() -> None:
    """DIA-18: the prune appends compaction/prune immediately before each replacement."""
    report = check(_d08_pruned(True))
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]
    assert "DIA-18" in rules(check(_d08_pruned(False)))


# --------------------------------------------------------------------------- D08 shapes of the kept rules (LOG-9, LOG-10, LOG-11, DIA-9)


@pytest.mark.parametrize(("rule", "edit"), [
    # LOG-11 holds in D08 except the aborted shape (DIA-14): an unknown kind.
    ("LOG-11", _first("turn/end", lambda r: r["data"].update(reason={"kind": "finished"}))),
    # DIA-9: request/context {provider, model, contextWindow?}.
    ("DIA-9", _first("request/context", lambda r: r["data"].pop("provider") and None)),
    # LOG-10: session/title {title, messageSeqs, source}.
    ("LOG-10", _first("session/title", lambda r: r["data"].pop("title") and None)),
    # LOG-9: a MessageSource has a kind.
    ("LOG-9", _first("user/message", lambda r: r["data"]["source"].pop("kind") and None)),
])
def test_d08_kept_shapes(rule: str, edit: Edit) -> None:
    found = rules_after(load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl"), edit)
    assert rule in found, found


# --------------------------------------------------------------------------- LOG-16, CMP-7 retry, PRN-5


def _out_of_band_turn(events: list[Row]) -> Edit:
    """B followed by turn 3 holding ``events`` and ending completed (LOG-16's out-of-band shape)."""

    def edit(rows: list[Row]) -> list[Row]:
        out = list(rows)
        out.append({"type": "turn/start", "seq": len(out), "time": 0, "data": {"turn": 3, "trigger": {"kind": "injection", "source": {"kind": "plugin", "plugin": "x"}}}})
        for e in events:
            out.append(dict(copy.deepcopy(e), seq=len(out)))
        out.append({"type": "turn/end", "seq": len(out), "time": 0, "data": {"turn": 3, "reason": {"kind": "completed"}}})
        return out

    return edit


NOTE = {"type": "todo/write", "time": 0, "data": {"todos": [{"content": "x", "status": "pending"}]}}
PROMPT = {"type": "user/message", "time": 0, "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, "surfaceOp": "append"}


def test_out_of_band_turn_is_valid() -> None:
    """LOG-16: with no turn open, turn/start, the event, turn/end completed."""
    rows = _out_of_band_turn([NOTE])(B())
    assert rows is not None
    report = check(rows)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


@pytest.mark.parametrize("events", [[NOTE, NOTE], [], [PROMPT]], ids=["two-events", "empty", "a-prompt-without-a-step"])
def test_stepless_completed_turn_that_is_not_out_of_band_is_log_16(events: list[Row]) -> None:
    assert "LOG-16" in rules_after(B(), _out_of_band_turn(events))


def test_committed_overflow_compaction_without_retry_is_cmp_7() -> None:
    """CMP-7: recovery "returns retry iff not aborted and replaceGeneration > g0"."""
    rows = gt("j3-overflow-compaction-retry")
    end = index(rows, "compact/end")

    def edit(r: list[Row]) -> list[Row]:
        return [*r[: end + 1], {"type": "turn/end", "seq": end + 1, "time": 0,
                                "data": {"turn": 2, "reason": {"kind": "error", "step": 1, "failure": {"message": "x", "code": "CONTEXT_WINDOW_EXCEEDED"}}}}]

    assert "CMP-7" in rules_after(rows, edit)
    aborted = edit(copy.deepcopy(rows))
    aborted[-1]["data"]["reason"] = {"kind": "aborted"}
    assert check(aborted).verdict is Verdict.VALID, [f.text("x") for f in check(aborted).findings]


def test_second_prune_of_a_pruned_result_is_named() -> None:
    """PRN-5: a second pass prunes nothing, so a prune of a pruned node is not pruneContent of it (PRN-3)."""
    rows = gt("j2-tool-result-prune")
    at = next(i for i, r in enumerate(rows) if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))
    again = copy.deepcopy(rows[at])
    seq = rows[at]["seq"]
    again["surfaceOp"] = {"op": "replace", "start": seq, "end": seq}
    again["sourceEventSeqs"] = [seq]
    assert "PRN-3" in rules_after(rows, lambda r: renumber_insert(r, at + 1, again))


# --------------------------------------------------------------------------- CMP-9 / DIA-20 (ranges selected with retainTokens 0)


def _overflow_range(end: int, shadowed: list[int], summary_type: str = "compact/summary") -> Edit:
    def edit(rows: list[Row]) -> None:
        at = index(rows, summary_type)
        start = rows[at]["data"]["shadowedRange"]["start"]
        rows[at]["data"]["shadowedRange"] = {"start": start, "end": end}
        rows[at]["data"]["shadowedSeqs"] = shadowed
        checkpoint = rows[at + 1]
        checkpoint["surfaceOp"] = {"op": "replace", "start": start, "end": end}
        checkpoint["sourceEventSeqs"] = checkpoint["sourceEventSeqs"][:2] + shadowed

    return edit


def test_overflow_range_shorter_than_zero_retention_is_cmp_9() -> None:
    """CMP-9: overflow selects with retainTokens 0, so j3's range over [1, 9] (surface [1, 9, 13], all cuts
    balanced) ends at 9, the node before the last node; a range ending at 1 is not the walk's."""
    assert "CMP-9" in rules_after(gt("j3-overflow-compaction-retry"), _overflow_range(1, [1]))


def test_d08_overflow_range_is_the_zero_retention_range() -> None:
    """CMP-9 in D08 (the in-step overflow retry, DIA-7): compaction-recovery shadows [4]; the cut after the
    tool call (before its result) is unbalanced, so the walk rounds back to the cut after 4."""
    rows = load(D08_HEADLESS / "compaction-recovery" / "session.jsonl")
    call = rows[index(rows, "assistant/message")]["seq"]
    found = rules_after(rows, _overflow_range(call, [4, call], "compaction/summary"))
    assert "CMP-9" in found, found


def test_d08_manual_compaction_range_is_dia_20() -> None:
    """DIA-20: a manual compaction (owner null, between turns) selects with retainTokens 0.  compaction-recovery's
    bracket moved after its turn, as a manual one: the surface is then [4, call, result, answer], whose last
    balanced cut before the answer is after the result, so the range [4..4] is not the walk's."""
    rows = load(D08_HEADLESS / "compaction-recovery" / "session.jsonl")
    start = index(rows, "compaction/start")

    def edit(r: list[Row]) -> list[Row]:
        order = [i - 1 for i in range(1, len(r)) if not start <= i < start + 4] + [i - 1 for i in range(start, start + 4)]
        out = permute(r, order)
        for row in out[-4:]:
            if "turn" in row["data"]:
                row["data"]["turn"] = None
        return out

    found = rules_after(rows, edit)
    assert "DIA-20" in found, found


# --------------------------------------------------------------------------- found by structural sweeps (drops and swaps)


def test_successful_stream_without_its_message_then_a_step_is_loop_11() -> None:
    """LOOP-11: a successful stream appends its message; only the interruption checkpoint after the stream stops it."""
    rows = gt("m-steering-empty-assistant-reasoning")
    at = index(rows, "assistant/message", 1)
    order = [i for i in range(len(rows)) if i != at]
    assert "LOOP-11" in rules_after(rows, lambda r: permute(r, order))


def test_successful_stream_without_message_then_aborted_stays_valid() -> None:
    rows = B()
    out = permute(rows, [*range(20), *range(21, 23)])  # turn 1 without its message, then turn/end
    out[-1]["data"]["reason"] = {"kind": "aborted"}
    report = check(out)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


def _without(type_name: str, nth: int = 0) -> Edit:
    def edit(rows: list[Row]) -> list[Row]:
        at = index(rows, type_name, nth)
        return permute(rows, [i for i in range(len(rows)) if i != at])

    return edit


def _swap_next(type_name: str) -> Edit:
    def edit(rows: list[Row]) -> list[Row]:
        at = index(rows, type_name)
        order = list(range(len(rows)))
        order[at], order[at + 1] = order[at + 1], order[at]
        return permute(rows, order)

    return edit


@pytest.mark.parametrize(("rule", "scenario", "edit"), [
    # CMP-22: a committed compaction appends compact/end before the loop goes on.
    ("CMP-22", "j1-pressure-compaction", _without("compact/end")),
    # CMP-6: the pressure bracket lies before its step's step/end.
    ("CMP-6", "j1-pressure-compaction", _swap_next("compact/end")),
    # CMP-22: the overflow bracket closes before the retry's step/start.
    ("CMP-22", "j3-overflow-compaction-retry", _swap_next("compact/end")),
], ids=["end-missing", "end-after-step-end", "end-after-retry-start"])
def test_bracket_left_open_is_named(rule: str, scenario: str, edit: Edit) -> None:
    found = rules_after(gt(scenario), edit)
    assert rule in found, found


def test_bracket_left_open_by_a_failed_error_end_then_turn_error_stays_valid() -> None:
    """Q-12 / CMP-23: when even the error end cannot be appended the start stays open; the turn then fails."""
    rows = _without("compact/end")(J1())
    assert rows is not None
    rows[-1]["data"]["reason"] = {"kind": "error", "step": 4, "message": "compact/end append failed"}
    report = check(rows)
    assert report.verdict is Verdict.VALID, [f.text("x") for f in report.findings]


def test_d08_user_message_after_dispatch_is_dia_12() -> None:
    """DIA-12: step/start, the entering user/messages, the header, then dispatch (the first chunk)."""
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    first_chunk = index(rows, "assistant/chunk")
    late = {"type": "user/message", "time": 0, "surfaceOp": "append",
            "data": {"content": [{"type": "text", "text": "late"}], "source": {"kind": "user"}, "role": "user", "id": "late-1"}}
    assert "DIA-12" in rules_after(rows, lambda r: renumber_insert(r, first_chunk + 1, late))
