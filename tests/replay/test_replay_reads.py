"""`replay` reads what `check` reads (issue 30): one reading path
(sessionspec/logsource.py over sessionspec/check/logfile.py) for dialect
detection (FMT-10), zstandard frames, `-` for stdin, the limits and the error
wording.  Expectations come from `check` on the same bytes: whatever check
reads, replay reads; whatever check cannot read, replay names in check's words
with check's exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from sessionspec.check.checker import DialectSource, Verdict, check_path
from sessionspec.logsource import ReadFailure, ReadLog, read_log
from sessionspec.model.log import Dialect
from sessionspec.replay import ReplayReport, replay
from tests.support import GROUNDTRUTH, REAL

D08_LOGS = sorted((REAL / "611615650f").rglob("*.jsonl"))
A55_LOG = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", *args], input=stdin, capture_output=True, timeout=120)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def _check_line(path: str) -> str:
    """The verdict line `check` prints for the file (check_path: the function check runs per file)."""
    return check_path(path).verdict_text()


@pytest.mark.parametrize("path", D08_LOGS, ids=lambda p: str(p.relative_to(REAL)))
def test_FMT_10_replay_detects_the_dialect_check_detects(path: Path) -> None:
    """Every real D08 log is read as D08 without --dialect, as check reads it
    (before: replay assumed A55 and failed with DER-1 on message-shaped events)."""
    report = check_path(str(path))
    read = read_log(str(path))
    assert isinstance(read, ReadLog), read
    assert (read.dialect, read.dialect_source, read.first_live_seq) == (report.dialect, report.dialect_source, report.first_live_seq)
    # a file without any dialect marker (no event, a replay script of bare chunks) gets the default, as in check
    assert read.dialect is Dialect.D08 or read.dialect_source is DialectSource.DEFAULT
    assert isinstance(replay(read.events, dialect=read.dialect, first_live_seq=read.first_live_seq), ReplayReport)


def test_replay_cli_on_a_d08_log_check_calls_valid() -> None:
    path = REAL / "611615650f" / "examples" / "acp-agent" / "tests" / "snapshots" / "web-fetch" / "session.jsonl"
    assert check_path(str(path)).verdict is Verdict.VALID
    done = _cli("replay", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dialect 611615650f (detected); 2 loop request(s)")
    forced = _cli("replay", str(path), "--dialect", "d08")
    assert forced.returncode == 0 and forced.stdout.startswith("dialect 611615650f (forced);")
    assert forced.stdout.split("\n", 1)[1] == done.stdout.split("\n", 1)[1]


def test_replay_reads_zstd_and_stdin_as_the_plain_file(tmp_path: Path) -> None:
    data = A55_LOG.read_bytes()
    compressed = tmp_path / "session.jsonl.zst"
    compressed.write_bytes(zstandard.ZstdCompressor().compress(data))
    plain = _cli("replay", str(A55_LOG), "--format", "json")
    assert plain.returncode == 0
    assert _cli("replay", str(compressed), "--format", "json").stdout == plain.stdout
    assert _cli("replay", "-", "--format", "json", stdin=data).stdout == plain.stdout


@pytest.mark.parametrize("make", ["missing", "directory", "fifo", "cut-zstd", "not-utf8-zst"])
def test_replay_cannot_read_what_check_cannot_read_and_says_it_in_checks_words(tmp_path: Path, make: str) -> None:
    path = tmp_path / "log.jsonl"
    if make == "directory":
        path.mkdir()
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "cut-zstd":
        path = tmp_path / "log.jsonl.zst"
        whole = zstandard.ZstdCompressor().compress(A55_LOG.read_bytes())
        path.write_bytes(whole[: len(whole) // 2])
    elif make == "not-utf8-zst":
        path = tmp_path / "log.jsonl.zst"
        path.write_bytes(b"\xff\xfe not a zstd frame")
    expected = _check_line(str(path))
    assert ": unreadable (" in expected
    done = _cli("replay", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"sessionspec replay: {expected}\n"
    assert "Errno" not in done.stderr and "codec can't decode" not in done.stderr
    if make == "cut-zstd":  # lines count from 1: the read failed in line 1 (it once said "after line 0")
        assert "(read error at line 1: zstd stream ends at byte" in done.stderr and "line 0" not in done.stderr


def test_a_bad_line_is_reported_as_check_reports_it(tmp_path: Path) -> None:
    lines = A55_LOG.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-1]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    finding = next(line for line in _cli("check", str(path)).stdout.splitlines() if line.startswith(f"{path}:4: "))
    done = _cli("replay", str(path))
    assert done.returncode == 1 and done.stderr == f"sessionspec replay: {finding}\n"


def test_max_events_is_the_same_limit_and_the_replay_is_undecided(tmp_path: Path) -> None:
    check = _cli("check", "--max-events", "5", str(A55_LOG))
    assert check.returncode == 4
    done = _cli("replay", "--max-events", "5", str(A55_LOG))
    assert done.returncode == 4 and "more than 5 events: reading stopped at this line" in done.stderr
    assert done.stderr.removeprefix("sessionspec replay: ").rstrip("\n") in check.stdout


def test_mixed_dialect_markers_are_undecided_until_dialect_decides(tmp_path: Path) -> None:
    """An A55 log (its header carries a messagePrefix) with one user/message
    given D08's role and id: markers of both dialects (FMT-10)."""
    rows = [json.loads(line) for line in A55_LOG.read_text(encoding="utf-8").splitlines()]
    user = next(r for r in rows if r["type"] == "user/message")
    user["data"] = {**user["data"], "role": "user", "id": "m-1"}
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_log(str(path))
    assert isinstance(read, ReadFailure) and read.exit_code == 4 and "mixed dialect markers (FMT-10)" in read.message
    done = _cli("replay", str(path))
    assert done.returncode == 4 and "use --dialect to force one" in done.stderr
    assert _cli("replay", str(path), "--dialect", "a55").returncode == 0


def test_the_sidecar_seed_length_check_reads_is_the_replays_default() -> None:
    """Ground-truth logs carry their session header in sessions.json (no header
    line): check and replay take the seed length from it; --seed-length overrides."""
    path = GROUNDTRUTH / "k-fork-seeded-child"
    child = next(p for p in sorted(path.glob("*.jsonl")) if check_path(str(p)).first_live_seq > 0)
    read = read_log(str(child))
    assert isinstance(read, ReadLog) and read.first_live_seq == check_path(str(child)).first_live_seq > 0
    meta = json.loads(_cli("replay", str(child), "--format", "json").stdout)["meta"]
    assert meta["firstLiveSeq"] == read.first_live_seq
    assert json.loads(_cli("replay", str(child), "--format", "json", "--seed-length", "0").stdout)["meta"]["firstLiveSeq"] == 0


def test_a_log_check_finds_invalid_is_still_replayed_with_a_note(tmp_path: Path) -> None:
    """A header whose reason is "change" before any initial anchor breaks FMT-9,
    but every request can still be rebuilt: replay shows them and says what
    check finds, in check's words, once on stderr."""
    rows = [json.loads(line) for line in A55_LOG.read_text(encoding="utf-8").splitlines()]
    next(r for r in rows if r["type"] == "request/header")["data"]["reason"] = "change"
    path = tmp_path / "reason.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    finding = next(line for line in _cli("check", str(path)).stdout.splitlines() if ": FMT-9 " in line)
    done = _cli("replay", str(path))
    assert done.returncode == 0 and done.stdout.count("== request ") == 3
    assert done.stderr == (f"sessionspec replay: note: check finds this log invalid ({finding}); "
                           "the requests below are rebuilt from the log as it is\n")
