"""The request header (HDR-1..9, Q-9, Q-15) of model.header."""

from __future__ import annotations

from hypothesis import given

from model.header import (
    EpochHeader,
    canonical,
    check_llm_shape,
    config_eq,
    fold_header,
    header_eq,
    header_event_reason,
    header_from_json,
    header_to_json,
)
from model.jsonval import ABSENT, Json, JsonObject, js_stringify, obj
from model.log import Event, make_event
from model.rejected import Rejected
from model.surface import fold_surface
from sessionspec.fast.request_points import request_points
from spec.properties import canonical_idempotent, header_eq_laws
from spec.strategies import LogBuilder, canonical_headers, headers

CONFIG = obj((("provider", "mock"), ("model", "m")))
TOOL_A = obj((("name", "a"), ("description", "A"), ("parameters", obj())))
TOOL_B = obj((("name", "b"), ("description", "B"), ("parameters", obj())))
PREFIX = (obj((("role", "user"), ("content", "p"))),)


def _header(**fields: Json) -> EpochHeader:
    return EpochHeader(
        config=fields.get("config", CONFIG),
        system=fields.get("system", ABSENT),
        tools=fields.get("tools", ABSENT),
        message_prefix=fields.get("message_prefix", ABSENT),
    )


def _header_event(seq: int, h: EpochHeader, reason: str = "initial") -> Event:
    return make_event("request/header", seq=seq, time=0, data=obj((("header", header_to_json(h)), ("reason", reason))))


# --------------------------------------------------------------------------- HDR-1, HDR-2


def test_HDR_1_header_from_json_reads_the_four_fields() -> None:
    raw = obj((("config", CONFIG), ("system", "s"), ("tools", (TOOL_A,)), ("messagePrefix", PREFIX)))
    h = header_from_json(raw)
    assert h == EpochHeader(config=CONFIG, system="s", tools=(TOOL_A,), message_prefix=PREFIX)
    assert js_stringify(header_to_json(h)) == js_stringify(raw)


def test_HDR_1_rejects_non_object_header_or_config() -> None:
    for raw in (None, "x", obj((("config", "c"),)), obj()):
        result = header_from_json(raw)
        assert isinstance(result, Rejected) and result.rule == "HDR-1"


def test_HDR_2_canonical_drops_empty_optional_fields() -> None:
    c = canonical(_header(system="", tools=(), message_prefix=()))
    assert c == EpochHeader(config=CONFIG)
    assert js_stringify(header_to_json(c)) == '{"config":{"provider":"mock","model":"m"}}'


def test_HDR_2_canonical_keeps_populated_fields_in_key_order() -> None:
    c = canonical(_header(message_prefix=PREFIX, tools=(TOOL_A,), system="s"))
    assert list(header_to_json(c).keys()) == ["config", "system", "tools", "messagePrefix"]
    assert c.system == "s" and c.tools == (TOOL_A,) and c.message_prefix == PREFIX


def test_HDR_2_config_passes_through_unchanged() -> None:
    config = obj((("model", "m"), ("provider", "p"), ("extra", obj())))
    assert canonical(_header(config=config)).config is config


def test_Q_15_placeholder_string_survives_canonicalization() -> None:
    assert canonical(_header(tools="{{tools}}")).tools == "{{tools}}"


@given(headers())
def test_P_HDR_1_canonical_idempotent(h: EpochHeader) -> None:
    assert canonical_idempotent(h) is None


# --------------------------------------------------------------------------- HDR-3


def test_HDR_3_each_compared_scalar_distinguishes() -> None:
    full = obj((("provider", "p"), ("model", "m"), ("reasoningEffort", "high"), ("temperature", 0.5), ("maxTokens", 10)))
    for key in ("provider", "model", "reasoningEffort", "temperature", "maxTokens"):
        changed = JsonObject((k, "other" if k == key else v) for k, v in full.items())
        missing = JsonObject((k, v) for k, v in full.items() if k != key)
        assert not config_eq(full, changed), key
        assert not config_eq(full, missing) and not config_eq(missing, full), key
    assert config_eq(full, full)


def test_HDR_3_strict_equality_no_coercion() -> None:
    assert not config_eq(obj((("maxTokens", 1),)), obj((("maxTokens", "1"),)))
    assert not config_eq(obj((("temperature", True),)), obj((("temperature", 1),)))


def test_HDR_3_stop_empty_is_not_absent_and_compares_elementwise() -> None:
    assert not config_eq(obj((("stop", ()),)), obj())
    assert config_eq(obj((("stop", ("a", "b")),)), obj((("stop", ("a", "b")),)))
    assert not config_eq(obj((("stop", ("a", "b")),)), obj((("stop", ("b", "a")),)))
    assert not config_eq(obj((("stop", ("a",)),)), obj((("stop", ("a", "b")),)))


def test_HDR_3_other_config_keys_are_ignored() -> None:
    a = obj((("provider", "p"), ("model", "m"), ("topP", 1)))
    b = obj((("model", "m"), ("provider", "p"), ("custom", obj())))
    assert config_eq(a, b)


# --------------------------------------------------------------------------- HDR-4


def test_HDR_4_system_distinguishes_and_absent_equals_absent() -> None:
    assert header_eq(_header(), _header())
    assert not header_eq(_header(system="a"), _header(system="b"))
    assert not header_eq(_header(system="a"), _header())


def test_HDR_4_tool_order_and_description_distinguish() -> None:
    assert header_eq(_header(tools=(TOOL_A, TOOL_B)), _header(tools=(TOOL_A, TOOL_B)))
    assert not header_eq(_header(tools=(TOOL_A, TOOL_B)), _header(tools=(TOOL_B, TOOL_A)))
    other = obj((("name", "a"), ("description", "changed"), ("parameters", obj())))
    assert not header_eq(_header(tools=(TOOL_A,)), _header(tools=(other,)))
    assert not header_eq(_header(tools=(TOOL_A,)), _header(tools=(TOOL_A, TOOL_B)))


def test_HDR_4_prefix_and_tools_are_key_order_sensitive() -> None:
    swapped_tool = obj((("description", "A"), ("name", "a"), ("parameters", obj())))
    assert not header_eq(_header(tools=(TOOL_A,)), _header(tools=(swapped_tool,)))
    swapped_prefix = (obj((("content", "p"), ("role", "user"))),)
    assert not header_eq(_header(message_prefix=PREFIX), _header(message_prefix=swapped_prefix))


def test_HDR_4_absent_and_empty_prefix_or_tools_are_equal() -> None:
    assert header_eq(_header(tools=(), message_prefix=()), _header())
    assert header_eq(_header(), _header(message_prefix=()))


def test_HDR_4_config_difference_makes_headers_unequal() -> None:
    assert not header_eq(_header(config=obj((("provider", "mock"), ("model", "x")))), _header())


@given(canonical_headers(), canonical_headers())
def test_P_HDR_2_header_eq_is_reflexive_symmetric_and_distinguishing(a: EpochHeader, b: EpochHeader) -> None:
    assert header_eq_laws(a, b) is None


# --------------------------------------------------------------------------- HDR-5, HDR-6, Q-9


def test_HDR_5_fold_takes_the_last_snapshot_canonical() -> None:
    events = [
        _header_event(0, _header(system="first")),
        make_event("plugin/event", seq=1, time=0, data=None),
        _header_event(2, _header(system="", tools=())),
        make_event("plugin/event", seq=3, time=0, data=None),
    ]
    assert fold_header(events) == EpochHeader(config=CONFIG)


def test_Q_9_fold_returns_the_baseline_by_identity_uncanonicalized() -> None:
    baseline = _header(system="")  # not canonical
    assert fold_header([make_event("plugin/event", seq=0, time=0, data=None)], baseline) is baseline
    assert fold_header([]) is ABSENT


def test_HDR_6_fold_covers_headers_whoever_wrote_them() -> None:
    # A header appended outside any step (e.g. by a plugin, Q-16) is still the fold.
    b = LogBuilder()
    b.turn_start()
    b.request_header(_header(system="plugin"), "custom")
    assert fold_header(b.events) == _header(system="plugin")


# --------------------------------------------------------------------------- HDR-7, HDR-8


def test_HDR_7_header_is_log_only() -> None:
    event = make_event(
        "request/header", seq=0, time=0, data=obj((("header", header_to_json(_header())), ("reason", "initial"))), surface_op="append"
    )
    result = fold_surface([event])
    assert isinstance(result, Rejected) and result.rule == "SURF-2"


def test_HDR_7_loop_writes_the_header_canonical_with_reason() -> None:
    b = LogBuilder()
    b.request_header(_header(system="", tools=(TOOL_A,)), "initial")
    event = b.events[0]
    assert js_stringify(event.data) == js_stringify(
        obj((("header", obj((("config", CONFIG), ("tools", (TOOL_A,))))), ("reason", "initial")))
    )
    assert header_event_reason(event) == "initial"


def test_HDR_8_rejects_missing_provider_model_and_bad_effort() -> None:
    for config, rule in (
        (obj((("model", "m"),)), "HDR-8"),
        (obj((("provider", "p"), ("model", ""))), "HDR-8"),
        (obj((("provider", 1), ("model", "m"))), "HDR-8"),
        (obj((("provider", "p"), ("model", "m"), ("reasoningEffort", ""))), "LEG-6"),
        (obj((("provider", "p"), ("model", "m"), ("reasoningEffort", 1))), "LEG-6"),
    ):
        result = check_llm_shape(_header_event(0, _header(config=config)))
        assert isinstance(result, Rejected) and result.rule == rule, config
    assert check_llm_shape(_header_event(0, _header())) is None


def test_HDR_8_assistant_needs_provider_model_provenance() -> None:
    def assistant(provenance: Json) -> Event:
        data = obj((("turn", 1), ("step", 1), ("content", ()), ("provenance", provenance)))
        return make_event("assistant/message", seq=0, time=0, data=data, surface_op="append")

    bad = check_llm_shape(assistant(obj((("provider", "p"),))))
    assert isinstance(bad, Rejected) and bad.rule == "HDR-8"
    assert check_llm_shape(assistant(obj((("provider", "p"), ("model", "m"))))) is None


# --------------------------------------------------------------------------- HDR-9


def test_HDR_9_step_header_is_the_fold_at_the_first_chunk() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user_message("u")
    b.step_start()
    b.request_header(_header(system="A"), "initial")
    b.chunks(["x"])
    b.request_header(_header(system="late"), "change")  # after the first chunk: not this request's header
    b.assistant_message((), [])
    b.step_end()
    b.step_start()  # carries the previous snapshot over
    b.chunks(["y"])
    b.step_end()
    b.turn_end()
    points = request_points(b.events)
    assert not isinstance(points, Rejected)
    assert [p.header for p in points] == [_header(system="A"), _header(system="late")]


def test_HDR_9_step_without_chunk_uses_the_fold_at_step_end() -> None:
    b = LogBuilder()
    b.turn_start()
    b.step_start()
    b.request_header(_header(system="A"), "initial")
    b.request_header(_header(system="B"), "change")
    b.step_end()
    b.step_start()  # the chunkless step was a request error: the turn retried
    b.chunks(["y"])
    b.step_end()
    points = request_points(b.events)
    assert not isinstance(points, Rejected)
    assert [p.header for p in points] == [_header(system="B"), _header(system="B")]
