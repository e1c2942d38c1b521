"""Header rules that mutation testing found unpinned (issue 9, docs/quality.md).

HDR-8/LEG-5/LEG-6: the seed/load shape check of request headers and
assistant messages, one field at a time; MTR-11: the optional-header equality.
"""

from __future__ import annotations

import pytest

from model.header import EpochHeader, check_llm_shape, opt_header_eq
from model.jsonval import ABSENT, Json, freeze
from model.log import Dialect, Event, make_event


def _header_event(config: dict[str, object]) -> Event:
    return make_event("request/header", seq=3, time=0, data=freeze({"header": {"config": config}, "reason": "initial"}))


def _assistant(provenance: object) -> Event:
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
    found = check_llm_shape(_header_event(config))
    assert found is not None and found.rule == "HDR-8" and found.seq == 3
    assert found.reason == "request/header lacks provider/model"


@pytest.mark.parametrize("effort", ["", 1, None, False, ["high"]])
def test_LEG_6_present_reasoning_effort_must_be_a_non_empty_string(effort: object) -> None:
    found = check_llm_shape(_header_event({"provider": "p", "model": "m", "reasoningEffort": effort}))
    assert found is not None and found.rule == "LEG-6" and found.seq == 3
    assert found.reason == "request/header has an invalid reasoningEffort"


@pytest.mark.parametrize("config", [{"provider": "p", "model": "m"}, {"provider": "p", "model": "m", "reasoningEffort": "high"}])
def test_HDR_8_well_formed_header_passes(config: dict[str, object]) -> None:
    assert check_llm_shape(_header_event(config)) is None


def test_HDR_8_header_without_a_header_object_lacks_provider() -> None:
    event = make_event("request/header", seq=0, time=0, data=freeze({"reason": "initial"}))
    found = check_llm_shape(event)
    assert found is not None and found.rule == "HDR-8"


@pytest.mark.parametrize(
    "provenance",
    [ABSENT, {}, {"provider": "p"}, {"model": "m"}, {"provider": "", "model": "m"}, {"provider": "p", "model": ""}, {"provider": "p", "model": 2}, "p/m"],
)
def test_HDR_8_LEG_5_assistant_without_provider_model_provenance_is_rejected(provenance: object) -> None:
    found = check_llm_shape(_assistant(freeze(provenance) if provenance is not ABSENT else ABSENT))
    assert found is not None and found.rule == "HDR-8" and found.seq == 4
    assert found.reason == "assistant/message lacks provider/model provenance"


def test_HDR_8_assistant_with_provenance_passes_and_other_types_are_not_checked() -> None:
    assert check_llm_shape(_assistant(freeze({"provider": "p", "model": "m"}))) is None
    user = make_event("user/message", seq=1, time=0, data=freeze({"content": "u"}), surface_op="append")
    assert check_llm_shape(user) is None
    # HDR-8 names request/header and assistant/message only: a step event with
    # an empty config is not its business.
    assert check_llm_shape(make_event("step/start", seq=2, time=0, data=freeze({"config": {}}))) is None


CONFIG: Json = freeze({"provider": "p", "model": "m"})


def test_MTR_11_opt_header_eq_absent_cases() -> None:
    header = EpochHeader(config=CONFIG)
    assert opt_header_eq(ABSENT, ABSENT)
    assert not opt_header_eq(header, ABSENT)
    assert not opt_header_eq(ABSENT, header)
    assert opt_header_eq(header, EpochHeader(config=CONFIG))


def test_MTR_11_opt_header_eq_is_header_eq_in_the_given_dialect() -> None:
    """DIA-9: D08 compares adapterDefaults, A55 ignores them."""
    a = EpochHeader(config=CONFIG, adapter_defaults=freeze({"temperature": 1}))
    b = EpochHeader(config=CONFIG, adapter_defaults=freeze({"temperature": 2}))
    assert opt_header_eq(a, b, Dialect.A55)
    assert not opt_header_eq(a, b, Dialect.D08)
    assert not opt_header_eq(a, EpochHeader(config=freeze({"provider": "p", "model": "other"})))


def test_DIA_8_fold_header_canonicalizes_in_the_given_dialect() -> None:
    """D08 drops messagePrefix and keeps adapterDefaults (DIA-8, DIA-9); A55
    keeps a non-empty messagePrefix and drops adapterDefaults (HDR-2)."""
    from model.header import fold_header

    header = {"config": {"provider": "p", "model": "m"}, "adapterDefaults": {"temperature": 1}, "messagePrefix": [{"role": "user", "content": "p"}]}
    events = [make_event("request/header", seq=0, time=0, data=freeze({"header": header, "reason": "initial"}))]
    d08 = fold_header(events, ABSENT, Dialect.D08)
    a55 = fold_header(events, ABSENT, Dialect.A55)
    assert isinstance(d08, EpochHeader) and isinstance(a55, EpochHeader)
    assert d08.message_prefix is ABSENT and d08.adapter_defaults == freeze({"temperature": 1})
    assert a55.message_prefix == freeze([{"role": "user", "content": "p"}]) and a55.adapter_defaults is ABSENT
