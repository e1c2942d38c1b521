"""The stateless operations of the adapter protocol (``check``, ``replay``, ``pack``, ``repair``,
``append-out-of-band``, ``measure``, ``compact``): each acts on the ``log`` it is given, not on the
session; plus the pieces the session shares with them (the scripted summarizer, event encoding).
"""


import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sessionspec.check.checker import Verdict, check_log
from sessionspec.check.logfile import read_stream
from sessionspec.conformance.adapter.decode import (
    as_list,
    as_object,
    decode_compaction,
    log_text,
    opt_int,
    opt_json,
    opt_str,
    typed_field,
)
from sessionspec.conformance.adapter.protocol import OperationError, Response
from sessionspec.conformance.vectors.format import PlainJson, to_model, to_plain
from sessionspec.model.codec import event_to_json, pack_chunk_runs
from sessionspec.model.compaction import (
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
from sessionspec.model.header import header_from_json
from sessionspec.model.jsonval import ABSENT, Absent, Json
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import measure
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.repair import repair_closers
from sessionspec.model.session import out_of_band_events
from sessionspec.replay import LoadError, load_log_text, replay

# --------------------------------------------------------------------------- the model's side


def event_plain(event: Event) -> PlainJson:
    return to_plain(event_to_json(event))


def rejection(rejected: Rejected) -> Response:
    return {"reject": {"rules": [rejected.rule], "reason": rejected.reason}}


@dataclass(slots=True)
class ScriptedSummarizer:
    """The scripted summarizer: answers each summarizer call with the next scripted summary."""

    outputs: list[tuple[Json, ...]]

    def __call__(self, call: SummaryCall) -> SummarizerOutput | Rejected:
        if not self.outputs:
            return Rejected(rule="CMP-18", reason="the scripted summarizer has no summary left")
        return SummarizerOutput(summary=self.outputs.pop(0), provider=call.provider, model=call.model,
                                max_tokens=call.max_tokens)



def check_op(op: Mapping[str, object]) -> Response:
    dialect_name = op.get("dialect")
    forced = {"A55": Dialect.A55, "D08": Dialect.D08, None: None}.get(dialect_name if isinstance(dialect_name, str) else None)
    report = check_log(read_stream(io.BytesIO(log_text(op).encode("utf-8")), "vector.jsonl"), forced)
    match report.verdict:
        case Verdict.VALID:
            return {"verdict": "valid"}
        case Verdict.UNKNOWN:
            return {"verdict": "unknown"}
        case Verdict.INVALID | Verdict.UNREADABLE:
            rules = sorted({f.rule for f in report.findings if f.kind is FailureKind.INVALID})
            return {"reject": {"rules": list(rules), "reason": report.findings[0].reason if report.findings else str(report.reason)}}


def replay_op(op: Mapping[str, object]) -> Response:
    loaded = load_log_text(log_text(op))
    if isinstance(loaded, LoadError):
        return rejection(loaded.rejected)
    report = replay(loaded.events, first_live_seq=opt_int(op, "firstLiveSeq") or 0)
    if isinstance(report, Rejected):
        return rejection(report)
    return {"requests": [to_plain(r.request) for r in report.requests], "summaries": [to_plain(s) for s in report.summaries]}


def _loaded_events(op: Mapping[str, object]) -> tuple[Event, ...] | Response:
    loaded = load_log_text(log_text(op))
    return rejection(loaded.rejected) if isinstance(loaded, LoadError) else loaded.events


def pack_op(op: Mapping[str, object]) -> Response:
    """CHK-2/3/4: the storage lines the writer produces for the log's events
    flushed as one batch (runs of >= 3 packable chunks become rows)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    return {"lines": [to_plain(row) for row in pack_chunk_runs(events)]}


def repair_op(op: Mapping[str, object]) -> Response:
    """LOG-14: the closers crash repair appends to the log (``[]`` when no turn is open)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    return {"closers": [event_plain(e) for e in repair_closers(events)]}


def append_out_of_band_op(op: Mapping[str, object]) -> Response:
    """LOG-16: the events an out-of-band append of ``type``/``data`` writes after the log."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    type_name = opt_str(op, "type")
    if type_name is None:
        raise OperationError("type: expected a string")
    trigger = opt_json(op, "trigger")
    if isinstance(trigger, Absent):
        raise OperationError("trigger: expected the turn/start trigger of a synthetic turn")
    appended = out_of_band_events(events, type_name, to_model(op.get("data", {})), trigger)
    if isinstance(appended, Rejected):
        return rejection(appended)
    return {"appended": [event_plain(e) for e in appended]}


def measure_op(op: Mapping[str, object]) -> Response:
    """MTR-10: the token meter's ``measure(session, override?)`` over the log
    (``override``: a request header, as logged in ``request/header.data.header``)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    override = opt_json(op, "override")
    header = ABSENT if isinstance(override, Absent) else header_from_json(override)
    if isinstance(header, Rejected):
        return rejection(header)
    reading = measure(events, override=header)
    if isinstance(reading, Rejected):
        return rejection(reading)
    return {"logRevision": reading.log_revision,
            "baseline": {"kind": reading.baseline.kind.value, "tokens": reading.baseline.tokens},
            "surfaceDeltaTokens": reading.surface_delta_tokens, "totalTokens": reading.total_tokens,
            "surfaceTokens": reading.surface_tokens,
            "nodes": [{"seq": n.seq, "tokens": n.tokens} for n in reading.nodes]}


@dataclass(slots=True)
class _RecordingSummarizer:
    """The scripted summarizer, recording each call as the summarizer request (CMP-17)."""

    scripted: ScriptedSummarizer
    instruction: str
    dialect: Dialect
    requests: list[PlainJson] = field(default_factory=list)

    def __call__(self, call: SummaryCall) -> SummarizerOutput | Rejected:
        self.requests.append(to_plain(summarizer_request(call, self.instruction, self.dialect)))
        return self.scripted(call)


def _ids(op: Mapping[str, object]) -> Callable[[int], Ids]:
    """The D08 identities of each transaction attempt (random UUIDs in the harness, DIA-2), given by the vector."""
    given = [as_object(i, "ids[]") for i in as_list(op, "ids")]
    decoded = [Ids(compaction_id=opt_str(i, "compactionId", "") or "", message_id=opt_str(i, "messageId", "") or "",
                   source_command_id=opt_str(i, "sourceCommandId")) for i in given]
    return lambda attempt: decoded[attempt] if attempt < len(decoded) else Ids()


def compact_op(op: Mapping[str, object]) -> Response:
    """A compaction entry point called directly on a log (compact-basic, CMP-6/13,
    DIA-6/17/20): ``trigger`` ``pressure`` (the automatic trigger at its hook),
    ``manual`` (``compactNow``) or ``region`` (``compactRegion(start, end)``)."""
    events = _loaded_events(op)
    if isinstance(events, dict):
        return events
    dialect = {"A55": Dialect.A55, "D08": Dialect.D08}.get(opt_str(op, "dialect", "A55") or "A55")
    if dialect is None:
        raise OperationError("dialect: expected A55 or D08")
    setup = decode_compaction(as_object(op.get("compaction", {}), "compaction"))
    summarizer = _RecordingSummarizer(scripted=ScriptedSummarizer(outputs=list(setup.summaries)), instruction=setup.instruction,
                                      dialect=dialect)
    ids = _ids(op)
    time = events[-1].time if events else 0
    outcome: CompactionRun | RegionOutcome | Rejected
    match op.get("trigger"):
        case "pressure":
            outcome = pressure_compaction(events, summarizer, aborted=bool(typed_field(op, "aborted", bool, False)), dialect=dialect,
                                          config=setup.config, context_window=setup.context_window, prune=setup.prune,
                                          ids=ids, time=time)
        case "manual":
            outcome = compact_if_needed(events, summarizer, dialect=dialect, trigger=Trigger.MANUAL, config=setup.config,
                                        context_window=setup.context_window, ids=ids, time=time)
        case "region":
            region = as_object(op.get("region"), "region")
            start, end = opt_int(region, "start"), opt_int(region, "end")
            if start is None or end is None:
                raise OperationError("region: expected {start, end} seqs")
            outcome = compact_region(events, start, end, summarizer, dialect=dialect, max_tokens=setup.config.max_tokens,
                                     ids=ids(0), time=time)
        case other:
            raise OperationError(f"trigger: expected pressure, manual or region, got {other!r}")
    if isinstance(outcome, Rejected):
        return rejection(outcome)
    if outcome.error is not None and not outcome.events:
        # The call threw before appending anything: what the caller sees is the throw, a rejection.
        return rejection(outcome.error)
    return {"appended": [event_plain(e) for e in outcome.events], "summaries": summarizer.requests,
            "errorRules": [] if outcome.error is None else [outcome.error.rule]}
