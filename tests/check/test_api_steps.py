"""FMT-7 Writers judged at each step's end (issue 26): :class:`ApiStepJudge` releases every event
once, in order, and finds the session-API steps the definition names -- "at least one
``assistant/message`` append, no ``assistant/chunk``, and no message carrying
``sourceEventSeqs``" -- on well-formed logs and on the same logs with chunks dropped and
citations removed (which makes API-built steps)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check.api_steps import ApiStepJudge, api_built_steps
from sessionspec.model.jsonval import ABSENT
from sessionspec.model.log import Event, make_event
from sessionspec.spec.log_strategies import well_formed_logs


def _definition(events: Sequence[Event]) -> frozenset[int]:
    """The rule read step by step: a step runs from its ``step/start`` to the next ``step/end``,
    ``turn/end`` or ``turn/start`` (or the end of the log); a ``step/start`` inside an unended
    step begins a new step and the unended one is not the API's (it never ended)."""
    found: set[int] = set()
    steps: list[list[Event]] = []
    open_step: list[Event] | None = None
    for event in events:
        if event.type == "step/start":
            open_step = [event]
            continue
        if open_step is None:
            continue
        if event.type in ("step/end", "turn/end", "turn/start"):
            steps.append(open_step)
            open_step = None
        else:
            open_step.append(event)
    if open_step is not None:
        steps.append(open_step)
    for step in steps:
        messages = [e for e in step if e.type == "assistant/message" and e.surface_op == "append"]
        chunked = any(e.type == "assistant/chunk" for e in step)
        cited = any(e.source_event_seqs is not ABSENT for e in messages)
        if messages and not chunked and not cited:
            found.add(step[0].seq)
    return frozenset(found)


@st.composite
def _logs(draw: st.DrawFn) -> tuple[Event, ...]:
    """A well-formed log; or with its chunks dropped and its citations removed, some or all."""
    events = draw(well_formed_logs())
    if draw(st.booleans()):
        drop_chunks, uncite = draw(st.booleans()), draw(st.booleans())
        events = tuple(
            replace(e, source_event_seqs=ABSENT) if uncite and e.type == "assistant/message" else e
            for e in events
            if not (drop_chunks and e.type == "assistant/chunk" and draw(st.booleans()))
        )
    return events


def _run(judge: ApiStepJudge, events: Sequence[Event]) -> list[Event]:
    released: list[Event] = []
    for event in events:
        taken = judge.take(event) if judge.pending is not None or event.type == "step/start" else (event,)
        released += taken
    released += judge.finish()
    return released


@given(_logs())
def test_the_judge_releases_every_event_once_in_order(events: tuple[Event, ...]) -> None:
    assert _run(ApiStepJudge(), events) == list(events)


@given(_logs())
def test_the_judge_finds_the_steps_the_definition_names(events: tuple[Event, ...]) -> None:
    judge = ApiStepJudge()
    _run(judge, events)
    assert frozenset(judge.built) == _definition(events) == api_built_steps(events)


def _event(kind: str, seq: int, **fields: object) -> Event:
    return make_event(kind, seq=seq, time=0, data={"turn": 1, "step": 1}, **fields)  # type: ignore[arg-type]


def test_a_step_is_judged_when_released_and_held_only_while_undecided() -> None:
    judge = ApiStepJudge()
    start = _event("step/start", 3)
    message = _event("assistant/message", 4, surface_op="append")
    assert judge.take(start) == ()
    assert judge.take(message) == ()
    end = _event("step/end", 5)
    assert list(judge.take(end)) == [start, message, end]
    assert judge.api and judge.built == {3}
    # A chunk decides the next step at once: the loop wrote it.
    chunk = _event("assistant/chunk", 7)
    judge.take(_event("step/start", 6))
    assert [e.seq for e in judge.take(chunk)] == [6, 7]
    assert not judge.api and judge.pending is None and judge.built == {3}
