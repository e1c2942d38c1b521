"""``sessionspec check``: formats, exit codes, inputs, bad bytes (FMT-1, FMT-2, FMT-7)."""

from __future__ import annotations

import gc
import io
import json
import re
import sys
from pathlib import Path

import pytest

import sessionspec.check.command
import sessionspec.check.logfile
import sessionspec.fast.parse
from sessionspec.check.checker import SAMPLES, check_path
from sessionspec.check.command import ProgressBar, progress_line
from sessionspec.cli import main
from tests.support import GROUNDTRUTH, REAL, check_or_die

GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"
FINDING_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<rule>[A-Z]+-\d+)( seq (?P<seq>\d+))?: .+$")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_no_path_checks_the_bundled_samples(capsys: pytest.CaptureFixture[str]) -> None:
    samples = sorted(SAMPLES.glob("*.jsonl"))
    assert len(samples) >= 3
    code, out, err = _run(capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == f"checked {len(samples)} files: {len(samples)} valid, 0 invalid, 0 unknown, 0 unreadable"


def test_valid_file_exit_0_with_verdict_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(GOOD))
    assert code == 0
    assert out.splitlines() == [f"{GOOD}: valid [A55 detected, 56 events]", "checked 1 file: 1 valid, 0 invalid, 0 unknown, 0 unreadable"]


def test_invalid_file_exit_1_with_finding_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4].replace(b'"seq":4', b'"seq":40')
    path = _write(tmp_path, "bad.jsonl", b"".join(lines))
    code, out, err = _run(capsys, path)
    assert code == 1 and err == ""
    findings = [m for m in map(FINDING_LINE.match, out.splitlines()) if m]
    assert findings and findings[0]["path"] == path and findings[0]["line"] == "5"
    assert any(m["rule"] == "LOG-1" and m["seq"] == "40" for m in findings)
    assert f"{path}: invalid" in out


def test_unreadable_exit_2_and_wins_over_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, "empty.jsonl", b"")
    code, out, err = _run(capsys, bad, str(tmp_path / "missing.jsonl"))
    assert code == 2 and "Traceback" not in out + err
    assert "missing.jsonl: unreadable (cannot open" in out


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--dialect", "Z99", str(GOOD)])
    assert exit_info.value.code == 2
    code, _, err = _run(capsys, "-", "-")
    assert code == 2 and "stdin" in err


def test_json_format_is_json_lines_with_stable_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A line that does not parse, its newline written: FMT-1 on it, after the last complete turn/end.
    bad = _write(tmp_path, "trunc.jsonl", GOOD.read_bytes()[:-30] + b"\n")
    code, out, _ = _run(capsys, "--format", "json", str(GOOD), bad)
    assert code == 1
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["kind"] for d in docs] == ["file", "file", "summary"]
    assert list(docs[0]) == ["kind", "path", "verdict", "dialect", "dialectSource", "events", "firstLiveSeq", "reason", "notes", "findings", "loader",
                             "writers", "ignored", "notDecided"]
    # QF-15: a hole after the last valid turn/end is a torn tail the real file load drops (scanLog), so the
    # loader accepts what the checker calls invalid (FMT-1).
    assert docs[0]["loader"] == "accepts" and docs[1]["loader"] == "accepts"
    assert docs[0]["verdict"] == "valid" and docs[0]["dialect"] == "A55"
    finding = docs[1]["findings"][0]
    assert list(finding) == ["line", "rule", "seq", "kind", "reason", "loader", "onlyIf", "causedBy"]
    assert finding["rule"] == "FMT-1" and finding["loader"] == "accepts" and finding["causedBy"] is None
    # Issue 44: the summary also lists the rules the run could not decide (tests/check/test_deployment.py).
    assert {k: v for k, v in docs[2].items() if k != "notDecided"} == {"kind": "summary", "schema": 4, "files": 2, "valid": 1, "invalid": 1,
                                                                        "unknown": 0, "unreadable": 0, "exit": 1}
    assert {item["why"] for item in docs[2]["notDecided"]} == {"deployment", "request-only"}


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.read_bytes())))
    code, out, _ = _run(capsys, "-")
    assert code == 0 and out.startswith("<stdin>: valid")


def test_zstd_compressed_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = _write(tmp_path, "s.jsonl.zst", zstandard.ZstdCompressor().compress(GOOD.read_bytes()))
    code, out, _ = _run(capsys, path)
    assert code == 0 and f"{path}: valid [A55 detected, 56 events]" in out
    corrupt = _write(tmp_path, "c.jsonl.zst", b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    code, out, err = _run(capsys, corrupt)
    assert code == 2 and "unreadable" in out and "Traceback" not in err


def test_directories_recursive_sorted_logs_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "z").mkdir(parents=True)
    for rel in ("b/session.jsonl", "a/z/session.1.jsonl", "a/session.jsonl"):
        (tmp_path / rel).write_bytes(GOOD.read_bytes())
    (tmp_path / "a" / "notes.md").write_text("not a log")
    code, out, _ = _run(capsys, str(tmp_path))
    checked = [line.split(": ")[0] for line in out.splitlines()[:-1]]
    assert code == 0
    assert checked == [str(tmp_path / "a" / "session.jsonl"), str(tmp_path / "a" / "z" / "session.1.jsonl"), str(tmp_path / "b" / "session.jsonl")]


def test_output_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(capsys, str(GROUNDTRUTH))
    second = _run(capsys, str(GROUNDTRUTH))
    assert first == second and first[0] == 0


def test_quiet_and_forced_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "-q", str(GOOD))
    assert code == 0 and out.splitlines() == ["checked 1 file: 1 valid, 0 invalid, 0 unknown, 0 unreadable"]
    code, out, _ = _run(capsys, "--dialect", "A55", str(GOOD))
    assert "[A55 forced, 56 events]" in out


BAD_INPUTS = {
    "empty": (b"", "FMT-1", "invalid"),
    "invalid-json": (b'{"type":"session","version":0,"id":"s","createdAt":0}\n{"type":\n', "FMT-1", "invalid"),
    "invalid-utf8": (b'{"type":"x/y","seq":0,"time":0,"data":"\xff\xfe"}\n', "FMT-1", "invalid"),
    "wrong-types": (b'{"type":"x/y","seq":"0","time":0,"data":null}\n', "LOG-3", "invalid"),
    "huge-int": (b'{"type":"x/y","seq":0,"time":0,"data":123456789012345678901234567890}\n', "LOG-4", "invalid"),
    "huge-float": (b'{"type":"x/y","seq":0,"time":0,"data":1e999}\n', "LOG-4", "invalid"),
    "deep-nesting": (b'{"type":"x/y","seq":0,"time":0,"data":' + b"[" * 100000 + b"]" * 100000 + b"}\n", "FMT-1", "unknown"),
    "non-log-json": (b"[1,2,3]\n", "LOG-3", "invalid"),
    "bad-version": (b'{"type":"session","version":1,"id":"s","createdAt":0}\n', "LOG-17", "invalid"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_a_finding_never_a_traceback(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, rule, verdict = BAD_INPUTS[name]
    path = _write(tmp_path, f"{name}.jsonl", data)
    code, out, err = _run(capsys, path)
    assert "Traceback" not in out + err
    # Nothing on stderr, but after an unknown file the hint on how to leave files out of a run.
    assert err == ("" if verdict != "unknown" else err) and (verdict != "unknown" or "--exclude GLOB" in err)
    assert re.search(rf"^{re.escape(path)}(:\d+)?: {rule}\b", out, re.M), out
    assert f"{path}: {verdict}" in out
    assert code == {"invalid": 1, "unknown": 4}.get(verdict, 0)


@pytest.mark.interpreted_only("patches MAX_LINE_BYTES, a constant or function the compiled checker binds natively")
def test_over_long_line_is_a_limit_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sessionspec.check.logfile, "MAX_LINE_BYTES", 1000)
    lines = GOOD.read_bytes().splitlines(keepends=True)
    long_line = b'{"type":"x/y","seq":999,"time":0,"data":"' + b"x" * 5000 + b'"}\n'
    path = _write(tmp_path, "long.jsonl", b"".join(lines[:3]) + long_line + b"".join(lines[3:]))
    code, out, _ = _run(capsys, path)
    assert f"{path}:4: FMT-1: line longer than 1000 bytes" in out
    # The following lines are read again (the rest of the file is still checked).
    assert "[A55 detected, 56 events]" in out


def _legacy_assistant_in_d08(tmp_path: Path) -> str:
    """A D08 corpus log whose first assistant/message is written in the A55
    (legacy) shape: the D08 reader migrates it (DIA-13)."""
    source = REAL / "611615650f" / "examples" / "acp-agent" / "tests" / "snapshots" / "tool-call-turn" / "session.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    row = next(r for r in rows if r["type"] == "assistant/message")
    message = row["data"].pop("message")
    provenance = {k: v for k, v in message["source"].items() if k != "kind"}
    row["data"] = {"turn": row["data"]["turn"], "step": row["data"]["step"], "content": message["content"], "provenance": provenance, **row["data"]}
    return _write(tmp_path, "legacy.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())


def test_DIA_13_forced_d08_migrates_legacy_turns(capsys: pytest.CaptureFixture[str]) -> None:
    """DIA-13: the D08 reader migrates A55 shapes on load, so a log the A55 loop wrote reads as D08."""
    path = str(REAL / "a55f148516" / "examples" / "acp-agent" / "tests" / "snapshots" / "tool-call-turn" / "session.jsonl")
    code, out, _ = _run(capsys, "--dialect", "D08", path)
    assert code == 0 and f"{path}: valid [D08 forced" in out


def test_DIA_13_one_legacy_message_inside_a_d08_turn_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """FMT-7 Writers: no writer mixes the dialects in one turn; the migration (DIA-13) reads whole
    legacy turns, it does not make one legacy event inside a turn the D08 loop wrote writable."""
    path = _legacy_assistant_in_d08(tmp_path)
    for argv in (("--dialect", "D08", path), (path,)):
        code, out, _ = _run(capsys, *argv)
        assert code == 1 and re.search(r"DIA-13 seq 63: assistant/message has the A55 shape inside a turn the D08 loop wrote", out), out


def _turns_of_both_dialects(tmp_path: Path) -> str:
    """Turn 1 of the A55 ground truth, then a D08 turn (no trigger, an inbox splice): each turn
    written by one loop, the log by two."""
    rows = [json.loads(line) for line in GOOD.read_text().splitlines() if line.strip()][:23]
    time = rows[-1]["time"]
    rows += [
        {"type": "turn/start", "seq": 23, "time": time, "data": {"turn": 2}},
        {"type": "agent/inbox/spliced", "seq": 24, "time": time, "data": {"target": "next-turn", "start": 0, "removedCount": 0, "inserted": []}},
        {"type": "turn/end", "seq": 25, "time": time, "data": {"turn": 2, "reason": {"kind": "completed"}}},
    ]
    return _write(tmp_path, "both.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())


def test_FMT_10_mixed_markers_are_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _turns_of_both_dialects(tmp_path)
    code, out, _ = _run(capsys, path)
    assert code == 4 and f"{path}: unknown" in out and "mixed dialect markers (FMT-10)" in out


def test_directory_without_logs_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.md").write_text("no logs here")
    code, out, err = _run(capsys, str(tmp_path))
    assert code == 2 and out == "" and "no session-log files" in err


def test_nesting_depth_skips_strings() -> None:
    assert sessionspec.fast.parse.nesting_depth(b'{"a":[[1],{"b":"[[[[{{{{"}]}') == 3
    assert not sessionspec.fast.parse.too_deep(b'{"s":"' + b"[" * 1000 + b'"}')
    assert sessionspec.fast.parse.too_deep(b"[" * 201 + b"]" * 201)


# --------------------------------------------------------------------------- --jobs and the progress bar


def _mixed_folder(tmp_path: Path) -> Path:
    """Seven logs, valid and invalid mixed, so order and exit code both matter."""
    folder = tmp_path / "logs"
    folder.mkdir(parents=True)
    good = GOOD.read_bytes()
    for index in range(7):
        data = good if index % 3 else good.replace(b'"seq":4,', b'"seq":40,', 1)
        (folder / f"s{index}.jsonl").write_bytes(data)
    return folder


def test_jobs_output_equals_the_sequential_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _mixed_folder(tmp_path)
    sequential = _run(capsys, str(folder))
    parallel = _run(capsys, "--jobs", "2", str(folder))
    assert sequential[0] == 1 and "3 invalid" in sequential[1]
    assert parallel[:2] == sequential[:2]
    json_sequential = _run(capsys, "--format", "json", str(folder))
    assert _run(capsys, "--format", "json", "-j", "2", str(folder))[:2] == json_sequential[:2]


@pytest.mark.interpreted_only("patches _reports, a function the compiled checker calls natively")
def test_a_worker_that_dies_ends_the_run_with_exit_3_and_a_message_never_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A killed worker (the out-of-memory killer, a signal) loses the file it held: the run says so and stops with
    exit 3 after the reports it has, instead of waiting for that file for ever (what a multiprocessing pool does)."""
    folder = _mixed_folder(tmp_path)
    (folder / "die.jsonl").write_bytes(GOOD.read_bytes())
    real = sessionspec.check.command._reports
    monkeypatch.setattr(sessionspec.check.command, "_reports", lambda tasks, jobs: real(tasks, jobs, check_or_die))
    code, out, err = _run(capsys, "--jobs", "2", str(folder))
    assert code == 3
    assert "sessionspec check: a worker process ended abruptly (killed, or out of memory)" in err
    assert "rerun with --jobs 1" in err and "Traceback" not in err
    assert "die.jsonl: valid" not in out  # the lost file is never reported as checked


def test_jobs_must_be_a_positive_number(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-2", "many"):
        with pytest.raises(SystemExit) as exit_info:
            main(["check", "--jobs", bad, str(GOOD)])
        assert exit_info.value.code == 2
        assert "--jobs" in capsys.readouterr().err


def test_jobs_with_stdin_reads_it_in_the_main_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.read_bytes())))
    code, out, _ = _run(capsys, "--jobs", "2", "-", str(GOOD))
    assert code == 0 and out.startswith("<stdin>: valid") and f"{GOOD}: valid" in out


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # capsys's stderr is not a TTY: many files, yet nothing extra on stderr.
    code, _, err = _run(capsys, str(_mixed_folder(tmp_path)))
    assert code == 1 and err == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_is_drawn_and_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, out, _ = _run(capsys, str(_mixed_folder(tmp_path)))
    drawn = terminal.getvalue()
    assert code == 1
    # The final state is always drawn, then wiped so the shell prompt is clean.
    assert "[" + "#" * 30 + "] 7/7 files 100%, 3 invalid" in drawn
    assert drawn.endswith("\r")
    assert "\r" not in out and "files 100%" not in out
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _run(capsys, "--no-progress", str(_mixed_folder(tmp_path / "again")))
    assert terminal.getvalue() == ""


def test_progress_bar_skips_a_few_files(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _run(capsys, str(GOOD))
    assert terminal.getvalue() == ""


def test_progress_line_text() -> None:
    assert progress_line(0, 4, 0, cells=8) == "[........] 0/4 files   0%"
    assert progress_line(1, 4, 0, cells=8) == "[##......] 1/4 files  25%"
    assert progress_line(4, 4, 2, cells=8) == "[########] 4/4 files 100%, 2 invalid"


def test_progress_bar_redraws_in_place_throttled_and_clears() -> None:
    stream = io.StringIO()
    now = [0.0]
    bar = ProgressBar(stream=stream, total=3, clock=lambda: now[0], interval=1.0)
    bar.update(1)
    now[0] = 0.5
    bar.update(2, ", 1 invalid")  # within the interval: not drawn
    assert stream.getvalue() == "\r" + progress_line(1, 3, 0)
    bar.update(3, ", 1 invalid")  # the last file is always drawn
    assert stream.getvalue().endswith("\r" + progress_line(3, 3, 1))
    width = len(progress_line(3, 3, 1))
    bar.clear()
    assert stream.getvalue().endswith("\r" + " " * width + "\r")
    bar.clear()  # nothing shown: nothing written
    assert stream.getvalue().count(" " * width) == 1


# --------------------------------------------------------------------------- --strict-quirks (§17)

THROWING = GROUNDTRUTH / "f-throwing-contributor" / "session.jsonl"


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code, out, _ = _run(capsys, "--format", "json", *argv)
    return code, json.loads(out.splitlines()[0])


def test_Q_4_error_turn_without_its_step_is_a_note_or_a_strict_finding(capsys: pytest.CaptureFixture[str]) -> None:
    # Recorded from the real harness: composition throws, so turn 1 ends
    # {kind:"error", step:1} (line 3, seq 2) although no step/start 1 exists.
    code, report = _report(capsys, str(THROWING))
    assert code == 0 and report["verdict"] == "valid"
    assert any(str(n).startswith("quirk Q-4 (1 time, first at line 3, seq 2)") for n in report["notes"])  # type: ignore[attr-defined]
    code, report = _report(capsys, "--strict-quirks", str(THROWING))
    assert code == 1 and report["verdict"] == "invalid"
    assert [(f["rule"], f["line"], f["seq"]) for f in report["findings"]] == [("Q-4", 3, 2)]  # type: ignore[attr-defined]


def test_Q_17_time_going_back_is_a_note_or_a_strict_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    first_time = json.loads(lines[0])["time"]
    lines[5] = re.sub(rb'"time":\d+', b'"time":%d' % (first_time - 1), lines[5], count=1)
    path = _write(tmp_path, "clock.jsonl", b"".join(lines))
    code, report = _report(capsys, path)
    assert code == 0 and any("quirk Q-17 (1 time, first at line 6, seq 5)" in str(n) for n in report["notes"])  # type: ignore[attr-defined]
    code, report = _report(capsys, "--strict-quirks", path)
    # Line 7 goes forward again relative to line 6, so only line 6 is a quirk.
    assert code == 1 and [(f["rule"], f["line"]) for f in report["findings"]] == [("Q-17", 6)]  # type: ignore[attr-defined]


def test_Q_29_short_chunk_row_is_a_note_or_a_strict_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = THROWING.read_bytes().splitlines(keepends=True)
    # Lines 9-10 are text-delta chunks seq 8 and 9 of turn 2 step 1 index 0, same time: pack them as a 2-member row.
    assert b'"seq":8,' in lines[8] and b'"seq":9,' in lines[9]
    time0 = json.loads(lines[8])["time"]
    row = {"type": "text-chunks", "seq0": 8, "time0": time0, "data": {"turn": 2, "step": 1, "index": 0, "dt": [0], "texts": ["r", "e"]}}
    lines[8:10] = [json.dumps(row, separators=(",", ":")).encode() + b"\n"]
    path = _write(tmp_path, "row.jsonl", b"".join(lines))
    code, report = _report(capsys, path)
    assert code == 0 and report["events"] == 35
    assert any("quirk Q-29 (1 time, first at line 9, seq 8)" in str(n) for n in report["notes"])  # type: ignore[attr-defined]
    code, report = _report(capsys, "--strict-quirks", path)
    assert code == 1 and sorted(f["rule"] for f in report["findings"]) == ["Q-29", "Q-4"]  # type: ignore[attr-defined]


def test_strict_quirks_changes_nothing_for_a_log_without_quirks(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "--strict-quirks", str(GOOD)) == _run(capsys, str(GOOD))


def test_check_path_restores_the_garbage_collector_state() -> None:
    """check_path pauses the cyclic collector for speed (docs/performance.md) and must leave it as it found it."""
    assert gc.isenabled()
    assert check_path(str(GOOD)).verdict.value == "valid"
    assert gc.isenabled()
    gc.disable()
    try:
        check_path(str(GOOD))
        assert not gc.isenabled()
    finally:
        gc.enable()
