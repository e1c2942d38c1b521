"""model/log.py's one speed device: ``log_view(events, n)`` is ``events[:n]`` without the copy (docs/index.md,
"The model's conventions").  Every fold that hands a step "the log before this event" uses it, so the view
must be observationally the slice: length, indexing from either end, iteration, membership, the IndexError
past either end."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.jsonval import freeze
from model.log import Event, log_view, make_event


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
