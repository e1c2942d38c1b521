"""The surface fold (SURF-1..13, LOG-1, LOG-6) of model.surface."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, freeze, obj
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import (
    Replacement,
    SurfaceFold,
    SurfaceState,
    check_tool_result_rewrite,
    fold_surface,
    is_surface_event,
    plan_surface_event,
    step_surface,
    surface_of,
)
from sessionspec.spec.log_builder import LogBuilder, replace_op
from sessionspec.spec.log_strategies import well_formed_logs

USER = obj((("kind", "user"),))


def _base() -> LogBuilder:
    """seq 0 turn/start, 1 user (node), 2 step/start, 3 assistant (node),
    4 tool/call, 5 tool/result (node), 6 step/end.  Nodes [1, 3, 5]."""
    b = LogBuilder()
    b.turn_start()
    b.user_message("hello")
    b.step_start()
    call = obj((("type", "tool-call"), ("id", "c1"), ("name", "read"), ("arguments", "{}")))
    b.assistant_message((call,), [])
    b.tool_call("c1", "read")
    b.tool_result("c1", 4, "result")
    b.step_end()
    return b


def _user(seq: int, op: Json | Absent = "append", prov: Json | Absent = ABSENT, text: str = "u") -> Event:
    data = obj((("content", (obj((("type", "text"), ("text", text))),)), ("source", USER)))
    return make_event("user/message", seq=seq, time=0, data=data, surface_op=op, source_event_seqs=prov)


def _fold(events: list[Event]) -> SurfaceFold:
    fold = fold_surface(events)
    assert not isinstance(fold, Rejected), fold
    return fold


def _rejects(events: list[Event], rule: str) -> Rejected:
    fold = fold_surface(events)
    assert isinstance(fold, Rejected), f"expected {rule}, got {fold}"
    assert fold.rule == rule, fold
    return fold


def _tool_result_rewrite(b: LogBuilder, target: int, **changes: Json) -> Event:
    original = b.events[target].data
    assert isinstance(original, JsonObject)
    data = JsonObject((k, changes.get(k, v)) for k, v in original.items())
    return make_event(
        "tool/result", seq=len(b.events), time=0, data=data, surface_op=replace_op(target, target), source_event_seqs=(target,)
    )


# --------------------------------------------------------------------------- SURF-1, SURF-8


def test_SURF_1_starts_empty_and_log_only_events_change_nothing() -> None:
    assert _fold([]).state == SurfaceState(nodes=(), replace_generation=0)
    b = LogBuilder()
    b.turn_start()
    b.plugin_event("plugin/event", None)
    assert _fold(b.events).state == SurfaceState()


def test_SURF_8_append_pushes_and_replace_splices_at_start_position() -> None:
    b = _base()
    assert _fold(b.events).state == SurfaceState(nodes=(1, 3, 5), replace_generation=0)
    b.events.append(_user(7, replace_op(1, 3), (1, 3)))
    assert _fold(b.events).state == SurfaceState(nodes=(7, 5), replace_generation=1)
    b.events.append(_user(8))
    assert _fold(b.events).state == SurfaceState(nodes=(7, 5, 8), replace_generation=1)


def test_SURF_8_nested_replacement_shadows_a_replacement_node() -> None:
    b = _base()
    b.events.append(_user(7, replace_op(3, 3), (3,)))
    b.events.append(_user(8, replace_op(1, 7), (1, 7)))
    fold = _fold(b.events)
    assert fold.state == SurfaceState(nodes=(8, 5), replace_generation=2)


# --------------------------------------------------------------------------- SURF-2, SURF-3


def test_SURF_2_rejects_surface_op_on_non_surface_event() -> None:
    event = make_event("turn/start", seq=0, time=0, data=obj(), surface_op="append")
    assert "cannot carry surfaceOp" in _rejects([event], "SURF-2").reason


def test_SURF_2_rejects_source_event_seqs_on_non_surface_event() -> None:
    events = [make_event("turn/start", seq=0, time=0, data=obj()), make_event("tool/call", seq=1, time=0, data=obj(), source_event_seqs=(0,))]
    assert "cannot carry sourceEventSeqs" in _rejects(events, "SURF-2").reason


def test_SURF_2_rejects_eligible_event_without_marker() -> None:
    for type_name in ("user/message", "assistant/message", "tool/result", "steering/message"):
        _rejects([make_event(type_name, seq=0, time=0, data=obj())], "SURF-2")


def test_SURF_2_steering_is_log_only_in_d08() -> None:
    event = make_event("steering/message", seq=0, time=0, data=obj())
    fold = fold_surface([event], Dialect.D08)
    assert isinstance(fold, SurfaceFold) and fold.state.nodes == ()


def test_SURF_3_rejects_invalid_surface_op_values() -> None:
    for op in (None, (), 1, "prepend", "", True):
        _rejects([_user(0, op)], "SURF-3")


def test_SURF_3_rejects_malformed_replace_objects() -> None:
    b = _base()
    bad_ops = [
        obj((("op", "replace"), ("start", 1), ("end", 1), ("x", 0))),
        obj((("op", "replace"), ("start", -1), ("end", 1))),
        obj((("op", "replace"), ("start", 1.5), ("end", 1))),
        obj((("op", "replace"), ("start", 1))),
        obj((("op", "append"), ("start", 1), ("end", 1))),
        obj((("op", "replace"), ("start", True), ("end", 1))),
    ]
    for op in bad_ops:
        _rejects([*b.events, _user(7, op, (1,))], "SURF-3")


# --------------------------------------------------------------------------- SURF-4


def test_SURF_4_rejects_bad_provenance_on_append() -> None:
    b = _base()
    for prov in (1, "x", (), (-1,), (1.5,), (1, 1), (7,), (8,), (None,)):
        _rejects([*b.events, _user(7, "append", prov)], "SURF-4")


def test_SURF_4_accepts_any_earlier_seq_and_empty_on_assistant() -> None:
    b = _base()
    _fold([*b.events, _user(7, "append", (0, 6, 2))])  # log-only events may be cited
    data = obj((("turn", 1), ("step", 1), ("content", ()), ("provenance", obj())))
    _fold([*b.events, make_event("assistant/message", seq=7, time=0, data=data, surface_op="append", source_event_seqs=())])


def test_SURF_4_applies_on_replace_too() -> None:
    b = _base()
    _rejects([*b.events, _user(7, replace_op(1, 1), (1, 1))], "SURF-4")
    _rejects([*b.events, _user(7, replace_op(1, 1), (1, 9))], "SURF-4")


# --------------------------------------------------------------------------- SURF-5, SURF-6


def test_SURF_5_rejects_missing_start() -> None:
    b = _base()
    assert "start seq 2 not found" in _rejects([*b.events, _user(7, replace_op(2, 5), (1, 2, 3, 5))], "SURF-5").reason


def test_SURF_5_rejects_missing_end() -> None:
    b = _base()
    assert "end seq 4 not found" in _rejects([*b.events, _user(7, replace_op(1, 4), (1, 3, 4))], "SURF-5").reason


def test_SURF_5_rejects_start_after_end_by_position() -> None:
    b = _base()
    _rejects([*b.events, _user(7, replace_op(5, 1), (1, 3, 5))], "SURF-5")


def test_SURF_5_shadowed_seqs_are_a_shadowed_seq_so_they_cannot_be_named_again() -> None:
    b = _base()
    b.events.append(_user(7, replace_op(1, 3), (1, 3)))
    _rejects([*b.events, _user(8, replace_op(3, 3), (3,))], "SURF-5")


def test_SURF_5_numeric_start_after_end_is_valid_when_positions_are_ordered() -> None:
    # Nodes [1, 3, 5] -> replace 3 by 7 gives [1, 7, 5]; then [7 .. 5] is numerically start > end.
    b = _base()
    b.events.append(_user(7, replace_op(3, 3), (3,)))
    b.events.append(_user(8, replace_op(7, 5), (7, 5)))
    assert _fold(b.events).state.nodes == (1, 8)


def test_SURF_5_start_equal_end_shadows_one_node() -> None:
    b = _base()
    b.events.append(_user(7, replace_op(3, 3), (3,)))
    assert _fold(b.events).replacements == (Replacement(seq=7, start=3, end=3, shadowed=(3,)),)


def test_SURF_6_rejects_missing_coverage() -> None:
    b = _base()
    reason = _rejects([*b.events, _user(7, replace_op(1, 5), (1, 5))], "SURF-6").reason
    assert "missing [3]" in reason


def test_SURF_6_replace_without_provenance_always_fails() -> None:
    b = _base()
    _rejects([*b.events, _user(7, replace_op(1, 1))], "SURF-6")


def test_SURF_6_extra_cited_seqs_are_allowed() -> None:
    b = _base()
    _fold([*b.events, _user(7, replace_op(3, 3), (0, 3, 4, 6))])


# --------------------------------------------------------------------------- SURF-7


def test_SURF_7_rejects_tool_result_replace_of_several_nodes() -> None:
    b = _base()
    b.tool_result("c1", 4, "again")  # seq 7, a second tool/result node
    event = _tool_result_rewrite(b, 5, content=())
    event = make_event(event.type, seq=8, time=0, data=event.data, surface_op=replace_op(5, 7), source_event_seqs=(5, 7))
    assert "exactly one" in _rejects([*b.events, event], "SURF-7").reason


def test_SURF_7_rejects_tool_result_replace_of_a_non_result_node() -> None:
    b = _base()
    event = _tool_result_rewrite(b, 5, content=())
    event = make_event(event.type, seq=7, time=0, data=event.data, surface_op=replace_op(3, 3), source_event_seqs=(3,))
    assert "target a current tool/result" in _rejects([*b.events, event], "SURF-7").reason


def test_SURF_7_rejects_changes_outside_content() -> None:
    b = _base()
    for change in ({"isError": True}, {"callId": "c2"}, {"step": 2}):
        refused = _rejects([*b.events, _tool_result_rewrite(b, 5, **change)], "SURF-7")
        assert refused.reason == "tool/result replace may change only content"  # SURF-7's words
    # a removed or added key also changes the key set
    original = b.events[5].data
    assert isinstance(original, JsonObject)
    extra = JsonObject([*original.items(), ("meta", obj())])
    event = make_event("tool/result", seq=7, time=0, data=extra, surface_op=replace_op(5, 5), source_event_seqs=(5,))
    _rejects([*b.events, event], "SURF-7")


def test_SURF_7_accepts_content_only_change_and_compares_rest_structurally() -> None:
    b = LogBuilder()
    b.turn_start()
    b.step_start()
    b.tool_call("c1", "read")
    meta = obj((("a", (1, obj((("x", 1), ("y", 2))))), ("b", 2)))
    data = obj((("turn", 1), ("step", 1), ("callId", "c1"), ("content", ()), ("isError", False), ("meta", meta)))
    b.events.append(make_event("tool/result", seq=3, time=0, data=data, surface_op="append", source_event_seqs=(2,)))
    reordered = obj((("b", 2), ("a", (1, obj((("y", 2), ("x", 1)))))))
    new = obj((("turn", 1), ("step", 1), ("callId", "c1"), ("content", ("pruned",)), ("isError", False), ("meta", reordered)))
    event = make_event("tool/result", seq=4, time=0, data=new, surface_op=replace_op(3, 3), source_event_seqs=(3,))
    assert _fold([*b.events, event]).state.nodes == (4,)
    # an array-valued rest field with a different element is a change
    changed = obj((("b", 2), ("a", (2, obj((("y", 2), ("x", 1)))))))
    bad = JsonObject((k, changed if k == "meta" else v) for k, v in new.items())
    _rejects([*b.events, make_event("tool/result", seq=4, time=0, data=bad, surface_op=replace_op(3, 3), source_event_seqs=(3,))], "SURF-7")


def test_SURF_7_other_types_may_shadow_any_range_of_any_node_types() -> None:
    b = _base()
    steering = obj((("turn", 1), ("content", ()), ("source", USER)))
    event = make_event("steering/message", seq=7, time=0, data=steering, surface_op=replace_op(1, 5), source_event_seqs=(1, 3, 5))
    assert _fold([*b.events, event]).state.nodes == (7,)


# --------------------------------------------------------------------------- SURF-9, LOG-1, LOG-6


def test_LOG_1_rejects_non_contiguous_seq() -> None:
    b = _base()
    assert "not contiguous" in _rejects([*b.events, _user(9)], "LOG-1").reason


def test_SURF_9_order_seq_before_eligibility() -> None:
    b = _base()
    _rejects([*b.events, make_event("user/message", seq=9, time=0, data=obj())], "LOG-1")


def test_SURF_9_order_shape_before_provenance() -> None:
    b = _base()
    _rejects([*b.events, _user(7, "bogus", (99,))], "SURF-3")


def test_SURF_9_order_range_before_provenance() -> None:
    b = _base()
    _rejects([*b.events, _user(7, replace_op(2, 2), (9, 9))], "SURF-5")


def test_SURF_9_order_provenance_before_coverage_before_rewrite() -> None:
    b = _base()
    _rejects([*b.events, _user(7, replace_op(1, 3), (1, 1))], "SURF-4")
    bad_rewrite = _tool_result_rewrite(b, 5, isError=True)
    uncovered = make_event("tool/result", seq=7, time=0, data=bad_rewrite.data, surface_op=replace_op(5, 5), source_event_seqs=(4,))
    _rejects([*b.events, uncovered], "SURF-6")


def test_LOG_6_rejected_step_leaves_state_unchanged() -> None:
    b = _base()
    state = _fold(b.events).state
    result = step_surface(state, _user(7, replace_op(5, 1), (1, 3, 5)), b.events)
    assert isinstance(result, Rejected)
    assert state == SurfaceState(nodes=(1, 3, 5), replace_generation=0)
    nodes = [1, 3, 5]
    assert isinstance(plan_surface_event(nodes, _user(7, replace_op(1, 9), (1,)), b.events), Rejected)
    assert nodes == [1, 3, 5]


# --------------------------------------------------------------------------- SURF-10..13


def test_SURF_10_fold_records_replacements_with_shadowed_seqs() -> None:
    b = _base()
    b.events.append(_user(7, replace_op(3, 5), (3, 5)))
    assert _fold(b.events).replacements == (Replacement(seq=7, start=3, end=5, shadowed=(3, 5)),)


@given(well_formed_logs())
def test_SURF_10_fold_equals_step_by_step_manager(events: tuple[Event, ...]) -> None:
    state = SurfaceState()
    for index, event in enumerate(events):
        stepped = step_surface(state, event, events[:index])
        assert not isinstance(stepped, Rejected)
        state = stepped
    assert _fold(list(events)).state == state


def test_SURF_11_surface_event_iff_eligible_and_marked() -> None:
    assert is_surface_event(_user(0))
    assert not is_surface_event(_user(0, ABSENT))
    assert not is_surface_event(make_event("turn/start", seq=0, time=0, data=obj(), surface_op="append"))
    assert not is_surface_event(make_event("steering/message", seq=0, time=0, data=obj(), surface_op="append"), Dialect.D08)


def test_SURF_12_user_replace_may_shadow_an_unbalanced_range() -> None:
    b = _base()
    # shadow the assistant tool-call but keep its tool/result: unbalanced, still accepted
    b.events.append(_user(7, replace_op(1, 3), (1, 3)))
    assert _fold(b.events).state.nodes == (7, 5)


def test_SURF_13_checkpoint_provenance_is_unsorted_start_summary_then_shadowed() -> None:
    b = _base()
    checkpoint = b.compact_head(2, "summary")
    event = b.events[checkpoint]
    assert event.source_event_seqs == (7, 8, 1, 3)
    assert _fold(b.events).state.nodes == (checkpoint, 5)


@given(well_formed_logs())
def test_SURF_13_generated_provenance_has_the_harness_meaning(events: tuple[Event, ...]) -> None:
    for event in events:
        if event.type == "assistant/message":
            cited = [s for s in event.source_event_seqs if isinstance(s, int)] if isinstance(event.source_event_seqs, tuple) else None
            assert cited is not None and len(cited) == len(event.source_event_seqs)  # type: ignore[arg-type]
            assert all(events[s].type == "assistant/chunk" for s in cited)
            assert cited == sorted(cited)
        if event.type == "tool/result" and event.surface_op == "append":
            assert isinstance(event.source_event_seqs, tuple) and len(event.source_event_seqs) == 1
            call_seq = event.source_event_seqs[0]
            assert isinstance(call_seq, int) and events[call_seq].type == "tool/call"


# ---------------------------------------------------------------- D08 tool/result rewrites (DIA-11), surface_of


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


def test_SURF_7_a_replace_of_several_nodes_by_a_tool_result_is_refused_on_its_seq() -> None:
    result = make_event("tool/result", seq=5, time=0, data=freeze({"turn": 1, "step": 1, "callId": "c", "content": []}))
    refused = check_tool_result_rewrite(result, (1, 2), [])
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("SURF-7", 5)
