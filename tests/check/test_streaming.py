"""The checker reads a file once and keeps none of its events (issue 26): the streamed report is the
report of the same file read into memory, whatever the first pass guessed; what the loop keeps of
the log is its surface; the line of a seq is its first event's."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check import log_pass
from sessionspec.check.checker import check_handle, check_log, check_path
from sessionspec.check.fold_loop import FoldLoop
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.line_table import LineTable
from sessionspec.check.log_pass import LogPass
from sessionspec.check.logfile import read_path, read_stream
from sessionspec.generate import write_log
from sessionspec.model.log import Dialect
from sessionspec.model.migrate import dialect_evidence
from tests.support import DATA

LOGS = sorted(p for p in DATA.rglob("*.jsonl") if p.is_file())


@given(st.lists(st.tuples(st.integers(-1, 6), st.integers(0, 2)), max_size=60))
def test_the_line_table_gives_each_seqs_first_line(steps: list[tuple[int, int]]) -> None:
    """Seqs mostly one more than the last (LOG-1), sometimes repeated or jumping; lines the same
    (a packed row) or later; the table answers the line of each seq's first event."""
    table, first = LineTable(), {}
    seq, line = 0, 1
    for jump, advance in steps:
        seq, line = max(seq + jump, 0), line + advance
        table.add(seq, line)
        first.setdefault(seq, line)
    for probe in range(-1, seq + 3):
        assert table.line_of(probe) == first.get(probe)
    assert table.line_of(None) is None


@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 2), st.booleans()), max_size=60))
def test_the_line_table_answers_between_adds_as_after_them(steps: list[tuple[int, int, bool]]) -> None:
    """A lookup closes the open run into the arrays; an event added afterwards opens a new one.
    With seqs increasing (LOG-1), every answer, given between adds or after all, is the first line."""
    table, first = LineTable(), {}
    seq, line = -1, 1
    for jump, advance, ask in steps:
        seq, line = seq + jump, line + advance
        table.add(seq, line)
        first[seq] = line
        if ask:
            assert table.line_of(seq) == line and table.line_of(seq + 1) is None
    for probe in range(-1, seq + 3):
        assert table.line_of(probe) == first.get(probe)


@pytest.mark.parametrize("hold", [log_pass.HOLD_EVENTS, 1])
def test_a_streamed_file_gets_the_report_of_the_file_in_memory(hold: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every real and ground-truth log, in every dialect choice: the streamed report (check_path) is
    check_log's of the file read whole, also when the first pass must guess from one event (hold 1:
    a D08 log without a marker on its first event is first judged as A55, then read again)."""
    monkeypatch.setattr(log_pass, "HOLD_EVENTS", hold)
    assert len(LOGS) > 100
    for path in LOGS:
        for forced in (None, Dialect.A55, Dialect.D08):
            assert check_path(str(path), forced) == check_log(read_path(str(path)), forced), (path, forced)


def _damaged(raw: bytes, rng: random.Random) -> bytes:
    lines = raw.split(b"\n")
    at = rng.randrange(len(lines))
    match rng.randrange(5):
        case 0:
            del lines[at]
        case 1:
            lines.insert(at, lines[rng.randrange(len(lines))])
        case 2:
            lines[at] = lines[at][: rng.randrange(len(lines[at]) + 1)]
        case 3:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        case _:
            lines[at] = lines[at].replace(b'"seq":', b'"seq":1', 1)
    return b"\n".join(lines)


@settings(max_examples=30, deadline=None)
@given(path=st.sampled_from([p for p in LOGS if p.stat().st_size < 200_000]), seed=st.integers(0, 2**32), hold=st.sampled_from([log_pass.HOLD_EVENTS, 1, 3]))
def test_a_damaged_streamed_file_gets_the_report_of_the_file_in_memory(path: Path, seed: int, hold: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same on real logs with a line dropped, duplicated, cut, swapped or its seq changed (damaged
    lines, seq breaks, markers moved past the held events)."""
    damaged = _damaged(path.read_bytes(), random.Random(seed))
    target = tmp_path_factory.mktemp("streamed") / path.name
    target.write_bytes(damaged)
    original = log_pass.HOLD_EVENTS
    log_pass.HOLD_EVENTS = hold
    try:
        for forced in (None, Dialect.D08):
            streamed = check_path(str(target), forced)
            assert streamed == check_log(read_stream(io.BytesIO(damaged), str(target), target), forced).renamed(streamed.path)
    finally:
        log_pass.HOLD_EVENTS = original


def _late_d08(path: Path) -> bool:
    """A D08 log whose first D08 marker is on a later event than its first."""
    log = read_path(str(path))
    evidence = dialect_evidence(log.events, None if log.header is None else log.header.value)
    return not evidence.mixed and evidence.d08_seq is not None and evidence.d08_seq > 0 and log.events[0].seq == 0


@pytest.mark.interpreted_only("patches HOLD_EVENTS, a constant or function the compiled checker binds natively")
def test_a_first_guess_the_markers_refute_is_not_the_judgement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A D08 log whose first event shows no marker, with one event held: the first pass guesses A55
    (FMT-10's default) and its audit is not used; the report is D08's."""
    monkeypatch.setattr(log_pass, "HOLD_EVENTS", 1)
    path = next(p for p in LOGS if _late_d08(p))
    log = read_path(str(path))
    first = LogPass(None, log.seed_length, "unknown", dialect_evidence((), None if log.header is None else log.header.value))
    for event, line in zip(log.events, log.lines, strict=True):
        first.take(event, line, None)
    first.finish()
    assert first.judged_as is not None and first.judged_as.dialect is Dialect.A55
    assert first.evidence.d08_seq is not None
    assert check_path(str(path)).dialect is Dialect.D08


def test_the_loop_keeps_only_the_events_on_the_surface() -> None:
    """SurfaceEvents: after a generated log with compactions, the events the loop keeps are exactly
    the surface's nodes, far fewer than the log's events."""
    out = io.StringIO()
    write_log(out, 3000, 0)
    log = read_stream(io.BytesIO(out.getvalue().encode()), "generated.jsonl")
    loop = FoldLoop(Dialect.A55, 0, registered_folds())
    for event in log.events:
        loop.take(event, event)
    assert loop.rejected is None
    assert set(loop.before.by_seq) == set(loop.nodes)
    assert len(loop.before) == len(log.events) > 10 * len(loop.nodes)


class _Stdin:
    def __init__(self, raw: bytes) -> None:
        self.buffer = io.BytesIO(raw)


@pytest.mark.parametrize("hold", [log_pass.HOLD_EVENTS, 1])
def test_standard_input_is_streamed_and_read_again_from_its_copy(hold: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-`` is streamed too: a second pass (hold 1 on a late-marker D08 log) reads the copy kept on
    disk, and the report is the one of the same bytes read whole."""
    monkeypatch.setattr(log_pass, "HOLD_EVENTS", hold)
    paths = [next(p for p in LOGS if _late_d08(p)), *LOGS[:20]]
    for path in paths:
        raw = path.read_bytes()
        monkeypatch.setattr("sys.stdin", _Stdin(raw))
        assert check_path("-") == check_log(read_stream(io.BytesIO(raw), "<stdin>")), path


@pytest.mark.parametrize("hold", [log_pass.HOLD_EVENTS, 1])
def test_an_open_handle_is_streamed_and_read_again_from_its_copy(hold: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """check_handle (the fsspec path) streams as well: its copy on disk serves the second pass, the
    handle is closed afterwards, and the report is the one of the same bytes read whole."""
    monkeypatch.setattr(log_pass, "HOLD_EVENTS", hold)
    paths = [next(p for p in LOGS if _late_d08(p)), *LOGS[:20]]
    for path in paths:
        raw = path.read_bytes()
        handle = io.BytesIO(raw)
        assert check_handle(handle, str(path), sidecar=path) == check_log(read_stream(io.BytesIO(raw), str(path), path)), path
        assert handle.closed
