"""sessionspec.fast.provenance gives the findings of the model's provenance definitions (model/provenance.py), one
for one: on the logs the loop simulator writes, read as A55 and as D08, and on every single change of a message's
or a result's provenance (cited seqs dropped, doubled, swapped, moved to another step or event, not integers),
and on D08 error finishes (DIA-7's retry)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.fast import provenance as fast
from sessionspec.generate import generate_events
from sessionspec.model import message_shape
from sessionspec.model import provenance as model
from sessionspec.model.jsonval import Json, JsonObject, freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.spec.json_strategies import json_values


def _both(events: list[Event], dialect: Dialect) -> Iterator[tuple[list[Rejected], list[Rejected]]]:
    """Each event judged by both, as the fold judges it (a stream per step, each live append judged)."""
    ours: fast.StepStream | None = None
    theirs: model.StepStream | None = None
    for event in events:
        match event.type:
            case "step/start":
                ours, theirs = fast.StepStream(), model.StepStream()
            case "step/end" | "turn/end" | "turn/start":
                ours = theirs = None
            case "assistant/chunk" if ours is not None and theirs is not None:
                fast.take_chunks(ours, (event,), dialect)
                model.take_chunks(theirs, (event,), dialect)
            case "tool/call" if ours is not None and theirs is not None:
                fast.take_call(ours, event)
                model.take_call(theirs, event)
            case "assistant/message" | "tool/result" if ours is not None and theirs is not None:
                yield fast.check_stream_provenance(event, ours, dialect), model.check_stream_provenance(event, theirs, dialect)
            case _:
                pass


def _agree(events: list[Event], dialect: Dialect) -> int:
    judged = 0
    for ours, theirs in _both(events, dialect):
        assert ours == theirs
        judged += 1
    return judged


def _log(seed: int, size: int = 300) -> list[Event]:
    return [event for block in generate_events(size, seed, 5) for event in block]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(Dialect))
def test_the_same_findings_on_what_the_loop_writes(seed: int, dialect: Dialect) -> None:
    assert _agree(_log(seed), dialect) > 0


def _variants(cited: tuple[Json, ...], others: tuple[int, ...]) -> Iterator[tuple[Json, ...]]:
    yield ()
    yield cited[1:]
    yield cited[:-1]
    yield cited + cited[-1:]
    yield tuple(reversed(cited))
    yield (True,) + cited[1:]
    yield (1.0 * cited[0],) + cited[1:] if cited and isinstance(cited[0], int) else cited
    yield ("0",)
    for other in others[:4]:
        yield (other,) + cited[1:]
        yield cited + (other,)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_same_findings_on_every_changed_provenance(seed: int) -> None:
    log = _log(seed, 600)
    chunks = tuple(e.seq for e in log if e.type == "assistant/chunk")
    checked = 0
    for index, event in enumerate(log):
        cited = event.source_event_seqs
        if event.type not in ("assistant/message", "tool/result") or not isinstance(cited, tuple):
            continue
        others = tuple(s for s in chunks if s not in cited)[:: max(1, len(chunks) // 4)] + (event.seq, event.seq - 1)
        for variant in _variants(cited, others):
            changed = list(log)
            changed[index] = replace(event, source_event_seqs=freeze(list(variant)))
            for dialect in Dialect:
                _agree(changed, dialect)
                checked += 1
    assert checked > 100


def test_the_same_findings_on_a_d08_retry() -> None:
    """DIA-7: an error finish ends the attempt; its message then cites the retry's chunks only."""
    log = _log(5, 400)
    retried = []
    for event in log:
        retried.append(event)
        if event.type == "assistant/chunk" and isinstance(event.data, JsonObject):
            error = freeze({"turn": event.data.get("turn"), "step": event.data.get("step"),
                            "chunk": {"type": "finish", "reason": {"kind": "error"}}})
            retried.append(replace(event, data=error))
    renumbered = [replace(event, seq=i) for i, event in enumerate(retried)]
    assert _agree(renumbered, Dialect.D08) > 0 and _agree(renumbered, Dialect.A55) > 0


@pytest.mark.parametrize("cited", [(1, 4), (4,), (1, 2), ()])
def test_the_same_findings_when_a_retry_takes_a_seq_again(cited: tuple[int, ...]) -> None:
    """A retry (DIA-7) that streams a seq of the failed attempt again: the attempt's positions then have a gap,
    which the fast answer for a message citing its whole attempt must not pass (it hands it to the full check)."""
    def chunk(seq: int, delta: dict[str, object]) -> Event:
        return make_event("assistant/chunk", seq=seq, time=0, data=freeze({"turn": 1, "step": 1, "chunk": delta}))
    text = {"type": "text-delta", "index": 0, "text": "a"}
    events = [make_event("step/start", seq=0, time=0, data=freeze({"turn": 1, "step": 1})), chunk(1, text), chunk(2, text),
              chunk(3, {"type": "finish", "reason": {"kind": "error"}}), chunk(1, text), chunk(4, text),
              make_event("assistant/message", seq=5, time=0, data=freeze({"turn": 1, "step": 1}), surface_op="append",
                         source_event_seqs=cited)]
    for dialect in Dialect:
        assert _agree(events, dialect) == 1
    if cited == (1, 4):  # the retry's whole attempt, with a gap in its positions: SURF-13's finding
        [(ours, _)] = _both(events, Dialect.D08)
        assert [finding.rule for finding in ours] == ["SURF-13"]


@given(json_values(2))
def test_the_call_key_twin_keys_any_id_as_the_model(call_id: Json) -> None:
    assert fast.call_key(call_id) == model.call_key(call_id)
    assert type(fast.call_key(call_id)) is type(model.call_key(call_id))


@given(st.sampled_from(list(Dialect)), st.one_of(json_values(2), st.fixed_dictionaries(
    {"callId": json_values(1), "message": st.fixed_dictionaries({"source": st.fixed_dictionaries({"callId": json_values(1)})})})))
def test_the_result_call_id_twin_reads_any_result_as_the_model(dialect: Dialect, data: object) -> None:
    result = make_event("tool/result", seq=1, time=0, data=freeze(data))
    assert fast.result_call_id(result, dialect) == message_shape.result_call_id(result, dialect)
