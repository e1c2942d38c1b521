"""Hostile files for ``sessionspec check`` (issue 15): nothing a file or a
directory holds can hang the checker, crash it, or pass lost data as valid.

Every case asserts the exit code, the verdict and that no traceback appears.
Expected values come from docs/check.md (exit codes, input handling, verdict
precedence) and the rules named there, not from the checker's output.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

import sessionspec.check.command
import sessionspec.check.logfile
from sessionspec.check.checker import EXIT_CODES, Verdict, check_path
from sessionspec.cli import main
from sessionspec.generate import write_log
from tests.support import GROUNDTRUTH, REAL

ROOT = Path(__file__).resolve().parents[2]
GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"  # A55, 56 events, valid
D08 = REAL / "611615650f" / "examples" / "headless-agent" / "tests" / "snapshots" / "pty-tools" / "session.jsonl"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _json_reports(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = _run(capsys, "--format", "json", *argv)
    return code, [json.loads(line) for line in out.splitlines()]


def _subprocess(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A run in its own process, so a hang fails the test instead of blocking it."""
    result = subprocess.run([sys.executable, "-m", "sessionspec.cli", "check", "--no-progress", *argv],
                            capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert "Traceback" not in result.stdout + result.stderr
    return result


# --------------------------------------------------------------------------- typed reads


def test_a_fifo_given_as_a_path_is_unreadable_and_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = _subprocess(str(fifo), timeout=30)  # opening it for reading would block forever
    assert result.returncode == 2
    assert f"{fifo}: unreadable (a FIFO (named pipe): only regular files and - (stdin) are read)" in result.stdout


def test_a_fifo_met_in_a_directory_walk_is_unreadable_and_the_rest_is_checked(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(GOOD.read_bytes())
    os.mkfifo(tmp_path / "b.jsonl")
    result = _subprocess("--format", "json", str(tmp_path), timeout=30)
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 2
    assert [(d.get("path"), d.get("verdict")) for d in docs[:2]] == [(str(tmp_path / "a.jsonl"), "valid"), (str(tmp_path / "b.jsonl"), "unreadable")]
    assert "FIFO" in str(docs[1]["reason"])


def test_a_socket_and_a_device_are_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock_path = tmp_path / "s.jsonl"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(sock_path))
        code, docs = _json_reports(capsys, str(sock_path), "/dev/null")
    assert code == 2
    assert [d["verdict"] for d in docs[:2]] == ["unreadable", "unreadable"]
    assert str(docs[0]["reason"]).startswith("a socket") and str(docs[1]["reason"]).startswith("a character device")


def test_an_unlistable_directory_is_unreadable_never_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """As root, chmod 000 does not stop listing, so the code path is driven by
    making ``os.scandir`` raise PermissionError for that one directory."""
    (tmp_path / "a.jsonl").write_bytes(GOOD.read_bytes())
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.jsonl").write_bytes(GOOD.read_bytes())
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, docs = _json_reports(capsys, str(tmp_path))
    assert code == 2
    assert [(d.get("path"), d.get("verdict")) for d in docs[:2]] == [(str(tmp_path / "a.jsonl"), "valid"), (str(locked), "unreadable")]
    assert docs[1]["reason"] == "cannot list directory: Permission denied"
    assert docs[2]["unreadable"] == 1


def test_an_unlistable_directory_given_as_the_argument_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The same code path (os.scandir raising PermissionError, see above) for the argument itself."""
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path) == tmp_path:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = _run(capsys, str(tmp_path))
    assert code == 2 and err == ""
    assert out.splitlines() == [f"{tmp_path}: unreadable (cannot list directory: Permission denied)", "checked 1 file: 0 valid, 0 invalid, 0 unknown, 1 unreadable"]


def test_a_directory_symlink_loop_ends_and_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Directory symlinks are followed (docs/check.md); a directory is walked
    once per argument, so a loop ends and each file is checked once."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "a.jsonl").write_bytes(GOOD.read_bytes())
    (sub / "loop").symlink_to(tmp_path)
    code, out, err = _run(capsys, str(tmp_path))
    assert code == 0
    assert out.splitlines() == [f"{sub / 'a.jsonl'}: valid [A55 detected, 56 events]", "checked 1 file: 1 valid, 0 invalid, 0 unknown, 0 unreadable"]
    assert f"{sub / 'loop'}: a directory already walked" in err


def test_a_symlinked_directory_is_followed_and_a_dangling_link_is_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.jsonl").write_bytes(GOOD.read_bytes())
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "linked").symlink_to(elsewhere)
    (fleet / "gone.jsonl").symlink_to(tmp_path / "missing.jsonl")
    code, docs = _json_reports(capsys, str(fleet))
    assert code == 2
    assert [(d.get("path"), d.get("verdict")) for d in docs[:2]] == [(str(fleet / "gone.jsonl"), "unreadable"), (str(fleet / "linked" / "a.jsonl"), "valid")]


# --------------------------------------------------------------------------- zstd frames


def _frames(parts: list[bytes], checksum: bool = False) -> tuple[bytes, list[int]]:
    """A multi-frame stream and the offsets where each frame starts (and the end)."""
    compressor = zstandard.ZstdCompressor(write_checksum=checksum)
    frames = [compressor.compress(part) for part in parts]
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)]
    return b"".join(frames), starts


def _three_parts() -> list[bytes]:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    return [b"".join(lines[:20]), b"".join(lines[20:40]), b"".join(lines[40:])]


def test_a_zstd_stream_of_complete_frames_reads_every_frame(tmp_path: Path) -> None:
    data, _ = _frames(_three_parts())
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(data)
    report = check_path(str(path))
    assert report.verdict is Verdict.VALID and report.events == 56


def test_zstd_cut_inside_any_frame_is_unreadable_naming_the_offset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, starts = _frames(_three_parts())
    path = tmp_path / "cut.jsonl.zst"
    for frame in range(3):
        begin, end = starts[frame], starts[frame + 1]
        cuts = sorted({begin + 1, begin + 5, (begin + end) // 2, end - 1} | set(range(begin + 1, end, 97)))
        for cut in cuts:
            path.write_bytes(data[:cut])
            report = check_path(str(path))
            assert report.verdict is Verdict.UNREADABLE, (frame, cut)
            assert f"zstd stream ends at byte {cut} inside frame {frame + 1} (which starts at byte {begin})" in str(report.reason)
        path.write_bytes(data[: (begin + end) // 2])
        code, out, err = _run(capsys, str(path))
        assert code == 2 and f"{path}: unreadable (read error at line " in out and err == ""


def test_zstd_cut_at_a_frame_boundary_is_read_as_a_shorter_log(tmp_path: Path) -> None:
    """A stream that ends where a frame ends is complete as far as the bytes
    can tell: the lines of the whole frames are checked (no data is invented)."""
    data, starts = _frames(_three_parts())
    path = tmp_path / "boundary.jsonl.zst"
    path.write_bytes(data[: starts[1]])
    report = check_path(str(path))
    assert report.verdict is not Verdict.UNREADABLE and report.events == 20


def test_a_cut_single_frame_is_unreadable_not_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = _frames([GOOD.read_bytes()])
    path = tmp_path / "one.jsonl.zst"
    path.write_bytes(data[: len(data) // 3])
    code, out, _ = _run(capsys, str(path))
    assert code == 2 and f"{path}: unreadable (read error at line 1: zstd stream ends at byte {len(data) // 3} inside frame 1" in out
    assert "empty file" not in out


@pytest.mark.parametrize("frame", [0, 1, 2])
def test_a_corrupt_zstd_frame_is_unreadable_naming_it(frame: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, starts = _frames(_three_parts(), checksum=True)
    path = tmp_path / "corrupt.jsonl.zst"
    for at, what in ((starts[frame], "magic number"), ((starts[frame] + starts[frame + 1]) // 2, "payload")):
        broken = bytearray(data)
        broken[at] ^= 0xFF
        path.write_bytes(bytes(broken))
        code, out, _ = _run(capsys, str(path))
        assert code == 2, what
        assert re.search(rf"unreadable \(read error at line [1-9]\d*: corrupt zstd frame {frame + 1} \(starts at byte {starts[frame]}\)", out), (what, out)


_STREAM, _STARTS = _frames(_three_parts(), checksum=True)


@given(cut=st.integers(0, len(_STREAM)), flips=st.lists(st.tuples(st.integers(0, len(_STREAM) - 1), st.integers(1, 255)), max_size=3))
def test_any_cut_or_flipped_zstd_stream_is_read_totally(cut: int, flips: list[tuple[int, int]]) -> None:
    """Whatever is cut or flipped, reading returns (never raises); a stream
    cut off inside a frame, unflipped, is always unreadable."""
    data = bytearray(_STREAM[:cut])
    for at, mask in flips:
        if at < len(data):
            data[at] ^= mask
    log = sessionspec.check.logfile.read_handle(io.BytesIO(bytes(data)), "fuzz.jsonl.zst", None)
    if not flips and cut not in _STARTS:
        assert log.unreadable is not None and f"ends at byte {cut} inside frame" in log.unreadable


# --------------------------------------------------------------------------- limits and damage


@pytest.mark.interpreted_only("patches MAX_LINE_BYTES, a constant or function the compiled checker binds natively")
def test_an_over_long_line_is_unknown_with_the_limit_and_no_cascade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sessionspec.check.logfile, "MAX_LINE_BYTES", 1000)
    lines = GOOD.read_bytes().splitlines(keepends=True)
    lines[10] = lines[10].rstrip(b"\n")[:-2] + b',"pad":"' + b"x" * 2000 + b'"}}\n'  # seq 10, now too long
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(lines))
    code, docs = _json_reports(capsys, str(path))
    report = docs[0]
    assert code == 4 and report["verdict"] == "unknown"
    assert report["reason"] == "limit: FMT-1: line longer than 1000 bytes (checker limit)"
    assert [(f["line"], f["rule"], f["kind"]) for f in report["findings"]] == [(11, "FMT-1", "limit")]
    assert "45 events after the damaged line 11 not audited: their findings could follow from it" in report["notes"]


def test_nesting_over_the_depth_limit_is_unknown_with_no_cascade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = GOOD.read_bytes().splitlines(keepends=True)
    lines[10] = b'{"type":"assistant/chunk","seq":10,"time":0,"data":' + b"[" * 250 + b"]" * 250 + b"}\n"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(lines))
    code, docs = _json_reports(capsys, str(path))
    assert code == 4 and docs[0]["verdict"] == "unknown"
    assert docs[0]["reason"] == "limit: FMT-1: JSON nested deeper than 200 levels (checker limit)"
    assert len(docs[0]["findings"]) == 1


def test_max_events_stops_reading_and_is_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, docs = _json_reports(capsys, "--max-events", "10", str(GOOD))
    report = docs[0]
    assert code == 4 and report["verdict"] == "unknown" and report["events"] == 10
    assert report["reason"] == "limit: FMT-1: more than 10 events: reading stopped at this line (--max-events 10, checker limit)"
    assert report["findings"] == [{"line": 11, "rule": "FMT-1", "seq": None, "kind": "limit", "reason": str(report["reason"]).removeprefix("limit: FMT-1: "), "loader": "accepts", "onlyIf": None, "causedBy": None}]


def test_max_events_never_hides_a_finding_before_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    code, docs = _json_reports(capsys, "--max-events", "10", str(path))
    assert code == 1 and docs[0]["verdict"] == "invalid"
    assert [(f["line"], f["rule"]) for f in docs[0]["findings"]] == [(5, "LOG-1"), (11, "FMT-1")]


def test_max_events_stops_a_small_zstd_that_expands_to_many_events(tmp_path: Path) -> None:
    """A small zstd that expands to many events: reading stops at the limit
    (memory is bounded by it), and the report says so.  The default limit is
    in docs/check.md; bench/run measures the memory it bounds."""
    text = io.StringIO()
    write_log(text, 3000, 0)
    path = tmp_path / "many.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress(text.getvalue().encode()))
    assert check_path(str(path), max_events=10**6).verdict is Verdict.VALID
    report = check_path(str(path), max_events=500)
    assert report.verdict is Verdict.UNKNOWN and 500 <= report.events < 510 and "--max-events 500" in str(report.reason)


def test_one_bad_line_is_reported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong seq (LOG-1) used to cascade into one LOG-13 per later event."""
    path = tmp_path / "seq.jsonl"
    path.write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    code, out, _ = _run(capsys, str(path))
    assert code == 1
    assert out.splitlines()[0] == f"{path}:5: LOG-1 seq 40: seq 40 is not contiguous; expected 4 (real loader: would refuse to load the log)"
    assert out.splitlines()[1].startswith(f"{path}: invalid [A55 detected, 56 events] (notes: 51 events after the seq break at line 5")
    assert len(out.splitlines()) == 3


def test_one_bad_step_start_does_not_cascade_into_a_finding_per_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``step/start`` of step 7 where step 1 is next (LOG-13): every later
    event of the step then names step 1 while 7 is open, the same complaint
    18 times.  The first is shown, the 17 repeats follow from it (``causedBy``, sessionspec/check/cascades.py)
    and the text format shows them as one line under it."""
    lines = GOOD.read_bytes().splitlines(keepends=True)
    assert b'"type":"step/start","seq":2,' in lines[2]
    lines[2] = lines[2].replace(b'"step":1', b'"step":7')
    path = tmp_path / "step7.jsonl"
    path.write_bytes(b"".join(lines))
    code, docs = _json_reports(capsys, str(path))
    report = docs[0]
    assert code == 1 and report["verdict"] == "invalid"
    findings = report["findings"]
    assert [(f["line"], f["rule"]) for f in findings] == [(3, "LOG-13"), (5, "LOG-13")] + [(n, "LOG-13") for n in range(6, 23)]
    assert findings[1]["reason"] == "assistant/chunk names turn 1 step 1, but turn 1 step 7 is open"
    assert [f["causedBy"] for f in findings[:2]] == [None, None]
    assert all(f["causedBy"] == {"rule": "LOG-13", "line": 5, "seq": findings[1]["seq"]} for f in findings[2:])
    code, out, _ = _run(capsys, str(path))
    assert out.splitlines()[2] == "  caused by LOG-13 at line 5: 17 more: LOG-13 x17 (lines 6-22) (-v shows each)"
    assert len(out.splitlines()) == 5


def test_a_damaged_line_inside_a_fork_seed_does_not_cascade_into_fmt_11(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child's seed is 24 events (sessions.json); line 10 cannot be read,
    so only 9 events are audited: the seed is not compared (a note), and no
    ``seedLength exceeds`` or seed-mismatch finding follows from the damage."""
    source = GROUNDTRUTH / "k-fork-seeded-child"
    for name in ("sessions.json", "session.parent.jsonl"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    lines = (source / "session.jsonl").read_bytes().splitlines(keepends=True)
    lines[9] = b'{"type": oops\n'
    (tmp_path / "session.jsonl").write_bytes(b"".join(lines))
    code, docs = _json_reports(capsys, str(tmp_path / "session.jsonl"))
    report = docs[0]
    assert code == 1 and [(f["line"], f["rule"]) for f in report["findings"]] == [(10, "FMT-1")]
    assert "seedLength 24 reaches past the 9 events audited; seed not compared (FMT-11)" in report["notes"]


# --------------------------------------------------------------------------- verdict precedence


def test_a_trailing_end_seed_never_hides_the_findings_of_an_a55_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """session/end-seed is a D08 marker and messagePrefix an A55 one: mixed,
    so the dialect is undecided (FMT-10).  As A55 the log breaks LOG-13; as
    D08 every event is seed, and the companion replays the seed through the
    same checks (QF-12): the finding holds in both dialects, so the file is
    invalid whichever wrote it (exit 1), the mixed markers a note."""
    bad = GOOD.read_bytes().replace(b'"step":1,"chunk"', b'"step":7,"chunk"', 1)
    path = tmp_path / "endseed.jsonl"
    path.write_bytes(bad + b'{"type":"session/end-seed","seq":56,"time":1796222150099,"data":{}}\n')
    code, docs = _json_reports(capsys, str(path))
    report = docs[0]
    assert code == 1 and report["verdict"] == "invalid" and any(str(n).startswith("mixed dialect markers (FMT-10)") for n in report["notes"])
    assert ("LOG-13", 5, None) in [(f["rule"], f["line"], f["onlyIf"]) for f in report["findings"]]
    code, out, _ = _run(capsys, str(path))
    assert f"{path}:5: LOG-13 seq 4: assistant/chunk names turn 1 step 7" in out


def test_an_a55_log_concatenated_with_a_d08_log_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever the dialect, the second log restarts at seq 0 (LOG-1) and has
    a second session header line (FMT-1): findings of both dialects."""
    path = tmp_path / "concat.jsonl"
    path.write_bytes(GOOD.read_bytes() + D08.read_bytes())
    code, out, _ = _run(capsys, str(path))
    assert code == 1
    assert f"{path}:57: FMT-1: session header line after the first line" in out
    assert f"{path}:58: LOG-1 seq 0: seq 0 is not contiguous; expected 56" in out
    assert f"{path}: invalid (notes: mixed dialect markers (FMT-10)" in out


def test_unknown_is_not_a_pass_and_invalid_and_unreadable_win(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    assert _run(capsys, "--max-events", "10", str(GOOD))[0] == 4
    assert _run(capsys, "--max-events", "10", str(GOOD), str(bad))[0] == 1
    assert _run(capsys, "--max-events", "10", str(GOOD), str(bad), str(tmp_path / "missing.jsonl"))[0] == 2
    assert _run(capsys, str(GOOD))[0] == 0


# --------------------------------------------------------------------------- output and jobs


def test_a_newline_in_a_file_name_cannot_forge_a_verdict_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forged = "x.jsonl\nfake.jsonl: valid [A55 detected, 56 events]\ny.jsonl"
    path = tmp_path / forged
    path.write_bytes(GOOD.read_bytes().replace(b'"seq":4,', b'"seq":40,', 1))
    code, out, _ = _run(capsys, str(path))
    assert code == 1
    assert not any(line.startswith("fake.jsonl") for line in out.splitlines())
    escaped = str(path).replace("\n", "\\n")
    assert out.splitlines()[0].startswith(f"{escaped}:5: LOG-1")
    code, docs = _json_reports(capsys, str(path))
    assert docs[0]["path"] == str(path)  # JSON keeps the exact name (escaped by JSON itself)


def test_a_file_name_that_is_not_utf8_is_printed_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = os.fsdecode(b"bad\xff.jsonl")
    (tmp_path / name).write_bytes(GOOD.read_bytes())
    code, out, _ = _run(capsys, str(tmp_path))
    assert code == 0 and f"{tmp_path}/bad\\xff.jsonl: valid" in out
    code, docs = _json_reports(capsys, str(tmp_path))
    assert code == 0 and docs[0]["path"] == str(tmp_path / name)


@pytest.mark.interpreted_only("patches available_cpus, a constant or function the compiled checker binds natively")
def test_jobs_are_capped_at_the_cpus_and_it_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    used: list[int] = []
    real_reports = sessionspec.check.command._reports

    def spy(tasks: Iterator[sessionspec.check.command.Task], jobs: int) -> Iterator[object]:
        used.append(jobs)
        return real_reports(tasks, 1)

    monkeypatch.setattr(sessionspec.check.command, "available_cpus", lambda: 2)
    monkeypatch.setattr(sessionspec.check.command, "_reports", spy)
    code, out, err = _run(capsys, "--jobs", "200", str(GOOD))
    assert code == 0 and used == [2]
    assert err == "sessionspec check: --jobs 200 capped at 2, the CPUs available\n"
    assert _run(capsys, "--jobs", "2", str(GOOD))[2] == "" and used == [2, 2]


# --------------------------------------------------------------------------- one exit-code table


def _table_rows(markdown: str, heading: str) -> list[tuple[int, str]]:
    section = markdown.split(heading, 1)[1]
    return [(int(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^\| (\d) \| (.+?) \|$", section.split("\n\n", 2)[1], re.M)]


def test_exit_codes_are_one_table_in_check_md_guide_md_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    expected = [(code, meaning) for code, meaning in EXIT_CODES]
    assert _table_rows((ROOT / "docs" / "check.md").read_text(), "## Exit codes") == expected
    assert _table_rows((ROOT / "docs" / "guide.md").read_text(), "### Exit codes of `sessionspec check`") == expected
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for code, meaning in EXIT_CODES:
        assert f"{code} {meaning}" in help_text
