"""Mutation tests: one targeted corruption of a valid real log, and the checker
names the rule it breaks (one test per rule area).

The logs are ground-truth and corpus logs that the checker finds valid
(tests/check/test_check_real.py); each test first asserts the unmutated log is valid,
so a mutation test cannot pass vacuously.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest

from sessionspec.check.checker import FileReport, Verdict, check_log, check_path
from sessionspec.check.logfile import read_stream
from sessionspec.model.log import Dialect
from tests.support import A55_SNAPSHOTS, D08_SNAPSHOTS, GROUNDTRUTH, REAL, Row, gt, load, text


def _check(rows: list[Row] | bytes) -> FileReport:
    data = rows if isinstance(rows, bytes) else text(rows)
    return check_log(read_stream(io.BytesIO(data), "mutant.jsonl"))


def _rules(report: FileReport) -> set[str]:
    return {f.rule for f in report.findings}


def _index(rows: list[Row], type_name: str, nth: int = 0, **data: Any) -> int:
    hits = [i for i, r in enumerate(rows) if r.get("type") == type_name and all(r["data"].get(k) == v for k, v in data.items())]
    return hits[nth]


def _drop(rows: list[Row], index: int) -> list[Row]:
    """Remove one event and renumber the later ones, keeping every seq
    reference (sourceEventSeqs, replace ranges) pointing at the same event."""
    gone = rows[index]["seq"]
    out: list[Row] = []

    def shift(s: int) -> int:
        return s - 1 if s > gone else s

    for i, row in enumerate(rows):
        if i == index:
            continue
        row = copy.deepcopy(row)
        if "seq" in row:
            row["seq"] = shift(row["seq"])
        if "sourceEventSeqs" in row:
            row["sourceEventSeqs"] = [shift(s) for s in row["sourceEventSeqs"] if s != gone] or row["sourceEventSeqs"][:0]
            if not row["sourceEventSeqs"]:
                del row["sourceEventSeqs"]
        op = row.get("surfaceOp")
        if isinstance(op, dict):
            op["start"], op["end"] = shift(op["start"]), shift(op["end"])
        out.append(row)
    return out


def _assert_valid(rows: list[Row]) -> None:
    report = _check(rows)
    assert report.verdict is Verdict.VALID, [f.text("base") for f in report.findings]


# --------------------------------------------------------------------------- LOG


def test_LOOP_12_drop_a_tool_result() -> None:
    """The companion's step/end clears the pending calls (invariant.ts lines 107-112 at a55f148516):
    an unanswered call is the loop's pairing (LOOP-12), which the loader accepts."""
    rows = gt("b-prefix-idioms-tool-roundtrip")
    _assert_valid(rows)
    report = _check(_drop(rows, _index(rows, "tool/result")))
    assert report.verdict is Verdict.INVALID and "LOOP-12" in _rules(report) and report.loader() == "accepts"


def test_LOG_13_drop_a_tool_call() -> None:
    rows = gt("b-prefix-idioms-tool-roundtrip")
    report = _check(_drop(rows, _index(rows, "tool/call")))
    assert "LOG-13" in _rules(report)


def test_LOG_13_move_a_step_start_after_its_first_chunk() -> None:
    rows = gt("a-single-turn-no-prefix")
    _assert_valid(rows)
    start = _index(rows, "step/start")
    chunk = _index(rows, "assistant/chunk")
    moved = copy.deepcopy(rows)
    moved.insert(chunk, moved.pop(start))
    for seq, row in enumerate(moved):
        row["seq"] = seq
    report = _check(moved)
    assert "LOG-13" in _rules(report)


def test_LOG_1_duplicate_a_seq() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[5]["seq"] = rows[4]["seq"]
    report = _check(rows)
    assert report.verdict is Verdict.INVALID and {"LOG-1", "LOG-13"} <= _rules(report)


def test_LOG_13_wrong_turn_number() -> None:
    rows = gt("g-header-change-system-and-tools")
    _assert_valid(rows)
    rows[_index(rows, "turn/start", 1)]["data"]["turn"] = 7
    assert "LOG-13" in _rules(_check(rows))


def test_LEG_4_reason_bearing_aborted_in_a55() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[_index(rows, "turn/end")]["data"]["reason"] = {"kind": "aborted", "reason": {"kind": "user"}}
    assert "LEG-4" in _rules(_check(rows))


def test_LOG_4_textual_minus_zero() -> None:
    rows = gt("a-single-turn-no-prefix")
    data = text(rows).replace(b'"time":', b'"time":-0,"x":', 1)
    report = _check(data)
    assert "LOG-4" in _rules(report) and report.verdict is Verdict.INVALID


# --------------------------------------------------------------------------- SURF


def test_SURF_5_break_a_replace_range() -> None:
    rows = gt("j2-tool-result-prune")
    _assert_valid(rows)
    replace = next(r for r in rows if isinstance(r.get("surfaceOp"), dict))
    replace["surfaceOp"]["start"] = replace["seq"] - 1000 if replace["seq"] > 1000 else 10**6
    assert "SURF-5" in _rules(_check(rows))


def test_SURF_7_change_a_pruned_results_call_id() -> None:
    rows = gt("j2-tool-result-prune")
    replace = next(r for r in rows if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))
    replace["data"]["callId"] = "another-call"
    assert "SURF-7" in _rules(_check(rows))


def test_SURF_2_surface_op_on_a_log_only_event() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[_index(rows, "step/start")]["surfaceOp"] = "append"
    assert "SURF-2" in _rules(_check(rows))


# --------------------------------------------------------------------------- HDR / FMT-9 / PFX


def test_PFX_15_alter_message_prefix_on_a_change_header() -> None:
    rows = gt("g-header-change-system-and-tools")
    change = rows[_index(rows, "request/header", reason="change")]
    prefix = change["data"]["header"].get("messagePrefix")
    altered = [{"role": "user", "content": [{"type": "text", "text": "a different opener"}]}]
    change["data"]["header"]["messagePrefix"] = altered if prefix != altered else []
    assert "PFX-15" in _rules(_check(rows))


def test_FMT_9_change_header_without_a_difference() -> None:
    rows = gt("g-header-change-system-and-tools")
    first_change = _index(rows, "request/header", reason="change")
    previous = max(i for i in range(first_change) if rows[i]["type"] == "request/header")
    rows[first_change]["data"]["header"] = copy.deepcopy(rows[previous]["data"]["header"])
    report = _check(rows)
    assert any(f.rule == "FMT-9" and "equal to the header in force" in f.reason for f in report.findings)


def test_FMT_9_second_initial_header() -> None:
    rows = gt("h1-resume-no-drift")
    _assert_valid(rows)
    rows[_index(rows, "request/header", reason="resume")]["data"]["reason"] = "initial"
    assert "FMT-9" in _rules(_check(rows))


def test_FMT_9_drop_the_only_header() -> None:
    rows = gt("a-single-turn-no-prefix")
    report = _check(_drop(rows, _index(rows, "request/header")))
    assert any(f.rule == "FMT-9" and "no request/header in force" in f.reason for f in report.findings)


def test_FMT_9_move_the_header_before_step_start() -> None:
    rows = gt("a-single-turn-no-prefix")
    header = _index(rows, "request/header")
    start = _index(rows, "step/start")
    moved = copy.deepcopy(rows)
    moved.insert(start, moved.pop(header))
    for seq, row in enumerate(moved):
        row["seq"] = seq
    assert "FMT-9" in _rules(_check(moved))


def test_LEG_2_fallback_reason() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[_index(rows, "request/header")]["data"]["reason"] = "fallback"
    assert "LEG-2" in _rules(_check(rows))


def test_HDR_8_header_without_provider() -> None:
    rows = gt("a-single-turn-no-prefix")
    del rows[_index(rows, "request/header")]["data"]["header"]["config"]["provider"]
    assert "HDR-8" in _rules(_check(rows))


def test_LEG_1_header_delta() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[_index(rows, "request/header")]["type"] = "request/header-delta"
    assert "LEG-1" in _rules(_check(rows))


# --------------------------------------------------------------------------- compaction


def test_CMP_shrink_a_compaction_range() -> None:
    rows = gt("j1-pressure-compaction")
    _assert_valid(rows)
    summary = rows[_index(rows, "compact/summary")]
    summary["data"]["shadowedRange"]["end"] = summary["data"]["shadowedSeqs"][-2]
    summary["data"]["shadowedSeqs"] = summary["data"]["shadowedSeqs"][:-1]
    report = _check(rows)
    assert report.verdict is Verdict.INVALID and "CMP-22" in _rules(report)


def test_SURF_6_shrink_a_checkpoint_replace_range() -> None:
    rows = gt("j1-pressure-compaction")
    checkpoint = next(r for r in rows if r["type"] == "user/message" and isinstance(r.get("surfaceOp"), dict))
    covered = [s for s in checkpoint["sourceEventSeqs"] if s <= checkpoint["surfaceOp"]["end"] and s >= checkpoint["surfaceOp"]["start"]]
    checkpoint["surfaceOp"]["end"] = covered[-2]
    checkpoint["sourceEventSeqs"].remove(covered[-1])
    report = _check(rows)
    assert report.verdict is Verdict.INVALID
    # The surface itself stays well-formed; the compaction audit (or SURF-6
    # coverage, when the range no longer matches) names the broken transaction.
    assert _rules(report) & {"SURF-6", "CMP-22", "CMP-10"}


# --------------------------------------------------------------------------- FMT / CHK


def test_QF_15_a_torn_last_line_is_a_note_not_a_finding() -> None:
    """FMT-1 (amended, issue 25): a crash mid-write leaves the last line cut short and without its
    newline; the file load ignores it (QF-15), so the log is judged as written up to the line before."""
    rows = gt("b-prefix-idioms-tool-roundtrip")
    data = text(rows)
    report = _check(data[:-25])
    assert report.verdict is Verdict.VALID and report.findings == ()
    assert any(note.startswith(f"quirk QF-15 (1 time, first at line {len(rows)}): torn last line") for note in report.notes)
    # The same log without the torn line (its newline written) has the same findings and verdict.
    whole = _check(data[: data.rindex(b"\n", 0, len(data) - 25) + 1])
    assert whole.verdict is report.verdict and whole.findings == report.findings


def test_FMT_1_invalid_json_line_in_the_middle() -> None:
    lines = text(gt("a-single-turn-no-prefix")).split(b"\n")
    lines[3] = b'{"type": oops'
    report = _check(b"\n".join(lines))
    assert any(f.rule == "FMT-1" and f.line == 4 for f in report.findings)
    # The missing event leaves a seq hole; that follows from the damaged line,
    # so it is not reported again (issue 15): one finding, and a note.
    assert _rules(report) == {"FMT-1"} and report.verdict.value == "invalid"
    assert any("after the damaged line 4 not audited" in note for note in report.notes)


def test_CHK_5_corrupt_a_packed_row() -> None:
    rows = load(A55_SNAPSHOTS / "packed-chunks" / "session.jsonl")
    _assert_valid(rows)
    row = next(r for r in rows if r.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks"))
    row["data"]["dt"] = row["data"]["dt"] + [1]
    assert "CHK-5" in _rules(_check(rows))


# --------------------------------------------------------------------------- D08


def test_D08_drop_a_tool_result() -> None:
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    _assert_valid(rows)
    report = _check(_drop(rows, _index(rows, "tool/result")))
    assert report.dialect is not None and report.dialect.name == "D08"
    assert "LOOP-12" in _rules(report)


def test_D08_duplicate_a_seq() -> None:
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    rows[6]["seq"] = rows[5]["seq"]
    assert "LOG-1" in _rules(_check(rows))


# --------------------------------------------------------------------------- FMT-11 fork seeds


def _copy_dir(source: Path, target: Path) -> None:
    for file in source.iterdir():
        if file.is_file():
            (target / file.name).write_bytes(file.read_bytes())


def test_FMT_11_groundtruth_fork_child_seed_must_equal_parent(tmp_path: Path) -> None:
    _copy_dir(GROUNDTRUTH / "k-fork-seeded-child", tmp_path)
    child = tmp_path / "session.jsonl"
    assert check_path(str(child)).verdict is Verdict.VALID
    rows = load(child)
    rows[3]["time"] += 1  # inside the 24-event seed: a log-only field the child alone changed
    child.write_bytes(text(rows))
    report = check_path(str(child))
    assert [(f.rule, f.seq) for f in report.findings] == [("FMT-11", 3)]


def test_FMT_11_corpus_fork_child_seed_must_equal_parent(tmp_path: Path) -> None:
    _copy_dir(A55_SNAPSHOTS / "subagent-fork", tmp_path)
    child = tmp_path / "session.1.jsonl"
    assert check_path(str(child)).verdict is Verdict.VALID
    lines = child.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"time":', b'"time":1', 1)
    child.write_bytes(b"".join(lines))
    assert "FMT-11" in _rules(check_path(str(child)))
    (tmp_path / "session.jsonl").unlink()
    report = check_path(str(child))
    assert report.verdict is Verdict.VALID and any("not found" in n for n in report.notes)


# --------------------------------------------------------------------------- checker blind spots (issue 5)

D08_HEADLESS = REAL / "611615650f" / "examples" / "headless-agent" / "tests" / "snapshots"


def _insert(rows: list[Row], index: int, new: Row) -> list[Row]:
    """Insert ``new`` before ``rows[index]`` (an event) with that event's seq,
    renumbering the later events and every seq reference to them."""
    at = rows[index]["seq"]

    def shift(s: int) -> int:
        return s + 1 if s >= at else s

    out: list[Row] = []
    for i, row in enumerate(rows):
        if i == index:
            out.append({**copy.deepcopy(new), "seq": at})
        row = copy.deepcopy(row)
        if "seq" in row:
            row["seq"] = shift(row["seq"])
        if "sourceEventSeqs" in row:
            row["sourceEventSeqs"] = [shift(s) for s in row["sourceEventSeqs"]]
        op = row.get("surfaceOp")
        if isinstance(op, dict):
            op["start"], op["end"] = shift(op["start"]), shift(op["end"])
        out.append(row)
    return out


def _error_finish(rows: list[Row]) -> int:
    return next(i for i, r in enumerate(rows) if r.get("type") == "assistant/chunk"
                and r["data"]["chunk"].get("type") == "finish" and r["data"]["chunk"]["reason"]["kind"] == "error")


def _recovery() -> list[Row]:
    """The real D08 overflow recovery: step 2's first attempt ends with an
    error finish (CONTEXT_WINDOW_EXCEEDED), a compaction bracket follows, and
    the retry streams again inside the same step (DIA-7)."""
    rows = load(D08_HEADLESS / "compaction-recovery" / "session.jsonl")
    _assert_valid(rows)
    return rows


def test_DIA_7_retry_message_cites_the_failed_attempts_chunks() -> None:
    rows = _recovery()
    failed_finish = rows[_error_finish(rows)]["seq"]
    retry_message = rows[_index(rows, "assistant/message", step=2)]
    retry_message["sourceEventSeqs"] = [failed_finish, *retry_message["sourceEventSeqs"]]
    report = _check(rows)
    assert report.verdict is Verdict.INVALID
    assert any(f.rule == "DIA-7" and f.seq == retry_message["seq"] and "failed attempt" in f.reason for f in report.findings)


def test_DIA_7_extra_assistant_message_for_the_failed_attempt() -> None:
    rows = _recovery()
    finish = _error_finish(rows)
    failed_finish = rows[finish]["seq"]
    retry_message = rows[_index(rows, "assistant/message", step=2)]
    extra = copy.deepcopy(retry_message)
    extra["data"]["message"]["id"] = "extra-message-for-the-failed-attempt"
    extra["data"]["message"]["content"] = [{"type": "text", "text": "failed"}]
    extra["sourceEventSeqs"] = [failed_finish]
    rows = _insert(rows, finish + 1, extra)
    report = _check(rows)
    assert report.verdict is Verdict.INVALID
    dia7 = [f for f in report.findings if f.rule == "DIA-7"]
    assert {f.seq for f in dia7} == {failed_finish + 1}, [f.text("mutant") for f in report.findings]


def test_DIA_7_transient_retry_keeps_its_failed_attempt_out_of_the_message() -> None:
    """The LLM-layer retry (llm/retry) of a real D08 log has the same shape:
    citing the failed empty-response attempt is a DIA-7 finding too."""
    rows = load(D08_SNAPSHOTS / "empty-response-retry" / "session.jsonl")
    _assert_valid(rows)
    failed_finish = rows[_error_finish(rows)]["seq"]
    message = rows[_index(rows, "assistant/message")]
    message["sourceEventSeqs"] = [failed_finish - 1, failed_finish, *message["sourceEventSeqs"]]
    assert "DIA-7" in _rules(_check(rows))


def _d08_tool_turn() -> list[Row]:
    rows = load(D08_SNAPSHOTS / "tool-call-turn" / "session.jsonl")
    _assert_valid(rows)
    return rows


def _drop_message_id(rows: list[Row]) -> None:
    del rows[_index(rows, "assistant/message")]["data"]["message"]["id"]


def _drop_message_source(rows: list[Row]) -> None:
    del rows[_index(rows, "assistant/message")]["data"]["message"]["source"]


def _assistant_role_user(rows: list[Row]) -> None:
    rows[_index(rows, "assistant/message")]["data"]["message"]["role"] = "user"


def _user_message_without_content(rows: list[Row]) -> None:
    del rows[_index(rows, "user/message")]["data"]["content"]


@pytest.mark.parametrize("mutate", [_drop_message_id, _drop_message_source, _assistant_role_user, _user_message_without_content],
                         ids=lambda f: f.__name__.strip("_"))
def test_DIA_10_d08_message_without_its_identity_shape(mutate: Any) -> None:
    rows = _d08_tool_turn()
    mutate(rows)
    report = _check(rows)
    assert report.verdict is Verdict.INVALID and "DIA-10" in _rules(report), [f.text("mutant") for f in report.findings]


def test_DIA_14_d08_aborted_turn_end_with_a_bogus_reason() -> None:
    rows = load(D08_SNAPSHOTS / "cancel" / "session.jsonl")
    _assert_valid(rows)
    end = rows[_index(rows, "turn/end")]
    assert end["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    end["data"]["reason"]["reason"] = {"kind": "bogus"}
    report = _check(rows)
    assert report.verdict is Verdict.INVALID
    assert [(f.rule, f.seq) for f in report.findings] == [("DIA-14", end["seq"])]


def test_DIA_14_coarse_aborted_turn_end_of_a_legacy_turn_reads_as_legacy() -> None:
    """DIA-14: "coarse legacy records read as reason:{kind:"legacy"}": the A55 cancel log (its
    turn/end a coarse {kind:"aborted"}) read as D08 is valid."""
    rows = load(A55_SNAPSHOTS / "cancel" / "session.jsonl")
    assert rows[_index(rows, "turn/end")]["data"]["reason"] == {"kind": "aborted"}
    report = check_log(read_stream(io.BytesIO(text(rows)), "mutant.jsonl"), forced=Dialect.D08)
    assert report.verdict is Verdict.VALID, [f.text("m") for f in report.findings]


def test_DIA_14_coarse_aborted_turn_end_inside_a_d08_turn_is_invalid() -> None:
    """The D08 loop writes an aborted end with its cause (agent.ts lines 303-305 at 611615650f);
    a coarse one inside a turn it wrote is a legacy event no writer puts there (FMT-7 Writers)."""
    rows = load(D08_SNAPSHOTS / "cancel" / "session.jsonl")
    end = rows[_index(rows, "turn/end")]
    end["data"]["reason"] = {"kind": "aborted"}
    report = _check(rows)
    assert [(f.rule, f.seq) for f in report.findings] == [("DIA-14", end["seq"])]


def test_HDR_1_a55_header_system_that_is_a_number() -> None:
    rows = gt("a-single-turn-no-prefix")
    header = rows[_index(rows, "request/header")]
    header["data"]["header"]["system"] = 5
    report = _check(rows)
    assert report.verdict is Verdict.INVALID
    assert [(f.rule, f.seq) for f in report.findings] == [("HDR-1", header["seq"])]


def test_FMT_6_placeholder_header_fields_skip_type_checks() -> None:
    rows = gt("a-single-turn-no-prefix")
    header = rows[_index(rows, "request/header")]["data"]["header"]
    header["system"], header["tools"] = "{{system}}", "{{tools}}"
    _assert_valid(rows)


def test_DIA_8_d08_header_tools_that_are_not_a_list() -> None:
    rows = _d08_tool_turn()
    rows[_index(rows, "request/header")]["data"]["header"]["tools"] = {"name": "read"}
    assert "DIA-8" in _rules(_check(rows))


def test_LEG_7_request_advice_is_recognized_as_a_pre_a55_design() -> None:
    rows = gt("a-single-turn-no-prefix")
    start = _index(rows, "step/start")
    advice = {"type": "agent/request-advice", "time": rows[start]["time"], "data": {"before": [], "after": []}}
    report = _check(_insert(rows, start + 1, advice))
    assert report.verdict is Verdict.UNKNOWN and report.findings == ()
    assert report.reason is not None and "LEG-7" in report.reason and "agent/request-advice" in report.reason


def test_LEG_7_message_suffix_header_is_recognized_as_a_pre_a55_design() -> None:
    rows = gt("a-single-turn-no-prefix")
    rows[_index(rows, "request/header")]["data"]["header"]["messageSuffix"] = [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    report = _check(rows)
    assert report.verdict is Verdict.UNKNOWN and report.reason is not None and "messageSuffix" in report.reason


def test_LEG_7_a_rejected_pre_a55_log_stays_invalid() -> None:
    rows = gt("a-single-turn-no-prefix")
    header = rows[_index(rows, "request/header")]["data"]
    header["header"]["messageSuffix"] = []
    header["reason"] = "fallback"
    report = _check(rows)
    assert report.verdict is Verdict.INVALID and "LEG-2" in _rules(report)
    assert any("LEG-7" in note and "messageSuffix" in note for note in report.notes)


def test_LOG_18_session_header_with_a_malformed_seed_length(tmp_path: Path) -> None:
    """seedLength counts events: -1, 2.5 or a string is not a count."""
    source = (GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl").read_text(encoding="utf-8")
    for bad in ("-1", "2.5", '"3"'):
        path = tmp_path / f"seed{len(bad)}.jsonl"
        path.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"seedLength":' + bad + "}\n" + source, encoding="utf-8")
        report = check_path(str(path))
        assert report.verdict is Verdict.INVALID and "LOG-18" in {f.rule for f in report.findings}, bad


def test_FMT_11_seed_length_beyond_the_log_is_reported_without_a_parent(tmp_path: Path) -> None:
    """A seed longer than the log would make every event seed, so nothing would be checked."""
    source = (GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "session.jsonl"
    path.write_text('{"type":"session","version":0,"id":"s","createdAt":0,"seedLength":99999999999}\n' + source, encoding="utf-8")
    report = check_path(str(path))
    assert report.verdict is Verdict.INVALID and "FMT-11" in {f.rule for f in report.findings}
