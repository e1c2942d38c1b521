"""``sessionspec replay``: every request of a log, reconstructed from the log alone.

Loop requests come from :func:`model.reconstruct.request_points` (INV-5,
HDR-9): ``messages = messagePrefix ++ derive(log[:step/start])`` with the
header folded at the step's first chunk.  Summariser requests come from
``model.compaction.summary_requests`` when that module exists (CMP-16/17).
Formats: ``text`` (one request after another with the header reason and what
changed), ``json`` (documented in docs/replay.md; each request uses the field
names of the ground-truth ``requests.json``, own keys under ``meta``), ``html``
(one self-contained page, sessionspec/replay_html.py).  A log is read as
``check`` reads it (sessionspec/logsource.py).  Output is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from sessionspec.economics import CacheModel, RequestCost, request_costs, shape_of_request, totals
from sessionspec.fast.request_points import RequestPoint, request_points
from sessionspec.model.codec import SessionHeader, decode_record, parse_session_header, parse_value
from sessionspec.model.compaction import summary_requests
from sessionspec.model.header import EpochHeader, config_eq, prefix_messages
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, json_eq, thaw
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import Request, request_to_json
from sessionspec.options import dialect_text

if TYPE_CHECKING:
    from sessionspec.replay_read import StopPoint

DEFAULT_INSTRUCTION: Final = "<COMPACTION_INSTRUCTION: opaque parameter, not logged (RULES Appendix A); pass --instruction-file>"


# --------------------------------------------------------------------------- loading


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedLog:
    header: SessionHeader | None
    events: tuple[Event, ...]
    lines: dict[int, int]  # event seq -> line number (a packed row's events share its line)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadError:
    line: int
    rejected: Rejected

    def __str__(self) -> str:
        return f"line {self.line}: {self.rejected}"


def load_log_text(text: str) -> LoadedLog | LoadError:
    """A session log given as text lines, as the adapter protocol hands them
    over (``Session.events`` lines, optionally after the storage header line
    ``{"type":"session",...}``, LOG-18); packed chunk rows expand (CHK).  Blank
    lines are skipped.  Total: the first bad line is reported.  Files and
    stdin are read by :func:`sessionspec.logsource.read_log`, as check reads them."""
    header: SessionHeader | None = None
    events: list[Event] = []
    lines: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value = parse_value(line)
        if isinstance(value, Rejected):
            return LoadError(line=number, rejected=value)
        if not events and header is None and isinstance(value, JsonObject) and get(value, "type") == "session":
            parsed = parse_session_header(value)
            if isinstance(parsed, Rejected):
                return LoadError(line=number, rejected=parsed)
            header = parsed
            continue
        decoded = decode_record(value)
        if isinstance(decoded, Rejected):
            return LoadError(line=number, rejected=decoded)
        events.extend(decoded)
        for e in decoded:
            lines.setdefault(e.seq, number)
    return LoadedLog(header=header, events=tuple(events), lines=lines)


# --------------------------------------------------------------------------- report


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayedRequest:
    index: int
    point: RequestPoint
    request: JsonObject  # ground-truth field names and key order
    header: EpochHeader
    header_reason: Json | Absent
    prefix_length: int
    shared_messages: int  # leading messages shared with the previous request
    changes: tuple[str, ...]  # what changed since the previous request
    cost: RequestCost | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    dialect: Dialect
    first_live_seq: int
    requests: tuple[ReplayedRequest, ...]
    summaries: tuple[JsonObject, ...]
    summaries_note: str | None
    skipped_without_header: int
    events: tuple[Event, ...]
    cache_model: str | None
    dialect_source: str | None = None  # how the dialect was decided (check's words: detected, forced, default)
    verdict: str = "valid"  # check's verdict on the log (valid, invalid, unknown)
    # Where the log stops being a valid loop log (check's first finding): the events above end before it.
    stop: StopPoint | None = None
    # How many loop requests were rebuilt, when ``requests`` holds fewer (``--request N``); None: all of them.
    rebuilt: int | None = None


def _leading_shared(a: Sequence[Json], b: Sequence[Json]) -> int:
    n = 0
    for x, y in zip(a, b):
        if not json_eq(x, y):
            break
        n += 1
    return n


def header_changes(previous: EpochHeader, current: EpochHeader) -> list[str]:
    """The HDR-4 fields that differ (config per HDR-3, system, tools, prefix)."""
    changed: list[str] = []
    if not config_eq(previous.config, current.config):
        changed.append("config")
    if not json_eq(previous.system, current.system):
        changed.append("system")
    if not json_eq(() if previous.tools is ABSENT else previous.tools, () if current.tools is ABSENT else current.tools):
        changed.append("tools")
    if not json_eq(prefix_messages(previous), prefix_messages(current)):
        changed.append("messagePrefix")
    return changed


def _changes(prev: ReplayedRequest | None, header: EpochHeader, header_seq: int | None, messages: Sequence[Json],
             shared: int, replaced_between: Sequence[str]) -> tuple[str, ...]:
    if prev is None:
        return ("first request",)
    out: list[str] = []
    if header_seq != prev.point.header_seq:
        fields = header_changes(prev.header, header)
        out.append(f"new header snapshot at seq {header_seq}" + (f" ({', '.join(fields)} changed)" if fields else " (equal content)"))
    out.extend(replaced_between)
    prev_messages = get(prev.request, "messages")
    prev_count = len(prev_messages) if isinstance(prev_messages, tuple) else 0
    if shared == prev_count:
        out.append(f"append-extends the previous request by {len(messages) - shared} message(s)")
    else:
        out.append(f"first {shared} message(s) shared; resend differs from message {shared}")
    return tuple(out)


def _replacements(events: Sequence[Event], lo: int, hi: int) -> list[str]:
    """Replace operations (compaction checkpoints, prunes) with lo <= seq < hi."""
    out: list[str] = []
    for e in events[lo:hi]:
        if isinstance(e.surface_op, JsonObject) and get(e.surface_op, "op") == "replace":
            out.append(f"{replace_kind(e)} at seq {e.seq} (replace {js_stringify(e.surface_op)})")
    return out


def replace_kind(e: Event) -> str:
    """A replace is a prune on a ``tool/result`` (PRN-4), a compaction
    checkpoint on a ``user/message`` (CMP-22), else a plain replace."""
    if e.type == "tool/result":
        return "prune"
    if e.type == "user/message":
        return "compaction checkpoint"
    return "replace"


def summary_requests_of(events: Sequence[Event], dialect: Dialect, instruction: str) -> tuple[tuple[JsonObject, ...], str | None]:
    """Summariser requests via ``model.compaction.summary_requests`` (CMP-16/17),
    and a note (always ``None`` now that the compaction model is part of the
    package; kept so the JSON schema's ``summariesNote`` stays stable)."""
    return tuple(summary_requests(list(events), dialect, instruction)), None


def replay(events: Sequence[Event], *, dialect: Dialect = Dialect.A55, first_live_seq: int = 0,
           instruction: str = DEFAULT_INSTRUCTION, cache_model: CacheModel | None = None,
           dialect_source: str | None = None) -> ReplayReport | Rejected:
    """Every loop request of the log (in dispatch order) with its header
    reason, what changed since the previous one, and, with ``cache_model``,
    its cache economics."""
    points = request_points(events, dialect, first_live_seq)
    if isinstance(points, Rejected):
        return points
    by_seq = {e.seq: e for e in events}
    out: list[ReplayedRequest] = []
    skipped = 0
    previous_boundary = first_live_seq
    for point in points:
        built = point.request()
        if built is None or isinstance(point.header, Absent):
            skipped += 1  # no header in force: the log cannot say what was sent (INV-2)
            continue
        request = request_to_json(built)
        messages = built.messages
        prev = out[-1] if out else None
        prev_messages = get(prev.request, "messages") if prev is not None else ()
        shared = _leading_shared(prev_messages if isinstance(prev_messages, tuple) else (), messages)
        header_event = by_seq.get(point.header_seq) if point.header_seq is not None else None
        reason = get(header_event.data, "reason") if header_event is not None else ABSENT
        changes = _changes(prev, point.header, point.header_seq, messages, shared,
                           _replacements(events, previous_boundary, point.step_start_seq))
        previous_boundary = point.step_start_seq
        out.append(ReplayedRequest(index=len(out), point=point, request=request, header=point.header,
                                   header_reason=reason, prefix_length=len(prefix_messages(point.header)),
                                   shared_messages=shared, changes=changes, cost=None))
    if cache_model is not None:
        costs = request_costs([shape_of_request(request_of(r), r.prefix_length) for r in out], cache_model)
        out = [_with_cost(r, c) for r, c in zip(out, costs)]
    summaries, note = summary_requests_of(events, dialect, instruction)
    return ReplayReport(dialect=dialect, first_live_seq=first_live_seq, requests=tuple(out), summaries=summaries,
                        summaries_note=note, skipped_without_header=skipped, events=tuple(events),
                        cache_model=None if cache_model is None else cache_model.name, dialect_source=dialect_source)


def request_of(r: ReplayedRequest) -> Request:
    built = r.point.request()
    assert built is not None  # only requests with a header are kept
    return built


def _with_cost(r: ReplayedRequest, cost: RequestCost) -> ReplayedRequest:
    return ReplayedRequest(index=r.index, point=r.point, request=r.request, header=r.header, header_reason=r.header_reason,
                           prefix_length=r.prefix_length, shared_messages=r.shared_messages, changes=r.changes, cost=cost)


# --------------------------------------------------------------------------- JSON


def request_meta(r: ReplayedRequest) -> dict[str, object]:
    p = r.point
    meta: dict[str, object] = {
        "index": r.index,
        "stepStartSeq": p.step_start_seq,
        "firstChunkSeq": p.first_chunk_seq,
        "turn": p.turn,
        "step": p.step,
        "headerSeq": p.header_seq,
        "headerReason": None if r.header_reason is ABSENT else thaw(r.header_reason),
        "prefixLength": r.prefix_length,
        "sharedWithPrevious": r.shared_messages,
        "changes": list(r.changes),
    }
    if r.cost is not None:
        meta["economics"] = {
            "inputTokens": r.cost.input_tokens,
            "cacheHitTokens": r.cost.cache_hit_tokens,
            "uncachedTokens": r.cost.uncached_tokens,
            "firstDifference": r.cost.first_difference,
        }
    return meta


def report_to_json(report: ReplayReport) -> dict[str, object]:
    requests: list[object] = []
    for r in report.requests:
        value = thaw(r.request)
        assert isinstance(value, dict)
        value["meta"] = request_meta(r)
        requests.append(value)
    meta: dict[str, object] = {
        "dialect": dialect_text(report.dialect),
        "firstLiveSeq": report.first_live_seq,
        "events": len(report.events),
        "requestsWithoutHeader": report.skipped_without_header,
        "summariesNote": report.summaries_note,
        "verdict": report.verdict,
        "stop": None if report.stop is None else report.stop.to_json(),
    }
    out: dict[str, object] = {"requests": requests, "summaries": [thaw(s) for s in report.summaries], "meta": meta}
    if report.cache_model is not None:
        t = totals([r.cost for r in report.requests if r.cost is not None])
        meta["economics"] = {"cacheModel": report.cache_model, "inputTokens": t.input_tokens,
                             "cacheHitTokens": t.cache_hit_tokens, "uncachedTokens": t.uncached_tokens}
    return out


# --------------------------------------------------------------------------- text


def short(v: Json | Absent, limit: int = 160) -> str:
    text = "(absent)" if v is ABSENT else js_stringify(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def difference_text(r: ReplayedRequest) -> str:
    """The first block that differs from the previous request (drift attribution)."""
    if r.cost is None or r.index == 0:
        return "- (first request)"
    return r.cost.first_difference or "none (append-extends the previous request)"


def stop_sentence(report: ReplayReport) -> str:
    """Where the log stops being a valid loop log, in one sentence (text and page)."""
    stop = report.stop
    assert stop is not None
    where = f"line {stop.finding.line}" if stop.finding.line is not None else "the file as a whole"
    kind = "stops being a valid loop log" if stop.finding.kind.value == "invalid" else "is undecided from here (a limit of sessionspec)"
    rebuilt = len(report.requests) if report.rebuilt is None else report.rebuilt
    return (f"the log {kind} at {where} ({stop.finding.rule}): the {rebuilt} request(s) before it are rebuilt "
            f"from its first {stop.events_rebuilt} events; nothing after it is")


def report_to_text(report: ReplayReport, *, full: bool = False) -> str:
    source = f" ({report.dialect_source})" if report.dialect_source else ""
    lines: list[str] = [f"dialect {dialect_text(report.dialect)}{source}; {len(report.requests)} loop request(s); "
                        f"{len(report.summaries)} summariser request(s); check: {report.verdict}"]
    for r in report.requests:
        p = r.point
        reason = "?" if r.header_reason is ABSENT else js_stringify(r.header_reason)
        lines.append("")
        lines.append(f"== request {r.index + 1}  turn {p.turn} step {p.step}  step/start seq {p.step_start_seq}  "
                     f"header seq {p.header_seq} reason {reason}")
        for change in r.changes:
            lines.append(f"   change: {change}")
        config = r.header.config
        lines.append(f"   config: {short(config)}")
        if r.header.system is not ABSENT:
            lines.append(f"   system: {short(r.header.system)}")
        if r.header.tools is not ABSENT:
            tools = r.header.tools
            names = [get(t, "name") for t in tools] if isinstance(tools, tuple) else [tools]
            lines.append(f"   tools: {short(tuple(n for n in names if n is not ABSENT))}")
        messages = get(r.request, "messages")
        assert isinstance(messages, tuple)
        for i, m in enumerate(messages):
            region = "prefix " if i < r.prefix_length else ("shared " if i < r.shared_messages else "new    ")
            content = get(m, "content")
            shown = ("(absent)" if content is ABSENT else js_stringify(content)) if full else short(content)
            lines.append(f"   [{i:3}] {region} {short(get(m, 'role'), 12)} {shown}")
        if r.cost is not None:
            c = r.cost
            lines.append(f"   tokens: input {c.input_tokens}, cache hit {c.cache_hit_tokens}, uncached {c.uncached_tokens}; "
                         f"first differing block: {difference_text(r)}")
    if report.cache_model is not None:
        t = totals([r.cost for r in report.requests if r.cost is not None])
        lines.append("")
        lines.append(f"totals ({report.cache_model}): input {t.input_tokens}, cache hit {t.cache_hit_tokens}, "
                     f"uncached {t.uncached_tokens}")
    if report.stop is not None:
        lines.append("")
        lines.append(f"== {stop_sentence(report)}")
        lines.append(f"   {report.stop.text}")
    for i, s in enumerate(report.summaries):
        lines.append("")
        lines.append(f"== summariser request {i + 1}: {short(s, 400)}")
    if report.summaries_note:
        lines.append(f"note: {report.summaries_note}")
    if report.skipped_without_header:
        lines.append(f"note: {report.skipped_without_header} step(s) without any request/header are not shown (INV-2)")
    return "\n".join(lines) + "\n"
