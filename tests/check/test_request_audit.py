"""RequestPointAudit judges each request point as it is made and derives no boundary; its findings are
those of check_request_points (the points with their boundaries, then judged), on generated logs, the
same logs damaged (tests/check/test_chunk_runs.py's mutations), and in both dialects; a fold whose
points are kept makes the points request_points makes."""

from __future__ import annotations

import io
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.fold_loop import run_alone, run_folds
from sessionspec.check.logfile import LineReader
from sessionspec.check.request_audit import RequestPointAudit, check_request_points
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from tests.support import generated_log


def _lines_dropped(raw: bytes, rng: random.Random) -> bytes:
    """A few lines dropped, seqs left as they were: the surface is rejected where a seq breaks (the
    audit then finds nothing), and the points before it are judged."""
    lines = raw.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        if len(lines) > 2:
            del lines[rng.randrange(1, len(lines))]
    return b"".join(lines)


def _events(raw: bytes) -> list[Event]:
    return [event for event, _ in LineReader("log.jsonl").events(io.BytesIO(raw))]


def _headers_damaged(raw: bytes, rng: random.Random) -> bytes:
    """Headers made useless, seqs kept: the first (or another) no longer a header (its requests have
    none in force, FMT-9), or a header's provider or model emptied (HDR-8)."""
    records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    headers = [r for r in records if r.get("type") == "request/header"]
    for _ in range(rng.randint(1, 3)):
        if not headers:
            break
        header = headers[0] if rng.random() < 0.4 else rng.choice(headers)
        if rng.random() < 0.5:
            header["type"] = "plugin/header-gone"
        else:
            header["data"]["header"]["config"][rng.choice(["provider", "model"])] = ""
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records).encode()


@settings(max_examples=60, deadline=None)
@given(events=st.integers(30, 500), seed=st.integers(0, 2**16), mutation=st.integers(0, 2**32), mutate=st.booleans(),
       damage=st.booleans(), dialect=st.sampled_from(Dialect), first_live_seq=st.sampled_from([0, 0, 7, 40]))
def test_the_judging_fold_finds_what_the_points_show(events: int, seed: int, mutation: int, mutate: bool, damage: bool,
                                                    dialect: Dialect, first_live_seq: int) -> None:
    raw = generated_log(events, seed)
    if mutate:
        raw = _lines_dropped(raw, random.Random(mutation))
    if damage:
        raw = _headers_damaged(raw, random.Random(mutation))
    log = _events(raw)
    outcome = run_folds(log, dialect, first_live_seq, [RequestPointAudit])
    if outcome.surface_rejected is not None:
        assert run_alone(RequestPointAudit, log, dialect, first_live_seq) == []
        return
    expected = check_request_points(log, dialect, first_live_seq)
    assert outcome.findings == expected
    assert isinstance(expected, list) and all(isinstance(f, Rejected) for f in expected)
