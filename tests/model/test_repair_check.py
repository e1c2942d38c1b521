"""LOG-14 as the model decides it in a log (model/repair.py's CloserWatch), against the repair that writes closers.

Both ways, over logs the loop simulator writes (``sessionspec.generate``), cut inside a turn and closed by the
model's own repair (:func:`repair_closers`): every such log is accepted, and each change of the closers LOG-14
forbids (a closer dropped, two swapped, another code, text, time or provenance) is refused by LOG-14.  The fold
here is the test's own (a CloserWatch over the events, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import SCANNED_TYPES, CloserWatch, repair_closers, repair_shapes, scan_for_repair, watch_event


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's LOG-14 definitions folded over ``events``."""
    watch = CloserWatch(repair_shapes(dialect))
    found: list[Rejected] = []
    for previous, event in zip([None, *events], events, strict=False):
        if event.type in SCANNED_TYPES:
            found += watch_event(watch, event, previous)
    return found


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 5) for event in block]


def _cuts(log: list[Event]) -> list[int]:
    """Where a crash leaves calls pending: just after a message with tool calls, or after a ``tool/call``."""
    return [i + 1 for i, e in enumerate(log) if e.type == "tool/call"
            or (e.type == "assistant/message" and any(get(b, "type") == "tool-call" for b in _blocks(e)))]


def _blocks(message: Event) -> tuple[JsonObject, ...]:
    content = get(message.data, "content")
    return tuple(b for b in content if isinstance(b, JsonObject)) if isinstance(content, tuple) else ()


def repaired(log: list[Event], cut: int) -> tuple[list[Event], int]:
    """``log[:cut]`` and the closers the model's repair writes for it, and where the closers start."""
    prefix = log[:cut]
    closers = repair_closers(prefix)
    assert closers and closers[-1].type == "turn/end"
    return prefix + list(closers), cut


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_repair_writes_is_accepted(seed: int) -> None:
    log = loop_log(seed)
    assert judged(log) == []
    cuts = _cuts(log)
    assert cuts
    for cut in cuts[:: max(1, len(cuts) // 8)]:
        events, _ = repaired(log, cut)
        assert judged(events) == [], cut
        assert not scan_for_repair(events).open_turn


Change = Callable[[list[Event], int], list[Event]]


def _results(events: list[Event], start: int) -> list[int]:
    return [i for i in range(start, len(events)) if events[i].type == "tool/result"]


def _edit(events: list[Event], index: int, **changes: object) -> list[Event]:
    changed = list(events)
    changed[index] = replace(events[index], **changes)  # type: ignore[arg-type]
    return changed


def _dropped(events: list[Event], start: int) -> list[Event]:
    # Of two results or more: with none left, a step/end before the turn/end may be an ordinary one.
    return events[:start] + events[start + 1:]


def _swapped(events: list[Event], start: int) -> list[Event]:
    first, second = _results(events, start)[:2]
    changed = list(events)
    changed[first], changed[second] = replace(events[second], seq=events[first].seq), replace(events[first], seq=events[second].seq)
    return changed


def _late(events: list[Event], start: int) -> list[Event]:
    return _edit(events, len(events) - 1, time=events[-1].time + 1)


def _other_code(events: list[Event], start: int) -> list[Event]:
    index = _results(events, start)[0]
    code = get(get(events[index].data, "error"), "code")
    other = "TOOL_NOT_STARTED" if code == "TOOL_OUTCOME_UNKNOWN" else "TOOL_OUTCOME_UNKNOWN"
    data = events[index].data
    assert isinstance(data, JsonObject)
    error = freeze({"name": "ToolNotStartedError" if other == "TOOL_NOT_STARTED" else "ToolOutcomeUnknownError", "code": other})
    return _edit(events, index, data=JsonObject({**data, "error": error}))


def _other_text(events: list[Event], start: int) -> list[Event]:
    index = _results(events, start)[0]
    data = events[index].data
    assert isinstance(data, JsonObject)
    return _edit(events, index, data=JsonObject({**data, "content": freeze([{"type": "text", "text": "it broke"}])}))


def _no_provenance(events: list[Event], start: int) -> list[Event]:
    index = next(i for i in _results(events, start) if events[i].source_event_seqs is not ABSENT)
    return _edit(events, index, source_event_seqs=ABSENT)


def _cut_with(log: list[Event], results: int, started: bool) -> int:
    """A cut whose closers hold at least ``results`` synthetic results (one started, if asked)."""
    for cut in _cuts(log):
        closers = repair_closers(log[:cut])
        answers = [c for c in closers if c.type == "tool/result"]
        if len(answers) >= results and (not started or any(c.source_event_seqs is not ABSENT for c in answers)):
            return cut
    raise AssertionError("no such cut in the log")


@pytest.mark.parametrize(("change", "results", "started"), [
    (_dropped, 2, False), (_swapped, 2, False), (_late, 1, False), (_other_code, 1, False), (_other_text, 1, False),
    (_no_provenance, 1, True),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_closers_the_rule_forbids_are_refused(change: Change, results: int, started: bool, seed: int) -> None:
    log = loop_log(seed, 3000)
    events, start = repaired(log, _cut_with(log, results, started))
    assert judged(events) == []
    assert {finding.rule for finding in judged(change(events, start))} == {"LOG-14"}


def _d08_crash(result_time: int = 9, code: str = "TOOL_OUTCOME_UNKNOWN") -> list[Event]:
    """A D08 turn cut after a started call, closed as the D08 repair closes it (``repair.ts`` at 611615650f: the
    result is a message, DIA-10, and every closer takes the last event's time)."""
    message = {"id": "m1", "role": "assistant", "content": [{"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}]}
    result = {"id": "interrupted-tool-result-c1-5", "role": "user", "source": {"kind": "tool", "callId": "c1"},
              "content": [{"type": "tool-result", "toolCallId": "c1", "isError": True, "content": [{"type": "text", "text": "x"}]}]}
    name = "ToolOutcomeUnknownError" if code == "TOOL_OUTCOME_UNKNOWN" else "ToolNotStartedError"
    return [
        make_event("turn/start", seq=0, time=1, data=freeze({"turn": 1})),
        make_event("step/start", seq=1, time=2, data=freeze({"turn": 1, "step": 1})),
        make_event("assistant/message", seq=2, time=3, data=freeze({"turn": 1, "step": 1, "message": message}), surface_op="append"),
        make_event("tool/call", seq=3, time=9, data=freeze({"turn": 1, "step": 1, "callId": "c1"})),
        make_event("tool/result", seq=4, time=result_time, data=freeze({"turn": 1, "step": 1, "message": result, "error": {"name": name, "code": code}}),
                   surface_op="append", source_event_seqs=(3,)),
        make_event("step/end", seq=5, time=9, data=freeze({"turn": 1, "step": 1})),
        make_event("turn/end", seq=6, time=9, data=freeze({"turn": 1, "reason": {"kind": "interrupted"}})),
    ]


def test_DIA_10_the_d08_repair_is_judged_through_its_overlay() -> None:
    """D08's closers carry their call under ``data.message`` (DIA-10): the scan finds the call there, and a result
    with another code or another time than the closers' is LOG-14."""
    assert judged(_d08_crash(), Dialect.D08) == []
    assert {f.rule for f in judged(_d08_crash(code="TOOL_NOT_STARTED"), Dialect.D08)} == {"LOG-14"}
    assert {f.rule for f in judged(_d08_crash(result_time=10), Dialect.D08)} == {"LOG-14"}
    assert {f.rule for f in judged(_d08_crash(), Dialect.A55)} == {"LOG-14"}  # read as A55, no call is pending
