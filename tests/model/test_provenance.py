"""SURF-13, MTR-9 and INV-7 as the model decides them in a log (model/provenance.py), against the loop that writes them.

Both ways, over logs the loop simulator writes (``sessionspec.generate``, the model's own loop): every message and
result the loop writes is accepted, and a message or result whose provenance is changed in a way its rule forbids
is refused, naming that rule.  The fold here is the test's own (a StepStream per step, as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import ABSENT, freeze
from sessionspec.model.log import Dialect, Event
from sessionspec.model.provenance import StepStream, check_stream_provenance, cited_stream, take_call, take_chunks
from sessionspec.model.rejected import Rejected


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's provenance definitions folded over ``events``: a stream per step, every live append judged."""
    found: list[Rejected] = []
    stream: StepStream | None = None
    for event in events:
        match event.type:
            case "step/start":
                stream = StepStream()
            case "step/end" | "turn/end" | "turn/start":
                stream = None
            case "assistant/chunk" if stream is not None:
                take_chunks(stream, (event,), dialect)
            case "tool/call" if stream is not None:
                take_call(stream, event)
            case "assistant/message" | "tool/result" if stream is not None and event.surface_op == "append":
                found += check_stream_provenance(event, stream, dialect)
            case _:
                pass
    return found


def loop_log(seed: int, events: int = 400) -> list[Event]:
    return [event for block in generate_events(events, seed, 5) for event in block]


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_is_accepted(seed: int) -> None:
    log = loop_log(seed)
    assert any(e.type == "assistant/message" and e.source_event_seqs is not ABSENT for e in log)
    assert judged(log) == []


def _messages(log: list[Event], at_least: int) -> list[int]:
    return [i for i, e in enumerate(log) if e.type == "assistant/message" and isinstance(e.source_event_seqs, tuple)
            and len(e.source_event_seqs) >= at_least]


def _cited(event: Event) -> tuple[int, ...]:
    seqs = event.source_event_seqs
    assert isinstance(seqs, tuple) and all(isinstance(s, int) for s in seqs)
    return tuple(s for s in seqs if isinstance(s, int))


def _rules_after(log: list[Event], index: int, cited: tuple[int, ...]) -> set[str]:
    changed = list(log)
    changed[index] = replace(log[index], source_event_seqs=freeze(list(cited)))
    return {finding.rule for finding in judged(changed)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_message_citing_its_chunks_out_of_order_or_skipping_one_is_refused(seed: int) -> None:
    log = loop_log(seed)
    for index in _messages(log, 3)[:5]:
        cited = _cited(log[index])
        swapped = (cited[1], cited[0], *cited[2:])
        assert "SURF-13" in _rules_after(log, index, swapped)  # out of order
        skipping = (cited[0], *cited[2:])
        assert {"SURF-13", "INV-7"} <= _rules_after(log, index, skipping)  # a chunk skipped, and not the request's chunks
        assert _rules_after(log, index, cited[:-1]) == {"INV-7"}  # in order, but fewer than the request streamed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_message_citing_another_steps_chunk_or_one_twice_is_the_meters_refusal(seed: int) -> None:
    log = loop_log(seed)
    messages = _messages(log, 2)
    for earlier, later in zip(messages, messages[1:], strict=False):
        cited, other = _cited(log[later]), _cited(log[earlier])
        assert _rules_after(log, later, (other[0], *cited[1:])) == {"MTR-9"}
        assert _rules_after(log, later, (cited[0], cited[0], *cited[2:])) == {"MTR-9"}


def test_a_tool_result_citing_anything_but_its_call_is_refused() -> None:
    log = loop_log(3, 1500)
    results = [i for i, e in enumerate(log) if e.type == "tool/result" and e.surface_op == "append"]
    assert results
    for index in results[:10]:
        cited = _cited(log[index])
        assert len(cited) == 1
        assert _rules_after(log, index, (cited[0] + 1,)) == {"SURF-13"}
        assert _rules_after(log, index, (cited[0], cited[0] + 1)) == {"SURF-13"}


def test_cited_stream_is_the_meters_check() -> None:
    """The meter prices a message by the chunks cited_stream accepts; where it refuses, the price is refused."""
    log = loop_log(4)
    index = _messages(log, 1)[0]
    message = log[index]
    chunks, cited = cited_stream(message, lambda seq: log[seq]), message.source_event_seqs
    assert not isinstance(chunks, Rejected) and isinstance(cited, tuple) and tuple(c.seq for c in chunks) == cited
    assert isinstance(cited_stream(replace(message, source_event_seqs=freeze([message.seq])), lambda seq: log[seq]), Rejected)

