"""The request header (HDR-1..9, Q-9, Q-15) of model.header."""

from __future__ import annotations

import pytest
from hypothesis import given

from sessionspec.fast.request_points import request_points
from sessionspec.model.header import (
    EpochHeader,
    canonical,
    check_llm_shape,
    config_eq,
    fold_header,
    hdr4_clauses,
    header_eq,
    header_event_reason,
    header_from_json,
    header_to_json,
    opt_header_eq,
)
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, freeze, js_stringify, obj
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from sessionspec.spec.header_properties import canonical_idempotent, header_eq_laws
from sessionspec.spec.header_strategies import canonical_headers, headers
from sessionspec.spec.log_builder import LogBuilder

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


# ---------------------------------------------------------------- HDR-8/LEG-5/LEG-6 shapes, MTR-11, DIA-8, HDR-4 clauses


def _shaped_header(config: dict[str, object]) -> Event:
    return make_event("request/header", seq=3, time=0, data=freeze({"header": {"config": config}, "reason": "initial"}))


def _shaped_assistant(provenance: object) -> Event:
    data: dict[str, object] = {"turn": 1, "step": 1, "content": []}
    if provenance is not ABSENT:
        data["provenance"] = provenance
    return make_event("assistant/message", seq=4, time=0, data=freeze(data), surface_op="append")


@pytest.mark.parametrize(
    "config",
    [
        {"model": "m"},
        {"provider": "p"},
        {"provider": "", "model": "m"},
        {"provider": "p", "model": ""},
        {"provider": 1, "model": "m"},
        {"provider": "p", "model": None},
        {},
    ],
)
def test_HDR_8_LEG_5_header_without_non_empty_provider_and_model_is_rejected(config: dict[str, object]) -> None:
    found = check_llm_shape(_shaped_header(config))
    assert found is not None and found.rule == "HDR-8" and found.seq == 3
    assert found.reason == "request/header lacks provider/model"


@pytest.mark.parametrize("effort", ["", 1, None, False, ["high"]])
def test_LEG_6_present_reasoning_effort_must_be_a_non_empty_string(effort: object) -> None:
    found = check_llm_shape(_shaped_header({"provider": "p", "model": "m", "reasoningEffort": effort}))
    assert found is not None and found.rule == "LEG-6" and found.seq == 3
    assert found.reason == "request/header has an invalid reasoningEffort"


@pytest.mark.parametrize("config", [{"provider": "p", "model": "m"}, {"provider": "p", "model": "m", "reasoningEffort": "high"}])
def test_HDR_8_well_formed_header_passes(config: dict[str, object]) -> None:
    assert check_llm_shape(_shaped_header(config)) is None


def test_HDR_8_header_without_a_header_object_lacks_provider() -> None:
    event = make_event("request/header", seq=0, time=0, data=freeze({"reason": "initial"}))
    found = check_llm_shape(event)
    assert found is not None and found.rule == "HDR-8"


@pytest.mark.parametrize(
    "provenance",
    [ABSENT, {}, {"provider": "p"}, {"model": "m"}, {"provider": "", "model": "m"}, {"provider": "p", "model": ""}, {"provider": "p", "model": 2}, "p/m"],
)
def test_HDR_8_LEG_5_assistant_without_provider_model_provenance_is_rejected(provenance: object) -> None:
    found = check_llm_shape(_shaped_assistant(freeze(provenance) if provenance is not ABSENT else ABSENT))
    assert found is not None and found.rule == "HDR-8" and found.seq == 4
    assert found.reason == "assistant/message lacks provider/model provenance"


def test_HDR_8_assistant_with_provenance_passes_and_other_types_are_not_checked() -> None:
    assert check_llm_shape(_shaped_assistant(freeze({"provider": "p", "model": "m"}))) is None
    user = make_event("user/message", seq=1, time=0, data=freeze({"content": "u"}), surface_op="append")
    assert check_llm_shape(user) is None
    # HDR-8 names request/header and assistant/message only: a step event with
    # an empty config is not its business.
    assert check_llm_shape(make_event("step/start", seq=2, time=0, data=freeze({"config": {}}))) is None


PM_CONFIG: Json = freeze({"provider": "p", "model": "m"})


def test_MTR_11_opt_header_eq_absent_cases() -> None:
    header = EpochHeader(config=PM_CONFIG)
    assert opt_header_eq(ABSENT, ABSENT)
    assert not opt_header_eq(header, ABSENT)
    assert not opt_header_eq(ABSENT, header)
    assert opt_header_eq(header, EpochHeader(config=PM_CONFIG))


def test_MTR_11_opt_header_eq_is_header_eq_in_the_given_dialect() -> None:
    """DIA-9: D08 compares adapterDefaults, A55 ignores them."""
    a = EpochHeader(config=PM_CONFIG, adapter_defaults=freeze({"temperature": 1}))
    b = EpochHeader(config=PM_CONFIG, adapter_defaults=freeze({"temperature": 2}))
    assert opt_header_eq(a, b, Dialect.A55)
    assert not opt_header_eq(a, b, Dialect.D08)
    assert not opt_header_eq(a, EpochHeader(config=freeze({"provider": "p", "model": "other"})))


def test_DIA_8_fold_header_canonicalizes_in_the_given_dialect() -> None:
    """D08 drops messagePrefix and keeps adapterDefaults (DIA-8, DIA-9); A55
    keeps a non-empty messagePrefix and drops adapterDefaults (HDR-2)."""
    from sessionspec.model.header import fold_header

    header = {"config": {"provider": "p", "model": "m"}, "adapterDefaults": {"temperature": 1}, "messagePrefix": [{"role": "user", "content": "p"}]}
    events = [make_event("request/header", seq=0, time=0, data=freeze({"header": header, "reason": "initial"}))]
    d08 = fold_header(events, ABSENT, Dialect.D08)
    a55 = fold_header(events, ABSENT, Dialect.A55)
    assert isinstance(d08, EpochHeader) and isinstance(a55, EpochHeader)
    assert d08.message_prefix is ABSENT and d08.adapter_defaults == freeze({"temperature": 1})
    assert a55.message_prefix == freeze([{"role": "user", "content": "p"}]) and a55.adapter_defaults is ABSENT


def test_HDR_4_headers_whose_tools_are_the_same_placeholder_text_are_equal() -> None:
    """Q-15 / FMT-6: a placeholder string in place of the tools is compared by its text."""
    a = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[tools elided]")
    b = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[tools elided]")
    c = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[other]")
    assert header_eq(a, b) and not header_eq(a, c)


def test_HDR_4_equal_headers_with_tools_meet_every_clause() -> None:
    tools = freeze([{"name": "read", "parameters": {"type": "object"}}])
    a = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="s", tools=tools)
    b = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="s", tools=freeze([{"name": "read", "parameters": {"type": "object"}}]))
    assert all(hdr4_clauses(a, b))
    c = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="s", tools=freeze([{"name": "write"}]))
    assert not all(hdr4_clauses(a, c))


def test_HDR_4_the_clauses_hold_for_equal_placeholder_and_d08_headers() -> None:
    """HDR-4's clauses for equal headers: a placeholder is compared by the whole header's JSON (Q-15), and D08 adds
    ``adapterDefaults`` (DIA-9), equal here and different there."""
    config = freeze({"provider": "p", "model": "m"})
    placeholder = EpochHeader(config=config, tools="{{tools}}")  # FMT-6's whole-field token
    assert all(hdr4_clauses(placeholder, EpochHeader(config=config, tools="{{tools}}")))
    d08 = EpochHeader(config=config, adapter_defaults=freeze({"temperature": 1}))
    assert all(hdr4_clauses(d08, EpochHeader(config=config, adapter_defaults=freeze({"temperature": 1})), Dialect.D08))
    assert not all(hdr4_clauses(d08, EpochHeader(config=config, adapter_defaults=freeze({"temperature": 2})), Dialect.D08))
