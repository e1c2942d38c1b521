"""sessionspec/fast/nesting.py against the definitions of model/nesting.py (LOG-13 and the rules its relations check),
finding for finding.

On the logs the loop simulator writes (read as A55 and as D08), on the D08 writer's (a manual bracket between turns),
on every change tests/model/test_nesting.py shows refused, and on single edits of events all along a log (dropped,
renumbered, re-sequenced, moved to another turn, step or call, retyped), each dialect; packed rows of chunks taken at
once (CHK-6) as the model takes their members one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import pytest

from sessionspec.fast import nesting as fast
from sessionspec.model.jsonval import JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from tests.support import NESTING_CHANGES, d08_manual_log, repair_loop_log
from tests.support import nesting_judged as judged


def judged_fast(events: Sequence[Event], dialect: Dialect = Dialect.A55, rows: bool = False) -> list[Rejected]:
    """The twin folded over ``events`` as the checker folds it; with ``rows``, each run of chunks of one step taken at
    once, as a packed row is."""
    nesting = fast.Nesting()
    found: list[Rejected] = []
    for group in _rows(events) if rows else ([event] for event in events):
        if len(group) > 1:
            found += fast.chunk_row_vetoes(nesting, group, group[-1].seq, dialect)
        elif (bad := fast.companion_veto(nesting, group[0], dialect)) is not None:
            found.append(bad)
    return found


def _rows(events: Sequence[Event]) -> Iterator[list[Event]]:
    """Runs of consecutive chunks of one turn and step, with consecutive seqs (CHK-6), at most 5 (a row's members); every
    other event alone."""
    row: list[Event] = []
    for event in events:
        if (row and event.type == "assistant/chunk" and len(row) < 5 and event.seq == row[-1].seq + 1
                and _same(event, row[0], "turn") and _same(event, row[0], "step")):
            row.append(event)
            continue
        if row:
            yield row
        row = [event] if event.type == "assistant/chunk" else []
        if not row:
            yield [event]
    if row:
        yield row


def _same(event: Event, other: Event, key: str) -> bool:
    """One JSON value of ``key`` in both (a row has one turn and one step: ``true`` is not ``1``)."""
    ours, theirs = get(event.data, key), get(other.data, key)
    return type(ours) is type(theirs) and ours == theirs


def _agree(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    theirs = judged(events, dialect)
    assert judged_fast(events, dialect) == theirs
    assert judged_fast(events, dialect, rows=True) == theirs
    return theirs


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_same_findings_on_what_the_loop_writes(seed: int, dialect: Dialect) -> None:
    found = _agree(repair_loop_log(seed, 1500), dialect)
    assert (found == []) == (dialect is Dialect.A55)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_same_findings_on_what_the_d08_writer_writes(dialect: Dialect) -> None:
    found = _agree(d08_manual_log(4), dialect)
    assert (found == []) == (dialect is Dialect.D08)


@pytest.mark.parametrize("change", [change for change, _ in NESTING_CHANGES], ids=[change.__name__ for change, _ in NESTING_CHANGES])
@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_same_findings_on_each_change_the_model_refuses(change: Callable[[list[Event]], list[Event]], dialect: Dialect) -> None:
    changed = change(repair_loop_log(1, 3000))
    assert _agree(changed, dialect) != []


def _edited(event: Event, **changes: object) -> Event:
    data = thaw(event.data)
    if not isinstance(data, dict):
        return event
    data.update(changes)
    return replace(event, data=freeze(data))


def _edits(log: list[Event], at: int) -> Iterator[list[Event]]:
    event = log[at]
    turn, step = get(event.data, "turn"), get(event.data, "step")
    yield log[:at] + log[at + 1:]
    yield [*log[:at], replace(event, seq=log[at - 1].seq if at else -1), *log[at + 1:]]
    for other_type, data in (("todo/write", event.data), ("session/end-seed", freeze({})), ("compaction/start", freeze({"turn": None}))):
        retyped = make_event(other_type, seq=event.seq, time=event.time, data=data)
        yield [*log[:at], retyped, *log[at + 1:]]
    for other in (turn + 1 if isinstance(turn, int) else 1, None, "1", True):
        yield [*log[:at], _edited(event, turn=other), *log[at + 1:]]
    for other in (step + 1 if isinstance(step, int) else 1, None, 1.0):
        yield [*log[:at], _edited(event, step=other), *log[at + 1:]]
    yield [*log[:at], _edited(event, callId="c-other", error={"code": "TOOL_NOT_STARTED"}), *log[at + 1:]]
    if event.type == "tool/result":
        yield [*log[:at], replace(event, surface_op=freeze({"op": "replace"}) if event.surface_op == "append" else "append"), *log[at + 1:]]


@pytest.mark.parametrize("seed", [0, 3])
def test_the_same_findings_on_single_edits_along_a_log(seed: int) -> None:
    log = repair_loop_log(seed, 500)
    checked = 0
    for at in range(0, len(log), 11):
        for edited in _edits(log, at):
            for dialect in Dialect:
                _agree(edited, dialect)
                checked += 1
    assert checked > 300


def test_the_same_findings_where_a_row_does_not_follow_its_seq() -> None:
    """A row whose first seq does not increase is taken member by member, as the model takes it."""
    log = repair_loop_log(0, 400)
    at = next(i for i, e in enumerate(log) if e.type == "assistant/chunk" and log[i + 1].type == "assistant/chunk")
    repeated = [*log[:at], *[replace(e, seq=e.seq - 2) for e in log[at:at + 3]], *log[at + 3:]]
    assert isinstance(repeated[at].data, JsonObject)
    assert {f.rule for f in _agree(repeated, Dialect.A55)} == {"LOG-13"}
