"""Deployment facts: what a harness was configured with, which its log does not record (issue 44).

A log records the events a harness wrote, not the configuration it wrote them under: compact-basic's
configuration (CMP-3), the tool-result prune's (PRN-1), and each model's declared context window (the
capability ``compactIfNeeded`` resolves, CMP-8).  A deployment file states them, so the rules that
depend on them can be decided (``sessionspec check --deployment FILE``, docs/check.md).  Each part is
read by the reader of the rule that defines it (CMP-3's, PRN-1's), so a file the harness would refuse is
refused here with that rule and the field.  A part the file leaves out is unknown, and the decisions that
need it are not made; it is never filled with the defaults (that would decide a log against a
configuration nobody stated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.compaction.policy import CompactConfig, ModelPolicy, check_compact_config
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, get, is_safe_int
from sessionspec.model.prune import PruneConfig, resolve_prune_config
from sessionspec.model.rejected import Rejected

DEPLOYMENT_VERSION: Final = 1
# What a refusal of the file's own shape names (no rule of the book governs the envelope of a deployment file):
# its format, docs/schemas/deployment.v1.schema.json.
FILE_FORMAT: Final = "deployment.v1"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCapabilities:
    """What a model declares of itself that the harness reads: its context window (``LlmResolvedModelInfo.
    context.contextWindow``, resolved by ``compactIfNeeded``, CMP-8)."""

    provider: str
    model: str
    context_window: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """The facts a deployment file states.  ``compaction`` None: not stated.  ``prune`` None: not stated;
    ``prune_installed`` False: stated as not installed (no prune service, PRN-6)."""

    compaction: CompactConfig | None = None
    prune: PruneConfig | None = None
    prune_installed: bool | None = None
    models: tuple[ModelCapabilities, ...] = ()

    def context_window(self, provider: str, model: str) -> int | None:
        """The declared context window of ``provider/model``; None when the file does not declare it."""
        for entry in self.models:
            if entry.provider == provider and entry.model == model:
                return entry.context_window
        return None


_TOP_KEYS: Final = ("version", "compaction", "prune", "models")
# CMP-3's keys, with the type each must have and the CompactConfig field it sets.
_RATIO: Final = "ratio"
_COUNT: Final = "count"
_CONFIG_KEYS: Final = {
    "thresholdRatio": ("threshold_ratio", _RATIO), "retainRatio": ("retain_ratio", _RATIO),
    "retainTokens": ("retain_tokens", _COUNT), "maxTokens": ("max_tokens", _COUNT),
    "compactionRetries": ("compaction_retries", _COUNT), "maxOverflowRetries": ("max_overflow_retries", _COUNT),
    "auto": ("auto", bool), "summarizationProvider": ("summarization_provider", str),
    "summarizationModel": ("summarization_model", str),
}
_POLICY_KEYS: Final = {
    "provider": ("provider", str), "model": ("model", str),
    "thresholdRatio": ("threshold_ratio", _RATIO), "retainRatio": ("retain_ratio", _RATIO),
    "retainTokens": ("retain_tokens", _COUNT), "maxTokens": ("max_tokens", _COUNT),
    "compactionRetries": ("compaction_retries", _COUNT), "summarizationProvider": ("summarization_provider", str),
    "summarizationModel": ("summarization_model", str),
}


def _typed(value: Json, kind: object) -> bool:
    if kind is _RATIO:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is _COUNT:
        return is_safe_int(value)
    if kind is bool:
        return isinstance(value, bool)
    return isinstance(value, str)


_KIND_WORDS: Final = {_RATIO: "a number", _COUNT: "a non-negative integer", bool: "a boolean", str: "a string"}


def _fields(raw: Json, keys: dict[str, tuple[str, object]], path: str, rule: str) -> dict[str, Json] | Rejected:
    """The typed fields of an object of CMP-3's reader: unknown keys reject (CMP-3), each value of its type."""
    if not isinstance(raw, JsonObject):
        return Rejected(rule=rule, reason=f"{path}: must be an object")
    fields: dict[str, Json] = {}
    for key, value in raw.items():
        if key not in keys:
            return Rejected(rule=rule, reason=f"{path}.{key}: unknown key")
        name, kind = keys[key]
        if not _typed(value, kind):
            return Rejected(rule=rule, reason=f"{path}.{key}: must be {_KIND_WORDS[kind]}")
        fields[name] = float(value) if kind is _RATIO and isinstance(value, int) else value
    return fields


def read_compact_config(raw: Json, path: str = "compaction") -> CompactConfig | Rejected:
    """CMP-3's reader (``resolveConfig``): the configuration object's keys, typed, missing ones at their
    defaults, then CMP-3's validation (:func:`check_compact_config`); a refusal names the field."""
    if not isinstance(raw, JsonObject):
        return Rejected(rule="CMP-3", reason=f"{path}: must be an object")
    fields = _fields(JsonObject((k, v) for k, v in raw.items() if k != "modelPolicies"), _CONFIG_KEYS, path, "CMP-3")
    if isinstance(fields, Rejected):
        return fields
    policies: list[ModelPolicy] = []
    listed = get(raw, "modelPolicies")
    listed = () if listed is ABSENT else listed
    if not isinstance(listed, tuple):
        return Rejected(rule="CMP-3", reason=f"{path}.modelPolicies: must be an array")
    for index, entry in enumerate(listed):
        policy = _fields(entry, _POLICY_KEYS, f"{path}.modelPolicies[{index}]", "CMP-3")
        if isinstance(policy, Rejected):
            return policy
        policies.append(ModelPolicy(provider=str(policy.pop("provider", "")), model=str(policy.pop("model", "")),
                                    **policy))  # type: ignore[arg-type]
    config = CompactConfig(**fields, model_policies=tuple(policies))  # type: ignore[arg-type]
    checked = check_compact_config(config)
    if isinstance(checked, Rejected):
        return Rejected(rule=checked.rule, reason=f"{path}: {checked.reason}")
    return checked


def _read_models(raw: Json) -> tuple[ModelCapabilities, ...] | Rejected:
    if not isinstance(raw, tuple):
        return Rejected(rule=FILE_FORMAT, reason="models: must be an array")
    models: list[ModelCapabilities] = []
    for index, entry in enumerate(raw):
        path = f"models[{index}]"
        if not isinstance(entry, JsonObject):
            return Rejected(rule=FILE_FORMAT, reason=f"{path}: must be an object")
        for key in entry:
            if key not in ("provider", "model", "contextWindow"):
                return Rejected(rule=FILE_FORMAT, reason=f"{path}.{key}: unknown key")
        provider, model, window = get(entry, "provider"), get(entry, "model"), get(entry, "contextWindow")
        if not isinstance(provider, str) or not provider or not isinstance(model, str) or not model:
            return Rejected(rule=FILE_FORMAT, reason=f"{path}: provider and model must be non-empty strings")
        # CMP-4: "`cw` a positive integer (else `TargetPressureConfigError`)".
        if not is_safe_int(window) or not isinstance(window, int) or window <= 0:
            return Rejected(rule="CMP-4", reason=f"{path}.contextWindow: must be a positive integer")
        if any(m.provider == provider and m.model == model for m in models):
            return Rejected(rule=FILE_FORMAT, reason=f"{path}: {provider}/{model} is declared twice")
        models.append(ModelCapabilities(provider=provider, model=model, context_window=window))
    return tuple(models)


def read_deployment(raw: Json) -> Deployment | Rejected:
    """A deployment file's value: ``{version: 1, compaction?, prune?, models?}``.  ``compaction`` is
    compact-basic's configuration (CMP-3's keys), ``prune`` the prune service's (PRN-1's keys) or ``null``
    for no prune service, ``models`` the declared ``{provider, model, contextWindow}`` of each model."""
    if not isinstance(raw, JsonObject):
        return Rejected(rule=FILE_FORMAT, reason="the deployment must be a JSON object")
    for key in raw:
        if key not in _TOP_KEYS:
            return Rejected(rule=FILE_FORMAT, reason=f"{key}: unknown key (known: {', '.join(_TOP_KEYS)})")
    if get(raw, "version") != DEPLOYMENT_VERSION or isinstance(get(raw, "version"), bool):
        return Rejected(rule=FILE_FORMAT, reason=f"version: must be {DEPLOYMENT_VERSION}")
    compaction: CompactConfig | None = None
    if (raw_config := get(raw, "compaction")) is not ABSENT:
        read = read_compact_config(raw_config)
        if isinstance(read, Rejected):
            return read
        compaction = read
    prune: PruneConfig | None = None
    installed: bool | None = None
    raw_prune = get(raw, "prune")
    if raw_prune is None:
        installed = False
    elif raw_prune is not ABSENT:
        resolved = resolve_prune_config(raw_prune) if isinstance(raw_prune, JsonObject) else Rejected(rule="PRN-1", reason="must be an object or null")
        if isinstance(resolved, Rejected):
            return Rejected(rule=resolved.rule, reason=f"prune: {resolved.reason}")
        prune, installed = resolved, True
    models: tuple[ModelCapabilities, ...] = ()
    if (raw_models := get(raw, "models")) is not ABSENT:
        read_models = _read_models(raw_models)
        if isinstance(read_models, Rejected):
            return read_models
        models = read_models
    return Deployment(compaction=compaction, prune=prune, prune_installed=installed, models=models)
