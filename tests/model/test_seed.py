"""Seed and load validation (LOG-8, LOG-17, LEG-1..6, HDR-8) of model.seed."""

from __future__ import annotations

from hypothesis import given

from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.model.codec import parse_event_line
from sessionspec.model.jsonval import JsonObject, obj
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.seed import check_not_header_delta, validate_load, validate_seed
from sessionspec.spec.log_strategies import well_formed_logs
from tests.support import GROUNDTRUTH, timed_event


def _header_event(seq: int, config: JsonObject, reason: str = "initial") -> Event:
    data = obj((("header", obj((("config", config),))), ("reason", reason)))
    return make_event("request/header", seq=seq, time=0, data=data)


def _assistant(seq: int, provenance: JsonObject) -> Event:
    data = obj((("turn", 1), ("step", 1), ("content", ()), ("provenance", provenance)))
    return make_event("assistant/message", seq=seq, time=0, data=data, surface_op="append", source_event_seqs=())


GOOD_CONFIG = obj((("provider", "mock"), ("model", "m")))


def _rule(result: Rejected | None) -> str | None:
    return None if result is None else result.rule


def _groundtruth_logs() -> list[tuple[str, list[Event]]]:
    out = []
    for path in sorted(GROUNDTRUTH.glob("*/session.jsonl")):
        events: list[Event] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            parsed = parse_event_line(line)
            assert not isinstance(parsed, Rejected)
            events.extend(parsed)
        out.append((path.parent.name, events))
    return out


def test_LOG_8_accepts_every_groundtruth_log() -> None:
    logs = _groundtruth_logs()
    assert len(logs) >= 15
    for name, events in logs:
        assert validate_load(events) is None, name


@given(well_formed_logs())
def test_LOG_8_accepts_generated_well_formed_logs(events: tuple[Event, ...]) -> None:
    assert validate_seed(events) is None


def test_LOG_8_accepts_empty_seed_and_plugin_event_with_null_data() -> None:
    assert validate_seed([]) is None
    assert validate_seed([make_event("plugin/event", seq=0, time=0, data=None)]) is None


def test_LOG_1_rejects_seed_not_contiguous_from_0() -> None:
    result = validate_seed([make_event("plugin/event", seq=1, time=0, data=None)])
    assert _rule(result) == "LOG-1"


def test_HDR_8_rejects_header_without_provider() -> None:
    assert _rule(validate_seed([_header_event(0, obj((("model", "m"),)))])) == "HDR-8"
    assert _rule(validate_seed([_header_event(0, obj((("provider", ""), ("model", "m"))))])) == "HDR-8"


def test_LEG_5_rejects_assistant_without_provider_provenance() -> None:
    assert _rule(validate_seed([_assistant(0, obj((("model", "m"),)))])) == "HDR-8"
    assert validate_seed([_assistant(0, obj((("provider", "p"), ("model", "m"))))]) is None


def test_LEG_6_rejects_empty_or_non_string_reasoning_effort() -> None:
    for effort in ("", 1):
        config = obj((("provider", "p"), ("model", "m"), ("reasoningEffort", effort)))
        assert _rule(validate_seed([_header_event(0, config)])) == "LEG-6"
    config = obj((("provider", "p"), ("model", "m"), ("reasoningEffort", "high")))
    assert validate_seed([_header_event(0, config)]) is None


def test_LEG_4_rejects_reason_bearing_aborted_turn_end() -> None:
    reason = obj((("kind", "aborted"), ("reason", obj((("kind", "user"),)))))
    event = make_event("turn/end", seq=0, time=0, data=obj((("turn", 1), ("reason", reason))))
    assert _rule(validate_seed([event])) == "LEG-4"
    coarse = make_event("turn/end", seq=0, time=0, data=obj((("turn", 1), ("reason", obj((("kind", "aborted"),))))))
    assert validate_seed([coarse]) is None


def test_LEG_2_rejects_fallback_reason() -> None:
    assert _rule(validate_seed([_header_event(0, GOOD_CONFIG, "fallback")])) == "LEG-2"
    # any other reason string is accepted by the Session core.
    assert validate_seed([_header_event(0, GOOD_CONFIG, "whatever")]) is None


def test_LEG_1_rejects_in_memory_header_delta() -> None:
    event = make_event("request/header-delta", seq=0, time=0, data=None)
    assert _rule(validate_seed([event])) == "LEG-1"


def test_SURF_9_seed_wraps_surface_failures_with_the_index() -> None:
    event = make_event("user/message", seq=0, time=0, data=obj((("content", ()),)))  # no surfaceOp
    result = validate_seed([event])
    assert result is not None and result.rule == "SURF-2"
    assert "invalid seed event at index 0" in result.reason


def test_LOG_8_order_llm_shape_before_turn_end_before_fallback_before_seq() -> None:
    # An entry that breaks HDR-8, LEG-2 and LOG-1 at once reports HDR-8 (step 3 of LOG-8).
    bad_all = _header_event(5, obj((("model", "m"),)), "fallback")
    assert _rule(validate_seed([bad_all])) == "HDR-8"
    # LEG-2 beats LOG-1 (step 5 before step 6).
    assert _rule(validate_seed([_header_event(5, GOOD_CONFIG, "fallback")])) == "LEG-2"
    # LOG-1 beats SURF-9 (step 6 before step 7): wrong seq and a missing marker.
    unmarked = make_event("user/message", seq=3, time=0, data=obj((("content", ()),)))
    assert _rule(validate_seed([unmarked])) == "LOG-1"


def test_LOG_8_first_failing_entry_wins() -> None:
    events = [
        make_event("plugin/event", seq=0, time=0, data=None),
        _header_event(1, GOOD_CONFIG, "fallback"),
        _header_event(2, obj(())),
    ]
    result = validate_seed(events)
    assert result is not None and result.rule == "LEG-2" and result.seq == 1


def test_LEG_3_mode_set_is_rejected_at_load_but_accepted_as_seed() -> None:
    events = [make_event("mode/set", seq=0, time=0, data=obj((("mode", "plan"),)))]
    assert validate_seed(events) is None
    assert _rule(validate_load(events)) == "LEG-3"


def test_LOG_17_load_screens_legacy_records_before_seed_checks() -> None:
    # A bad seq at index 0 but a mode/set later: the load screen reports LEG-3 first.
    events = [make_event("plugin/event", seq=9, time=0, data=None), make_event("mode/set", seq=1, time=0, data=None)]
    assert _rule(validate_load(events)) == "LEG-3"
    assert _rule(validate_seed(events)) == "LOG-1"


def test_LOG_8_d08_skips_the_a55_turn_end_shape() -> None:
    reason = obj((("kind", "aborted"), ("reason", obj((("kind", "user"),)))))
    event = make_event("turn/end", seq=0, time=0, data=obj((("turn", 1), ("reason", reason))))
    assert validate_seed([event], Dialect.D08) is None


def test_LOG_5_append_does_not_check_provider_or_reason_Q_7() -> None:
    """An append (the incremental fold) accepts what only a seed/load rejects (HDR-8)."""
    derivation = IncrementalDerivation()
    assert derivation.append(_header_event(0, obj((("model", "m"),)), "made-up")) is None
    assert _rule(validate_seed(derivation.events)) == "HDR-8"


def test_LEG_10_strict_mode_rejects_seq_holes_and_logs_starting_at_1() -> None:
    starts_at_1 = [make_event("turn/start", seq=1, time=0, data=obj())]
    assert _rule(validate_seed(starts_at_1)) == "LOG-1"
    hole = [make_event("turn/start", seq=0, time=0, data=obj()), make_event("turn/end", seq=87, time=0, data=obj())]
    result = validate_seed(hole)
    assert result is not None and result.rule == "LOG-1" and result.seq == 87


def test_CHK_8_contiguity_is_checked_after_row_expansion() -> None:
    rows = [
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
        '{"type":"text-chunks","seq0":1,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}',
        '{"type":"turn/end","seq":5,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}',
    ]
    events: list[Event] = []
    for line in rows:
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected)
        events.extend(parsed)
    result = validate_seed(events)
    assert result is not None and result.rule == "LOG-1" and result.seq == 5
    fixed = events[:-1] + [make_event("turn/end", seq=4, time=0, data=obj())]
    assert validate_seed(fixed) is None


def test_LEG_1_header_delta_rejection_names_its_event() -> None:
    delta = timed_event("request/header-delta", 7, {"delta": {}})
    found = check_not_header_delta(delta)
    assert found is not None and (found.rule, found.seq) == ("LEG-1", 7)
    # LEG-1 gives the words: ("uses unsupported legacy request/header-delta format").
    assert found.reason == "uses unsupported legacy request/header-delta format"
    assert check_not_header_delta(timed_event("request/header", 7, {"header": {}})) is None


def test_SURF_9_the_wrapped_failure_keeps_its_rule_and_seq_and_names_the_entrys_index() -> None:
    """LOG-8 step 7: "surface validation (SURF-9), a failure being wrapped as "invalid seed event at index i: ..."":
    the wrap adds the index to the reason and keeps the surface rule, its seq and its kind (an invalid input)."""
    events = [make_event("plugin/event", seq=0, time=0, data=None),
              make_event("user/message", seq=1, time=0, data=obj((("content", ()),)), surface_op="replace")]
    result = validate_seed(events)
    assert result is not None and (result.rule, result.seq, result.kind) == ("SURF-3", 1, FailureKind.INVALID)
    assert result.reason == "invalid seed event at index 1: user/message carries an invalid surfaceOp"


def test_LOG_8_the_header_delta_is_checked_before_the_llm_shape_and_the_seq() -> None:
    """LOG-8 step 2 "with a `request/header-delta` type checked first (LEG-1)": a header delta at the wrong seq, with
    a data no LLM shape accepts, is refused by LEG-1; and a contiguous seed past a LEG-1-free first entry is checked on."""
    delta = make_event("request/header-delta", seq=4, time=0, data=obj((("header", obj((("config", obj()),))),)))
    result = validate_seed([delta])
    assert result is not None and (result.rule, result.seq) == ("LEG-1", 4)
    later = validate_seed([make_event("plugin/event", seq=0, time=0, data=None), make_event("request/header-delta", seq=1, time=0, data=None)])
    assert later is not None and (later.rule, later.seq) == ("LEG-1", 1)
