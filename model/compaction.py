"""Compaction (CMP, DIA-1..7, DIA-16..20): pressure policy, the retention walk
and the region transaction, as pure functions returning the events to append.

One implementation serves both dialects: A55 writes ``compact/*`` events owned
by an open turn; D08 writes ``compaction/*`` events carrying a
``compactionId`` (DIA-1, DIA-2), selected by the :class:`Dialect` value.  The
summary text comes from a summarizer function passed in (CMP-18: ``summarize()``
is the only override hook), so the whole transaction is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, final

from model.derive import project
from model.header import EpochHeader, header_of_event, prefix_messages
from model.jsonval import ABSENT, Absent, Json, JsonObject, get, is_safe_int, js_stringify, json_eq
from model.log import Dialect, Event, is_open, make_event
from model.meter import (
    PricedNode,
    estimate_message,
    has_placeholder,
    latest_header,
    measure,
    node_price,
)
from model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, prune_pass, tool_result_content
from model.rejected import Rejected
from model.rules import implements
from model.surface import fold_surface, log_view, plan_surface_event

CHECKPOINT_PREAMBLE: Final = (
    "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up "
    "context. Treat the captured context as established background and build on it without restating it. "
    "Continue the task directly from the messages that follow, without acknowledging this checkpoint."
)
SUMMARY_OPEN: Final = "<compacted-summary>"
SUMMARY_CLOSE: Final = "</compacted-summary>"
CONTEXT_WINDOW_EXCEEDED: Final = "CONTEXT_WINDOW_EXCEEDED"
D08_INSTRUCTION_SOURCE: Final = JsonObject((("kind", "plugin"), ("plugin", "dsh-compaction-basic")))


# ---------------------------------------------------------------- event names


@implements("CMP-1", "DIA-1")
def compaction_type(dialect: Dialect, part: str) -> str:
    """CMP-1: ``compact/{start,summary,end}``; DIA-1: ``compaction/{…,prune}``."""
    match dialect:
        case Dialect.A55:
            return f"compact/{part}"
        case Dialect.D08:
            return f"compaction/{part}"


@implements("CMP-2", "DIA-2")
def is_checkpoint_source(source: Json | Absent) -> bool:
    """CMP-2: a checkpoint source iff ``kind == "plugin" and plugin == "compact"`` (extra keys ignored)."""
    return get(source, "kind") == "plugin" and get(source, "plugin") == "compact"


def checkpoint_source(dialect: Dialect, compaction_id: str, source_command_id: str | None) -> JsonObject:
    """CMP-2 / DIA-2: ``{kind, plugin, compactionId?, sourceCommandId?}``."""
    pairs: list[tuple[str, Json]] = [("kind", "plugin"), ("plugin", "compact")]
    if dialect is Dialect.D08:
        pairs.append(("compactionId", compaction_id))
        if source_command_id is not None:
            pairs.append(("sourceCommandId", source_command_id))
    return JsonObject(pairs)


# ---------------------------------------------------------------- configuration


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
    """CMP-3 validation: ratios finite in (0,1]; retainRatio and retainTokens
    exclusive; resolved retainRatio < thresholdRatio (also per policy);
    summarization provider/model together; policies need provider/model, no
    duplicates."""

    def bad(why: str) -> Rejected:
        return Rejected(rule="CMP-3", reason=f"compact config: {why}")

    if not (_ratio_ok(config.threshold_ratio) and _ratio_ok(config.retain_ratio)):
        return bad("ratios must be finite in (0, 1]")
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
        resolved = target_policy(config, policy.provider, policy.model)
        if resolved.retain_tokens is None and _retain_ratio(resolved.retain_ratio) >= resolved.threshold_ratio:
            return bad(f"policy {policy.provider}/{policy.model}: retainRatio must be below thresholdRatio")
    return config


def _retain_ratio(v: float | None) -> float:
    return DEFAULT_RETAIN_RATIO if v is None else v


@implements("CMP-4")
def target_policy(config: CompactConfig, provider: str, model: str) -> CompactConfig:
    """CMP-4: the defaults overlaid field-wise by the exactly matching model
    policy; a policy that sets either retention field replaces the retention choice."""
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
    window, or ``retain >= threshold``, is a ``TargetPressureConfigError``."""
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
    """CMP-5: ``{provider, model}`` of the latest logged header's config when
    both are non-empty; else none (agent options are never used)."""
    header = latest_header(events, dialect)
    if not isinstance(header, EpochHeader):
        return None
    provider, model = get(header.config, "provider"), get(header.config, "model")
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return Target(provider=provider, model=model)
    return None


# ---------------------------------------------------------------- tool pairing and retention


def _delta(event: Event, dialect: Dialect) -> int:
    match event.type:
        case "assistant/message":
            content = (
                get(event.data, "content")
                if dialect is Dialect.A55
                else get(get(event.data, "message"), "content")
            )
            if not isinstance(content, tuple):
                return 0
            return sum(1 for b in content if get(b, "type") == "tool-call")
        case "tool/result":
            return -1
        case _:
            return 0


@implements("CMP-10")
def balanced_cuts(nodes: Sequence[int], events: Sequence[Event], dialect: Dialect = Dialect.A55) -> tuple[bool, ...] | Rejected:
    """CMP-10: a counter over surface order (assistant +#tool-calls, tool/result
    −1, others 0); ``balanced[0] = True``, ``balanced[i+1]`` iff the running sum
    after node i is 0; a negative sum is a corrupt surface.  Call ids are not
    matched (Q-8)."""
    balanced = [True]
    running = 0
    for seq in nodes:
        running += _delta(events[seq], dialect)
        if running < 0:
            return Rejected(rule="CMP-10", seq=seq, reason="corrupt surface: more tool results than tool calls")
        balanced.append(running == 0)
    return tuple(balanced)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Range:
    start: int
    end: int


@implements("CMP-11", "CMP-12")
def select_range(
    priced: Sequence[tuple[int, int]],
    nodes: Sequence[int],
    events: Sequence[Event],
    retain_tokens: int,
    dialect: Dialect = Dialect.A55,
) -> Range | None | Rejected:
    """CMP-11: walk from the tail accumulating tokens until ``>= retain``
    (the retained tail has at least one node); round the cut head-ward while it
    is unbalanced; ``keep == 0`` -> none; else ``{nodes[0], nodes[keep-1]}``.
    CMP-12: head-anchored, turn-agnostic, surface nodes only."""
    if [seq for seq, _ in priced] != list(nodes):
        return Rejected(rule="CMP-11", reason="token-meter surface does not match")
    if not nodes:
        return None
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return balanced
    keep = retention_cut(tuple(tokens for _, tokens in priced), balanced, retain_tokens)
    if keep == 0:
        return None
    return Range(start=nodes[0], end=nodes[keep - 1])


@implements("CMP-11")
def retention_cut(tokens: Sequence[int], balanced: Sequence[bool], retain_tokens: int) -> int:
    """CMP-11, the retention walk on prices alone: the index of the first
    retained node (0: nothing to compact).  Walk from the tail accumulating
    tokens until ``>= retain`` (at least one node is retained), then move the
    cut head-ward while it is unbalanced.

    pre: len(balanced) == len(tokens) + 1
    pre: all(t >= 0 for t in tokens)
    post: 0 <= __return__ < max(len(tokens), 1)
    post: __return__ == 0 or balanced[__return__]
    post: __return__ == 0 or sum(tokens[__return__:]) >= retain_tokens
    """
    total = 0
    keep = len(tokens) - 1
    for i in range(len(tokens) - 1, -1, -1):
        keep = i
        total += tokens[i]
        if total >= retain_tokens:
            break
    if keep <= 0:
        return 0
    while keep > 0 and not balanced[keep]:
        keep -= 1
    return keep


# ---------------------------------------------------------------- lock


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Owner:
    """The bracket owner: a turn number, or None (D08 manual, DIA-3)."""

    turn: int | None


@implements("CMP-14", "DIA-3", "DIA-5")
def compaction_owner(events: Sequence[Event], dialect: Dialect, manual: bool = False) -> Owner | Rejected:
    """CMP-14 (A55): scan back to the latest turn boundary; the first
    compact/start|end met decides the lock; a locked bracket or no open turn
    rejects (Q-12: the scan is turn-local).  DIA-5 (D08): three independent scans
    (open turn, unmatched start not followed by ``session/end-seed``); busy
    rejects; DIA-3: manual (``turn null``) needs no open turn, automatic does."""
    match dialect:
        case Dialect.A55:
            locked: bool | None = None
            boundary: Event | None = None
            for event in reversed(events):
                if event.type in ("turn/start", "turn/end"):
                    boundary = event
                    break
                if locked is None and event.type in ("compact/start", "compact/end"):
                    locked = event.type == "compact/start"
            if locked:
                return Rejected(rule="CMP-14", reason="compaction already in progress")
            if boundary is None or boundary.type == "turn/end":
                return Rejected(rule="CMP-14", reason="compactRegion: no open turn — compaction events must be enclosed in a turn")
            turn = get(boundary.data, "turn")
            return Owner(turn=turn if isinstance(turn, int) else None)
        case Dialect.D08:
            last: dict[str, int] = {}
            for event in events:
                if event.type in ("turn/start", "turn/end", "compaction/start", "compaction/end", "session/end-seed"):
                    last[event.type] = event.seq
            start, end, seed = last.get("compaction/start", -1), last.get("compaction/end", -1), last.get("session/end-seed", -1)
            if start > end and start > seed:
                return Rejected(rule="DIA-5", reason="busy: compaction already in progress")
            open_turn = last.get("turn/start", -1) > last.get("turn/end", -1)
            if manual:
                if open_turn:
                    return Rejected(rule="DIA-3", reason="busy: manual compaction needs an idle agent")
                return Owner(turn=None)
            if not open_turn:
                return Rejected(rule="DIA-3", reason="compactRegion: no open turn")
            turn = get(events[last["turn/start"]].data, "turn")
            return Owner(turn=turn if isinstance(turn, int) else None)


# ---------------------------------------------------------------- summarization


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizationInput:
    """CMP-16: ``{system?, tools?, messages}``."""

    system: Json | Absent
    tools: Json | Absent
    messages: tuple[Json, ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryCall:
    """What a summarizer receives: the input, the target and the token cap (CMP-17)."""

    input: SummarizationInput
    provider: str
    model: str
    max_tokens: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizerOutput:
    """CMP-18: ``{summary, provider, model, maxTokens?}`` (D08 adds rawOutput,
    llmStreamCall, usage, DIA-4).  ``summary`` is the raw model output; only its
    text blocks are kept."""

    summary: tuple[Json, ...]
    provider: str
    model: str
    max_tokens: int | None = None
    raw_output: tuple[Json, ...] | None = None
    llm_stream_call: bool | None = None
    usage: Json | Absent = ABSENT


Summarizer = Callable[[SummaryCall], SummarizerOutput | Rejected]


@implements("CMP-16", "DIA-17")
def summarization_input(
    events: Sequence[Event], shadowed: Sequence[int], header: EpochHeader | Absent, dialect: Dialect
) -> SummarizationInput | Rejected:
    """CMP-16: ``messages = (H.messagePrefix or []) ++ derived shadowed messages``
    (no-message nodes skipped), with H's system and tools; DIA-17: no prefix in D08."""
    messages: list[Json] = list(prefix_messages(header)) if dialect is Dialect.A55 else []
    for seq in shadowed:
        message = project(events[seq], dialect)
        if isinstance(message, Rejected):
            return message
        if message is not None:
            messages.append(message)
    system = header.system if isinstance(header, EpochHeader) else ABSENT
    tools = header.tools if isinstance(header, EpochHeader) else ABSENT
    return SummarizationInput(system=system, tools=tools, messages=tuple(messages))


@implements("CMP-17")
def summarizer_request(call: SummaryCall, instruction: str, dialect: Dialect = Dialect.A55) -> JsonObject:
    """CMP-17: the default summarizer's one model call, in the real key order
    ``provider, model, messages, system?, tools?, maxTokens, purpose``; the
    instruction is the last message.  ``sessionId`` (not in the log) and the
    signal are omitted."""
    block = JsonObject((("type", "text"), ("text", instruction)))
    if dialect is Dialect.D08:
        final_message = JsonObject((("role", "user"), ("content", (block,)), ("source", D08_INSTRUCTION_SOURCE)))
    else:
        final_message = JsonObject((("role", "user"), ("content", (block,))))
    pairs: list[tuple[str, Json]] = [
        ("provider", call.provider),
        ("model", call.model),
        ("messages", (*call.input.messages, final_message)),
    ]
    if call.input.system is not ABSENT:
        pairs.append(("system", call.input.system))
    if call.input.tools is not ABSENT:
        pairs.append(("tools", call.input.tools))
    pairs.append(("maxTokens", call.max_tokens))
    pairs.append(("purpose", "compaction"))
    return JsonObject(pairs)


@implements("CMP-18")
def summary_text_blocks(summary: Sequence[Json]) -> tuple[Json, ...] | Rejected:
    """CMP-18: keep only ``text`` blocks; none with non-whitespace text rejects."""
    kept = tuple(b for b in summary if get(b, "type") == "text")
    if not any(isinstance(get(b, "text"), str) and str(get(b, "text")).strip() for b in kept):
        return Rejected(rule="CMP-18", reason="summarization produced no text summary content")
    return kept


@implements("CMP-20")
def frame_summary(summary: Sequence[Json]) -> tuple[Json, ...]:
    """CMP-20: ``[PREAMBLE + "\\n\\n<compacted-summary>"] ++ summary ++ ["</compacted-summary>"]``.

    post: len(__return__) == len(summary) + 2
    post: __return__[1:-1] == tuple(summary)
    """
    head = JsonObject((("type", "text"), ("text", CHECKPOINT_PREAMBLE + "\n\n" + SUMMARY_OPEN)))
    tail = JsonObject((("type", "text"), ("text", SUMMARY_CLOSE)))
    return (head, *summary, tail)


@implements("CMP-21")
def check_summary_smaller(framed: Sequence[Json], shadowed_tokens: int) -> int | Rejected:
    """CMP-21: ``estimateMessage({role:"user", content: framed}) < shadowedTokenCount``.

    post: isinstance(__return__, Rejected) or 0 <= __return__ < shadowed_tokens
    """
    tokens = estimate_message(JsonObject((("role", "user"), ("content", tuple(framed)))))
    if tokens >= shadowed_tokens:
        return Rejected(
            rule="CMP-21",
            reason=f"summary is not smaller than the shadowed content ({tokens} estimated framed tokens >= {shadowed_tokens})",
        )
    return tokens


# ---------------------------------------------------------------- the region transaction


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegionResult:
    """CMP-22: ``{startSeq, summarySeq, endSeq, summary, shadowedRange, shadowedSeqs, shadowedTokenCount}``."""

    start_seq: int
    summary_seq: int
    checkpoint_seq: int
    end_seq: int
    summary: tuple[Json, ...]
    shadowed_range: Range
    shadowed_seqs: tuple[int, ...]
    shadowed_token_count: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegionOutcome:
    """The events a transaction appends, and its result or error.

    A validation failure appends nothing (CMP-13); a failure after the start
    appends ``start … end{error}`` (CMP-23) and carries the error."""

    events: tuple[Event, ...]
    result: RegionResult | None
    error: Rejected | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Ids:
    """D08 identities (random UUIDs in the harness, DIA-2): passed in so the model stays pure."""

    compaction_id: str = ""
    message_id: str = ""
    source_command_id: str | None = None


def _record(dialect: Dialect, ids: Ids, pairs: Sequence[tuple[str, Json]]) -> JsonObject:
    if dialect is Dialect.A55:
        return JsonObject(pairs)
    head: list[tuple[str, Json]] = [("compactionId", ids.compaction_id)]
    if ids.source_command_id is not None:
        head.append(("sourceCommandId", ids.source_command_id))
    return JsonObject((*head, *pairs))


@implements("CMP-13", "CMP-15", "CMP-19", "CMP-22", "CMP-23", "CMP-24", "CMP-26", "DIA-4", "DIA-16")
def compact_region(
    events: Sequence[Event],
    start: int,
    end: int,
    summarizer: Summarizer,
    *,
    dialect: Dialect = Dialect.A55,
    max_tokens: int = 8192,
    summarization_target: Target | None = None,
    ids: Ids = Ids(),
    manual: bool = False,
    time: int = 0,
) -> RegionOutcome | Rejected:
    """One region transaction for ``(start, end)``.

    CMP-13: validate without events (both seqs on the surface, order, balanced
    edges).  CMP-14: lock and owner.  CMP-15: append the start, measure, sum the
    shadowed tokens.  CMP-16..18: summarize.  CMP-19: the surface is stable
    (no concurrent appends in a pure run).  CMP-20/21: frame and the shrink
    gate.  CMP-22: summary, checkpoint replace citing ``[start, summary] ++
    shadowed``, end.  CMP-23: any failure after the start closes with
    ``end{error}`` and leaves the surface unchanged.  CMP-24: no header event.
    CMP-26/Q-2: no abort check before commit.
    """
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected):
        return fold
    nodes = fold.state.nodes
    for name, seq in (("start", start), ("end", end)):
        if seq not in nodes:
            return Rejected(rule="CMP-13", reason=f"compactRegion: {name} seq {seq} not found in surface")
    start_idx, end_idx = nodes.index(start), nodes.index(end)
    if start_idx > end_idx:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is after end seq {end}")
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return balanced
    if not balanced[start_idx]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: start seq {start} is not a balanced boundary (would split a step's tool-call/result pair)")
    if not balanced[end_idx + 1]:
        return Rejected(rule="CMP-13", reason=f"compactRegion: end seq {end} is not a balanced boundary (would split a step, or the step is still open)")
    owner = compaction_owner(events, dialect, manual)
    if isinstance(owner, Rejected):
        return owner
    shadowed = tuple(nodes[start_idx : end_idx + 1])
    out: list[Event] = []

    def append(kind: str, data: Json, provenance: Json | Absent = ABSENT, op: Json | Absent = ABSENT) -> Event:
        event = make_event(
            kind, seq=len(events) + len(out), time=time, data=data, source_event_seqs=provenance, surface_op=op
        )
        out.append(event)
        return event

    turn_pair: tuple[str, Json] = ("turn", owner.turn)
    start_event = append(compaction_type(dialect, "start"), _record(dialect, ids, (turn_pair,)))

    def fail(error: Rejected) -> RegionOutcome:
        append(compaction_type(dialect, "end"), _record(dialect, ids, (turn_pair, ("error", error.reason))))
        return RegionOutcome(events=tuple(out), result=None, error=error)

    measured = measure(events, dialect)
    if isinstance(measured, Rejected):
        return fail(measured)
    priced = measured.nodes[start_idx : end_idx + 1]
    if tuple(n.seq for n in priced) != shadowed:
        return fail(Rejected(rule="CMP-15", reason="selected surface changed before summarization began"))
    shadowed_tokens = sum(n.tokens for n in priced)
    header = measured.header
    summary_input = summarization_input(events, shadowed, header, dialect)
    if isinstance(summary_input, Rejected):
        return fail(summary_input)
    target = summarization_target or routed_target(events, dialect)
    if target is None:
        return fail(Rejected(rule="CMP-17", reason="no provider/model available for summarization"))
    output = summarizer(SummaryCall(input=summary_input, provider=target.provider, model=target.model, max_tokens=max_tokens))
    if isinstance(output, Rejected):
        return fail(output)
    summary = summary_text_blocks(output.summary)
    if isinstance(summary, Rejected):
        return fail(summary)
    framed = frame_summary(summary)
    smaller = check_summary_smaller(framed, shadowed_tokens)
    if isinstance(smaller, Rejected):
        return fail(smaller)
    shadowed_range = JsonObject((("start", start), ("end", end)))
    pairs: list[tuple[str, Json]] = [("summary", summary)]
    if dialect is Dialect.D08 and output.raw_output is not None:
        pairs.append(("rawOutput", output.raw_output))
    if dialect is Dialect.D08 and output.llm_stream_call is not None:
        pairs.append(("llmStreamCall", output.llm_stream_call))
    pairs += [
        ("shadowedRange", shadowed_range),
        ("shadowedSeqs", shadowed),
        ("shadowedTokenCount", shadowed_tokens),
        ("provider", output.provider),
        ("model", output.model),
    ]
    if output.max_tokens is not None:
        pairs.append(("maxTokens", output.max_tokens))
    if dialect is Dialect.D08 and output.usage is not ABSENT:
        pairs.append(("usage", output.usage))
    summary_event = append(compaction_type(dialect, "summary"), _record(dialect, ids, pairs))
    source = checkpoint_source(dialect, ids.compaction_id, ids.source_command_id)
    checkpoint_data: list[tuple[str, Json]] = [("content", framed), ("source", source)]
    if dialect is Dialect.D08:
        checkpoint_data += [("role", "user"), ("id", ids.message_id)]
    checkpoint = append(
        "user/message",
        JsonObject(checkpoint_data),
        provenance=(start_event.seq, summary_event.seq, *shadowed),
        op=JsonObject((("op", "replace"), ("start", start), ("end", end))),
    )
    end_event = append(compaction_type(dialect, "end"), _record(dialect, ids, (turn_pair,)))
    return RegionOutcome(
        events=tuple(out),
        result=RegionResult(
            start_seq=start_event.seq,
            summary_seq=summary_event.seq,
            checkpoint_seq=checkpoint.seq,
            end_seq=end_event.seq,
            summary=summary,
            shadowed_range=Range(start=start, end=end),
            shadowed_seqs=shadowed,
            shadowed_token_count=shadowed_tokens,
        ),
        error=None,
    )


# ---------------------------------------------------------------- compactIfNeeded


class Trigger(Enum):
    PRESSURE = "pressure"
    CONTEXT_OVERFLOW = "context-overflow"
    MANUAL = "manual"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRun:
    """What ``compactIfNeeded`` appends: prune replacements, transactions, and
    the error (if any) that ended the run; committed events stay on error."""

    events: tuple[Event, ...]
    results: tuple[RegionResult, ...] = ()
    error: Rejected | None = None


@implements("CMP-8", "CMP-9", "PRN-6", "DIA-20")
def compact_if_needed(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    dialect: Dialect = Dialect.A55,
    trigger: Trigger = Trigger.PRESSURE,
    config: CompactConfig = CompactConfig(),
    context_window: int | None = None,
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
) -> CompactionRun | Rejected:
    """CMP-8 (pressure): target, policy, measure, spec; below threshold -> none;
    prune and re-measure; then up to ``compactionRetries + 1`` transactions,
    each followed by a re-measure; still above threshold -> error (committed
    compactions stay).  CMP-9 (overflow) and DIA-20 (manual): prune (overflow
    only), select with ``retainTokens = 0``, one transaction.  PRN-6: the prune
    runs only here.  Configuration errors are returned as Rejected."""
    checked = check_compact_config(config)
    if isinstance(checked, Rejected):
        return checked
    target = routed_target(events, dialect)
    if target is None:
        return CompactionRun(events=())
    policy = target_policy(config, target.provider, target.model)
    summ_target = (
        Target(provider=policy.summarization_provider, model=policy.summarization_model)
        if policy.summarization_provider and policy.summarization_model
        else None
    )
    log: list[Event] = list(events)
    appended: list[Event] = []
    results: list[RegionResult] = []

    def extend(new: Sequence[Event]) -> None:
        log.extend(new)
        appended.extend(new)

    def total() -> int | Rejected:
        m = measure(log, dialect)
        return m if isinstance(m, Rejected) else m.total_tokens

    def run_prune() -> Rejected | None:
        if prune is None:
            return None
        pruned = prune_pass(log, prune, dialect=dialect, time=time)
        if isinstance(pruned, Rejected):
            return pruned
        extend(pruned.events)
        return None

    def transaction(retain: int, attempt: int) -> RegionOutcome | None | Rejected:
        m = measure(log, dialect)
        if isinstance(m, Rejected):
            return m
        fold = fold_surface(log, dialect)
        if isinstance(fold, Rejected):
            return fold
        chosen = select_range([(n.seq, n.tokens) for n in m.nodes], fold.state.nodes, log, retain, dialect)
        if chosen is None or isinstance(chosen, Rejected):
            return chosen
        outcome = compact_region(
            log,
            chosen.start,
            chosen.end,
            summarizer,
            dialect=dialect,
            max_tokens=policy.max_tokens,
            summarization_target=summ_target,
            ids=ids(attempt),
            manual=trigger is Trigger.MANUAL,
            time=time,
        )
        if isinstance(outcome, Rejected):
            return outcome
        extend(outcome.events)
        if outcome.result is not None:
            results.append(outcome.result)
        return outcome

    def done(error: Rejected | None = None) -> CompactionRun:
        return CompactionRun(events=tuple(appended), results=tuple(results), error=error)

    if trigger is not Trigger.PRESSURE:
        if trigger is Trigger.CONTEXT_OVERFLOW:
            bad = run_prune()
            if bad is not None:
                return done(bad)
        outcome = transaction(0, 0)
        if isinstance(outcome, Rejected):
            return done(outcome)
        return done(None if outcome is None else outcome.error)

    spec = compact_spec(policy, context_window, f"{target.provider}/{target.model}")
    if isinstance(spec, Rejected):
        return spec
    now = total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return done(now if isinstance(now, Rejected) else None)
    bad = run_prune()
    if bad is not None:
        return done(bad)
    now = total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return done(now if isinstance(now, Rejected) else None)
    attempts = 0
    for attempt in range(policy.compaction_retries + 1):
        outcome = transaction(spec.retain_tokens, attempt)
        if isinstance(outcome, Rejected):
            return done(outcome)
        if outcome is None:
            if not results:
                return done()
            break
        if outcome.error is not None:
            return done(outcome.error)
        attempts += 1
        now = total()
        if isinstance(now, Rejected):
            return done(now)
        if now < spec.threshold_tokens:
            return done()
    now = total()
    return done(
        Rejected(
            rule="CMP-8",
            reason=f"compaction still above threshold after {attempts} compaction attempts ({now} estimated tokens >= threshold {spec.threshold_tokens})",
        )
    )


def step_is_open(events: Sequence[Event]) -> bool:
    """Whether the latest ``step/start`` has no ``step/end`` yet."""
    return is_open(events, "step/start", "step/end")


@implements("CMP-6", "DIA-6")
def pressure_compaction(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    aborted: bool = False,
    dialect: Dialect = Dialect.A55,
    config: CompactConfig = CompactConfig(),
    context_window: int | None = None,
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
) -> CompactionRun | Rejected:
    """The automatic pressure trigger.  CMP-6 (A55): on ``agent/post-step``,
    inside the step (after its results, before ``step/end``); DIA-6 (D08): in
    ``agent/pre-step``, outside any step (before ``step/start``), skipping when
    the lock is busy.  Skips when not ``auto`` or already aborted.  A call at
    the wrong place is rejected (a loop bug).  The run's error never fails the
    turn: the caller logs/warns it and goes on (committed events stay)."""
    in_step = step_is_open(events)
    match dialect:
        case Dialect.A55:
            if not in_step:
                return Rejected(rule="CMP-6", reason="pressure compaction runs inside the step, before step/end")
        case Dialect.D08:
            if in_step:
                return Rejected(rule="DIA-6", reason="pressure compaction runs before step/start")
            owner = compaction_owner(events, dialect)
            if isinstance(owner, Rejected) and owner.rule == "DIA-5":
                # DIA-5: busy even on the automatic path; reported, never fatal.
                return CompactionRun(events=(), error=owner)
    if not config.auto or aborted:
        return CompactionRun(events=())
    return compact_if_needed(
        events,
        summarizer,
        dialect=dialect,
        trigger=Trigger.PRESSURE,
        config=config,
        context_window=context_window,
        prune=prune,
        ids=ids,
        time=time,
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OverflowDecision:
    events: tuple[Event, ...]
    retry: bool
    error: Rejected | None = None


@implements("CMP-7", "DIA-7")
def recover_overflow(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    failure_code: str,
    prior_overflow_failures: int,
    aborted: bool = False,
    dialect: Dialect = Dialect.A55,
    config: CompactConfig = CompactConfig(),
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
) -> OverflowDecision:
    """CMP-7: only for ``CONTEXT_WINDOW_EXCEEDED``, not aborted, with a routed
    target and fewer than ``maxOverflowRetries`` earlier overflows; run
    ``compactIfNeeded(context-overflow)`` and retry iff ``replaceGeneration``
    advanced (also when recovery failed after a prune landed)."""
    if (
        not config.auto
        or failure_code != CONTEXT_WINDOW_EXCEEDED
        or aborted
        or routed_target(events, dialect) is None
        or prior_overflow_failures >= config.max_overflow_retries
    ):
        return OverflowDecision(events=(), retry=False)
    run = compact_if_needed(
        events, summarizer, dialect=dialect, trigger=Trigger.CONTEXT_OVERFLOW, config=config, prune=prune, ids=ids, time=time
    )
    if isinstance(run, Rejected):
        return OverflowDecision(events=(), retry=False, error=run)
    advanced = any(e.surface_op is not ABSENT and isinstance(e.surface_op, JsonObject) for e in run.events)
    return OverflowDecision(events=run.events, retry=advanced and not aborted, error=run.error)


# ---------------------------------------------------------------- reading the log back


def _brackets(events: Sequence[Event], dialect: Dialect) -> list[tuple[Event, Event | None]]:
    """(start, summary) pairs of every bracket, in log order."""
    found: list[tuple[Event, Event | None]] = []
    start_type, summary_type = compaction_type(dialect, "start"), compaction_type(dialect, "summary")
    for event in events:
        if event.type == start_type:
            found.append((event, None))
        elif event.type == summary_type and found and found[-1][1] is None:
            found[-1] = (found[-1][0], event)
    return found


def summary_requests(events: Sequence[Event], dialect: Dialect, instruction: str) -> tuple[JsonObject, ...]:
    """CMP-16/CMP-17: the summarizer requests reconstructed from the log, one
    per bracket with a ``summary``: the latest header before the start, the
    derived shadowed messages, the recorded provider/model/maxTokens."""
    requests: list[JsonObject] = []
    for start, summary in _brackets(events, dialect):
        if summary is None:
            continue
        header = latest_header(log_view(events, start.seq), dialect)
        shadowed = get(summary.data, "shadowedSeqs")
        provider, model, cap = get(summary.data, "provider"), get(summary.data, "model"), get(summary.data, "maxTokens")
        if isinstance(header, Rejected) or not isinstance(shadowed, tuple):
            continue
        seqs = tuple(s for s in shadowed if isinstance(s, int) and 0 <= s < len(events))
        summary_in = summarization_input(events, seqs, header, dialect)
        if isinstance(summary_in, Rejected) or not isinstance(provider, str) or not isinstance(model, str):
            continue
        call = SummaryCall(input=summary_in, provider=provider, model=model, max_tokens=cap if isinstance(cap, int) else 0)
        request = summarizer_request(call, instruction, dialect)
        if not isinstance(cap, int):
            request = JsonObject((k, v) for k, v in request.items() if k != "maxTokens")
        requests.append(request)
    return tuple(requests)


@final
@dataclass(slots=True)
class _Bracket:
    start: Event
    turn: Json | Absent
    compaction_id: Json | Absent
    summary: Event | None = None
    checkpoint: Event | None = None
    shadowed: tuple[int, ...] = ()


@final
@dataclass(slots=True)
class _Audit:
    dialect: Dialect
    findings: list[Rejected] = field(default_factory=list)

    def report(self, rule: str, event: Event, why: str) -> None:
        self.findings.append(Rejected(rule=rule, seq=event.seq, reason=why))


def _has_placeholder_text(events: Sequence[Event], seqs: Sequence[int]) -> bool:
    return any('"{{' in js_stringify(events[s].data) for s in seqs)


@final
@dataclass(slots=True)
class _PricedSurface:
    """The audit's own view: surface nodes priced by MTR-7 and the latest
    header.  Unlike the meter fold it does not enforce step structure
    (MTR-6), so session-mode logs (Q-16) are audited too."""

    dialect: Dialect
    nodes: list[PricedNode] = field(default_factory=list)
    header: EpochHeader | Absent = ABSENT
    # The node seqs, kept beside ``nodes`` so no event rebuilds the list (linear audit).
    seqs: list[int] = field(default_factory=list)

    def fold(self, event: Event, events: Sequence[Event]) -> Rejected | None:
        plan = plan_surface_event(self.seqs, event, events, self.dialect)
        if isinstance(plan, Rejected):
            return plan
        if event.type == "request/header":
            header = header_of_event(event, self.dialect)
            if isinstance(header, Rejected):
                return header
            self.header = header
        if plan is None:
            return None
        tokens = node_price(event, self.dialect)
        if isinstance(tokens, Rejected):
            return tokens
        node = PricedNode(seq=event.seq, tokens=tokens)
        if plan.is_replace:
            self.nodes[plan.start_idx : plan.end_idx + 1] = [node]
            self.seqs[plan.start_idx : plan.end_idx + 1] = [node.seq]
        else:
            self.nodes.append(node)
            self.seqs.append(node.seq)
        return None


@implements("FMT-7", "CMP-25", "DIA-19")
def audit_compactions(events: Sequence[Event], dialect: Dialect) -> tuple[Rejected, ...]:
    """FMT-7 compaction audit (P-CMP-1, -3, -5, -6, -7, P-PRN-2, DIA-2/19,
    P-DIA-2): brackets well formed (lock, owner turn, one summary, successful
    end has a summary); summary fields equal the surface range of the
    checkpoint replace, token count recomputed by the meter (skipped when a
    placeholder makes pricing impossible, FMT-6); checkpoint source and
    provenance ``[start, summary] ++ shadowed``; framed summary strictly
    smaller; balanced edges (CMP-10); prunes single-node content-only with
    ``[seq]`` provenance and content equal to ``pruneContent`` of the original.
    Empty for a valid log."""
    audit = _Audit(dialect=dialect)
    state = _PricedSurface(dialect=dialect)
    start_t, summary_t, end_t = (compaction_type(dialect, p) for p in ("start", "summary", "end"))
    open_turn: Json | Absent = ABSENT
    bracket: _Bracket | None = None
    pending_prune: Event | None = None
    for index, event in enumerate(events):
        before = log_view(events, index)
        kind = event.type
        if kind == "turn/start":
            if bracket is not None and dialect is Dialect.D08:
                audit.report("DIA-19", event, "turn/start while a compaction bracket is open")
            open_turn = get(event.data, "turn")
        elif kind == "turn/end":
            if bracket is not None and dialect is Dialect.D08:
                audit.report("DIA-19", event, "turn/end while a compaction bracket is open")
            open_turn = ABSENT
            if dialect is Dialect.A55:
                bracket = None  # an orphan start never blocks a later turn
        elif kind == "session/end-seed":
            bracket = None
        elif kind == start_t:
            _audit_start(audit, event, bracket, open_turn)
            bracket = _Bracket(start=event, turn=get(event.data, "turn"), compaction_id=get(event.data, "compactionId"))
        elif kind == summary_t and bracket is not None:
            # The surface before this event: state.fold runs only after the audit.
            _audit_summary(audit, event, bracket, state.seqs, before, state)
        elif kind == summary_t:
            audit.report("CMP-25", event, "summary without an open compaction start")
        elif kind == end_t:
            if bracket is None:
                audit.report("CMP-25", event, "end without an open compaction start")
            else:
                _audit_end(audit, event, bracket)
            bracket = None
        elif kind == "user/message" and is_checkpoint_source(get(event.data, "source")) and isinstance(event.surface_op, JsonObject):
            _audit_checkpoint(audit, event, bracket, state, before)
            if bracket is not None:
                bracket.checkpoint = event
        elif kind == "compaction/prune":
            pending_prune = event
        elif kind == "tool/result" and isinstance(event.surface_op, JsonObject):
            _audit_prune(audit, event, before, pending_prune)
            pending_prune = None
        bad = state.fold(event, before)
        if bad is not None:
            return (*audit.findings, bad)
    return tuple(audit.findings)


def _audit_start(audit: _Audit, event: Event, bracket: _Bracket | None, open_turn: Json | Absent) -> None:
    if bracket is not None:
        audit.report("CMP-25", event, "compaction start while a bracket is open")
    turn = get(event.data, "turn")
    if audit.dialect is Dialect.A55 or turn is not None:
        if open_turn is ABSENT or turn != open_turn:
            audit.report("CMP-14", event, "compaction bracket not owned by the open turn")
    elif open_turn is not ABSENT:
        audit.report("DIA-19", event, "manual compaction (turn null) inside an open turn")
    if audit.dialect is Dialect.D08:
        cid = get(event.data, "compactionId")
        if not isinstance(cid, str) or not cid:
            audit.report("DIA-19", event, "empty compactionId")


def _same_id(audit: _Audit, event: Event, bracket: _Bracket) -> None:
    if audit.dialect is Dialect.D08 and get(event.data, "compactionId") != bracket.compaction_id:
        audit.report("DIA-19", event, "compactionId differs within the bracket")


def _audit_summary(
    audit: _Audit, event: Event, bracket: _Bracket, nodes: list[int], events: Sequence[Event], state: _PricedSurface
) -> None:
    _same_id(audit, event, bracket)
    if bracket.summary is not None:
        audit.report("CMP-25", event, "second summary in one bracket")
        return
    bracket.summary = event
    data = event.data
    seqs, rng, count = get(data, "shadowedSeqs"), get(data, "shadowedRange"), get(data, "shadowedTokenCount")
    start, end = get(rng, "start"), get(rng, "end")
    if not isinstance(seqs, tuple) or not seqs or start != seqs[0] or end != seqs[-1]:
        audit.report("CMP-25", event, "shadowedSeqs/shadowedRange malformed")
        return
    if not is_safe_int(count) or not isinstance(count, int) or count < 0:
        audit.report("CMP-25", event, "shadowedTokenCount is not a non-negative safe integer")
        return
    if start not in nodes or end not in nodes or nodes.index(start) > nodes.index(end):  # type: ignore[arg-type]
        audit.report("CMP-15", event, "shadowedRange is not a range of the current surface")
        return
    i, j = nodes.index(start), nodes.index(end)  # type: ignore[arg-type]
    if tuple(nodes[i : j + 1]) != seqs:
        audit.report("CMP-15", event, "shadowedSeqs differ from the surface range")
        return
    bracket.shadowed = tuple(nodes[i : j + 1])
    balanced = balanced_cuts(nodes, events, audit.dialect)
    if isinstance(balanced, Rejected):
        audit.findings.append(balanced)
    elif not (balanced[i] and balanced[j + 1]):
        audit.report("CMP-10", event, "compacted range splits a tool-call/result pair")
    header = state.header
    if not has_placeholder(header) and not _has_placeholder_text(events, bracket.shadowed):
        recomputed = sum(n.tokens for n in state.nodes[i : j + 1])
        if recomputed != count:
            audit.report("CMP-15", event, f"shadowedTokenCount {count} != recomputed {recomputed}")


def _audit_checkpoint(
    audit: _Audit, event: Event, bracket: _Bracket | None, state: _PricedSurface, events: Sequence[Event]
) -> None:
    if bracket is None:
        # A checkpoint-sourced replace outside any bracket is not one the
        # compaction wrote (real snapshot fixtures plant such nodes, e.g.
        # acp-agent agent-instructions); the surface fold already validated it.
        return
    if bracket.summary is None:
        audit.report("CMP-22", event, "checkpoint replace inside a bracket before its summary")
        return
    summary = bracket.summary
    op = event.surface_op
    rng = get(summary.data, "shadowedRange")
    if get(op, "start") != get(rng, "start") or get(op, "end") != get(rng, "end"):
        audit.report("CMP-22", event, "checkpoint replace range differs from shadowedRange")
    expected = (bracket.start.seq, summary.seq, *bracket.shadowed)
    if not json_eq(event.source_event_seqs, expected):
        audit.report("CMP-22", event, "checkpoint provenance is not [start, summary] ++ shadowed")
    content = get(event.data, "content")
    raw = get(summary.data, "summary")
    if not isinstance(raw, tuple) or not json_eq(content, frame_summary(raw)):
        audit.report("CMP-20", event, "checkpoint content is not the framed summary")
    count = get(summary.data, "shadowedTokenCount")
    if isinstance(count, int) and isinstance(content, tuple) and not isinstance(check_summary_smaller(content, count), int):
        audit.report("CMP-21", event, "framed summary is not smaller than the shadowed content")
    if audit.dialect is Dialect.D08:
        if get(get(event.data, "source"), "compactionId") != bracket.compaction_id:
            audit.report("DIA-19", event, "checkpoint does not name the open bracket's compactionId")
        if event.seq != summary.seq + 1:
            audit.report("DIA-16", event, "checkpoint is not adjacent to its summary")


def _audit_end(audit: _Audit, event: Event, bracket: _Bracket) -> None:
    _same_id(audit, event, bracket)
    if get(event.data, "turn") != bracket.turn:
        audit.report("CMP-25", event, "end turn differs from start turn")
    failed = get(event.data, "error") is not ABSENT
    if not failed and bracket.summary is None:
        audit.report("CMP-25", event, "successful end without a summary")
    if not failed and bracket.checkpoint is None:
        audit.report("CMP-22", event, "successful end without a checkpoint")
    if audit.dialect is Dialect.D08 and not failed and bracket.checkpoint is not None and event.seq != bracket.checkpoint.seq + 1:
        audit.report("DIA-16", event, "end is not adjacent to its checkpoint")


def _audit_prune(audit: _Audit, event: Event, events: Sequence[Event], record: Event | None) -> None:
    op = event.surface_op
    seq = get(op, "start")
    if not isinstance(seq, int) or get(op, "end") != seq or not 0 <= seq < len(events):
        audit.report("PRN-4", event, "prune replace is not single-node")
        return
    if not json_eq(event.source_event_seqs, (seq,)):
        audit.report("PRN-4", event, "prune provenance is not [originalSeq]")
    original = tool_result_content(events[seq], audit.dialect)
    after = tool_result_content(event, audit.dialect)
    inferred = _inferred_config(after)
    expected = None if inferred is None else prune_content(original, inferred)
    if not isinstance(expected, tuple) or not json_eq(after, expected):
        audit.report("PRN-3", event, "pruned content is not pruneContent of the original")
    if audit.dialect is Dialect.D08:
        if record is None or record.seq != event.seq - 1 or get(record.data, "shadowedSeqs") != (seq,):
            audit.report("DIA-18", event, "prune replacement without its compaction/prune record")


def _inferred_config(content: Json) -> PruneConfig | None:
    """The head/tail a pruned content was cut with: code points before and after the marker."""
    if not isinstance(content, tuple):
        return None
    text = "".join(str(get(b, "text")) for b in content if get(b, "type") == "text" and isinstance(get(b, "text"), str))
    at = text.find(PRUNE_MARKER)
    if at < 0:
        return None
    head, tail = at, len(text) - at - len(PRUNE_MARKER)
    return PruneConfig(threshold_chars=content_chars(content), head_chars=head, tail_chars=tail)
