"""model/log.py: the event accessors, ``with_seq`` (a repair closer keeps its key order, LOG-14), and the one
speed device: ``log_view(events, n)`` is ``events[:n]`` without the copy (docs/index.md, "The model's conventions").  Every fold that hands a step "the log before this event" uses it, so the view
must be observationally the slice: length, indexing from either end, iteration, membership, the IndexError
past either end."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.codec import serialize_event
from sessionspec.model.jsonval import ABSENT, freeze
from sessionspec.model.log import Event, data_field, data_int, log_view, make_event, with_seq
from tests.support import timed_event


def _events(count: int) -> list[Event]:
    return [make_event("user/message", seq=i, time=0, data=freeze({"content": [], "source": {"kind": "user"}})) for i in range(count)]


@given(st.integers(min_value=0, max_value=12), st.data())
def test_a_log_view_is_the_slice(count: int, data: st.DataObject) -> None:
    events = _events(count)
    length = data.draw(st.integers(min_value=0, max_value=count), label="length")
    view, expected = log_view(events, length), events[:length]
    assert len(view) == len(expected) and list(view) == expected and list(reversed(view)) == expected[::-1]
    for index in range(-length - 2, length + 2):
        if -length <= index < length:
            assert view[index] is expected[index]
        else:
            with pytest.raises(IndexError):
                view[index]
    if count > length:
        assert events[length] not in view  # the events after the view's end are not in it
    assert all(event in view for event in expected)


# ---------------------------------------------------------------- with_seq, the event accessors


def test_LOG_14_closer_key_order_survives_a_renumbering() -> None:
    """Repair closers write ``surfaceOp`` before ``sourceEventSeqs`` (LOG-3's
    one exception); giving the event a new seq must keep that order."""
    closer = make_event("tool/result", seq=5, time=1, data=freeze({"turn": 1}), surface_op="append", source_event_seqs=(4,), op_first=True)
    moved = with_seq(closer, 9, time=2)
    assert serialize_event(moved) == '{"type":"tool/result","seq":9,"time":2,"data":{"turn":1},"surfaceOp":"append","sourceEventSeqs":[4]}'
    plain = with_seq(make_event("tool/result", seq=5, time=1, data=freeze({"turn": 1}), surface_op="append", source_event_seqs=(4,)), 9)
    assert serialize_event(plain) == '{"type":"tool/result","seq":9,"time":1,"data":{"turn":1},"sourceEventSeqs":[4],"surfaceOp":"append"}'


def test_event_accessors_read_data_fields() -> None:
    event = timed_event("step/start", 0, {"turn": 2, "step": "x", "flag": True, "nested": {"a": 1}})
    assert data_field(event, "nested") == freeze({"a": 1})
    assert data_field(event, "missing") is ABSENT
    assert data_int(event, "turn") == 2
    assert data_int(event, "step") is None  # a string is not an int
    assert data_int(event, "flag") is None  # nor is a boolean
    assert data_int(event, "missing") is None
    assert data_int(timed_event("plugin/x", 1, "text"), "turn") is None


def test_SURF_10_log_view_is_the_prefix_of_the_log() -> None:
    """``log_view(events, n)`` behaves as ``events[:n]`` for every index a
    caller may use (the fold reads earlier events through it)."""
    events = _events(4)
    view = log_view(events, 3)
    assert len(view) == 3
    assert [view[i].seq for i in range(3)] == [0, 1, 2]
    assert [view[i].seq for i in (-1, -2, -3)] == [2, 1, 0]
    for outside in (3, 4, -4):
        with pytest.raises(IndexError):
            view[outside]
    assert list(log_view(events, 0)) == []
