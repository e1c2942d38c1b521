"""The differential adapter protocol ``sessionspec-adapter/1`` (JSON lines).

The oracle writes one operation per line to the implementation's stdin,
``{"id": N, "op": NAME, ...arguments}``, and reads one answer per line from its
stdout: ``{"id": N, "ok": RESULT}``, ``{"id": N, "reject": {"rules": [IDs],
"reason": TEXT}}`` (the implementation refuses the operation, naming the rule
IDs), or ``{"id": N, "error": TEXT}`` (the adapter did not understand the
operation: a protocol failure).  All JSON is canonical (sessionspec/conformance/vector_format.py):
a non-integer number travels as ``{"$number": "0.7"}``.

The operations and their results are specified in docs/conformance.md; this
module holds the three pieces every side needs:

- :class:`ModelSession`: the operations executed by the model itself (the
  reference implementation; ``sessionspec serve-model`` serves it);
- :func:`serve`: the server loop around any session object;
- :class:`ProcessAdapter` / :class:`InProcessAdapter`: clients with one
  ``call(operation) -> response`` method, where a response is the ``ok``
  result, or ``{"reject": {...}}`` for a rejection.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final, TextIO, final

from model.codec import event_to_json, pack_chunk_runs
from model.compaction import (
    CompactConfig,
    CompactionRun,
    Ids,
    RegionOutcome,
    SummarizerOutput,
    SummaryCall,
    Trigger,
    compact_if_needed,
    compact_region,
    pressure_compaction,
    summarizer_request,
)
from model.header import header_from_json
from model.jsonval import ABSENT, Absent, Json, JsonObject
from model.log import Dialect, Event
from model.loop import (
    AgentConfig,
    CompactionPlugin,
    Hooks,
    Interrupt,
    InterruptKind,
    LoopInstance,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    Window,
    compaction_hooks,
    fork_seed,
    new_instance,
    run_turn,
)
from model.meter import measure
from model.prefix import Contributor, Idiom
from model.prune import PruneConfig, resolve_prune_config
from model.rejected import FailureKind, Rejected
from model.repair import repair_closers
from model.session import out_of_band_events
from model.wire import request_to_json
from sessionspec.check.checker import Verdict, check_log
from sessionspec.check.logfile import read_stream
from sessionspec.conformance.vector_format import FormatError, PlainJson, to_model, to_plain
from sessionspec.planted.loop import Planted, planted
from sessionspec.replay import DEFAULT_INSTRUCTION, LoadError, load_log_text, replay

PROTOCOL: Final = "sessionspec-adapter/1"

Response = dict[str, PlainJson]


class OperationError(Exception):
    """A malformed operation (a protocol failure, not a rejection)."""


class AdapterError(Exception):
    """The adapter process failed to answer (died, wrote no JSON, answered another id)."""


# --------------------------------------------------------------------------- decoding the operation language


def window_name(window: Window) -> str:
    """``Window.AFTER_TURN_START`` -> ``after-turn-start`` (the protocol's window names)."""
    return window.name.lower().replace("_", "-")


WINDOWS: Final = {window_name(w): w for w in Window}
INTERRUPT_KINDS: Final = {"cancel": InterruptKind.CANCEL, "dispose": InterruptKind.DISPOSE, "foreign": InterruptKind.FOREIGN}
REPLY_KINDS: Final = {k.value: k for k in ReplyKind}


def _field(spec: Mapping[str, object], key: str, kind: type | tuple[type, ...], default: object) -> object:
    value = spec.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise OperationError(f"{key}: expected {kind}, got {value!r}")
    return value


def _str(spec: Mapping[str, object], key: str, default: str | None = None) -> str | None:
    value = _field(spec, key, str, default)
    return value if isinstance(value, str) else None


def _json(spec: Mapping[str, object], key: str) -> Json | Absent:
    return to_model(spec[key]) if key in spec else ABSENT


def _array(spec: Mapping[str, object], key: str) -> tuple[Json, ...]:
    value = spec.get(key, [])
    if not isinstance(value, list):
        raise OperationError(f"{key}: expected an array")
    converted = to_model(value)
    assert isinstance(converted, tuple)
    return converted


def _object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise OperationError(f"{what}: expected an object")
    return value


def _json_object(spec: Mapping[str, object], key: str) -> JsonObject | None:
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
        content=_array(spec, "content"),
        throws=_str(spec, "throws"),
        inject=_json_object(spec, "inject"),
        mutate_after=bool(_field(spec, "mutateAfter", bool, False)),
        lossy=bool(_field(spec, "lossy", bool, False)),
        scope=_str(spec, "scope"),
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


def _int(spec: Mapping[str, object], key: str) -> int | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise OperationError(f"{key}: expected an integer")
    return value


def _int_or(spec: Mapping[str, object], key: str, default: int) -> int:
    value = _int(spec, key)
    return default if value is None else value


def decode_compaction(spec: Mapping[str, object]) -> CompactionSetup:
    """The ``compaction`` agent option: compact-basic's config (CMP-3 defaults for missing keys)."""
    defaults = CompactConfig()
    threshold = _ratio(spec, "thresholdRatio")
    config = replace(
        defaults,
        threshold_ratio=defaults.threshold_ratio if threshold is None else threshold,
        retain_ratio=_ratio(spec, "retainRatio"),
        retain_tokens=_int(spec, "retainTokens"),
        max_tokens=_int_or(spec, "maxTokens", defaults.max_tokens),
        compaction_retries=_int_or(spec, "compactionRetries", defaults.compaction_retries),
        max_overflow_retries=_int_or(spec, "maxOverflowRetries", defaults.max_overflow_retries),
        auto=bool(_field(spec, "auto", bool, True)),
    )
    prune_spec = spec.get("prune")
    prune: PruneConfig | None = None
    if prune_spec is not None:
        resolved = resolve_prune_config(to_model(_object(prune_spec, "compaction.prune")))
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
    return CompactionSetup(config=config, context_window=_int(spec, "contextWindow"), prune=prune, summaries=tuple(decoded),
                            instruction=_str(spec, "instruction", DEFAULT_INSTRUCTION) or DEFAULT_INSTRUCTION)


DEFAULT_AGENT: Final = AgentConfig()


def decode_agent(spec: Mapping[str, object], base: AgentConfig = DEFAULT_AGENT) -> AgentConfig:
    """The ``agent`` options; keys not given keep ``base``'s values (``configure`` merges)."""
    contributors = base.contributors
    if "contributors" in spec:
        raw = spec["contributors"]
        if not isinstance(raw, list):
            raise OperationError("agent.contributors: expected an array")
        contributors = tuple(decode_contributor(_object(c, "contributor")) for c in raw)
    request_config = base.request_config
    if "requestConfig" in spec:
        value = to_model(spec["requestConfig"])
        if not isinstance(value, JsonObject):
            raise OperationError("agent.requestConfig: expected an object")
        request_config = value
    return AgentConfig(
        provider=_str(spec, "provider", base.provider) or "",
        model=_str(spec, "model", base.model) or "",
        system=_str(spec, "system", base.system) or "",
        tools=_array(spec, "tools") if "tools" in spec else base.tools,
        contributors=contributors,
        request_config=request_config,
        agent_id=_str(spec, "agentId", base.agent_id) or "",
    )


def decode_reply(spec: Mapping[str, object]) -> Reply:
    kind = spec.get("kind", "text")
    if kind not in REPLY_KINDS:
        raise OperationError(f"reply.kind: one of {sorted(REPLY_KINDS)}")
    calls = tuple(
        ToolCallSpec(
            call_id=_str(c, "callId") or "",
            name=_str(c, "name") or "",
            arguments=_str(c, "arguments") or "",
            result=_str(c, "result") or "",
            is_error=bool(_field(c, "isError", bool, False)),
            arguments_chunks=_strings(c, "argumentsChunks"),
            deferred=_objects(c, "deferred"),
        )
        for c in (_object(x, "toolCall") for x in _list(spec, "toolCalls"))
    )
    usage = spec.get("usage", [10, 10])
    if usage is not None and not (isinstance(usage, list) and len(usage) == 2 and all(isinstance(u, int) for u in usage)):
        raise OperationError("reply.usage: [inputTokens, outputTokens] or null")
    tools_after = _array(spec, "toolsAfter") if "toolsAfter" in spec else None
    status = spec.get("errorStatus")
    return Reply(
        kind=REPLY_KINDS[str(kind)],
        text=_str(spec, "text", "ok") or "",
        text_chunks=_strings(spec, "textChunks"),
        reasoning=_str(spec, "reasoning"),
        tool_calls=calls,
        usage=None if usage is None else (int(usage[0]), int(usage[1])),
        error_code=_str(spec, "errorCode", "SERVER") or "",
        error_message=_str(spec, "errorMessage", "request failed") or "",
        error_status=status if isinstance(status, int) else None,
        retry=bool(_field(spec, "retry", bool, False)),
        continue_with=_str(spec, "continueWith"),
        request_inject=_json_object(spec, "requestInject"),
        system_after=_str(spec, "systemAfter"),
        tools_after=tools_after,
        max_tokens=bool(_field(spec, "maxTokens", bool, False)),
        step_result_error=_str(spec, "stepResultError"),
        mutation_error=_str(spec, "mutationError"),
    )


def _list(spec: Mapping[str, object], key: str) -> list[object]:
    value = spec.get(key, [])
    if not isinstance(value, list):
        raise OperationError(f"{key}: expected an array")
    return value


def _objects(spec: Mapping[str, object], key: str) -> tuple[JsonObject, ...]:
    values = _array(spec, key)
    if not all(isinstance(v, JsonObject) for v in values):
        raise OperationError(f"{key}: expected an array of objects")
    return tuple(v for v in values if isinstance(v, JsonObject))


def _strings(spec: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    if key not in spec:
        return None
    value = spec[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OperationError(f"{key}: expected an array of strings")
    return tuple(str(v) for v in value)


def decode_prompt(spec: Mapping[str, object]) -> Prompt:
    contexts = tuple(
        PromptContext(
            content=_array(c, "content"),
            source=to_model(c.get("source", {"kind": "user"})),
            placement=Placement.PROMPT_PREFIX if c.get("placement") == "prompt-prefix" else Placement.SEPARATE,
            meta=_json(c, "meta"),
        )
        for c in (_object(x, "context") for x in _list(spec, "contexts"))
    )
    source = to_model(spec.get("source", {"kind": "user"}))
    return Prompt(content=_array(spec, "content"), source=source, block_reason=_str(spec, "blockReason"),
                  contexts=contexts, submit_error=_str(spec, "submitError"))


def decode_interrupt(spec: Mapping[str, object]) -> Interrupt:
    window = spec.get("window")
    kind = spec.get("kind", "cancel")
    if window not in WINDOWS:
        raise OperationError(f"interrupt.window: one of {sorted(WINDOWS)}")
    if kind not in INTERRUPT_KINDS:
        raise OperationError(f"interrupt.kind: one of {sorted(INTERRUPT_KINDS)}")
    return Interrupt(window=WINDOWS[str(window)], kind=INTERRUPT_KINDS[str(kind)],
                     step=_int(spec, "step") or 1, chunk=_int(spec, "chunk") or 0)


def decode_script(op: Mapping[str, object]) -> TurnScript:
    interrupt = op.get("interrupt")
    return TurnScript(
        prompt=decode_prompt(_object(op.get("prompt"), "prompt")),
        replies=tuple(decode_reply(_object(r, "reply")) for r in _list(op, "replies")),
        interrupt=None if interrupt is None else decode_interrupt(_object(interrupt, "interrupt")),
        steering=tuple(Steering(content=_array(s, "content"), source=to_model(s.get("source", {"kind": "user"})))
                       for s in (_object(x, "steering") for x in _list(op, "steering"))),
        pre_step_error=_str(op, "preStepError"),
    )


def _lines_text(op: Mapping[str, object]) -> str:
    lines = op.get("log", [])
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise OperationError("log: expected an array of JSONL lines (strings)")
    return "".join(str(x) + "\n" for x in lines)


# --------------------------------------------------------------------------- the model's side


def event_plain(event: Event) -> PlainJson:
    return to_plain(event_to_json(event))


def _rejection(rejected: Rejected) -> Response:
    return {"reject": {"rules": [rejected.rule], "reason": rejected.reason}}


@dataclass(slots=True)
class _Summarizer:
    """The scripted summarizer: answers each summarizer call with the next scripted summary."""

    outputs: list[tuple[Json, ...]]

    def __call__(self, call: SummaryCall) -> SummarizerOutput | Rejected:
        if not self.outputs:
            return Rejected(rule="CMP-18", reason="the scripted summarizer has no summary left")
        return SummarizerOutput(summary=self.outputs.pop(0), provider=call.provider, model=call.model,
                                max_tokens=call.max_tokens)


@dataclass(slots=True, kw_only=True)
class ModelSession:
    """The reference implementation of the operations: one agent over one
    session log, driven by the model's pure functions.  ``planted`` selects a
    deliberately broken loop (mutants only, :mod:`sessionspec.planted.loop`); ``resume_drops_prefix`` and
    is the adapter-level mutant."""

    planted: Planted | None = None
    resume_drops_prefix: bool = False
    log: tuple[Event, ...] = ()
    instance: LoopInstance = field(default_factory=new_instance)
    agent: AgentConfig = field(default_factory=AgentConfig)
    compaction: CompactionSetup | None = None
    summarizer: _Summarizer = field(default_factory=lambda: _Summarizer(outputs=[]))

    def handle(self, op: Mapping[str, object]) -> Response:
        """One operation -> its ``ok`` result or ``{"reject": ...}``; a malformed
        operation raises :class:`OperationError`."""
        name = op.get("op")
        match name:
            case "hello":
                return {"protocol": PROTOCOL, "implementation": "sessionspec model"}
            case "init":
                return self._init(op)
            case "configure":
                self.agent = decode_agent(_object(op.get("agent", {}), "agent"), self.agent)
                if "compaction" in _object(op.get("agent", {}), "agent"):
                    self._set_compaction(_object(op.get("agent", {}), "agent"))
                return {}
            case "send":
                return self._send(op)
            case "resume":
                # A new instance over the same log (a process restart, agents.resume()).
                self.instance = new_instance()
                if self.resume_drops_prefix:
                    self.instance = replace(self.instance, prefix=())
                return {}
            case "dispose":
                self.instance = replace(self.instance, disposed=True)
                return {}
            case "fork":
                self.log = fork_seed(self.log)
                self.instance = new_instance()
                return {"length": len(self.log)}
            case "log":
                return {"log": [event_plain(e) for e in self.log]}
            case "check":
                return _check(op)
            case "replay":
                return _replay(op)
            case "pack":
                return _pack(op)
            case "repair":
                return _repair(op)
            case "append-out-of-band":
                return _append_out_of_band(op)
            case "measure":
                return _measure(op)
            case "compact":
                return _compact(op)
            case _:
                raise OperationError(f"unknown op {name!r}")

    def _set_compaction(self, agent: Mapping[str, object]) -> None:
        spec = agent.get("compaction")
        self.compaction = None if spec is None else decode_compaction(_object(spec, "compaction"))
        if self.compaction is None:
            self.summarizer = _Summarizer(outputs=[])
        else:
            self.summarizer = _Summarizer(outputs=list(self.compaction.summaries))

    def _init(self, op: Mapping[str, object]) -> Response:
        loaded = load_log_text(_lines_text(op))
        if isinstance(loaded, LoadError):
            return _rejection(loaded.rejected)
        self.log = loaded.events
        self.instance = new_instance()
        agent = _object(op.get("agent", {}), "agent")
        self.agent = decode_agent(agent)
        self._set_compaction(agent)
        return {"length": len(self.log)}

    def _hooks(self) -> Hooks:
        """compact-basic on the loop (model.loop.compaction_hooks) when the agent mounts it."""
        setup = self.compaction
        if setup is None:
            return Hooks()
        plugin = CompactionPlugin(summarizer=self.summarizer, instruction=setup.instruction, config=setup.config,
                                  context_window=setup.context_window, prune=setup.prune)
        return compaction_hooks(plugin)

    def _send(self, op: Mapping[str, object]) -> Response:
        script = decode_script(op)
        before = len(self.log)
        with planted(self.planted):
            outcome = run_turn(self.log, self.instance, self.agent, script, hooks=self._hooks())
        if isinstance(outcome, Rejected):
            return _rejection(outcome)
        self.log, self.instance, self.agent = outcome.log, outcome.instance, outcome.agent
        summaries = [call.request for call in outcome.side_calls]
        return {
            "appended": [event_plain(e) for e in self.log[before:]],
            "requests": [to_plain(request_to_json(s.request)) for s in outcome.requests],
            "summaries": [to_plain(s) for s in summaries],
        }


def _check(op: Mapping[str, object]) -> Response:
    dialect_name = op.get("dialect")
    forced = {"A55": Dialect.A55, "D08": Dialect.D08, None: None}.get(dialect_name if isinstance(dialect_name, str) else None)
    report = check_log(read_stream(io.BytesIO(_lines_text(op).encode("utf-8")), "vector.jsonl"), forced)
    match report.verdict:
        case Verdict.VALID:
            return {"verdict": "valid"}
        case Verdict.UNKNOWN:
            return {"verdict": "unknown"}
        case Verdict.INVALID | Verdict.UNREADABLE:
            rules = sorted({f.rule for f in report.findings if f.kind is FailureKind.INVALID})
            return {"reject": {"rules": list(rules), "reason": report.findings[0].reason if report.findings else str(report.reason)}}


def _replay(op: Mapping[str, object]) -> Response:
    loaded = load_log_text(_lines_text(op))
    if isinstance(loaded, LoadError):
        return _rejection(loaded.rejected)
    report = replay(loaded.events, first_live_seq=_int(op, "firstLiveSeq") or 0)
    if isinstance(report, Rejected):
        return _rejection(report)
    return {"requests": [to_plain(r.request) for r in report.requests], "summaries": [to_plain(s) for s in report.summaries]}


def _loaded_events(op: Mapping[str, object]) -> tuple[Event, ...] | Response:
    loaded = load_log_text(_lines_text(op))
    return _rejection(loaded.rejected) if isinstance(loaded, LoadError) else loaded.events


def _pack(op: Mapping[str, object]) -> Response:
    """CHK-2/3/4: the storage lines the writer produces for the log's events
    flushed as one batch (runs of >= 3 packable chunks become rows)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    return {"lines": [to_plain(row) for row in pack_chunk_runs(events)]}


def _repair(op: Mapping[str, object]) -> Response:
    """LOG-14: the closers crash repair appends to the log (``[]`` when no turn is open)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    return {"closers": [event_plain(e) for e in repair_closers(events)]}


def _append_out_of_band(op: Mapping[str, object]) -> Response:
    """LOG-16: the events an out-of-band append of ``type``/``data`` writes after the log."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    type_name = _str(op, "type")
    if type_name is None:
        raise OperationError("type: expected a string")
    trigger = _json(op, "trigger")
    if isinstance(trigger, Absent):
        raise OperationError("trigger: expected the turn/start trigger of a synthetic turn")
    appended = out_of_band_events(events, type_name, to_model(op.get("data", {})), trigger)
    if isinstance(appended, Rejected):
        return _rejection(appended)
    return {"appended": [event_plain(e) for e in appended]}


def _measure(op: Mapping[str, object]) -> Response:
    """MTR-10: the token meter's ``measure(session, override?)`` over the log
    (``override``: a request header, as logged in ``request/header.data.header``)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    override = _json(op, "override")
    header = ABSENT if isinstance(override, Absent) else header_from_json(override)
    if isinstance(header, Rejected):
        return _rejection(header)
    reading = measure(events, override=header)
    if isinstance(reading, Rejected):
        return _rejection(reading)
    return {"logRevision": reading.log_revision,
            "baseline": {"kind": reading.baseline.kind.value, "tokens": reading.baseline.tokens},
            "surfaceDeltaTokens": reading.surface_delta_tokens, "totalTokens": reading.total_tokens,
            "surfaceTokens": reading.surface_tokens,
            "nodes": [{"seq": n.seq, "tokens": n.tokens} for n in reading.nodes]}


@dataclass(slots=True)
class _RecordingSummarizer:
    """The scripted summarizer, recording each call as the summarizer request (CMP-17)."""

    scripted: _Summarizer
    instruction: str
    dialect: Dialect
    requests: list[PlainJson] = field(default_factory=list)

    def __call__(self, call: SummaryCall) -> SummarizerOutput | Rejected:
        self.requests.append(to_plain(summarizer_request(call, self.instruction, self.dialect)))
        return self.scripted(call)


def _ids(op: Mapping[str, object]) -> Callable[[int], Ids]:
    """The D08 identities of each transaction attempt (random UUIDs in the harness, DIA-2), given by the vector."""
    given = [_object(i, "ids[]") for i in _list(op, "ids")]
    decoded = [Ids(compaction_id=_str(i, "compactionId", "") or "", message_id=_str(i, "messageId", "") or "",
                   source_command_id=_str(i, "sourceCommandId")) for i in given]
    return lambda attempt: decoded[attempt] if attempt < len(decoded) else Ids()


def _compact(op: Mapping[str, object]) -> Response:
    """A compaction entry point called directly on a log (compact-basic, CMP-6/13,
    DIA-6/17/20): ``trigger`` ``pressure`` (the automatic trigger at its hook),
    ``manual`` (``compactNow``) or ``region`` (``compactRegion(start, end)``)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    dialect = {"A55": Dialect.A55, "D08": Dialect.D08}.get(_str(op, "dialect", "A55") or "A55")
    if dialect is None:
        raise OperationError("dialect: expected A55 or D08")
    setup = decode_compaction(_object(op.get("compaction", {}), "compaction"))
    summarizer = _RecordingSummarizer(scripted=_Summarizer(outputs=list(setup.summaries)), instruction=setup.instruction,
                                      dialect=dialect)
    ids = _ids(op)
    time = events[-1].time if events else 0
    outcome: CompactionRun | RegionOutcome | Rejected
    match op.get("trigger"):
        case "pressure":
            outcome = pressure_compaction(events, summarizer, aborted=bool(_field(op, "aborted", bool, False)), dialect=dialect,
                                          config=setup.config, context_window=setup.context_window, prune=setup.prune,
                                          ids=ids, time=time)
        case "manual":
            outcome = compact_if_needed(events, summarizer, dialect=dialect, trigger=Trigger.MANUAL, config=setup.config,
                                        context_window=setup.context_window, ids=ids, time=time)
        case "region":
            region = _object(op.get("region"), "region")
            start, end = _int(region, "start"), _int(region, "end")
            if start is None or end is None:
                raise OperationError("region: expected {start, end} seqs")
            outcome = compact_region(events, start, end, summarizer, dialect=dialect, max_tokens=setup.config.max_tokens,
                                     ids=ids(0), time=time)
        case other:
            raise OperationError(f"trigger: expected pressure, manual or region, got {other!r}")
    if isinstance(outcome, Rejected):
        return _rejection(outcome)
    return {"appended": [event_plain(e) for e in outcome.events], "summaries": summarizer.requests,
            "errorRules": [] if outcome.error is None else [outcome.error.rule]}


# --------------------------------------------------------------------------- server and clients


Handler = Callable[[Mapping[str, object]], Response]


def answer(handler: Handler, line: str) -> str:
    """One request line -> one response line (never raises)."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as bad:
        return json.dumps({"id": None, "error": f"not JSON: {bad}"}, sort_keys=True)
    ident = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return json.dumps({"id": None, "error": "an operation is a JSON object"}, sort_keys=True)
    try:
        result = handler(request)
    except (OperationError, FormatError) as bad:
        return json.dumps({"id": ident, "error": str(bad)}, sort_keys=True, ensure_ascii=False)
    if set(result) == {"reject"}:
        return json.dumps({"id": ident, "reject": result["reject"]}, sort_keys=True, ensure_ascii=False)
    return json.dumps({"id": ident, "ok": result}, sort_keys=True, ensure_ascii=False)


def serve(handler: Handler, stdin: TextIO, stdout: TextIO) -> int:
    """The server loop: one answer line per request line, flushed, until EOF."""
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(answer(handler, line) + "\n")
        stdout.flush()
    return 0


def _response(message: object, ident: int) -> Response:
    if not isinstance(message, dict) or message.get("id") != ident:
        raise AdapterError(f"answer to operation {ident} is not {{id, ok|reject|error}}: {str(message)[:200]}")
    if "error" in message:
        raise AdapterError(f"the adapter refused operation {ident} as malformed: {message['error']}")
    if "reject" in message:
        reject = message["reject"]
        if not isinstance(reject, dict) or not isinstance(reject.get("rules"), list):
            raise AdapterError(f"operation {ident}: a rejection is {{rules: [IDs], reason}}")
        return {"reject": reject}
    ok = message.get("ok")
    if not isinstance(ok, dict):
        raise AdapterError(f"operation {ident}: ok must carry an object")
    return ok


class InProcessAdapter:
    """A client over a :class:`ModelSession` in this process (the reference side of ``conform``)."""

    def __init__(self, session: ModelSession | None = None) -> None:
        self.session = session or ModelSession()
        self._next = 0

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        self._next += 1
        message = json.loads(answer(self.session.handle, json.dumps({**op, "id": self._next})))
        return _response(message, self._next)

    def close(self) -> None:
        return None


class ProcessAdapter:
    """A client over an adapter command (``--adapter CMD``), spoken to over pipes."""

    def __init__(self, command: str) -> None:
        self.command = command
        try:
            self.process = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True, encoding="utf-8", bufsize=1)
        except OSError as failed:
            raise AdapterError(f"cannot start adapter {command!r}: {failed}") from failed
        self._next = 0

    def call(self, op: Mapping[str, PlainJson]) -> Response:
        self._next += 1
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps({**op, "id": self._next}, sort_keys=True, ensure_ascii=False) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as gone:
            raise AdapterError(f"adapter {self.command!r} exited") from gone
        line = self.process.stdout.readline()
        if not line:
            raise AdapterError(f"adapter {self.command!r} closed its output (exit code {self.process.poll()})")
        try:
            message = json.loads(line)
        except json.JSONDecodeError as bad:
            raise AdapterError(f"adapter wrote a line that is not JSON: {line[:200]!r}") from bad
        return _response(message, self._next)

    def close(self) -> None:
        if self.process.stdin is not None:
            # An adapter that already exited leaves nothing to flush.
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def serve_stdio(session: ModelSession) -> int:
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    return serve(session.handle, sys.stdin, sys.stdout)
