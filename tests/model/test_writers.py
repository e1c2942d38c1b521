"""FMT-7 Writers as the model decides them in a log (model/writers.py): the writer of each turn and the events of
the other dialect inside a turn one loop wrote (LOG-9, LOG-11, LOG-12 in an A55 turn; DIA-13, DIA-14 in a D08 one).

Both ways, over what the model writes: the loop simulator's logs (``sessionspec.generate``, the A55 loop) and the
D08 reader's migration of them (DIA-13: the D08 shapes).  Every turn is one loop's and mixes nothing; each event of
the other dialect put into a turn is refused by the writer's rule.  The fold here is the test's own (an OpenTurn
per turn, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.model.writers import (
    SHAPED_TYPES,
    OpenTurn,
    check_turn_dialects,
    dialect_writers,
    shape_dialect,
    turn_writer_kind,
)
from tests.support import with_data


def turns(events: Sequence[Event]) -> list[OpenTurn]:
    """Each turn of ``events`` (``turn/start`` to its ``turn/end``, or to the next start or the log's end)."""
    found: list[OpenTurn] = []
    open_turn: OpenTurn | None = None
    for event in events:
        if event.type == "turn/start":
            open_turn = OpenTurn(start=event, last=event)
            found.append(open_turn)
        elif open_turn is None:
            continue
        else:
            open_turn.last = event
            if event.type != "turn/end":
                open_turn.inner += 1
                open_turn.first_inner = open_turn.first_inner or event
                if event.type == "step/start":
                    open_turn.steps.append(event.seq)
        if event.type in SHAPED_TYPES and (marked := shape_dialect(event)) is not None:
            open_turn.marked.append((event, marked))
        if event.type == "turn/end":
            open_turn = None
    return found


def judged(events: Sequence[Event], first_live_seq: int = 0) -> list[Rejected]:
    return [r for t in turns(events) for r in check_turn_dialects(t, first_live_seq)]


def kinds(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0, built: Sequence[int] = ()) -> list[str]:
    return [turn_writer_kind(t, dialect_writers(dialect), first_live_seq, [s for s in t.steps if s in built])[0] for t in turns(events)]


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def _d08_end(event: Event) -> Event:
    """The D08 loop's end of a failed turn, ``{kind:"error", error: LlmFailure}`` (``agent-loop/src/agent.ts`` lines
    303-313 at ``611615650f``), where the A55 loop wrote ``{kind:"error", step, failure | message, code?}``; its
    other ends are the reader's migration of the A55 ones (DIA-14)."""
    reason = get(event.data, "reason")
    if event.type != "turn/end" or get(reason, "kind") != "error":
        return event
    failure = get(reason, "failure")
    carrier = failure if isinstance(failure, JsonObject) else reason
    code = get(carrier, "code")
    return with_data(event, reason={"kind": "error", "error": {"message": get(carrier, "message"), "code": code if isinstance(code, str) else "UNKNOWN"}})


def d08_log(seed: int, events: int = 400) -> list[Event]:
    """What the D08 loop writes, as the model gives it: the reader's migration of the simulator's turns (DIA-13) with
    the D08 loop's error ends."""
    return [_d08_end(event) for event in migrate_legacy(loop_log(seed, events), "s")]


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_each_turn_the_loops_write_is_one_loops(seed: int) -> None:
    log = loop_log(seed)
    migrated = d08_log(seed)
    assert judged(log) == [] and judged(migrated) == []
    count = len(turns(log))
    assert count > 1
    assert kinds(log, Dialect.A55) == ["a55-loop"] * count
    assert kinds(migrated, Dialect.D08) == ["d08-loop"] * count
    # Judged as logged, a legacy log read by D08 shows the A55 loop's turns, migrated on load (DIA-13).
    assert kinds(log, Dialect.D08) == ["a55-loop-legacy"] * count
    # A seed's turns are judged where they were written.
    assert kinds(log, Dialect.A55, first_live_seq=log[-1].seq + 1) == ["seed"] * count
    assert judged([*log[:-1], with_data(log[-1], reason={"kind": "blocked"})], first_live_seq=log[-1].seq + 1) == []


def _first(log: list[Event], type_name: str) -> int:
    return next(i for i, e in enumerate(log) if e.type == type_name)


def _swapped(log: list[Event], index: int, event: Event) -> list[Event]:
    return [*log[:index], event, *log[index + 1:]]


@pytest.mark.parametrize(("type_name", "a55", "d08"), [
    ("user/message", "LOG-12", "DIA-13"), ("assistant/message", "LOG-9", "DIA-13"), ("tool/result", "LOG-9", "DIA-13"),
])
def test_an_event_of_the_other_dialect_in_a_turn_is_refused_by_the_writers_rule(type_name: str, a55: str, d08: str) -> None:
    """A D08 event in an A55 turn: the A55 shape rule (LOG-9, LOG-12); a legacy event in a D08 turn: the migration
    rule (DIA-13), which rewrites whole legacy turns, not one event of a D08 turn."""
    log = loop_log(1)
    migrated = d08_log(1)
    index = _first(log, type_name)
    assert {(f.rule, f.seq) for f in judged(_swapped(log, index, migrated[index]))} == {(a55, log[index].seq)}
    assert {(f.rule, f.seq) for f in judged(_swapped(migrated, index, log[index]))} == {(d08, log[index].seq)}


@pytest.mark.parametrize(("reason", "a55", "d08"), [
    ({"kind": "completed"}, None, None), ({"kind": "disposed"}, None, "DIA-14"), ({"kind": "rejected", "reason": "r"}, None, "DIA-14"),
    ({"kind": "aborted"}, None, "DIA-14"), ({"kind": "error", "step": 1, "message": "m"}, None, "DIA-14"),
    ({"kind": "blocked"}, "LOG-11", None), ({"kind": "aborted", "reason": {"kind": "user"}}, "LOG-11", None),
    ({"kind": "error", "error": {"message": "m", "code": "c"}}, "LOG-11", None), ({"kind": "max-tokens"}, None, None),
])
def test_a_turn_end_of_the_other_dialect_is_refused(reason: dict[str, object], a55: str | None, d08: str | None) -> None:
    log = loop_log(1)
    end = _first(log, "turn/end")
    migrated = d08_log(1)
    for events, rule in ((log, a55), (migrated, d08)):
        changed = _swapped(events, end, with_data(events[end], reason=reason))
        assert {(f.rule, f.seq) for f in judged(changed)} == (set() if rule is None else {(rule, log[end].seq)})


def test_a_tie_goes_to_the_turn_start_and_a_majority_to_its_dialect() -> None:
    start = make_event("turn/start", seq=0, time=0, data=freeze({"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}))
    a55 = make_event("steering/message", seq=1, time=0, data=freeze({"turn": 1, "content": [], "source": {"kind": "user"}}))
    d08 = [make_event("agent/inbox/spliced", seq=s, time=0, data=freeze({})) for s in (2, 3)]
    end = make_event("turn/end", seq=4, time=0, data=freeze({"turn": 1, "reason": {"kind": "completed"}}))
    # turn/start and steering are A55's, two inbox splices D08's: a tie, the turn/start decides (A55).
    assert [(f.rule, f.seq) for f in judged([start, a55, *d08, end])] == [("LOG-9", 2), ("LOG-9", 3)]
    # Three D08 events against two A55: the D08 loop wrote it, and the A55 ones have no writer there.
    more = make_event("agent/inbox/spliced", seq=4, time=0, data=freeze({}))
    assert [(f.rule, f.seq) for f in judged([start, a55, *d08, more, replace(end, seq=5)])] == [("DIA-13", 0), ("DIA-13", 1)]
    # A D08 turn/start breaks the tie the other way.
    bare = make_event("turn/start", seq=0, time=0, data=freeze({"turn": 1}))
    assert [(f.rule, f.seq) for f in judged([bare, a55, d08[0], end])] == [("DIA-13", 1)]


def _out_of_band(start: Event, inner: Event, reason: str = "completed") -> list[Event]:
    return [start, replace(inner, seq=1), make_event("turn/end", seq=2, time=0, data=freeze({"turn": 1, "reason": {"kind": reason}}))]


def test_the_writers_of_a_turn() -> None:
    log = loop_log(1)
    start = replace(log[_first(log, "turn/start")], seq=0)
    title = make_event("session/title", seq=1, time=0, data=freeze({"title": "t", "messageSeqs": [], "source": {"kind": "user"}}))
    # LOG-16: turn/start, one log-only event, turn/end completed; the session appends out of band in A55 only.
    assert kinds(_out_of_band(start, title), Dialect.A55) == ["out-of-band"]
    assert kinds(_out_of_band(start, title, "interrupted"), Dialect.A55) == ["a55-loop"]
    assert kinds(_out_of_band(start, title), Dialect.D08) == ["a55-loop-legacy"]
    surface = log[_first(log, "user/message")]
    assert kinds(_out_of_band(start, surface), Dialect.A55) == ["a55-loop"]
    assert kinds([start, title], Dialect.A55) == ["a55-loop"]
    first = turns(log)[0]
    assert first.steps
    assert kinds(log, Dialect.A55, built=first.steps)[0] == "session-api"
    text = turn_writer_kind(first, dialect_writers(Dialect.A55), 0, first.steps[:1])[1]
    assert text.startswith("A55 loop and session API or tooling (steps at seq") == (len(first.steps) > 1)
    repaired = [*log[:_first(log, "turn/end")], with_data(log[_first(log, "turn/end")], reason={"kind": "interrupted"})]
    assert turn_writer_kind(turns(repaired)[0], dialect_writers(Dialect.A55), 0, [])[1] == "A55 loop, closed by crash repair (LOG-14)"
    assert turn_writer_kind(turns(log[:3])[0], dialect_writers(Dialect.A55), 0, [])[1] == "A55 loop, still open at the end of the log"
