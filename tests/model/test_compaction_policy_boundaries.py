"""CMP-3/CMP-4/CMP-5 at their boundaries (issue 43): every comparison of the compaction policy on both sides
and on the equal case, every rounding exact and fractional, every precedence with a key on both sides.

Expected values come from the rule text: CMP-3 "ratios finite in (0,1]; retainRatio and retainTokens mutually
exclusive; resolved retainRatio < thresholdRatio (also per model policy); summarization provider/model set
together; modelPolicies entries need non-empty provider/model"; CMP-4 "thresholdTokens = floor(cw x
thresholdRatio); retainTokens = policy.retainTokens if set else floor(cw x retainRatio); retainTokens >=
thresholdTokens -> TargetPressureConfigError; cw a positive integer"; CMP-5 "{provider, model} of the header
config when both are non-empty".
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, target
from hypothesis import strategies as st

from sessionspec.model.compaction import CompactConfig, ModelPolicy
from sessionspec.model.compaction.policy import CompactSpec, check_compact_config, compact_spec, routed_target, target_policy
from sessionspec.model.header import EpochHeader, header_to_json
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import make_event
from sessionspec.model.rejected import Rejected


def _rejected(config: CompactConfig) -> bool:
    return isinstance(check_compact_config(config), Rejected)


@pytest.mark.parametrize(("ratio", "ok"), [(0.0, False), (-0.1, False), (1e-9, True), (1.0, True), (1.0000001, False),
                                           (math.inf, False), (math.nan, False)])
def test_CMP_3_a_ratio_is_finite_in_the_half_open_interval(ratio: float, ok: bool) -> None:
    """(0,1]: zero is out (the equal case of ``0 < v``), one is in, anything not finite is out."""
    assert _rejected(CompactConfig(threshold_ratio=ratio, retain_tokens=0)) is not ok
    assert _rejected(CompactConfig(threshold_ratio=1.0, retain_ratio=ratio)) is not (ok and ratio < 1.0)


def test_CMP_3_retain_ratio_must_be_strictly_below_the_threshold_ratio() -> None:
    assert not _rejected(CompactConfig(threshold_ratio=0.5, retain_ratio=0.49))
    assert _rejected(CompactConfig(threshold_ratio=0.5, retain_ratio=0.5))  # equal: not below
    assert _rejected(CompactConfig(threshold_ratio=0.5, retain_ratio=0.51))
    # the default retain ratio (0.16) against a threshold ratio at it
    assert _rejected(CompactConfig(threshold_ratio=0.16))
    assert not _rejected(CompactConfig(threshold_ratio=0.16, retain_tokens=10))  # retainTokens set: no ratio rule


@pytest.mark.parametrize("policy", [
    ModelPolicy(provider="", model="m"), ModelPolicy(provider="p", model=""),
    ModelPolicy(provider="p", model="m", threshold_ratio=0.0), ModelPolicy(provider="p", model="m", retain_ratio=1.5),
    ModelPolicy(provider="p", model="m", retain_ratio=0.1, retain_tokens=5),
    ModelPolicy(provider="p", model="m", threshold_ratio=0.3, retain_ratio=0.3),
])
def test_CMP_3_a_model_policy_is_validated_like_the_defaults(policy: ModelPolicy) -> None:
    assert _rejected(CompactConfig(model_policies=(policy,)))


@pytest.mark.parametrize("policy", [
    ModelPolicy(provider="p", model="m", retain_tokens=5),
    ModelPolicy(provider="p", model="m", threshold_ratio=0.3, retain_ratio=0.2),
    ModelPolicy(provider="p", model="m", threshold_ratio=0.1, retain_tokens=1),  # a policy's tokens free it from the ratio rule
])
def test_CMP_3_a_valid_model_policy_passes(policy: ModelPolicy) -> None:
    assert not _rejected(CompactConfig(model_policies=(policy,)))


def test_CMP_4_a_policy_overlays_only_its_own_target_and_its_retention_replaces_the_defaults() -> None:
    config = CompactConfig(threshold_ratio=0.7, retain_tokens=100, compaction_retries=2, summarization_provider="sp",
                           summarization_model="sm",
                           model_policies=(ModelPolicy(provider="p", model="other", threshold_ratio=0.2),
                                           ModelPolicy(provider="p", model="m", retain_ratio=0.1, compaction_retries=3)))
    resolved = target_policy(config, "p", "m")
    assert (resolved.threshold_ratio, resolved.retain_ratio, resolved.retain_tokens, resolved.compaction_retries) == (0.7, 0.1, None, 3)
    # no summarization override: the defaults' pair stays
    assert (resolved.summarization_provider, resolved.summarization_model) == ("sp", "sm")
    assert target_policy(config, "q", "m") == config  # provider differs: no policy
    inherits = target_policy(CompactConfig(retain_tokens=7, model_policies=(ModelPolicy(provider="p", model="m", max_tokens=9),)), "p", "m")
    assert (inherits.retain_tokens, inherits.max_tokens, inherits.compaction_retries) == (7, 9, 1)


@pytest.mark.parametrize(("window", "ratio", "retain_ratio", "threshold", "retain"), [
    (1000, 0.8, None, 800, 160),    # both products exact
    (1001, 0.8, None, 800, 160),    # 800.8 and 160.16: floor, not round
    (999, 0.5, 0.25, 499, 249),     # 499.5 and 249.75: floor, not ceiling
    (7, 0.5, 0.2, 3, 1),
])
def test_CMP_4_the_budgets_are_floors_of_the_window_products(window: int, ratio: float, retain_ratio: float | None,
                                                              threshold: int, retain: int) -> None:
    spec = compact_spec(CompactConfig(threshold_ratio=ratio, retain_ratio=retain_ratio), window, "p/m")
    assert spec == CompactSpec(threshold_tokens=threshold, retain_tokens=retain)


@given(window=st.integers(1, 10**9), tenths=st.integers(1, 9))
def test_CMP_4_floor_on_any_window(window: int, tenths: int) -> None:
    """thresholdTokens = floor(cw x r) for any window; the fractional part is where a ceiling would differ."""
    ratio = tenths / 10
    product = window * ratio
    target(product - math.floor(product), label="fractional part of cw x thresholdRatio")
    spec = compact_spec(CompactConfig(threshold_ratio=ratio, retain_tokens=0), window, "p/m")
    if math.floor(product) == 0:
        assert isinstance(spec, Rejected)  # retain 0 >= threshold 0
    else:
        assert spec == CompactSpec(threshold_tokens=math.floor(product), retain_tokens=0)


@pytest.mark.parametrize("window", [None, 0, -1, -1000, 2**53, 1.5, True, "1000"])
def test_CMP_4_the_window_is_a_positive_safe_integer(window: object) -> None:
    spec = compact_spec(CompactConfig(), window, "p/m")  # type: ignore[arg-type]
    assert isinstance(spec, Rejected) and spec.rule == ("CMP-8" if window is None else "CMP-4")


def test_CMP_4_one_is_the_smallest_window() -> None:
    assert compact_spec(CompactConfig(threshold_ratio=1.0, retain_tokens=0), 1, "p/m") == CompactSpec(threshold_tokens=1, retain_tokens=0)


@pytest.mark.parametrize(("retain", "ok"), [(799, True), (800, False), (801, False)])
def test_CMP_4_retained_tokens_must_be_below_the_threshold(retain: int, ok: bool) -> None:
    spec = compact_spec(CompactConfig(retain_tokens=retain), 1000, "p/m")
    assert isinstance(spec, Rejected) is not ok


def _header_log(config: JsonObject) -> list[object]:
    header = EpochHeader(config=config, system="s")
    return [make_event("request/header", seq=0, time=0, data=JsonObject((("header", header_to_json(header)), ("reason", "initial"))))]


@pytest.mark.parametrize(("config", "routed"), [
    (JsonObject((("provider", "p"), ("model", "m"))), True),
    (JsonObject((("provider", ""), ("model", "m"))), False),
    (JsonObject((("provider", "p"), ("model", ""))), False),
    (JsonObject((("provider", 7), ("model", "m"))), False),
    (JsonObject((("provider", "p"), ("model", None))), False),
    (JsonObject((("model", "m"),)), False),
])
def test_CMP_5_the_routed_target_needs_both_names_non_empty(config: JsonObject, routed: bool) -> None:
    target = routed_target(_header_log(config))  # type: ignore[arg-type]
    assert (target is not None) is routed
    assert routed_target([]) is None


@pytest.mark.parametrize(("field", "value", "ok"), [
    ("retain_tokens", -1, False), ("retain_tokens", 0, True),
    ("max_tokens", 0, False), ("max_tokens", 1, True),
    ("compaction_retries", -1, False), ("compaction_retries", 0, True),
    ("max_overflow_retries", -1, False), ("max_overflow_retries", 0, True),
])
def test_CMP_3_counts_are_integers_at_their_floor(field: str, value: int, ok: bool) -> None:
    """compact-basic's ``validatePolicy`` (config.ts lines 239-249): retainTokens, compactionRetries and
    maxOverflowRetries non-negative integers, maxTokens a positive integer; the model accepted a negative count and
    ran ``range(0)`` attempts before issue 43."""
    assert _rejected(CompactConfig(**{field: value})) is not ok  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", [ModelPolicy(provider="p", model="m", max_tokens=0), ModelPolicy(provider="p", model="m", compaction_retries=-1),
                                    ModelPolicy(provider="p", model="m", retain_tokens=-5)])
def test_CMP_3_a_policy_counts_are_checked_too(policy: ModelPolicy) -> None:
    assert _rejected(CompactConfig(model_policies=(policy,)))
