"""LOG-16: out-of-band appends (model/session.py)."""

from __future__ import annotations

from sessionspec.model.codec import serialize_event
from sessionspec.model.jsonval import freeze
from sessionspec.model.rejected import Rejected
from sessionspec.model.session import out_of_band_events, turn_is_open
from sessionspec.model.surface import fold_surface
from tests.support import events_of_lines

TRIGGER = freeze({"kind": "plugin", "plugin": "title"})


CLOSED = events_of_lines(
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":3,"trigger":{"kind":"message","source":{"kind":"user"}}}}',
    '{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
    '{"type":"turn/end","seq":2,"time":0,"data":{"turn":3,"reason":{"kind":"completed"}}}',
)


def test_LOG_16_between_turns_wraps_the_event_in_a_synthetic_turn() -> None:
    events = out_of_band_events(CLOSED, "session/title", freeze({"title": "t"}), TRIGGER)
    assert not isinstance(events, Rejected)
    assert [serialize_event(e) for e in events] == [
        '{"type":"turn/start","seq":3,"time":0,"data":{"turn":4,"trigger":{"kind":"plugin","plugin":"title"}}}',
        '{"type":"session/title","seq":4,"time":0,"data":{"title":"t"}}',
        '{"type":"turn/end","seq":5,"time":0,"data":{"turn":4,"reason":{"kind":"completed"}}}',
    ]
    assert not turn_is_open([*CLOSED, *events])


def test_LOG_16_inside_an_open_turn_is_a_plain_append() -> None:
    open_turn = CLOSED[:2]
    assert turn_is_open(open_turn)
    events = out_of_band_events(open_turn, "session/title", freeze({"title": "t"}), TRIGGER)
    assert not isinstance(events, Rejected)
    assert [e.type for e in events] == ["session/title"] and events[0].seq == 2


def test_LOG_16_surface_types_never_go_out_of_band() -> None:
    data = freeze({"content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}})
    result = out_of_band_events(CLOSED, "user/message", data, TRIGGER)
    assert isinstance(result, Rejected) and result.rule == "LOG-16"


def test_LOG_16_the_wrapped_log_still_folds() -> None:
    events = out_of_band_events(CLOSED, "session/title", freeze({"title": "t"}), TRIGGER)
    assert not isinstance(events, Rejected)
    assert not isinstance(fold_surface([*CLOSED, *events]), Rejected)
