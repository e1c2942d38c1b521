"""Where compaction runs and what its bracket holds, as the model decides it in a log
(model/compaction/trigger_place.py, model/compaction/bracket_contents.py), against the writers that put brackets there.

Both ways, over logs the loop simulator writes (``sessionspec.generate``) with a compaction the model's own triggers
append where they run: ``pressure_compaction`` at A55's post-step (CMP-6) and D08's pre-step (DIA-6), the overflow
recovery after a failed step (CMP-7), a D08 manual compaction (DIA-20).  Every such log is accepted; the same
transaction written where its trigger does not run, or a bracket changed in a way its rule forbids, is refused by
that rule.  The fold here is the model's acceptor run over every event, as the checker runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.compaction_rules_audit import audit_compaction_rules
from sessionspec.generate import generate_events
from sessionspec.model.compaction.bracket_contents import check_bracket_body, take_event
from sessionspec.model.compaction.records import Ids, Trigger
from sessionspec.model.compaction.retention import tool_call_delta
from sessionspec.model.compaction.run import compact_if_needed, pressure_compaction
from sessionspec.model.compaction.trigger_place import TriggerPlace
from sessionspec.model.jsonval import JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from tests.support import short

WINDOW = 2000  # a context window small enough that pressure compaction writes a bracket at most points


def ids_of(attempt: int) -> Ids:
    """The D08 identities a writer is handed (DIA-2: a non-empty compactionId)."""
    return Ids(compaction_id=f"c{attempt}")


def judged(events: Sequence[Event], dialect: Dialect) -> list[Rejected]:
    """The model's acceptor folded over ``events``, every event live."""
    place, found = TriggerPlace(dialect), []
    for event in events:
        take_event(place, event, True, found)
    return found


def rules(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[str]:
    return [bad.rule for bad in judged(events, dialect)]


def at_last_start(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[tuple[str, int | None]]:
    """The findings with their seqs, and the seq they must name: a bracket's place is judged at its start (the
    latest bracket start of ``events``, the one the test appended), so a report points at that line."""
    starts = [e.seq for e in events if e.type in ("compact/start", "compaction/start")]
    return [(bad.rule, bad.seq - starts[-1] if bad.seq is not None else None) for bad in judged(events, dialect)]


def loop_log(seed: int, events: int = 1500) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def _indexes(log: Sequence[Event], type_name: str) -> list[int]:
    return [i for i, e in enumerate(log) if e.type == type_name]


def written(log: Sequence[Event], cut: int, dialect: Dialect = Dialect.A55, trigger: Trigger = Trigger.PRESSURE) -> list[Event] | None:
    """``log[:cut]`` and what ``compactIfNeeded(trigger)`` appends there (no trigger's gate: the place is the test's)."""
    run = compact_if_needed(log[:cut], short, trigger=trigger, dialect=dialect, context_window=WINDOW, ids=ids_of)
    assert not isinstance(run, Rejected), run
    if not any(e.type.endswith("/summary") for e in run.events) or run.error is not None:
        return None
    return [*log[:cut], *run.events]


def _at(events: list[Event], type_name: str) -> int:
    return max(_indexes(events, type_name))


def _then(events: list[Event], *boundaries: tuple[str, object]) -> list[Event]:
    """``events`` followed by these events, numbered on."""
    seq = events[-1].seq + 1
    return [*events, *(make_event(t, seq=seq + i, time=0, data=freeze(data)) for i, (t, data) in enumerate(boundaries))]


def _edited(event: Event, path: tuple[str, ...], value: object) -> Event:
    data = thaw(event.data)
    assert isinstance(data, dict)
    inner = data
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return replace(event, data=freeze(data))


def _answered_step_ends(log: list[Event]) -> list[int]:
    place, ends = TriggerPlace(Dialect.A55), []
    for i, event in enumerate(log):
        if event.type == "step/end" and place.message:
            ends.append(i)
        take_event(place, event, True, [])
    return ends


def _post_step_brackets(log: list[Event], limit: int = 4) -> list[list[Event]]:
    """The A55 pressure transaction ``pressure_compaction`` writes at the post-steps of ``log``: before the step/end of
    a step that answered (a failed step runs the request-error listener instead, CMP-7)."""
    found = []
    for cut in _answered_step_ends(log):
        run = pressure_compaction(log[:cut], short, context_window=WINDOW)
        assert not isinstance(run, Rejected), run
        if any(e.type == "compact/summary" for e in run.events) and run.error is None:
            found.append([*log[:cut], *run.events])
        if len(found) == limit:
            break
    assert found
    return found


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_is_accepted_in_both_dialects(seed: int) -> None:
    log = loop_log(seed, 800)
    assert judged(log, Dialect.A55) == []
    assert judged(list(migrate_legacy(log, "s")), Dialect.D08) == []  # legacy A55 turns in a D08 log (DIA-13)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_checker_runs_the_acceptor(seed: int) -> None:
    """The fold hands the acceptor every event but the chunks without a ``finish``: the same findings."""
    log = _post_step_brackets(loop_log(seed))[0]
    for events in (log, _then(log[:-1], ("step/start", {"turn": 1, "step": 99}))):
        assert audit_compaction_rules(events, Dialect.A55) == judged(events, Dialect.A55)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a55_pressure_brackets_lie_in_post_step(seed: int) -> None:
    """CMP-6: accepted where ``pressure_compaction`` writes (after the step's message and results, before
    ``step/end``); the same transaction before the message, before the last tool result, or after a successful
    step's ``step/end`` is refused by CMP-6."""
    log = loop_log(seed)
    for events in _post_step_brackets(log):
        assert judged(events, Dialect.A55) == []
    before_message = next(w for s in _indexes(log, "step/start") if (w := written(log, s + 1)) is not None)
    assert rules(before_message) == ["CMP-6"] and "before the step's assistant/message" in judged(before_message, Dialect.A55)[0].reason
    calling = [i for i in _indexes(log, "assistant/message") if tool_call_delta(log[i], Dialect.A55) > 0]
    before_result = next(w for i in calling if (w := written(log, i + 1)) is not None)
    assert rules(before_result) == ["CMP-6"] and "before the step's last tool result" in judged(before_result, Dialect.A55)[0].reason
    succeeded = [i for i in _indexes(log, "step/end") if log[i - 1].type != "assistant/chunk" and i + 1 < len(log)
                 and log[i + 1].type == "step/start"]
    after_success = next(w for i in succeeded if (w := written(log, i + 1)) is not None)
    assert rules(after_success) == ["CMP-6"]


def _failed_steps(log: list[Event]) -> dict[str, list[int]]:
    """The index after each failed step's ``step/end``, by its logged failure code ("" when none is logged)."""
    place, found, ends = TriggerPlace(Dialect.A55), [], {}  # type: ignore[var-annotated]
    for i, event in enumerate(log):
        take_event(place, event, True, found)
        if event.type == "step/end" and place.last_step_failed:
            code = place.last_failure_code
            ends.setdefault(code if isinstance(code, str) else "", []).append(i + 1)
    return ends


def test_an_a55_overflow_recovery_follows_a_failed_step_and_only_an_overflow() -> None:
    """CMP-7: a recovery after a failed step whose failure is unlogged is accepted; after an ``OVERLOADED`` one it
    is refused by CMP-7; a committed recovery is followed by the retry's ``step/start`` (or an interrupted end),
    and a turn that ends otherwise is refused by CMP-7 (P-CMP-10)."""
    log = loop_log(0)
    failed = _failed_steps(log)
    unlogged = next(w for cut in failed[""] if (w := written(log, cut, trigger=Trigger.CONTEXT_OVERFLOW)) is not None)
    assert judged(unlogged, Dialect.A55) == []
    overloaded = next(w for cut in failed["OVERLOADED"] if (w := written(log, cut, trigger=Trigger.CONTEXT_OVERFLOW)) is not None)
    assert rules(overloaded) == ["CMP-7"] and "OVERLOADED" in judged(overloaded, Dialect.A55)[0].reason
    assert at_last_start(overloaded) == [("CMP-7", 0)]
    assert rules(_then(unlogged, ("step/start", {"turn": 1, "step": 9}), ("turn/end", {"reason": {"kind": "completed"}}))) == []
    assert rules(_then(unlogged, ("turn/end", {"reason": {"kind": "aborted"}}))) == []
    assert rules(_then(unlogged, ("turn/end", {"reason": {"kind": "completed"}}))) == ["CMP-7"]


def test_an_automatic_bracket_needs_a_routed_header() -> None:
    """CMP-5: with no ``request/header`` before it, ``compactIfNeeded`` has no target and writes nothing."""
    events = _post_step_brackets(loop_log(1))[0]
    assert rules([e for e in events if e.type != "request/header"]) == ["CMP-5"]
    assert at_last_start([e for e in events if e.type != "request/header"]) == [("CMP-5", 0)]


def test_a_bracket_is_closed_before_the_loop_goes_on() -> None:
    """CMP-22/CMP-23: a bracket left open at the next ``step/start`` or a normal turn end is refused (by CMP-22
    after its checkpoint, CMP-23 before); only a failing turn end may follow an open start (Q-12).  CMP-6: a
    pressure bracket closes before its step's ``step/end``."""
    events = _post_step_brackets(loop_log(2))[0]
    end = events[-1]
    assert end.type == "compact/end"
    open_bracket = events[:-1]
    assert rules(_then(open_bracket, ("step/end", {}), ("step/start", {}))) == ["CMP-22"]
    assert rules(_then(open_bracket, ("turn/end", {"reason": {"kind": "completed"}}))) == ["CMP-22"]
    assert rules(_then(open_bracket, ("turn/end", {"reason": {"kind": "error"}}))) == []
    no_checkpoint = [e for e in open_bracket if not (e.type == "user/message" and isinstance(e.surface_op, JsonObject))]
    assert rules(_then(no_checkpoint, ("step/start", {}))) == ["CMP-23"]
    late = _then(open_bracket, ("step/end", {}))
    assert rules([*late, replace(end, seq=late[-1].seq + 1)]) == ["CMP-6"]


def test_what_a_bracket_holds() -> None:
    """CMP-2: the checkpoint's source is exactly the writer's; CMP-19: no surface append while the summarizer ran;
    CMP-23: a failed end after a checkpoint.  (CMP-12, the range, needs the priced surface:
    ``tests/model/test_range_selectable.py``.)"""
    events = _post_step_brackets(loop_log(0))[0]
    checkpoint, summary, end = _at(events, "user/message"), _at(events, "compact/summary"), len(events) - 1

    def changed(index: int, event: Event) -> list[str]:
        return rules([*events[:index], event, *events[index + 1:]])

    assert changed(checkpoint, _edited(events[checkpoint], ("source", "extra"), 1)) == ["CMP-2"]
    appended = make_event("user/message", seq=events[summary].seq, time=0, data=freeze({"content": [], "source": {"kind": "user"}}),
                          surface_op="append")
    assert rules([*events[:summary], appended, *events[summary:]]) == ["CMP-19"]
    assert changed(end, _edited(end_event := events[end], ("error",), {"message": "x"})) == ["CMP-23"] and end_event.type == "compact/end"


def test_a_prune_lies_where_compact_if_needed_runs() -> None:
    """PRN-6: the loop's prunes are accepted; the same replacement right after its step's ``step/start`` is refused
    by PRN-6 in A55 and in D08 (neither D08's window nor a legacy A55 one holds there)."""
    log = loop_log(0)
    prunes = [i for i in _indexes(log, "tool/result") if isinstance(log[i].surface_op, JsonObject)]
    assert prunes
    index = prunes[0]
    start = max(i for i in _indexes(log, "step/start") if i < index)
    moved = [*log[:start + 1], log[index], *log[start + 1:index], *log[index + 1:]]
    assert rules(moved) == ["PRN-6"]
    d08 = list(migrate_legacy(log, "s"))
    assert judged(d08, Dialect.D08) == []
    moved_d08 = [*d08[:start + 1], d08[index], *d08[start + 1:index], *d08[index + 1:]]
    assert [bad.rule for bad in judged(moved_d08, Dialect.D08)] == ["PRN-6"]


def test_d08_brackets_lie_in_pre_step_or_recover_a_failed_attempt() -> None:
    """DIA-6: accepted where D08's ``pressure_compaction`` writes (before ``step/start``) and a manual compaction
    (owner ``null``) between turns; the same transaction inside a step after its message is refused by DIA-6.
    DIA-2: a checkpoint source with an empty ``compactionId`` or its keys out of order is refused by DIA-2."""
    log = list(migrate_legacy(loop_log(1), "s"))
    pre_step = []
    for cut in _indexes(log, "step/start")[1:]:
        run = pressure_compaction(log[:cut], short, dialect=Dialect.D08, context_window=WINDOW, ids=ids_of)
        assert not isinstance(run, Rejected), run
        if any(e.type == "compaction/summary" for e in run.events) and run.error is None:
            pre_step.append([*log[:cut], *run.events])
        if len(pre_step) == 3:
            break
    assert pre_step
    for events in pre_step:
        assert judged(events, Dialect.D08) == []
    idle = log[: _at(log, "turn/end") + 1]
    manual = compact_if_needed(idle, short, dialect=Dialect.D08, trigger=Trigger.MANUAL, ids=ids_of)
    assert not isinstance(manual, Rejected) and manual.error is None and get(manual.events[0].data, "turn") is None
    assert judged([*idle, *manual.events], Dialect.D08) == []
    # CMP-5 binds the automatic trigger only: a manual bracket (owner null) needs no routed header before it.
    assert judged([*(e for e in idle if e.type != "request/header"), *manual.events], Dialect.D08) == []
    inside = next(w for i in _indexes(log, "assistant/message") if (w := written(log, i + 1, Dialect.D08)) is not None)
    assert [bad.rule for bad in judged(inside, Dialect.D08)] == ["DIA-6"]
    assert at_last_start(inside, Dialect.D08) == [("DIA-6", 0)]
    events = pre_step[0]
    checkpoint = _at(events, "user/message")
    source = get(events[checkpoint].data, "source")
    assert isinstance(source, JsonObject)
    for bad_source in ({**dict(source), "compactionId": ""}, {"plugin": "compact", **dict(source)}):
        edited = _edited(events[checkpoint], ("source",), bad_source)
        assert [bad.rule for bad in judged([*events[:checkpoint], edited, *events[checkpoint + 1:]], Dialect.D08)] == ["DIA-2"]


def test_a_body_the_shape_rules_report_is_not_judged_here() -> None:
    """A failed end without a checkpoint is what CMP-23 asks (a failure leaves the surface unchanged)."""
    events = _post_step_brackets(loop_log(0))[0]
    summary = _at(events, "compact/summary")
    place = TriggerPlace(Dialect.A55)
    for event in events[:summary]:
        take_event(place, event, True, [])
    place.checkpoint = None
    assert check_bracket_body(place, events[-1], True) is None
    place.checkpoint = events[summary + 1].seq
    bad = check_bracket_body(place, events[-1], True)
    assert bad is not None and bad.rule == "CMP-23"
