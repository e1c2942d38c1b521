"""`replay` reads what `check` reads (issue 30): one reading path
(sessionspec/replay_read.py over sessionspec/check/logfile.py and check's
verdict) for dialect detection (FMT-10), zstandard frames, `-` for stdin, the
limits and the error wording.  Expectations come from `check` on the same
bytes: whatever check reads, replay reads; a log check finds invalid or
unknown is rebuilt up to check's first finding, marked, with check's exit code
(issue 46); whatever check cannot read, replay names in check's words."""

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
    assert done.stdout.startswith("dialect D08 (detected); 2 loop request(s)")
    forced = _cli("replay", str(path), "--dialect", "d08")
    assert forced.returncode == 0 and forced.stdout.startswith("dialect D08 (forced);")
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


def test_a_bad_line_stops_the_replay_where_check_reports_it(tmp_path: Path) -> None:
    """Line 21 of scenario b (turn 1's assistant/message) cut: FMT-1 there.  The request of turn 1 (its step
    started at seq 2, header at seq 3) is rebuilt; the log stops being a valid loop log at line 21; exit 1."""
    lines = A55_LOG.read_text(encoding="utf-8").splitlines()
    assert '"type":"assistant/message","seq":20,' in lines[20]
    lines[20] = lines[20][:-1]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    finding = next(line for line in _cli("check", str(path)).stdout.splitlines() if line.startswith(f"{path}:21: FMT-1"))
    done = _cli("replay", str(path))
    assert done.returncode == 1
    assert done.stdout.startswith("dialect A55 (detected); 1 loop request(s); 0 summariser request(s); check: invalid\n")
    assert done.stdout.count("== request ") == 1
    assert "== the log stops being a valid loop log at line 21 (FMT-1): the 1 request(s) before it are rebuilt from its first 20 events" in done.stdout
    assert f"   {finding}\n" in done.stdout
    assert done.stderr == f"sessionspec replay: check finds this log invalid: {finding}; the 1 request(s) before it are rebuilt (exit 1)\n"
    meta = json.loads(_cli("replay", str(path), "--format", "json").stdout)["meta"]
    assert meta["verdict"] == "invalid" and meta["stop"] == {"line": 21, "rule": "FMT-1", "seq": None, "kind": "invalid",
                                                             "reason": meta["stop"]["reason"], "eventsRebuilt": 20}
    quiet = _cli("replay", "-q", str(path))
    assert quiet.returncode == 1 and quiet.stderr == "" and quiet.stdout == done.stdout


def test_max_events_is_the_same_limit_and_the_replay_is_undecided(tmp_path: Path) -> None:
    check = _cli("check", "--max-events", "5", str(A55_LOG))
    assert check.returncode == 4
    done = _cli("replay", "--max-events", "5", str(A55_LOG))
    limit = next(line for line in check.stdout.splitlines() if "more than 5 events: reading stopped at this line" in line)
    assert done.returncode == 4 and f"check finds this log unknown: {limit};" in done.stderr
    # The events before the limit hold request 1's step/start and header: it is rebuilt, the rest is undecided.
    assert "== the log is undecided from here (a limit of sessionspec) at line 6 (FMT-1)" in done.stdout
    assert done.stdout.count("== request ") == 1


def test_a_log_check_calls_unknown_is_replayed_and_exits_4_as_check_does() -> None:
    """A replay script of bare assistant/chunk events: check says unknown (not a loop log), exit 4; replay
    shows what it can (no loop request) and exits 4 too, never 0."""
    script = REAL / "a55f148516" / "examples" / "headless-agent" / "tests" / "snapshots" / "ralph-loop" / "session.1.jsonl"
    assert _cli("check", str(script)).returncode == 4
    done = _cli("replay", str(script))
    assert done.returncode == 4 and done.stdout.startswith("dialect A55 (default); 0 loop request(s)")
    assert "check: unknown" in done.stdout.splitlines()[0]
    assert done.stderr.startswith("sessionspec replay: check finds this log unknown (a replay script of bare assistant/chunk events")
    page = _cli("replay", str(script), "--format", "html")
    assert page.returncode == 4 and 'data-verdict="unknown"' in page.stdout


def test_an_invalid_surface_op_stops_the_replay_before_it(tmp_path: Path) -> None:
    """Turn 2's first assistant/message (seq 38) with an invalid surfaceOp (SURF-3, line 39): requests 1 and 2
    are rebuilt (their steps start at seqs 2 and 25, before it); request 3 (step/start seq 39) is not; the page
    marks the stop in its summary, its timeline and after the requests."""
    rows = [json.loads(line) for line in A55_LOG.read_text(encoding="utf-8").splitlines()]
    message = next(r for r in rows if r["type"] == "assistant/message" and r["seq"] > 23)
    message["surfaceOp"] = "none"
    path = tmp_path / "surface.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    check = _cli("check", "-v", str(path))
    first = check.stdout.splitlines()[0]
    assert check.returncode == 1 and first.startswith(f"{path}:{message['seq'] + 1}: SURF-3 seq {message['seq']}: ")
    done = _cli("replay", str(path))
    assert done.returncode == 1 and done.stdout.count("== request ") == 2
    assert f"at line {message['seq'] + 1} (SURF-3)" in done.stdout and f"   {first.split(' [follows')[0]}" in done.stdout
    page = _cli("replay", str(path), "--format", "html").stdout
    assert page.count('<section class="request"') == 2 and 'id="stop"' in page and 'class="stop-banner"' in page
    assert 'id="stop-after-requests"' in page and page.index('id="request-2"') < page.index('id="stop-after-requests"')


def test_one_request_of_an_invalid_log_still_counts_every_request_rebuilt(tmp_path: Path) -> None:
    """The log of the test above (requests 1 and 2 rebuilt before SURF-3 at seq 38's line): ``--request 2`` shows
    request 2 alone, and the stop and standard error still count the 2 rebuilt; ``--request 3`` is out of range."""
    rows = [json.loads(line) for line in A55_LOG.read_text(encoding="utf-8").splitlines()]
    message = next(r for r in rows if r["type"] == "assistant/message" and r["seq"] > 23)
    message["surfaceOp"] = "none"
    path = tmp_path / "surface.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    done = _cli("replay", str(path), "--request", "2")
    assert done.returncode == 1 and done.stdout.count("== request ") == 1 and "== request 2 " in done.stdout
    assert f"at line {message['seq'] + 1} (SURF-3): the 2 request(s) before it are rebuilt" in done.stdout
    assert "; the 2 request(s) before it are rebuilt (exit 1)" in done.stderr
    beyond = _cli("replay", str(path), "--request", "3")
    assert beyond.returncode == 2 and beyond.stdout == ""
    assert beyond.stderr.startswith("sessionspec replay: --request 3 out of range (the log has 2 request(s); the log stops being")


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
    # Forced to A55, the D08-shaped user/message is a finding (LOG-12) at its line: replay stops there, exit 1.
    forced = _cli("replay", str(path), "--dialect", "A55")
    assert forced.returncode == 1 and "LOG-12" in forced.stderr and forced.stdout.startswith("dialect A55 (forced)")


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


def test_a_log_whose_first_header_is_invalid_rebuilds_nothing_before_it(tmp_path: Path) -> None:
    """A header whose reason is "change" before any initial anchor breaks FMT-9 at the first header (seq 3):
    no request lies wholly before it, so none is rebuilt; the stop is marked and check's finding said once."""
    rows = [json.loads(line) for line in A55_LOG.read_text(encoding="utf-8").splitlines()]
    next(r for r in rows if r["type"] == "request/header")["data"]["reason"] = "change"
    path = tmp_path / "reason.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    finding = next(line for line in _cli("check", "-v", str(path)).stdout.splitlines() if ": FMT-9 " in line)
    done = _cli("replay", str(path))
    assert done.returncode == 1 and done.stdout.count("== request ") == 0
    assert done.stderr == f"sessionspec replay: check finds this log invalid: {finding}; the 0 request(s) before it are rebuilt (exit 1)\n"
