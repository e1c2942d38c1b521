"""sessionspec.fast.writers answers as the model's definitions (model/writers.py) do, one for one: ``shape_dialect`` on
every event of the logs the loop simulator writes and of their D08 form (DIA-13), and on drawn data of every type;
``turn_writer_kind`` and ``check_turn_dialects`` (the writers' fold run with the twins and with the definitions in
their place) writer for writer and finding for finding, on those logs, the real logs and single changes of a turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check import writers as check_writers
from sessionspec.check import writers_audit
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.logfile import read_path
from sessionspec.check.writers_audit import TurnWritersAudit
from sessionspec.fast import writers as fast
from sessionspec.generate import generate_events
from sessionspec.model import writers as model
from sessionspec.model.jsonval import ABSENT, Json, freeze
from sessionspec.model.log import Dialect, Event, EventKind, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.spec.json_strategies import json_values
from tests.support import with_data

_TYPES = [kind.value for kind in EventKind] + ["steering/message", "prompt/blocked", "agent/inbox/spliced", "compact/start", "plugin/x"]
_KEYS = ["trigger", "reason", "role", "id", "message", "provenance", "callId", "error", "kind", "x"]


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_the_twin_marks_every_written_event_as_the_model_does(seed: int) -> None:
    log = [event for block in generate_events(300, seed, 2) for event in block]
    for event in (*log, *migrate_legacy(log, "s")):
        assert fast.shape_dialect(event) is model.shape_dialect(event)


@given(st.sampled_from(_TYPES), json_values() | st.dictionaries(st.sampled_from(_KEYS), json_values(max_leaves=3)
                                                                  | st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(
                                                                      ["rejected", "disposed", "blocked", "aborted", "error", "completed"])),
                                                                  max_size=4).map(freeze))
def test_the_twin_marks_any_data_as_the_model_does(kind: str, data: Json) -> None:
    event = make_event(kind, seq=0, time=0, data=data)
    assert fast.shape_dialect(event) is model.shape_dialect(event)


DATA = Path(__file__).parents[1] / "data"


def _writers(events: Sequence[Event], dialect: Dialect, first_live_seq: int) -> tuple[object, list[Rejected]]:
    outcome = run_folds(events, dialect, first_live_seq, [TurnWritersAudit])
    fold = next(f for f in outcome.folds if isinstance(f, TurnWritersAudit))
    return fold.attribution(), outcome.findings


def writers_tied(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> None:
    """The writers' fold with the twins of ``turn_writer_kind`` and ``check_turn_dialects``, and with the definitions
    in their place: the same writer for every turn, the same findings."""
    assert check_writers.turn_writer_kind is not model.turn_writer_kind
    by_twins = _writers(events, dialect, first_live_seq)
    with mock.patch.object(check_writers, "turn_writer_kind", model.turn_writer_kind), \
            mock.patch.object(writers_audit, "check_turn_dialects", model.check_turn_dialects):
        assert by_twins == _writers(events, dialect, first_live_seq)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_the_twins_attribute_every_simulated_turn_as_the_model(seed: int) -> None:
    log = [event for block in generate_events(300, seed, 2) for event in block]
    for dialect in Dialect:
        writers_tied(log, dialect)
        writers_tied(migrate_legacy(log, "s"), dialect)
        writers_tied(log, dialect, first_live_seq=log[len(log) // 2].seq)


def test_the_twins_attribute_every_real_turn_as_the_model() -> None:
    logs = 0
    for path in sorted(DATA.rglob("*.jsonl")):
        events = read_path(str(path)).events
        if any(e.type == "turn/start" for e in events):
            logs += 1
            for dialect in Dialect:
                writers_tied(events, dialect)
    assert logs > 10


def test_the_twins_attribute_each_single_change_of_a_turn_as_the_model() -> None:
    """A turn of the other dialect's shape mixed in, an interrupted or out-of-band end, an open last turn, an API step
    (a message with no chunk and no sourceEventSeqs), a dropped turn/end."""
    log = [event for block in generate_events(300, 4, 2) for event in block]
    d08 = migrate_legacy(log, "s")
    ends = [i for i, e in enumerate(log) if e.type == "turn/end"]
    starts = [i for i, e in enumerate(log) if e.type == "turn/start"]
    changed: list[list[Event]] = [log[:-1], log[: ends[1]] + log[ends[1] + 1:]]
    for i in (*starts[:2], *ends[:2], *[i for i, e in enumerate(log) if e.type in ("user/message", "assistant/message")][:4]):
        changed.append([*log[:i], d08[i], *log[i + 1:]])
    for reason in ({"kind": "interrupted"}, {"kind": "completed"}, {"kind": "error", "error": {}}, "x"):
        changed.append([*log[: ends[0]], with_data(log[ends[0]], reason=reason), *log[ends[0] + 1:]])
    # A stepless turn of one log-only event that ends completed (LOG-16's out-of-band shape).
    first = log[starts[0]]
    n = len(log)
    oob = [make_event("turn/start", seq=n, time=0, data=first.data), make_event("plugin/x", seq=n + 1, time=0, data=freeze({})),
           make_event("turn/end", seq=n + 2, time=0, data=freeze({"turn": 99, "reason": {"kind": "completed"}}))]
    changed.append([*log, *oob])
    # An API step: the chunks of the first step dropped and its message's sourceEventSeqs with them.
    step = next(i for i, e in enumerate(log) if e.type == "step/start")
    chunks = {i for i, e in enumerate(log) if e.type == "assistant/chunk" and i > step and i < next(j for j in range(step, n) if log[j].type == "step/end")}
    changed.append([replace(e, source_event_seqs=ABSENT) if e.type == "assistant/message" and i > step else e
                    for i, e in enumerate(log) if i not in chunks])
    for events in changed:
        for dialect in Dialect:
            writers_tied(events, dialect)
