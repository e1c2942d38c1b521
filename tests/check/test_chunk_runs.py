"""A packed row's chunks taken as one run (ChunkRun, issue 26) give the report of the same chunks taken
one by one, as model.codec.expand_row makes them: for every fold, on real, ground-truth, generated and
mutated logs; and the run forms of the line table and the audited prefix are their event forms."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.codec import parse_event_line, serialize_event
from model.log import Dialect, Event
from model.rejected import Rejected
from model.repair import repair_closers
from sessionspec.check.audited_prefix import PrefixTracker
from sessionspec.check.checker import check_log, check_path
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.folds import AuditFold, FoldLoop, registered_folds
from sessionspec.check.line_table import LineTable
from sessionspec.check.logfile import LineReader, read_stream
from sessionspec.generate import write_log
from tests.support import DATA

_ROWS = (b'"type":"text-chunks"', b'"type":"reasoning-chunks"', b'"type":"tool-call-chunks"')
ROW_LOGS = sorted(p for p in DATA.rglob("*.jsonl") if p.is_file() and any(tag in p.read_bytes() for tag in _ROWS))


def _records(raw: bytes) -> Iterator[Event | ChunkRun]:
    return (record for record, _ in LineReader("log.jsonl").records(io.BytesIO(raw)))


def _outcome(raw: bytes, dialect: Dialect, folds: list[type[AuditFold]], as_runs: bool) -> tuple[object, ...]:
    loop = FoldLoop(dialect, 0, folds)
    for record in _records(raw):
        if isinstance(record, ChunkRun) and as_runs:
            loop.take_run(record)
        else:
            for event in record.members if isinstance(record, ChunkRun) else (record,):
                loop.take(event, event)
    found = loop.outcome()
    return found.findings, found.quirks, found.notes, found.outside, found.surface_rejected


def _generated(events: int, seed: int) -> bytes:
    out = io.StringIO()
    write_log(out, events, seed)
    return out.getvalue().encode()


def _renumbered(records: list[object]) -> list[object]:
    """Seqs made contiguous again (LOG-1) after lines moved: a damage the folds judge past, not a seq break."""
    seq = 0
    for record in records:
        if not isinstance(record, dict) or record.get("type") == "session":
            continue
        if "seq0" in record:
            record["seq0"] = seq
            data = record.get("data")
            payload = data.get("texts", data.get("args")) if isinstance(data, dict) else None
            seq += len(payload) if isinstance(payload, list) and payload else 1
        elif "seq" in record:
            record["seq"] = seq
            seq += 1
    return records


def _crashed(records: list[object], rng: random.Random) -> list[object]:
    """The log cut after a packed row (else any line), sometimes without the row's step/start (then its
    closers are the turn/end alone, LOG-14, and no step/end may take the time); seqs renumbered."""
    rows = [i for i, r in enumerate(records) if isinstance(r, dict) and "seq0" in r]
    cut = rng.choice(rows) if rows and rng.random() < 0.8 else rng.randrange(1, len(records))
    head = records[: cut + 1]
    starts = [i for i, r in enumerate(head) if isinstance(r, dict) and r.get("type") == "step/start"]
    if starts and rng.random() < 0.5:
        del head[starts[-1]]
    return _renumbered(head)


def _repaired(raw: bytes) -> bytes:
    """The log and its crash-repair closers (LOG-14, model.repair): after a row they take its last chunk's time."""
    events = [event for line in raw.splitlines() if not isinstance(read := parse_event_line(line.decode()), Rejected) for event in read]
    return raw + "".join(serialize_event(closer) + "\n" for closer in repair_closers(events)).encode()


def _mutated(raw: bytes, rng: random.Random) -> bytes:
    """One to three edits: a row's shared fields changed (turn, step, index, kind, tool id, all texts
    empty), a row moved or doubled, a line dropped; then the seqs renumbered; sometimes then a crash
    after a row and its repair (:func:`_crashed`)."""
    records: list[object] = [json.loads(line) for line in raw.splitlines() if line.strip()]
    rows = [i for i, r in enumerate(records) if isinstance(r, dict) and "seq0" in r]
    for _ in range(rng.randint(1, 3)):
        at = rng.choice(rows) if rows and rng.random() < 0.8 else rng.randrange(1, len(records))
        record = records[at]
        data = record.get("data") if isinstance(record, dict) else None
        match rng.randrange(8):
            case 0 | 1 if isinstance(data, dict) and data.keys() & {"turn", "step", "index"}:
                key = rng.choice(sorted(data.keys() & {"turn", "step", "index"}))
                data[key] = data[key] + rng.choice([-1, 1]) if isinstance(data[key], int) else 0
            case 2 if isinstance(record, dict) and record.get("type") in ("text-chunks", "reasoning-chunks"):
                record["type"] = "reasoning-chunks" if record["type"] == "text-chunks" else "text-chunks"
            case 3 if isinstance(data, dict) and "id" in data:
                data["id"] = "call-elsewhere"
            case 4 if isinstance(data, dict) and isinstance(data.get("texts"), list):
                data["texts"] = [""] * len(data["texts"])
            case 5:
                records.insert(rng.randrange(1, len(records) + 1), records.pop(at))
            case 6:
                records.insert(at, json.loads(json.dumps(record)))
            case _:
                del records[at]
        rows = [i for i, r in enumerate(records) if isinstance(r, dict) and "seq0" in r]
        if len(records) < 2:
            break
    crash = rng.random() < 0.3 and len(records) > 1
    records = _crashed(records, rng) if crash else _renumbered(records)
    out = "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records).encode()
    return _repaired(out) if crash else out


def test_real_and_ground_truth_logs_hold_packed_rows() -> None:
    """The comparison below has runs to compare on the logs the project holds."""
    assert len(ROW_LOGS) > 20


@pytest.mark.parametrize("path", ROW_LOGS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_fold_finds_on_runs_what_it_finds_on_their_chunks(path: Path) -> None:
    """Real and ground-truth logs, as each dialect: the folds together, and each fold that takes runs alone."""
    raw = path.read_bytes()
    taking = [fold for fold in registered_folds() if fold.TAKES_RUNS]
    for dialect in Dialect:
        assert _outcome(raw, dialect, registered_folds(), True) == _outcome(raw, dialect, registered_folds(), False)
        for fold in taking:
            assert _outcome(raw, dialect, [fold], True) == _outcome(raw, dialect, [fold], False), fold.__name__


@settings(max_examples=60, deadline=None)
@given(events=st.integers(30, 600), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32), mutate=st.booleans())
def test_runs_of_generated_and_mutated_logs_give_the_findings_of_their_chunks(events: int, seed: int, mutation: int, mutate: bool) -> None:
    raw = _generated(events, seed)
    if mutate:
        raw = _mutated(raw, random.Random(mutation))
    taking = [fold for fold in registered_folds() if fold.TAKES_RUNS]
    for dialect in Dialect:
        assert _outcome(raw, dialect, registered_folds(), True) == _outcome(raw, dialect, registered_folds(), False)
        for fold in taking:
            assert _outcome(raw, dialect, [fold], True) == _outcome(raw, dialect, [fold], False), fold.__name__


@settings(max_examples=25, deadline=None)
@given(events=st.integers(30, 400), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32))
def test_the_streamed_report_of_a_mutated_log_is_the_report_of_its_events(events: int, seed: int, mutation: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """check_path (runs, streamed) against check_log (the events read whole, one by one), every dialect choice."""
    raw = _mutated(_generated(events, seed), random.Random(mutation))
    target = tmp_path_factory.mktemp("runs") / "mutated.jsonl"
    target.write_bytes(raw)
    for forced in (None, Dialect.A55, Dialect.D08):
        assert check_path(str(target), forced) == check_log(read_stream(io.BytesIO(raw), str(target), target), forced)


@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 2), st.integers(1, 5)), max_size=40))
def test_a_run_in_the_line_table_is_its_chunks_one_by_one(steps: list[tuple[int, int, int]]) -> None:
    by_run, by_event = LineTable(), LineTable()
    seq, line = 0, 1
    for jump, advance, count in steps:
        seq, line = max(seq + jump, 0), line + advance
        by_run.add_run(seq, count, line)
        for k in range(count):
            by_event.add(seq + k, line)
        seq += count - 1
    for probe in range(-1, seq + 3):
        assert by_run.line_of(probe) == by_event.line_of(probe)


@given(st.lists(st.tuples(st.integers(-1, 2), st.integers(0, 2), st.integers(1, 5)), max_size=30), st.one_of(st.none(), st.integers(1, 40)))
def test_a_run_taken_whole_by_the_prefix_is_its_chunks_taken_one_by_one(steps: list[tuple[int, int, int]], damage: int | None) -> None:
    """take_all takes all or nothing; where it takes, each take would have; the prefix is the same."""
    by_run, by_event = PrefixTracker(), PrefixTracker()
    seq, line = 0, 1
    for jump, advance, count in steps:
        seq, line = max(seq + jump, 0), line + advance
        before = (by_run.count, by_run.taken, by_run.open)
        if by_run.take_all(seq, count, line, damage):
            assert all([by_event.take(seq + k, line, damage) for k in range(count)])
        else:
            assert (by_run.count, by_run.taken, by_run.open) == before
            for k in range(count):
                by_run.take(seq + k, line, damage)
                by_event.take(seq + k, line, damage)
        seq += count
    assert by_run.finish() == by_event.finish()
