"""Surface rules that mutation testing found unpinned (issue 9, docs/quality.md).

DIA-11 (D08): a ``tool/result`` replace may change only
``message.content[0].content``, which overrides SURF-7's "only the top-level
``content``".  Each case below is one key of the D08 tool/result shape (taken
from the D08 corpus) that a rewrite may or may not touch.
"""

from __future__ import annotations

from typing import Any

import pytest

from model.jsonval import ABSENT, Json, freeze
from model.log import Dialect, Event, log_view, make_event
from model.rejected import Rejected
from model.surface import SurfaceState, fold_surface, step_surface, surface_of

# The shape of a D08 tool/result (tests/data/real/611615650f, acp-agent snapshots).
D08_RESULT: dict[str, Any] = {
    "turn": 1,
    "step": 1,
    "message": {
        "source": {"kind": "tool", "callId": "c1"},
        "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "original"}], "isError": False}],
        "role": "user",
        "id": "m-1",
    },
    "meta": {"pluginId": "p"},
}


def _json(value: object) -> Json:
    return freeze(value)


def _result(seq: int, data: object, op: object = "append", prov: object = ABSENT) -> Event:
    return make_event(
        "tool/result", seq=seq, time=0, data=_json(data), surface_op=op if op == "append" else _json(op),
        source_event_seqs=prov if prov is ABSENT else _json(prov),
    )


def _rewrite(data: object, dialect: Dialect = Dialect.D08) -> Rejected | SurfaceState:
    """Fold [original tool/result, a replace of it carrying ``data``]."""
    events = [_result(0, D08_RESULT), _result(1, data, op={"op": "replace", "start": 0, "end": 0}, prov=[0])]
    fold = fold_surface(events, dialect)
    return fold if isinstance(fold, Rejected) else fold.state


def _changed(path: tuple[object, ...], value: object) -> dict[str, Any]:
    """A deep copy of D08_RESULT with the value at ``path`` set."""
    import copy

    data = copy.deepcopy(D08_RESULT)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def test_DIA_11_d08_rewrite_of_the_first_content_block_content_is_accepted() -> None:
    state = _rewrite(_changed(("message", "content", 0, "content"), [{"type": "text", "text": "[pruned]"}]))
    assert state == SurfaceState(nodes=(1,), replace_generation=1)


@pytest.mark.parametrize(
    "path,value",
    [
        (("message", "content", 0, "isError"), True),
        (("message", "content", 0, "toolCallId"), "c2"),
        (("message", "role"), "assistant"),
        (("message", "id"), "m-2"),
        (("meta",), {"pluginId": "q"}),
        (("turn",), 2),
    ],
)
def test_DIA_11_d08_rewrite_outside_the_first_block_content_is_rejected(path: tuple[object, ...], value: object) -> None:
    result = _rewrite(_changed(path, value))
    assert isinstance(result, Rejected) and result.rule == "SURF-7", result


def test_DIA_11_d08_rewrite_may_not_add_a_second_content_block() -> None:
    data = _changed(("message", "content", 0, "content"), "x")
    data["message"]["content"].append({"type": "text", "text": "extra"})
    result = _rewrite(data)
    assert isinstance(result, Rejected) and result.rule == "SURF-7"


def test_DIA_11_d08_rewrite_keeps_the_key_order_free_but_the_key_set_fixed() -> None:
    """DEEPEQ ignores key order (SURF-7) but not a dropped key."""
    data = _changed(("message", "content", 0, "content"), "x")
    reordered = {"meta": data["meta"], **{k: v for k, v in data.items() if k != "meta"}}
    assert isinstance(_rewrite(reordered), SurfaceState)
    del data["message"]["id"]
    dropped = _rewrite(data)
    assert isinstance(dropped, Rejected) and dropped.rule == "SURF-7"


def test_DIA_11_d08_top_level_content_is_not_the_free_path() -> None:
    """A D08 rewrite that adds a top-level ``content`` changes the data: the
    A55 free path (top-level content) does not apply in D08."""
    data = _changed(("message", "content", 0, "content"), "x")
    data["content"] = "added"
    result = _rewrite(data)
    assert isinstance(result, Rejected) and result.rule == "SURF-7"


def test_SURF_7_a55_free_path_is_the_top_level_content_only() -> None:
    """The same D08-shaped data under A55: the nested content is not free."""
    result = _rewrite(_changed(("message", "content", 0, "content"), "x"), Dialect.A55)
    assert isinstance(result, Rejected) and result.rule == "SURF-7"
    data = dict(D08_RESULT, content="free in A55")
    assert isinstance(_rewrite(data, Dialect.A55), SurfaceState)


def test_DIA_11_d08_data_without_a_message_object_must_be_unchanged() -> None:
    events = [_result(0, {"turn": 1, "message": "text"}), _result(1, {"turn": 1, "message": "text"}, op={"op": "replace", "start": 0, "end": 0}, prov=[0])]
    assert not isinstance(fold_surface(events, Dialect.D08), Rejected)
    events[1] = _result(1, {"turn": 1, "message": "other"}, op={"op": "replace", "start": 0, "end": 0}, prov=[0])
    result = fold_surface(events, Dialect.D08)
    assert isinstance(result, Rejected) and result.rule == "SURF-7"


def test_DIA_11_step_surface_uses_the_dialect_surface_types() -> None:
    """steering/message is a surface type in A55 only (DIA-11: in D08
    steering is a user/message), so its surfaceOp is refused in D08."""
    steering = make_event("steering/message", seq=0, time=0, data=_json({"content": "s"}), surface_op="append")
    assert step_surface(SurfaceState(), steering, [], Dialect.A55) == SurfaceState(nodes=(0,))
    refused = step_surface(SurfaceState(), steering, [], Dialect.D08)
    assert isinstance(refused, Rejected) and refused.rule == "SURF-2"


def test_SURF_10_surface_of_is_the_state_of_the_fold() -> None:
    events = [_result(0, D08_RESULT), _result(1, D08_RESULT)]
    assert surface_of(events, Dialect.D08) == SurfaceState(nodes=(0, 1))
    broken = [_result(0, D08_RESULT), _result(2, D08_RESULT)]
    refused = surface_of(broken, Dialect.D08)
    assert isinstance(refused, Rejected) and refused.rule == "LOG-1"
    # the dialect reaches the fold: steering/message with a surfaceOp
    steering = [make_event("steering/message", seq=0, time=0, data=_json({"content": "s"}), surface_op="append")]
    assert surface_of(steering, Dialect.A55) == SurfaceState(nodes=(0,))
    assert isinstance(surface_of(steering, Dialect.D08), Rejected)


def test_SURF_10_log_view_is_the_prefix_of_the_log() -> None:
    """``log_view(events, n)`` behaves as ``events[:n]`` for every index a
    caller may use (the fold reads earlier events through it)."""
    events = [_result(i, D08_RESULT) for i in range(4)]
    view = log_view(events, 3)
    assert len(view) == 3
    assert [view[i].seq for i in range(3)] == [0, 1, 2]
    assert [view[i].seq for i in (-1, -2, -3)] == [2, 1, 0]
    for outside in (3, 4, -4):
        with pytest.raises(IndexError):
            view[outside]
    assert list(log_view(events, 0)) == []


@pytest.mark.parametrize("content", [[], ["a plain string block"], [None], "not an array"])
def test_DIA_11_d08_rewrite_of_a_message_without_a_first_block_object(content: object) -> None:
    """Without an object as ``message.content[0]`` there is no free path:
    an identical rewrite is accepted, any change is a SURF-7 rejection (and
    neither is a crash)."""
    data = _changed(("message", "content"), content)
    events = [_result(0, data), _result(1, data, op={"op": "replace", "start": 0, "end": 0}, prov=[0])]
    assert not isinstance(fold_surface(events, Dialect.D08), Rejected)
    changed = _changed(("message", "content"), [*content, "extra"] if isinstance(content, list) else "changed")
    events[1] = _result(1, changed, op={"op": "replace", "start": 0, "end": 0}, prov=[0])
    refused = fold_surface(events, Dialect.D08)
    assert isinstance(refused, Rejected) and refused.rule == "SURF-7"
