"""Request reconstruction (model/reconstruct.py) and the request points it is rebuilt at.

INV-2: a step with no header in force has no request; a step that ended
without a chunk was a request error only when the turn goes on with a new
step or ends in a failure (``turn/end`` reason ``{kind:"error", failure}``).
"""

from __future__ import annotations

import pytest

from sessionspec.fast.request_points import request_points
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Event, make_event
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.rejected import Rejected

HEADER = {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}


def _log(end_reason: object) -> list[Event]:
    """One turn whose only step ends without a chunk, then the turn ends."""
    rows: list[tuple[str, object, object]] = [
        ("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}, None),
        ("user/message", {"content": "hi", "source": {"kind": "user"}}, "append"),
        ("step/start", {"turn": 1, "step": 1}, None),
        ("request/header", HEADER, None),
        ("step/end", {"turn": 1, "step": 1}, None),
        ("turn/end", {"turn": 1, "reason": end_reason}, None),
    ]
    return [
        make_event(t, seq=i, time=0, data=freeze(d), **({"surface_op": op} if op else {}))  # type: ignore[arg-type]
        for i, (t, d, op) in enumerate(rows)
    ]


@pytest.mark.parametrize(
    "reason,requests",
    [
        ({"kind": "error", "failure": {"message": "overloaded"}}, 1),
        ({"kind": "error"}, 0),
        ({"kind": "completed"}, 0),
        ({"kind": "interrupted", "failure": {"message": "x"}}, 0),
        ("error", 0),
    ],
)
def test_INV_2_a_chunkless_step_is_a_request_only_if_the_turn_fails(reason: object, requests: int) -> None:
    points = request_points(_log(reason))
    assert not isinstance(points, Rejected)
    assert len(points) == requests
    if requests:
        assert (points[0].step_start_seq, points[0].first_chunk_seq, points[0].header_seq) == (2, None, 3)


def test_INV_2_rebuild_without_a_header_is_rejected() -> None:
    events = _log({"kind": "completed"})
    without_header = events[:3]
    found = rebuild_request_at(without_header, 2, None)
    assert isinstance(found, Rejected) and (found.rule, found.seq) == ("INV-2", 2)
    assert found.reason == "no request/header event"
    wrong_boundary = rebuild_request_at(events, 1, None)
    assert isinstance(wrong_boundary, Rejected) and (wrong_boundary.rule, wrong_boundary.seq) == ("INV-2", 1)
