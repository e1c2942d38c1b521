"""HDR-1, FMT-9, HDR-7 and PFX-15 as the model decides them in a log (model/header_log.py), against the loop that
writes headers.

Both ways, over logs the loop simulator writes (``sessionspec.generate``: an initial header, resumes and changes):
every header record is accepted, and each change the rules forbid (a header moved after the step's first chunk
or outside its step, a second one in a step, another reason, a change equal to the header in force, a prefix
changed inside an instance, a field of the wrong type) is refused by its rule.  The fold here is the test's own
(a HeaderTrack over the log, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.header import header_of_event
from sessionspec.model.header_log import (
    HeaderTrack,
    check_header_record,
    check_header_types,
    close_step,
    header_shapes,
    open_step,
)
from sessionspec.model.jsonval import freeze, get, thaw
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's header definitions folded over ``events``: each record's types, then its reason and place."""
    shapes, track, found, first = header_shapes(dialect), HeaderTrack(), [], True
    for event in events:
        match event.type:
            case "step/start":
                open_step(track)
            case "step/end":
                close_step(track)
            case "assistant/chunk":
                track.last_chunk = event
            case "request/header":
                found += check_header_types(event, dialect)
                header = header_of_event(event, dialect)
                assert not isinstance(header, Rejected)
                found += check_header_record(track, event, header, shapes, first)
                first = False
            case _:
                pass
    return found


def loop_log(seed: int, events: int = 1500) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_is_accepted(seed: int) -> None:
    log = loop_log(seed, 600)
    assert any(e.type == "request/header" for e in log)
    assert judged(log) == []


def _headers(log: list[Event], reason: str) -> list[int]:
    return [i for i, e in enumerate(log) if e.type == "request/header" and get(e.data, "reason") == reason]


def _with(event: Event, **fields: object) -> Event:
    data = thaw(event.data)
    assert isinstance(data, dict)
    for key, value in fields.items():
        if key == "reason":
            data["reason"] = value
        else:
            data["header"][key] = value
    return replace(event, data=freeze(data))


def _moved(log: list[Event], index: int, to: int) -> list[Event]:
    """The header at ``index`` moved to just before position ``to`` (seqs as they were: only the order counts here)."""
    changed = list(log)
    header = changed.pop(index)
    changed.insert(to if to < index else to - 1, header)
    return changed


def _rules(events: list[Event]) -> set[str]:
    return {finding.rule for finding in judged(events)}


@pytest.mark.parametrize("seed", [0, 4])
def test_a_header_out_of_place_is_fmt_9(seed: int) -> None:
    log = loop_log(seed)
    index = _headers(log, "resume")[0]
    first_chunk = next(i for i in range(index, len(log)) if log[i].type == "assistant/chunk")
    assert _rules(_moved(log, index, first_chunk + 1)) == {"FMT-9"}  # after the step's first chunk
    step_start = max(i for i in range(index) if log[i].type == "step/start")
    assert _rules(_moved(log, index, step_start)) == {"FMT-9"}  # before its step/start: outside a step
    doubled = [*log[: index + 1], replace(log[index], data=_with(log[index], reason="change", system="other").data), *log[index + 1:]]
    assert _rules(doubled) == {"FMT-9"}  # a second header in the step


@pytest.mark.parametrize("seed", [0, 4])
def test_a_header_with_another_reason_is_refused(seed: int) -> None:
    log = loop_log(seed)
    resume = _headers(log, "resume")[0]
    for reason, rules in (("initial", {"FMT-9"}), ("fallback", {"HDR-7"}), ("bogus", {"HDR-7"}), (7, {"HDR-7"})):
        changed = list(log)
        changed[resume] = _with(log[resume], reason=reason)
        assert _rules(changed) == rules, reason
    initial = _headers(log, "initial")[0]
    changed = list(log)
    changed[initial] = _with(log[initial], reason="resume")
    assert _rules(changed) == {"FMT-9"}  # a resume with no earlier header


def test_a_change_equal_to_the_header_in_force_or_changing_the_prefix_is_refused() -> None:
    log = loop_log(4)
    resume = _headers(log, "resume")[0]
    same = list(log)
    same[resume] = _with(log[resume], reason="change")
    assert _rules(same) == {"FMT-9"}  # equal to the fold (HDR-4)
    prefix = list(log)
    prefix[resume] = _with(log[resume], reason="change", messagePrefix=[{"role": "user", "content": [{"type": "text", "text": "p"}]}])
    assert _rules(prefix) == {"PFX-15"}


@pytest.mark.parametrize(("field", "value", "dialect", "rule"), [
    ("system", 5, Dialect.A55, "HDR-1"), ("tools", "read", Dialect.A55, "HDR-1"), ("messagePrefix", "opener", Dialect.A55, "HDR-1"),
    ("adapterDefaults", True, Dialect.D08, "DIA-8"),
])
def test_a_header_field_of_the_wrong_type_is_refused(field: str, value: object, dialect: Dialect, rule: str) -> None:
    header = next(e for e in loop_log(0, 200) if e.type == "request/header")
    assert check_header_types(header, dialect) == []
    assert {f.rule for f in check_header_types(_with(header, **{field: value}), dialect)} == {rule}
    assert check_header_types(_with(header, **{field: "{{" + field + "}}"}), dialect) == []  # FMT-6: opaque
