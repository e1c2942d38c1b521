"""LEG-7, LEG-8, Q-4 and Q-17 as the model decides them in a log (model/diagnostics.py), against the loop's logs.

Both ways, over logs the loop simulator writes: nothing is shown of them (no pre-A55 design, no scrubbed
header field, no time going back, no error naming a step that never started), and each change that shows one
is named by its rule.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.diagnostics import (
    MESSAGE_SUFFIX,
    REQUEST_ADVICE,
    earlier_than_previous,
    error_step_never_started,
    opaque_header_fields,
    outside_the_model,
    placeholder_note,
    pre_a55_design,
)
from sessionspec.model.jsonval import freeze, get, thaw
from sessionspec.model.log import Event, make_event


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 5) for event in block]


def _with_header(event: Event, **fields: object) -> Event:
    data = thaw(event.data)
    assert isinstance(data, dict)
    data["header"].update(fields)
    return replace(event, data=freeze(data))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_the_loops_logs_show_nothing(seed: int) -> None:
    log = loop_log(seed)
    assert [e.seq for e in log if pre_a55_design(e) is not None or opaque_header_fields(e)] == []
    assert [e.seq for before, e in zip(log, log[1:], strict=False) if earlier_than_previous(e, before.time) is not None] == []
    started: set[int] = set()
    for event in log:
        if event.type == "turn/start":
            started = set()
        elif event.type == "step/start":
            started.add(get(event.data, "step"))  # type: ignore[arg-type]
        elif event.type == "turn/end":
            assert error_step_never_started(event, started) is None


def test_LEG_7_a_pre_a55_design_is_named_and_puts_the_log_outside_the_model() -> None:
    header = next(e for e in loop_log(0) if e.type == "request/header")
    advice = make_event("agent/request-advice", seq=9, time=0, data=freeze({"before": [], "after": []}))
    assert pre_a55_design(advice) == REQUEST_ADVICE
    assert pre_a55_design(_with_header(header, messageSuffix=[])) == MESSAGE_SUFFIX
    assert pre_a55_design(header) is None
    why = outside_the_model({MESSAGE_SUFFIX: 3, REQUEST_ADVICE: 9})
    assert why is not None and why.index(REQUEST_ADVICE) < why.index(MESSAGE_SUFFIX) and "LEG-7" in why
    assert outside_the_model({}) is None


def test_LEG_8_scrubbed_header_fields_are_named() -> None:
    header = next(e for e in loop_log(0) if e.type == "request/header")
    scrubbed = _with_header(header, system="{{system}}", tools=["read", "write"], messagePrefix=["{{messagePrefix}}"])
    assert opaque_header_fields(scrubbed) == ("system", "tools", "messagePrefix")
    assert opaque_header_fields(_with_header(header, system="{{system}}")) == ("system",)
    note = placeholder_note({"system": 3})
    assert note is not None and "system (first at seq 3)" in note
    assert placeholder_note({}) is None


def test_Q_17_and_Q_4_are_shown() -> None:
    log = loop_log(1)
    earlier = replace(log[5], time=log[4].time - 1)
    quirk = earlier_than_previous(earlier, log[4].time)
    assert quirk is not None and quirk.rule == "Q-17"
    end = make_event("turn/end", seq=9, time=0, data=freeze({"turn": 1, "reason": {"kind": "error", "step": 2}}))
    quirk = error_step_never_started(end, {1})
    assert quirk is not None and quirk.rule == "Q-4"
    assert error_step_never_started(end, {1, 2}) is None
