"""DIA-10's one accessor (model/message_shape.py): where a message keeps its content, its route and the call it
answers, in each dialect.

Held against the model's writers both ways: on the logs the loop simulator writes (A55) and the same logs as
the D08 reader migrates them (DIA-13's ``migrate_legacy``), every message reads the same content, route, call id
and result content through its dialect's readers; read through the other dialect's readers, a message that has
them reads nothing.  The prune writes its content where the reader finds it (DIA-18).  Each branch of the readers
is taken both ways on hand-made data.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.message_shape import (
    A55,
    D08,
    message_content,
    message_shape,
    result_call_id,
)
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.prune import prune_pass, tool_result_content
from sessionspec.model.rejected import Rejected
from tests.support import BUSY_LOG_PRUNE, busy_log

MESSAGES = ("assistant/message", "tool/result")


def _simulated(seed: int) -> list[Event]:
    return [event for block in generate_events(300, seed, 2) for event in block]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_DIA_10_a_migrated_message_reads_as_its_legacy_form(seed: int) -> None:
    """DIA-13 moves each A55 field to where DIA-10 puts it: the D08 readers of the migrated event read what the A55
    readers read of the logged one, and the other dialect's readers read nothing there."""
    a55 = _simulated(seed)
    d08 = migrate_legacy(a55, "s")
    read = 0
    for old, new in zip(a55, d08, strict=True):
        if old.type not in MESSAGES or old.surface_op == "prepend":
            continue
        read += 1
        assert message_content(new, Dialect.A55) is ABSENT and message_content(old, Dialect.D08) is ABSENT
        if old.type == "assistant/message":
            assert message_content(new, Dialect.D08) == message_content(old, Dialect.A55) is not ABSENT
            assert D08.route(new.data) == A55.route(old.data)
            assert D08.route(new.data) != (ABSENT, ABSENT)
            assert A55.route(new.data) == (ABSENT, ABSENT)
        else:
            assert result_call_id(new, Dialect.D08) == result_call_id(old, Dialect.A55) is not None
            assert D08.call_id(old.data) is ABSENT and A55.call_id(new.data) is ABSENT
            assert tool_result_content(new, Dialect.D08) == tool_result_content(old, Dialect.A55) is not None
    assert read


@pytest.mark.parametrize("dialect", list(Dialect))
def test_DIA_18_the_prune_writes_the_content_where_the_reader_reads_it(dialect: Dialect) -> None:
    """A prune replacement's content, read back by the dialect's reader, is the pruned content; the rest of the
    event's data is the original's (PRN-4: "the original `data` (same keys, same order)")."""
    log = busy_log().events
    events = list(log if dialect is Dialect.A55 else migrate_legacy(log, "s"))
    outcome = prune_pass(events, BUSY_LOG_PRUNE, dialect=dialect)
    assert not isinstance(outcome, Rejected) and outcome.pruned
    shape = message_shape(dialect)
    for replacement in (e for e in outcome.events if e.type == "tool/result"):
        original = events[replacement.source_event_seqs[0]]  # type: ignore[index]
        after = shape.result_content(replacement.data)
        assert after != shape.result_content(original.data)
        assert isinstance(original.data, JsonObject)
        assert replacement.data == shape.with_result_content(original.data, after)  # type: ignore[arg-type]
        assert list(replacement.data) == list(original.data)  # type: ignore[arg-type]


def test_DIA_10_the_dialect_selects_its_readers() -> None:
    assert message_shape(Dialect.A55) is A55 and message_shape(Dialect.D08) is D08


def _result(data: object) -> Event:
    return make_event("tool/result", seq=3, time=0, data=freeze(data))


def test_DIA_10_a_result_without_a_call_id_answers_the_null_call() -> None:
    assert result_call_id(_result({"callId": "c1"}), Dialect.A55) == "c1"
    assert result_call_id(_result({"callId": None}), Dialect.A55) is None
    assert result_call_id(_result({}), Dialect.A55) is None
    assert result_call_id(_result({"message": {"source": {"kind": "tool", "callId": "c2"}}}), Dialect.D08) == "c2"
    assert result_call_id(_result({"message": {"source": {"kind": "tool"}}}), Dialect.D08) is None


def test_DIA_18_a_d08_result_content_is_its_first_block_s_content() -> None:
    """``message.content[0].content``: an empty block list, or a content that is no list, has none."""
    first = {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}], "isError": False}
    assert D08.result_content(freeze({"message": {"content": [first, {"type": "text"}]}})) == freeze(first["content"])
    assert D08.result_content(freeze({"message": {"content": []}})) is ABSENT
    assert D08.result_content(freeze({"message": {"content": "text"}})) is ABSENT
    assert D08.result_content(freeze({"message": {"content": [7]}})) is ABSENT
    assert A55.result_content(freeze({"content": "text"})) == "text"


def test_DIA_18_the_d08_swap_keeps_every_other_block_and_key() -> None:
    data = freeze({"turn": 1, "message": {"id": "m", "content": [{"type": "tool-result", "content": "old", "isError": False},
                                                                 {"type": "text", "text": "kept"}], "source": {"kind": "tool"}}})
    assert isinstance(data, JsonObject)
    swapped = D08.with_result_content(data, "new")
    assert D08.result_content(swapped) == "new"
    assert get(get(swapped, "message"), "content")[1] == freeze({"type": "text", "text": "kept"})  # type: ignore[index]
    assert list(swapped) == ["turn", "message"] and list(get(swapped, "message")) == ["id", "content", "source"]  # type: ignore[arg-type]
