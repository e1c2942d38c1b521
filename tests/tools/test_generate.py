"""``sessionspec generate``: valid synthetic logs from the loop simulator (FMT-7, CHK-3/4, HDR-7, LOG-13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionspec.check.checker import Verdict, check_path
from sessionspec.cli import main
from sessionspec.generate import generate_lines
from sessionspec.model.codec import parse_event_line
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected


def _events(lines: list[str]) -> list[Event]:
    events: list[Event] = []
    for line in lines:
        decoded = parse_event_line(line)
        assert not isinstance(decoded, Rejected), decoded
        events.extend(decoded)
    return events


def test_FMT_7_generated_log_is_judged_valid_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gen.jsonl"
    assert main(["generate", "--events", "400", "--out", str(out), "--seed", "5"]) == 0
    assert main(["check", str(out)]) == 0
    text, err = capsys.readouterr()
    assert err == ""
    assert f"{out}: valid [A55 detected," in text


def test_FMT_7_stitched_instances_are_judged_valid(tmp_path: Path) -> None:
    """Small blocks force many appended instances: renumbered seqs, turns,
    provenance and call ids must still make a valid log."""
    out = tmp_path / "stitched.jsonl"
    out.write_text("".join(line + "\n" for line in generate_lines(events=700, seed=11, block_turns=2)), encoding="utf-8")
    report = check_path(str(out))
    assert report.verdict is Verdict.VALID, [f.text(report.path) for f in report.findings]


def test_HDR_7_one_initial_header_then_resumes_at_instance_starts() -> None:
    events = _events(list(generate_lines(events=500, seed=2, block_turns=2)))
    reasons = [e.data["reason"] for e in events if e.type == "request/header"]  # type: ignore[index]
    # FMT-9 (b): initial iff no earlier header, so exactly one, and first.
    assert reasons[0] == "initial" and reasons.count("initial") == 1
    assert "resume" in reasons


def test_LOG_13_seqs_turns_and_call_ids_follow_on_across_blocks() -> None:
    events = _events(list(generate_lines(events=1500, seed=4, block_turns=2)))
    assert [e.seq for e in events] == list(range(len(events)))
    turns = [e.data["turn"] for e in events if e.type == "turn/start"]  # type: ignore[index]
    assert turns == list(range(1, len(turns) + 1))
    call_ids = [e.data["callId"] for e in events if e.type == "tool/call"]  # type: ignore[index]
    assert call_ids and len(call_ids) == len(set(call_ids))


def test_CHK_3_chunk_runs_are_written_as_rows() -> None:
    types = {json.loads(line)["type"] for line in generate_lines(events=300, seed=1)}
    assert "text-chunks" in types
    assert {"turn/start", "request/header", "assistant/message", "tool/result"} <= types


def test_generate_is_deterministic_in_the_seed() -> None:
    first = list(generate_lines(events=300, seed=9))
    assert first == list(generate_lines(events=300, seed=9))
    assert first != list(generate_lines(events=300, seed=10))


@pytest.mark.parametrize("wanted", [1, 250, 3000])
def test_generate_writes_about_the_requested_number_of_events(wanted: int) -> None:
    count = len(_events(list(generate_lines(events=wanted, seed=0))))
    # It stops at the first turn boundary at or past N; one simulator turn is
    # at most a few dozen events, and a block is sized from the shortfall.
    assert wanted <= count <= wanted * 1.5 + 100


def test_generate_usage_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--events", "0", "--out", str(tmp_path / "x.jsonl")]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "--events" in err
    (tmp_path / "a-file").write_text("")  # --out creates missing directories, but not under a file
    assert main(["generate", "--events", "10", "--out", str(tmp_path / "a-file" / "x.jsonl")]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "cannot write" in err


def test_CMP_15_later_blocks_compact_what_earlier_blocks_left(tmp_path: Path) -> None:
    """A later block's first compaction is extended over the nodes earlier
    blocks left on the surface, with the token count recomputed (CMP-15), so
    the log stays valid and its surface stays as small as one session keeps it."""
    lines = list(generate_lines(events=3000, seed=7, block_turns=25))
    out = tmp_path / "blocks.jsonl"
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    report = check_path(str(out))
    assert report.verdict is Verdict.VALID, [f.text(report.path) for f in report.findings]
    events = _events(lines)
    turn_start = {e.data["turn"]: e.seq for e in events if e.type == "turn/start"}  # type: ignore[index]
    owner = 0
    reaches_back = False
    for event in events:
        if event.type == "compact/start":
            owner = event.data["turn"]  # type: ignore[index]
        elif event.type == "compact/summary":
            block_first_turn = (owner - 1) // 25 * 25 + 1
            reaches_back |= min(event.data["shadowedSeqs"]) < turn_start[block_first_turn]  # type: ignore[index, call-overload]
    assert reaches_back


@pytest.mark.parametrize(("events", "block_turns", "workers"), [(1500, 2, 2), (900, 3, 1), (40, 2, 2)])
def test_generate_with_workers_writes_the_same_lines(events: int, block_turns: int, workers: int) -> None:
    """Blocks simulated ahead in worker processes are the blocks the writer
    would simulate itself (pure in their seed), taken in order, and the tail
    (blocks of fewer turns) is simulated by the writer: the same lines."""
    alone = list(generate_lines(events=events, seed=3, block_turns=block_turns))
    assert list(generate_lines(events=events, seed=3, block_turns=block_turns, workers=workers)) == alone
