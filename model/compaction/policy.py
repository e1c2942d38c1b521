"""Compaction configuration and targets (CMP-3, CMP-4, CMP-5): which policy, which budget, which model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.header import EpochHeader, latest_header
from sessionspec.model.jsonval import Json, get, is_safe_int
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPolicy:
    provider: str
    model: str
    threshold_ratio: float | None = None
    retain_ratio: float | None = None
    retain_tokens: int | None = None
    max_tokens: int | None = None
    compaction_retries: int | None = None
    summarization_provider: str | None = None
    summarization_model: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactConfig:
    """CMP-3 defaults."""

    threshold_ratio: float = 0.8
    retain_ratio: float | None = None  # None: the default 0.16 unless retain_tokens is set
    retain_tokens: int | None = None
    max_tokens: int = 8192
    compaction_retries: int = 1
    max_overflow_retries: int = 1
    auto: bool = True
    summarization_provider: str = ""
    summarization_model: str = ""
    model_policies: tuple[ModelPolicy, ...] = ()


DEFAULT_RETAIN_RATIO: Final = 0.16


def _ratio_ok(v: float | None) -> bool:
    return v is None or (math.isfinite(v) and 0 < v <= 1)


@implements("CMP-3")
def check_compact_config(config: CompactConfig) -> CompactConfig | Rejected:
    """CMP-3: "Configuration defaults MUST be: `thresholdRatio 0.8`, `retainRatio 0.16`, `retainTokens` unset,
    `maxTokens 8192` (summary cap), `compactionRetries 1`, `maxOverflowRetries 1`, `auto true`,
    `summarizationProvider ""`, `summarizationModel ""`, `modelPolicies []`."

    CMP-3 validation: ratios finite in (0,1]; retainTokens, compactionRetries and maxOverflowRetries
    non-negative integers and maxTokens a positive integer (also per policy); retainRatio and retainTokens
    exclusive; resolved retainRatio < thresholdRatio (also per policy); summarization provider/model
    together; policies need provider/model, no duplicates."""

    def bad(why: str) -> Rejected:
        return Rejected(rule="CMP-3", reason=f"compact config: {why}")

    if not (_ratio_ok(config.threshold_ratio) and _ratio_ok(config.retain_ratio)):
        return bad("ratios must be finite in (0, 1]")
    counts = _counts_ok(config.retain_tokens, config.max_tokens, config.compaction_retries, config.max_overflow_retries)
    if counts is not None:
        return bad(counts)
    if config.retain_ratio is not None and config.retain_tokens is not None:
        return bad("retainRatio and retainTokens are mutually exclusive")
    if config.retain_tokens is None and _retain_ratio(config.retain_ratio) >= config.threshold_ratio:
        return bad("retainRatio must be below thresholdRatio")
    if bool(config.summarization_provider) != bool(config.summarization_model):
        return bad("summarizationProvider and summarizationModel must be set together")
    seen: set[tuple[str, str]] = set()
    for policy in config.model_policies:
        if not policy.provider or not policy.model:
            return bad("modelPolicies entries need provider and model")
        if (policy.provider, policy.model) in seen:
            return bad(f"duplicate model policy {policy.provider}/{policy.model}")
        seen.add((policy.provider, policy.model))
        if not (_ratio_ok(policy.threshold_ratio) and _ratio_ok(policy.retain_ratio)):
            return bad("policy ratios must be finite in (0, 1]")
        if policy.retain_ratio is not None and policy.retain_tokens is not None:
            return bad("policy retainRatio and retainTokens are mutually exclusive")
        counts = _counts_ok(policy.retain_tokens, policy.max_tokens, policy.compaction_retries, None)
        if counts is not None:
            return bad(f"policy {counts}")
        resolved = target_policy(config, policy.provider, policy.model)
        if resolved.retain_tokens is None and _retain_ratio(resolved.retain_ratio) >= resolved.threshold_ratio:
            return bad(f"policy {policy.provider}/{policy.model}: retainRatio must be below thresholdRatio")
    return config


def _counts_ok(retain_tokens: int | None, max_tokens: int | None, retries: int | None, overflow_retries: int | None) -> str | None:
    """CMP-3 (compact-basic ``config.ts`` ``validatePolicy``): ``retainTokens``, ``compactionRetries`` and
    ``maxOverflowRetries`` non-negative integers, ``maxTokens`` a positive integer; None when they are."""
    for name, value, least in (("retainTokens", retain_tokens, 0), ("maxTokens", max_tokens, 1),
                               ("compactionRetries", retries, 0), ("maxOverflowRetries", overflow_retries, 0)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
            return f"{name} ({value}) must be {'a positive' if least else 'a non-negative'} integer"
    return None


def _retain_ratio(v: float | None) -> float:
    return DEFAULT_RETAIN_RATIO if v is None else v


@implements("CMP-4")
def target_policy(config: CompactConfig, provider: str, model: str) -> CompactConfig:
    """CMP-4: "The target policy MUST be the defaults overlaid field-wise by the `modelPolicies` entry whose
    `(provider, model)` equals the target exactly; a policy that sets either retention field replaces the
    retention choice, else it inherits."
    """
    for p in config.model_policies:
        if p.provider == provider and p.model == model:
            retains = p.retain_ratio is not None or p.retain_tokens is not None
            return CompactConfig(
                threshold_ratio=config.threshold_ratio if p.threshold_ratio is None else p.threshold_ratio,
                retain_ratio=p.retain_ratio if retains else config.retain_ratio,
                retain_tokens=p.retain_tokens if retains else config.retain_tokens,
                max_tokens=config.max_tokens if p.max_tokens is None else p.max_tokens,
                compaction_retries=config.compaction_retries if p.compaction_retries is None else p.compaction_retries,
                max_overflow_retries=config.max_overflow_retries,
                auto=config.auto,
                summarization_provider=p.summarization_provider or config.summarization_provider,
                summarization_model=p.summarization_model or config.summarization_model,
            )
    return config


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactSpec:
    threshold_tokens: int
    retain_tokens: int


def compact_spec(policy: CompactConfig, context_window: Json | None, target: str) -> CompactSpec | Rejected:
    """CMP-4: ``thresholdTokens = floor(cw × thresholdRatio)``; ``retainTokens``
    = the policy's, else ``floor(cw × retainRatio)``; a missing or non-positive
    window, or ``retain >= threshold``, is a ``TargetPressureConfigError``.

    The contract states the floors by what a floor is (an integer at most the product, the next one above
    it), so a ceiling or a rounding fails it wherever the product is fractional.  ``policy`` is a checked
    configuration (CMP-3: its ratios finite in (0, 1]; ``compact_if_needed`` checks it first).

    pre: _ratio_ok(policy.threshold_ratio) and _ratio_ok(policy.retain_ratio)
    post: isinstance(__return__, Rejected) or (isinstance(context_window, int) and not isinstance(context_window, bool) and context_window > 0)
    post: isinstance(__return__, Rejected) or __return__.threshold_tokens <= context_window * policy.threshold_ratio < __return__.threshold_tokens + 1
    post: isinstance(__return__, Rejected) or policy.retain_tokens is not None or __return__.retain_tokens <= context_window * _retain_ratio(policy.retain_ratio) < __return__.retain_tokens + 1
    post: isinstance(__return__, Rejected) or policy.retain_tokens is None or __return__.retain_tokens == policy.retain_tokens
    post: isinstance(__return__, Rejected) or __return__.retain_tokens < __return__.threshold_tokens
    """
    if context_window is None:
        return Rejected(rule="CMP-8", reason=f"no context capacity for {target}")
    if not is_safe_int(context_window) or not isinstance(context_window, int) or context_window <= 0:
        return Rejected(rule="CMP-4", reason=f"invalid context window for {target}")
    threshold = math.floor(context_window * policy.threshold_ratio)
    retain = (
        policy.retain_tokens
        if policy.retain_tokens is not None
        else math.floor(context_window * _retain_ratio(policy.retain_ratio))
    )
    if retain >= threshold:
        return Rejected(rule="CMP-4", reason=f"retained tokens {retain} >= threshold {threshold} for {target}")
    return CompactSpec(threshold_tokens=threshold, retain_tokens=retain)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    provider: str
    model: str


@implements("CMP-5")
def routed_target(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> Target | None:
    """CMP-5: "The routed target MUST be `{provider, model}` of `requestHeader().config` when both are
    non-empty; with no such header, `compactIfNeeded` MUST return "no compaction" without events (agent
    options are never used for this)."

    CMP-5: ``{provider, model}`` of the latest logged header's config when
    both are non-empty; else none (agent options are never used)."""
    header = latest_header(events, dialect)
    if not isinstance(header, EpochHeader):
        return None
    provider, model = get(header.config, "provider"), get(header.config, "model")
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return Target(provider=provider, model=model)
    return None



DEFAULT_COMPACT_CONFIG: Final = CompactConfig()
