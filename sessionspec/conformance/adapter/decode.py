"""Decoding the adapter protocol's operation language (docs/conformance.md section 3.2) into the
model's script types; a malformed argument raises :class:`OperationError` naming it.
"""


from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, final

from sessionspec.conformance.adapter.protocol import OperationError
from sessionspec.conformance.vectors.format import to_model
from sessionspec.model.compaction import (
    CompactConfig,
)
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.loop import (
    AgentConfig,
    Interrupt,
    InterruptKind,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    Window,
)
from sessionspec.model.prefix import Contributor, Idiom
from sessionspec.model.prune import PruneConfig, resolve_prune_config
from sessionspec.model.rejected import Rejected
from sessionspec.replay import DEFAULT_INSTRUCTION

# --------------------------------------------------------------------------- decoding the operation language


def window_name(window: Window) -> str:
    """``Window.AFTER_TURN_START`` -> ``after-turn-start`` (the protocol's window names)."""
    return window.name.lower().replace("_", "-")


WINDOWS: Final = {window_name(w): w for w in Window}
INTERRUPT_KINDS: Final = {"cancel": InterruptKind.CANCEL, "dispose": InterruptKind.DISPOSE, "foreign": InterruptKind.FOREIGN}
REPLY_KINDS: Final = {k.value: k for k in ReplyKind}


def typed_field(spec: Mapping[str, object], key: str, kind: type | tuple[type, ...], default: object) -> object:
    value = spec.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise OperationError(f"{key}: expected {kind}, got {value!r}")
    return value


def opt_str(spec: Mapping[str, object], key: str, default: str | None = None) -> str | None:
    value = typed_field(spec, key, str, default)
    return value if isinstance(value, str) else None


def opt_json(spec: Mapping[str, object], key: str) -> Json | Absent:
    return to_model(spec[key]) if key in spec else ABSENT


def json_array(spec: Mapping[str, object], key: str) -> tuple[Json, ...]:
    value = spec.get(key, [])
    if not isinstance(value, list):
        raise OperationError(f"{key}: expected an array")
    converted = to_model(value)
    assert isinstance(converted, tuple)
    return converted


def as_object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise OperationError(f"{what}: expected an object")
    return value


def opt_json_object(spec: Mapping[str, object], key: str) -> JsonObject | None:
    if key not in spec:
        return None
    value = to_model(spec[key])
    if not isinstance(value, JsonObject):
        raise OperationError(f"{key}: expected an object")
    return value


def decode_contributor(spec: Mapping[str, object]) -> Contributor:
    idiom = spec.get("idiom")
    if idiom not in ("prepend", "append"):
        raise OperationError("contributor.idiom: prepend or append")
    return Contributor(
        idiom=Idiom.PREPEND if idiom == "prepend" else Idiom.APPEND,
        content=json_array(spec, "content"),
        throws=opt_str(spec, "throws"),
        inject=opt_json_object(spec, "inject"),
        mutate_after=bool(typed_field(spec, "mutateAfter", bool, False)),
        lossy=bool(typed_field(spec, "lossy", bool, False)),
        scope=opt_str(spec, "scope"),
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSetup:
    """The agent's compaction services (the ``compaction`` agent option): the
    compact service config, the model's context window, an optional tool-result
    prune, and the scripted summarizer outputs (consumed in order)."""

    config: CompactConfig
    context_window: int | None
    prune: PruneConfig | None
    summaries: tuple[tuple[Json, ...], ...]
    instruction: str


def _ratio(spec: Mapping[str, object], key: str) -> float | None:
    if key not in spec:
        return None
    value = to_model(spec[key])
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise OperationError(f"compaction.{key}: expected a number")
    return float(value)


def opt_int(spec: Mapping[str, object], key: str) -> int | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise OperationError(f"{key}: expected an integer")
    return value


def _int_or(spec: Mapping[str, object], key: str, default: int) -> int:
    value = opt_int(spec, key)
    return default if value is None else value


def decode_compaction(spec: Mapping[str, object]) -> CompactionSetup:
    """The ``compaction`` agent option: compact-basic's config (CMP-3 defaults for missing keys)."""
    defaults = CompactConfig()
    threshold = _ratio(spec, "thresholdRatio")
    config = replace(
        defaults,
        threshold_ratio=defaults.threshold_ratio if threshold is None else threshold,
        retain_ratio=_ratio(spec, "retainRatio"),
        retain_tokens=opt_int(spec, "retainTokens"),
        max_tokens=_int_or(spec, "maxTokens", defaults.max_tokens),
        compaction_retries=_int_or(spec, "compactionRetries", defaults.compaction_retries),
        max_overflow_retries=_int_or(spec, "maxOverflowRetries", defaults.max_overflow_retries),
        auto=bool(typed_field(spec, "auto", bool, True)),
    )
    prune_spec = spec.get("prune")
    prune: PruneConfig | None = None
    if prune_spec is not None:
        resolved = resolve_prune_config(to_model(as_object(prune_spec, "compaction.prune")))
        if isinstance(resolved, Rejected):
            raise OperationError(f"compaction.prune: {resolved.reason}")
        prune = resolved
    summaries = spec.get("summaries", [])
    if not isinstance(summaries, list):
        raise OperationError("compaction.summaries: expected an array of block arrays")
    decoded: list[tuple[Json, ...]] = []
    for s in summaries:
        value = to_model(s)
        if not isinstance(value, tuple):
            raise OperationError("compaction.summaries: expected an array of block arrays")
        decoded.append(value)
    return CompactionSetup(config=config, context_window=opt_int(spec, "contextWindow"), prune=prune, summaries=tuple(decoded),
                            instruction=opt_str(spec, "instruction", DEFAULT_INSTRUCTION) or DEFAULT_INSTRUCTION)


DEFAULT_AGENT: Final = AgentConfig()


def decode_agent(spec: Mapping[str, object], base: AgentConfig = DEFAULT_AGENT) -> AgentConfig:
    """The ``agent`` options; keys not given keep ``base``'s values (``configure`` merges)."""
    contributors = base.contributors
    if "contributors" in spec:
        raw = spec["contributors"]
        if not isinstance(raw, list):
            raise OperationError("agent.contributors: expected an array")
        contributors = tuple(decode_contributor(as_object(c, "contributor")) for c in raw)
    request_config = base.request_config
    if "requestConfig" in spec:
        value = to_model(spec["requestConfig"])
        if not isinstance(value, JsonObject):
            raise OperationError("agent.requestConfig: expected an object")
        request_config = value
    return AgentConfig(
        provider=opt_str(spec, "provider", base.provider) or "",
        model=opt_str(spec, "model", base.model) or "",
        system=opt_str(spec, "system", base.system) or "",
        tools=json_array(spec, "tools") if "tools" in spec else base.tools,
        contributors=contributors,
        request_config=request_config,
        agent_id=opt_str(spec, "agentId", base.agent_id) or "",
    )


def decode_reply(spec: Mapping[str, object]) -> Reply:
    kind = spec.get("kind", "text")
    if kind not in REPLY_KINDS:
        raise OperationError(f"reply.kind: one of {sorted(REPLY_KINDS)}")
    calls = tuple(
        ToolCallSpec(
            call_id=opt_str(c, "callId") or "",
            name=opt_str(c, "name") or "",
            arguments=opt_str(c, "arguments") or "",
            result=opt_str(c, "result") or "",
            is_error=bool(typed_field(c, "isError", bool, False)),
            arguments_chunks=opt_strings(c, "argumentsChunks"),
            deferred=json_objects(c, "deferred"),
        )
        for c in (as_object(x, "toolCall") for x in as_list(spec, "toolCalls"))
    )
    usage = spec.get("usage", [10, 10])
    if usage is not None and not (isinstance(usage, list) and len(usage) == 2 and all(isinstance(u, int) for u in usage)):
        raise OperationError("reply.usage: [inputTokens, outputTokens] or null")
    tools_after = json_array(spec, "toolsAfter") if "toolsAfter" in spec else None
    status = spec.get("errorStatus")
    return Reply(
        kind=REPLY_KINDS[str(kind)],
        text=opt_str(spec, "text", "ok") or "",
        text_chunks=opt_strings(spec, "textChunks"),
        reasoning=opt_str(spec, "reasoning"),
        tool_calls=calls,
        usage=None if usage is None else (int(usage[0]), int(usage[1])),
        error_code=opt_str(spec, "errorCode", "SERVER") or "",
        error_message=opt_str(spec, "errorMessage", "request failed") or "",
        error_status=status if isinstance(status, int) else None,
        retry=bool(typed_field(spec, "retry", bool, False)),
        continue_with=opt_str(spec, "continueWith"),
        request_inject=opt_json_object(spec, "requestInject"),
        system_after=opt_str(spec, "systemAfter"),
        tools_after=tools_after,
        max_tokens=bool(typed_field(spec, "maxTokens", bool, False)),
        step_result_error=opt_str(spec, "stepResultError"),
        mutation_error=opt_str(spec, "mutationError"),
    )


def as_list(spec: Mapping[str, object], key: str) -> list[object]:
    value = spec.get(key, [])
    if not isinstance(value, list):
        raise OperationError(f"{key}: expected an array")
    return value


def json_objects(spec: Mapping[str, object], key: str) -> tuple[JsonObject, ...]:
    values = json_array(spec, key)
    if not all(isinstance(v, JsonObject) for v in values):
        raise OperationError(f"{key}: expected an array of objects")
    return tuple(v for v in values if isinstance(v, JsonObject))


def opt_strings(spec: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    if key not in spec:
        return None
    value = spec[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OperationError(f"{key}: expected an array of strings")
    return tuple(str(v) for v in value)


def decode_prompt(spec: Mapping[str, object]) -> Prompt:
    contexts = tuple(
        PromptContext(
            content=json_array(c, "content"),
            source=to_model(c.get("source", {"kind": "user"})),
            placement=Placement.PROMPT_PREFIX if c.get("placement") == "prompt-prefix" else Placement.SEPARATE,
            meta=opt_json(c, "meta"),
        )
        for c in (as_object(x, "context") for x in as_list(spec, "contexts"))
    )
    source = to_model(spec.get("source", {"kind": "user"}))
    return Prompt(content=json_array(spec, "content"), source=source, block_reason=opt_str(spec, "blockReason"),
                  contexts=contexts, submit_error=opt_str(spec, "submitError"))


def decode_interrupt(spec: Mapping[str, object]) -> Interrupt:
    window = spec.get("window")
    kind = spec.get("kind", "cancel")
    if window not in WINDOWS:
        raise OperationError(f"interrupt.window: one of {sorted(WINDOWS)}")
    if kind not in INTERRUPT_KINDS:
        raise OperationError(f"interrupt.kind: one of {sorted(INTERRUPT_KINDS)}")
    return Interrupt(window=WINDOWS[str(window)], kind=INTERRUPT_KINDS[str(kind)],
                     step=opt_int(spec, "step") or 1, chunk=opt_int(spec, "chunk") or 0)


def decode_script(op: Mapping[str, object]) -> TurnScript:
    interrupt = op.get("interrupt")
    return TurnScript(
        prompt=decode_prompt(as_object(op.get("prompt"), "prompt")),
        replies=tuple(decode_reply(as_object(r, "reply")) for r in as_list(op, "replies")),
        interrupt=None if interrupt is None else decode_interrupt(as_object(interrupt, "interrupt")),
        steering=tuple(Steering(content=json_array(s, "content"), source=to_model(s.get("source", {"kind": "user"})))
                       for s in (as_object(x, "steering") for x in as_list(op, "steering"))),
        pre_step_error=opt_str(op, "preStepError"),
    )


def log_text(op: Mapping[str, object]) -> str:
    lines = op.get("log", [])
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise OperationError("log: expected an array of JSONL lines (strings)")
    return "".join(str(x) + "\n" for x in lines)
