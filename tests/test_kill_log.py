"""Log-level rules that mutation testing found unpinned (issue 9, docs/quality.md).

LOG-14 (repair closers and their scan, the closer key order kept through a
renumbering), LEG-1 (the rejection names its event), the event accessors, and
the rejection value itself (RULES §0.5: compared by rule and kind, never by
reason).
"""

from __future__ import annotations

from model.codec import serialize_event
from model.jsonval import ABSENT, freeze
from model.log import Event, data_field, data_int, make_event, with_seq
from model.rejected import FailureKind, Rejected
from model.repair import repair_closers, scan_for_repair
from model.seed import check_not_header_delta


def _event(type_name: str, seq: int, data: object, **extra: object) -> Event:
    return make_event(type_name, seq=seq, time=100 + seq, data=freeze(data), **extra)  # type: ignore[arg-type]


def test_LOG_14_closer_key_order_survives_a_renumbering() -> None:
    """Repair closers write ``surfaceOp`` before ``sourceEventSeqs`` (LOG-3's
    one exception); giving the event a new seq must keep that order."""
    closer = make_event("tool/result", seq=5, time=1, data=freeze({"turn": 1}), surface_op="append", source_event_seqs=(4,), op_first=True)
    moved = with_seq(closer, 9, time=2)
    assert serialize_event(moved) == '{"type":"tool/result","seq":9,"time":2,"data":{"turn":1},"surfaceOp":"append","sourceEventSeqs":[4]}'
    plain = with_seq(make_event("tool/result", seq=5, time=1, data=freeze({"turn": 1}), surface_op="append", source_event_seqs=(4,)), 9)
    assert serialize_event(plain) == '{"type":"tool/result","seq":9,"time":1,"data":{"turn":1},"sourceEventSeqs":[4],"surfaceOp":"append"}'


def test_LOG_14_closers_close_the_open_step_with_its_turn_and_step() -> None:
    events = [_event("turn/start", 0, {"turn": 3}), _event("step/start", 1, {"turn": 3, "step": 2})]
    closers = repair_closers(events)
    assert [serialize_event(e) for e in closers] == [
        '{"type":"step/end","seq":2,"time":101,"data":{"turn":3,"step":2}}',
        '{"type":"turn/end","seq":3,"time":101,"data":{"turn":3,"reason":{"kind":"interrupted"}}}',
    ]


def test_LOG_14_scan_of_an_empty_or_closed_log_has_no_open_turn() -> None:
    assert scan_for_repair([]).open_turn is False
    closed = [_event("turn/start", 0, {"turn": 1}), _event("turn/end", 1, {"turn": 1, "reason": {"kind": "completed"}})]
    scan = scan_for_repair(closed)
    assert scan.open_turn is False and scan.open_step is False
    assert repair_closers(closed) == ()


def test_LEG_1_header_delta_rejection_names_its_event() -> None:
    delta = _event("request/header-delta", 7, {"delta": {}})
    found = check_not_header_delta(delta)
    assert found is not None and (found.rule, found.seq) == ("LEG-1", 7)
    assert check_not_header_delta(_event("request/header", 7, {"header": {}})) is None


def test_event_accessors_read_data_fields() -> None:
    event = _event("step/start", 0, {"turn": 2, "step": "x", "flag": True, "nested": {"a": 1}})
    assert data_field(event, "nested") == freeze({"a": 1})
    assert data_field(event, "missing") is ABSENT
    assert data_int(event, "turn") == 2
    assert data_int(event, "step") is None  # a string is not an int
    assert data_int(event, "flag") is None  # nor is a boolean
    assert data_int(event, "missing") is None
    assert data_int(_event("plugin/x", 1, "text"), "turn") is None


def test_rejections_compare_by_rule_and_kind_and_print_their_seq() -> None:
    a = Rejected(rule="SURF-5", reason="one", seq=3)
    assert a.same_kind(Rejected(rule="SURF-5", reason="another", seq=9))
    assert not a.same_kind(Rejected(rule="SURF-6", reason="one", seq=3))
    assert not a.same_kind(Rejected(rule="SURF-5", reason="one", seq=3, kind=FailureKind.LIMIT))
    assert str(a) == "SURF-5 seq 3: one"
    assert str(Rejected(rule="FMT-1", reason="empty file")) == "FMT-1: empty file"
    assert str(Rejected(rule="FMT-1", reason="x", seq=0)) == "FMT-1 seq 0: x"
