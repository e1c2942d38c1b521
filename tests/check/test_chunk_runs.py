"""A packed row's chunks taken as one run (ChunkRun, issue 26) give the report of the same chunks taken
one by one, as model.codec.expand_row makes them: for every fold, on real, ground-truth, generated and
mutated logs; and the run forms of the line table and the audited prefix are their event forms."""

from __future__ import annotations

import io
import json
import random
from array import array
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import fields, is_dataclass
from enum import Enum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.audited_prefix import PrefixTracker
from sessionspec.check.checker import check_log, check_path
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import FoldLoop
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.folds import AuditFold
from sessionspec.check.line_table import LineTable
from sessionspec.check.logfile import LineReader, read_stream
from sessionspec.check.surface_events import SurfaceEvents
from sessionspec.model.codec import parse_event_line, serialize_event
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import repair_closers
from tests.support import DATA, generated_log

_ROWS = (b'"type":"text-chunks"', b'"type":"reasoning-chunks"', b'"type":"tool-call-chunks"')
ROW_LOGS = sorted(p for p in DATA.rglob("*.jsonl") if p.is_file() and any(tag in p.read_bytes() for tag in _ROWS))


def _records(raw: bytes) -> Iterator[Event | ChunkRun]:
    return (record for record, _ in LineReader("log.jsonl").records(io.BytesIO(raw)))


def _outcome(raw: bytes, dialect: Dialect, folds: list[type[AuditFold]], as_runs: bool, first_live_seq: int = 0) -> tuple[object, ...]:
    loop = FoldLoop(dialect, first_live_seq, folds)
    for record in _records(raw):
        if isinstance(record, ChunkRun) and as_runs:
            loop.take_run(record)
        else:
            for event in record.members if isinstance(record, ChunkRun) else (record,):
                loop.take(event, event)
    found = loop.outcome()
    return found.findings, found.quirks, found.notes, found.outside, found.surface_rejected


class _WalkLocals(dict[str, object]):
    """A walk's locals (compared by the names both walks have)."""


def _state(value: object, inputs: dict[int, str], walks: bool, depth: int = 0) -> object:
    """A fold's state as plain data, to compare two folds: dataclasses, slotted and plain objects by
    their fields, a walk by its frame's locals (when ``walks``); the log before an event (shared by
    the folds) left out, the record being taken (a run, or a chunk of it: the input, not the state)
    named by its place only, and the record a walk took last left out."""
    assert depth < 40, "state nested too deep to compare"
    if id(value) in inputs:
        return inputs[id(value)]
    if isinstance(value, (str, int, float, bool, type(None), Enum, Event, frozenset, range)):
        return value
    if isinstance(value, SurfaceEvents):
        return "<before>"
    if isinstance(value, dict):
        return {key: _state(item, inputs, walks, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, array, deque)):
        return [_state(item, inputs, walks, depth + 1) for item in value]
    if isinstance(value, set):
        return sorted(value, key=repr)
    if isinstance(value, Generator):
        # ``event`` is the walk's ``yield`` target (WalkFold.walk): the last record sent, overwritten before it is
        # read, so no state; a walk not taking every type still holds an earlier record there (a run, or its last chunk).
        frame = value.gi_frame  # type: ignore[attr-defined]
        if frame is None or not walks:
            return None
        # Locals both walks have: a run's path may bind temporaries of its own.
        # A JSON object bound in a walk is a piece of an event it read (a temporary), not its state.
        return _WalkLocals({k: _state(v, inputs, walks, depth + 1) for k, v in frame.f_locals.items()
                            if k not in ("self", "event") and type(v) is not JsonObject})
    if callable(value) and not hasattr(value, "__dict__") and not hasattr(type(value), "__slots__"):
        return "<callable>"
    names = [f.name for f in fields(value)] if is_dataclass(value) else []
    names += [n for klass in type(value).__mro__ for n in getattr(klass, "__slots__", ())]
    names += list(getattr(value, "__dict__", {}))
    return (type(value).__name__, {n: _state(getattr(value, n), inputs, walks, depth + 1) for n in dict.fromkeys(names) if hasattr(value, n)})


def _lockstep(raw: bytes, dialect: Dialect, fold: type[AuditFold], first_live_seq: int = 0) -> None:
    """Two copies of a fold, one taking runs, one their chunks: equal state after every record."""
    by_run, by_event = FoldLoop(dialect, first_live_seq, [fold]), FoldLoop(dialect, first_live_seq, [fold])
    for record in _records(raw):
        members = record.members if isinstance(record, ChunkRun) else (record,)
        if isinstance(record, ChunkRun):
            by_run.take_run(record)
        else:
            by_run.take(record, record)
        for event in members:
            by_event.take(event, event)
        inputs = {id(record): "<record>", **{id(member): f"<member {k}>" for k, member in enumerate(members)}}
        # A walk's locals are compared after a record both paths take alike (a non-run the walk is
        # sent), when the temporaries of a run's own path are rebound or absent from the other: a state
        # a run leaves different lasts until then.
        walks = not isinstance(record, ChunkRun) and (fold.EVENT_TYPES is None or fold.AS_LOGGED or record.type in fold.EVENT_TYPES)
        mine, theirs = _state(by_run.made, inputs, walks), _state(by_event.made, inputs, walks)
        assert _same_state(mine, theirs), (fold.__name__, record)


def _same_state(a: object, b: object) -> bool:
    """Equal states; of two walks' locals, the names both have."""
    if isinstance(a, _WalkLocals) and isinstance(b, _WalkLocals):
        return all(_same_state(a[k], b[k]) for k in a.keys() & b.keys())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_state(x, y) for x, y in zip(a, b, strict=True))
    return a == b


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


def _typed(records: list[object], *types: str) -> list[int]:
    return [i for i, r in enumerate(records) if isinstance(r, dict) and r.get("type") in types]


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
    """One to four edits, then the seqs renumbered: a row's shared fields changed (turn, step, index:
    another integer or a fraction; kind, tool id, all texts empty), a row moved or doubled, a line dropped, an assistant/message or a
    request/header dropped (a visible attempt without its message, a request without its anchor: the
    first header), or a step's single chunks dropped (its rows are then its first chunks); the first row
    is edited more often (the first request of the log).  Sometimes then a crash after a row and its
    repair (:func:`_crashed`)."""
    records: list[object] = [json.loads(line) for line in raw.splitlines() if line.strip()]
    for _ in range(rng.randint(1, 4)):
        rows = _typed(records, "text-chunks", "reasoning-chunks", "tool-call-chunks")
        if len(records) < 2 or not rows:
            break
        at = rows[0] if rng.random() < 0.25 else rng.choice(rows)
        record = records[at]
        assert isinstance(record, dict)
        data = record["data"]
        match rng.randrange(11):
            case 0 | 1:
                key = rng.choice(["turn", "step", "index"])
                data[key] = data[key] + rng.choice([-1, 1, 0.5])
            case 2 if record["type"] != "tool-call-chunks":
                record["type"] = "reasoning-chunks" if record["type"] == "text-chunks" else "text-chunks"
            case 3 if "id" in data:
                data["id"] = "call-elsewhere"
            case 4 if "texts" in data:
                data["texts"] = [""] * len(data["texts"])
            case 5:
                records.insert(rng.randrange(1, len(records) + 1), records.pop(at))
            case 6:
                records.insert(at, json.loads(json.dumps(record)))
            case 7 if (messages := _typed(records, "assistant/message")):
                del records[rng.choice(messages)]
            case 8 if (headers := _typed(records, "request/header")):
                del records[headers[0] if rng.random() < 0.5 else rng.choice(headers)]
            case 9:
                starts = [i for i in _typed(records, "step/start") if i < at]
                start = starts[-1] if starts else 0
                records[start + 1 : at] = [r for r in records[start + 1 : at] if not (isinstance(r, dict) and r.get("type") == "assistant/chunk")]
            case _:
                del records[rng.randrange(1, len(records))]
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


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(events=st.integers(30, 600), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32), mutate=st.booleans(),
       first_live=st.sampled_from([0, 0, 1, 7, 40, 150]))
def test_runs_of_generated_and_mutated_logs_give_the_findings_of_their_chunks(events: int, seed: int, mutation: int, mutate: bool, first_live: int) -> None:
    """``first_live``: the events before it are a seed (a run may straddle the boundary)."""
    raw = generated_log(events, seed)
    if mutate:
        raw = _mutated(raw, random.Random(mutation))
    taking = [fold for fold in registered_folds() if fold.TAKES_RUNS]
    for dialect in Dialect:
        assert _outcome(raw, dialect, registered_folds(), True, first_live) == _outcome(raw, dialect, registered_folds(), False, first_live)
        for fold in taking:
            assert _outcome(raw, dialect, [fold], True, first_live) == _outcome(raw, dialect, [fold], False, first_live), fold.__name__


@settings(max_examples=40, deadline=None)
@given(events=st.integers(30, 300), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32), mutate=st.booleans(),
       dialect=st.sampled_from(Dialect), first_live=st.sampled_from([0, 0, 1, 7, 40]))
def test_a_fold_taking_runs_holds_the_state_of_taking_their_chunks_after_every_record(
        events: int, seed: int, mutation: int, mutate: bool, dialect: Dialect, first_live: int) -> None:
    """Stronger than equal findings: the state a run leaves is the state its chunks leave, record by record,
    for each fold that takes runs (its dataclasses, objects and walk locals compared)."""
    raw = generated_log(events, seed)
    if mutate:
        raw = _mutated(raw, random.Random(mutation))
    for fold in registered_folds():
        if fold.TAKES_RUNS:
            _lockstep(raw, dialect, fold, first_live)


def _rows_first(raw: bytes, rng: random.Random) -> bytes:
    """Every step's stream opened by a packed row (the single chunks before its first row dropped: the
    row's first member is the step's first chunk, the API-step judge still undecided), and some turns
    without their turn/start or turn/end (rows outside an open turn, turns closed by the next start)."""
    records: list[object] = [json.loads(line) for line in raw.splitlines() if line.strip()]
    kept: list[object] = []
    streamed = True  # has the current step's stream begun (a row seen since its step/start)?
    for record in records:
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "step/start":
            streamed = False
        elif kind in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            streamed = True
        elif (kind == "assistant/chunk" and not streamed) or (kind in ("turn/start", "turn/end") and rng.random() < 0.3):
            continue
        kept.append(record)
    old = [_seqs_of(r) for r in kept]
    moved = {a: b for r, seqs in zip(_renumbered(kept), old, strict=True) for a, b in zip(seqs, _seqs_of(r), strict=True)}
    for record in kept:  # what cites a seq follows it (a dropped chunk is no longer cited): the surface still folds
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("sourceEventSeqs"), list):
            record["sourceEventSeqs"] = [moved[q] for q in record["sourceEventSeqs"] if q in moved]
        data, op = record.get("data"), record.get("surfaceOp")
        for span in (op, data.get("shadowedRange") if isinstance(data, dict) else None):
            if isinstance(span, dict) and {"start", "end"} <= span.keys():
                span["start"], span["end"] = moved.get(span["start"], span["start"]), moved.get(span["end"], span["end"])
        if isinstance(data, dict) and isinstance(data.get("shadowedSeqs"), list):
            data["shadowedSeqs"] = [moved.get(q, q) for q in data["shadowedSeqs"]]
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in kept).encode()


def _seqs_of(record: object) -> list[int]:
    if not isinstance(record, dict) or record.get("type") == "session":
        return []
    if "seq0" in record:
        data = record.get("data")
        payload = data.get("texts", data.get("args")) if isinstance(data, dict) else None
        return list(range(record["seq0"], record["seq0"] + (len(payload) if isinstance(payload, list) and payload else 1)))
    return [record["seq"]] if "seq" in record else []


@settings(max_examples=30, deadline=None)
@given(events=st.integers(30, 300), seed=st.integers(0, 2**16), edit=st.integers(0, 2**32), dialect=st.sampled_from(Dialect))
def test_runs_that_open_a_step_or_lie_outside_a_turn_are_their_chunks(events: int, seed: int, edit: int, dialect: Dialect) -> None:
    """Where a run's first member decides something (the step's first chunk: the request point's
    anchor, the API-step judge), or no turn is open: findings, and state record by record, as for
    the chunks one by one."""
    raw = _rows_first(generated_log(events, seed), random.Random(edit))
    assert _outcome(raw, dialect, registered_folds(), True) == _outcome(raw, dialect, registered_folds(), False)
    for fold in registered_folds():
        if fold.TAKES_RUNS:
            _lockstep(raw, dialect, fold)


@pytest.mark.parametrize("texts", [["a"], ["a", "b"], ["", "b", "c"]])
@pytest.mark.parametrize("closed", [True, False])
def test_a_row_as_a_turns_first_inner_event_is_its_chunks(texts: list[str], closed: bool) -> None:
    """A turn whose first event after turn/start is a row (the turn's first inner event is the run's
    first member; one event only: an out-of-band append's shape, LOG-16), closed or left open."""
    lines = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
             {"type": "text-chunks", "seq0": 1, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1] * (len(texts) - 1), "texts": texts}}]
    if closed:
        lines.append({"type": "turn/end", "seq": 1 + len(texts), "time": 9, "data": {"turn": 1, "reason": {"kind": "completed"}}})
    raw = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()
    assert any(isinstance(record, ChunkRun) for record in _records(raw))
    for dialect in Dialect:
        assert _outcome(raw, dialect, registered_folds(), True) == _outcome(raw, dialect, registered_folds(), False)
        for fold in registered_folds():
            if fold.TAKES_RUNS:
                _lockstep(raw, dialect, fold)


@settings(max_examples=25, deadline=None)
@given(events=st.integers(30, 400), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32))
def test_the_streamed_report_of_a_mutated_log_is_the_report_of_its_events(events: int, seed: int, mutation: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """check_path (runs, streamed) against check_log (the events read whole, one by one), every dialect choice."""
    raw = _mutated(generated_log(events, seed), random.Random(mutation))
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
