"""``sessionspec replay``: every request of a log, reconstructed from the log alone.

Loop requests come from :func:`model.reconstruct.request_points` (INV-5,
HDR-9): ``messages = messagePrefix ++ derive(log[:step/start])`` with the
header folded at the step's first chunk.  Summariser requests come from
``model.compaction.summary_requests`` when that module exists (CMP-16/17).
Formats: ``text`` (one request after another with the header reason and what
changed), ``json`` (documented in docs/replay.md; each request uses the field
names of the ground-truth ``requests.json``, own keys under ``meta``), ``html``
(one self-contained page).  Output is deterministic.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, final

from model.codec import SessionHeader, decode_record, parse_session_header, parse_value
from model.compaction import summary_requests
from model.economics import PRESETS, CacheModel, RequestCost, request_costs, shape_of_request, totals
from model.header import EpochHeader, config_eq, header_to_json, prefix_messages
from model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, json_eq, thaw
from model.log import Dialect, Event
from model.rejected import Rejected
from model.wire import Request, request_to_json
from sessionspec.chart import Bar, bar_of, legend_html, svg_chart
from sessionspec.check.checker import Verdict
from sessionspec.check.logfile import MAX_EVENTS
from sessionspec.fast.request_points import RequestPoint, request_points
from sessionspec.logsource import ReadFailure, read_log
from sessionspec.options import add_dialect, positive_int, write_output

HELP = "reconstruct every request of a session log from the log alone (text, json or html)"

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
        costs = request_costs([shape_of_request(_request_of(r), r.prefix_length) for r in out], cache_model)
        out = [_with_cost(r, c) for r, c in zip(out, costs)]
    summaries, note = summary_requests_of(events, dialect, instruction)
    return ReplayReport(dialect=dialect, first_live_seq=first_live_seq, requests=tuple(out), summaries=summaries,
                        summaries_note=note, skipped_without_header=skipped, events=tuple(events),
                        cache_model=None if cache_model is None else cache_model.name, dialect_source=dialect_source)


def _request_of(r: ReplayedRequest) -> Request:
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
        "dialect": report.dialect.value,
        "firstLiveSeq": report.first_live_seq,
        "events": len(report.events),
        "requestsWithoutHeader": report.skipped_without_header,
        "summariesNote": report.summaries_note,
    }
    out: dict[str, object] = {"requests": requests, "summaries": [thaw(s) for s in report.summaries], "meta": meta}
    if report.cache_model is not None:
        t = totals([r.cost for r in report.requests if r.cost is not None])
        meta["economics"] = {"cacheModel": report.cache_model, "inputTokens": t.input_tokens,
                             "cacheHitTokens": t.cache_hit_tokens, "uncachedTokens": t.uncached_tokens}
    return out


# --------------------------------------------------------------------------- text


def _short(v: Json | Absent, limit: int = 160) -> str:
    text = "(absent)" if v is ABSENT else js_stringify(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _difference(r: ReplayedRequest) -> str:
    """The first block that differs from the previous request (drift attribution)."""
    if r.cost is None or r.index == 0:
        return "- (first request)"
    return r.cost.first_difference or "none (append-extends the previous request)"


def report_to_text(report: ReplayReport) -> str:
    source = f" ({report.dialect_source})" if report.dialect_source else ""
    lines: list[str] = [f"dialect {report.dialect.value}{source}; {len(report.requests)} loop request(s); "
                        f"{len(report.summaries)} summariser request(s)"]
    for r in report.requests:
        p = r.point
        reason = "?" if r.header_reason is ABSENT else js_stringify(r.header_reason)
        lines.append("")
        lines.append(f"== request {r.index + 1}  turn {p.turn} step {p.step}  step/start seq {p.step_start_seq}  "
                     f"header seq {p.header_seq} reason {reason}")
        for change in r.changes:
            lines.append(f"   change: {change}")
        config = r.header.config
        lines.append(f"   config: {_short(config)}")
        if r.header.system is not ABSENT:
            lines.append(f"   system: {_short(r.header.system)}")
        if r.header.tools is not ABSENT:
            tools = r.header.tools
            names = [get(t, "name") for t in tools] if isinstance(tools, tuple) else [tools]
            lines.append(f"   tools: {_short(tuple(n for n in names if n is not ABSENT))}")
        messages = get(r.request, "messages")
        assert isinstance(messages, tuple)
        for i, m in enumerate(messages):
            region = "prefix " if i < r.prefix_length else ("shared " if i < r.shared_messages else "new    ")
            lines.append(f"   [{i:3}] {region} {_short(get(m, 'role'), 12)} {_short(get(m, 'content'))}")
        if r.cost is not None:
            c = r.cost
            lines.append(f"   tokens: input {c.input_tokens}, cache hit {c.cache_hit_tokens}, uncached {c.uncached_tokens}; "
                         f"first differing block: {_difference(r)}")
    if report.cache_model is not None:
        t = totals([r.cost for r in report.requests if r.cost is not None])
        lines.append("")
        lines.append(f"totals ({report.cache_model}): input {t.input_tokens}, cache hit {t.cache_hit_tokens}, "
                     f"uncached {t.uncached_tokens}")
    for i, s in enumerate(report.summaries):
        lines.append("")
        lines.append(f"== summariser request {i + 1}: {_short(s, 400)}")
    if report.summaries_note:
        lines.append(f"note: {report.summaries_note}")
    if report.skipped_without_header:
        lines.append(f"note: {report.skipped_without_header} step(s) without any request/header are not shown (INV-2)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- HTML


_CSS: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}
h1{font-size:1.3em} .timeline{border-left:3px solid #888;padding-left:1em;margin-bottom:2em}
.ev{margin:2px 0} .ev-turn{font-weight:bold;margin-top:.6em} .ev-header{color:#05c} .ev-compaction{color:#b50;font-weight:bold}
.ev-prune{color:#a0a;font-weight:bold} .ev-request a{color:#070}
.request{border:1px solid #aaa;border-radius:6px;padding:.5em 1em;margin:1em 0}
.msg{margin:3px 0;padding:3px 6px;border-left:6px solid #ccc;white-space:pre-wrap;word-break:break-word}
.region-prefix{border-left-color:#c80;background:#fff6e0} .region-shared{border-left-color:#5a5;background:#eef8ee}
.region-new{border-left-color:#36c;background:#eef2ff} .legend span{padding:0 6px;margin-right:6px;border-left:6px solid}
.legend .key-prefix{border-color:#c80} .legend .key-shared{border-color:#5a5} .legend .key-new{border-color:#36c}
.role{font-weight:bold} pre{white-space:pre-wrap;margin:0} .hdr{font-size:.9em;color:#444}
"""

LONG: Final = 400


def _content_html(value: Json | Absent) -> str:
    text = "(absent)" if value is ABSENT else json.dumps(thaw(value), ensure_ascii=False, indent=1)
    if len(text) <= LONG:
        return f"<pre>{html.escape(text)}</pre>"
    return (f"<details><summary>{html.escape(text[:120])}… ({len(text)} chars)</summary>"
            f"<pre>{html.escape(text)}</pre></details>")


def chart_markers(report: ReplayReport, r: ReplayedRequest, previous: ReplayedRequest | None,
                  previous_boundary: int) -> tuple[str, ...]:
    """The chart's markers for request ``r`` (sessionspec/chart.py): a new
    ``change`` or ``resume`` header in force (HDR-7), a compaction (a
    ``compact/start`` or a checkpoint replace, CMP-22) since the previous request."""
    markers: list[str] = []
    if previous is None or previous.point.header_seq != r.point.header_seq:
        if r.header_reason == "change":
            markers.append("header")
        elif r.header_reason == "resume":
            markers.append("resume")
    if any(previous_boundary <= e.seq < r.point.step_start_seq
           and (e.type == "compact/start" or (isinstance(e.surface_op, JsonObject) and get(e.surface_op, "op") == "replace"
                                              and replace_kind(e) == "compaction checkpoint"))
           for e in report.events):
        markers.append("compaction")
    return tuple(markers)


def chart_of(report: ReplayReport, *, context_window: int | None = None) -> str:
    """The token chart of the session (sessionspec/chart.py): the economics of
    ``--economics``, else the neutral cache model's."""
    model = PRESETS[report.cache_model or "neutral"]
    shapes = [shape_of_request(_request_of(r), r.prefix_length) for r in report.requests]
    costs = request_costs(shapes, model)
    bars: list[Bar] = []
    boundary = report.first_live_seq
    previous: ReplayedRequest | None = None
    for r, shape, cost in zip(report.requests, shapes, costs):
        bars.append(bar_of(shape, cost, label=f"request {r.index + 1} (turn {r.point.turn}, step {r.point.step})",
                           link=f"request-{r.index + 1}", markers=chart_markers(report, r, previous, boundary)))
        boundary, previous = r.point.step_start_seq, r
    title = f"input tokens per request ({len(bars)} request(s), {model.name} cache model)"
    return svg_chart(bars, title=title, context_window=context_window, chart_id="session-chart") + \
        legend_html(context_window, model.name)


def report_to_html(report: ReplayReport, *, context_window: int | None = None) -> str:
    """One self-contained page: no scripts, no external resources; the token
    chart of the session at the top."""
    parts: list[str] = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>sessionspec replay</title>",
                        f"<style>{_CSS}</style></head><body>",
                        f"<h1>sessionspec replay: {len(report.requests)} request(s), dialect {report.dialect.value}</h1>",
                        f"<div class=\"chart\">{chart_of(report, context_window=context_window)}</div>",
                        "<p class=\"legend\"><span class=\"key-prefix\">session prefix</span>"
                        "<span class=\"key-shared\">shared with the previous request (cacheable)</span>"
                        "<span class=\"key-new\">new</span></p>",
                        "<h2>Timeline</h2><div class=\"timeline\" id=\"timeline\">"]
    by_boundary = {r.point.step_start_seq: r for r in report.requests}
    for e in report.events:
        if e.type == "turn/start":
            parts.append(f"<div class=\"ev ev-turn\">turn {html.escape(_short(get(e.data, 'turn'), 20))} (seq {e.seq})</div>")
        elif e.type == "turn/end":
            parts.append(f"<div class=\"ev\">turn end {html.escape(_short(get(e.data, 'reason'), 80))} (seq {e.seq})</div>")
        elif e.type == "step/start":
            r = by_boundary.get(e.seq)
            link = f" → <a href=\"#request-{r.index + 1}\">request {r.index + 1}</a>" if r is not None else ""
            parts.append(f"<div class=\"ev ev-request\">step {html.escape(_short(get(e.data, 'step'), 20))} "
                         f"(seq {e.seq}){link}</div>")
        elif e.type == "request/header":
            snapshot = get(e.data, "header")
            parts.append(f"<div class=\"ev ev-header\">header snapshot seq {e.seq}, reason "
                         f"{html.escape(_short(get(e.data, 'reason'), 40))}"
                         f"{_content_html(snapshot) if snapshot is not ABSENT else ''}</div>")
        elif e.type.startswith("compact/") or e.type.startswith("compaction/"):
            parts.append(f"<div class=\"ev ev-compaction\">{html.escape(e.type)} (seq {e.seq})</div>")
        if isinstance(e.surface_op, JsonObject) and get(e.surface_op, "op") == "replace":
            kind = replace_kind(e)
            cls = "ev-prune" if kind == "prune" else "ev-compaction"
            parts.append(f"<div class=\"ev {cls}\" data-replace=\"{html.escape(kind)}\">{html.escape(kind)} at seq {e.seq}: "
                         f"{html.escape(js_stringify(e.surface_op))}</div>")
    parts.append("</div><h2>Requests</h2>")
    for r in report.requests:
        p = r.point
        reason = "?" if r.header_reason is ABSENT else _short(r.header_reason, 40)
        parts.append(f"<section class=\"request\" id=\"request-{r.index + 1}\" data-index=\"{r.index}\" "
                     f"data-prefix=\"{r.prefix_length}\" data-shared=\"{r.shared_messages}\">")
        parts.append(f"<h3>request {r.index + 1}: turn {p.turn}, step {p.step}, step/start seq {p.step_start_seq}, "
                     f"header seq {p.header_seq} ({html.escape(reason)})</h3>")
        parts.append("<ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in r.changes) + "</ul>")
        if r.cost is not None:
            parts.append(f"<p class=\"hdr\">tokens: input {r.cost.input_tokens}, cache hit {r.cost.cache_hit_tokens}, "
                         f"first differing block: {html.escape(_difference(r))}</p>")
        parts.append(f"<div class=\"hdr\">header {_content_html(header_to_json(r.header))}</div>")
        messages = get(r.request, "messages")
        assert isinstance(messages, tuple)
        for i, m in enumerate(messages):
            region = "prefix" if i < r.prefix_length else ("shared" if i < r.shared_messages else "new")
            parts.append(f"<div class=\"msg region-{region}\" data-region=\"{region}\"><span class=\"role\">"
                         f"[{i}] {html.escape(_short(get(m, 'role'), 20))}</span> {_content_html(get(m, 'content'))}</div>")
        parts.append("</section>")
    if report.summaries:
        parts.append("<h2>Summariser requests</h2>")
        for i, s in enumerate(report.summaries):
            parts.append(f"<section class=\"summary\" data-index=\"{i}\">{_content_html(s)}</section>")
    if report.summaries_note:
        parts.append(f"<p class=\"hdr\">note: {html.escape(report.summaries_note)}</p>")
    parts.append("</body></html>\n")
    return "".join(parts)


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG",
                        help="session log: .jsonl or .jsonl.zst, or - for stdin; read exactly as `sessionspec check` reads it")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.add_argument("--request", type=int, metavar="N", help="only request N (1-based, dispatch order)")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    add_dialect(parser, default=None, help="force the log's dialect instead of detecting it as check does (FMT-10; DIA-8: d08 has no session prefix)")
    parser.add_argument("--seed-length", type=int, metavar="N",
                        help="events before N belong to a seed (default: what check reads: the session header's seedLength, "
                             "the sessions.json sidecar, a D08 session/end-seed)")
    parser.add_argument("--max-events", type=positive_int, default=MAX_EVENTS, metavar="N",
                        help=f"stop reading after N events, as check does: the replay is undecided, exit 4 (default {MAX_EVENTS})")
    parser.add_argument("--economics", action="store_true", help="add input/cache-hit tokens and the first differing block")
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral", help="provider cache model for --economics")
    parser.add_argument("--context-window", type=int, metavar="N",
                        help="html: draw the routed model's context window (tokens; the log does not record it, CMP-8)")
    parser.add_argument("--instruction-file", metavar="FILE",
                        help="compaction instruction text for summariser requests (an opaque, unlogged parameter)")


def _fail(message: str, code: int) -> int:
    print(f"sessionspec replay: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if args.context_window is not None and args.context_window <= 0:
        return _fail("--context-window must be a positive number of tokens", 2)
    if args.seed_length is not None and args.seed_length < 0:
        return _fail("--seed-length must be 0 or more", 2)
    instruction = DEFAULT_INSTRUCTION
    if args.instruction_file is not None:
        try:
            instruction = Path(args.instruction_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as problem:
            return _fail(f"--instruction-file {args.instruction_file}: cannot read: {getattr(problem, 'strerror', None) or problem}", 2)
    loaded = read_log(args.log, dialect=args.dialect, max_events=args.max_events)
    if isinstance(loaded, ReadFailure):
        return _fail(loaded.message, loaded.exit_code)
    if loaded.report.verdict is Verdict.INVALID and loaded.report.findings:
        print(f"sessionspec replay: note: check finds this log invalid ({loaded.report.findings[0].text(loaded.name)}); "
              "the requests below are rebuilt from the log as it is", file=sys.stderr)
    seed = args.seed_length if args.seed_length is not None else loaded.first_live_seq
    report = replay(loaded.events, dialect=loaded.dialect, first_live_seq=seed, instruction=instruction,
                    cache_model=PRESETS[args.cache_model] if args.economics else None, dialect_source=loaded.dialect_source.value)
    if isinstance(report, Rejected):
        line = loaded.line_of(report.seq)
        return _fail(f"{loaded.name}:{'?' if line is None else line}: {report}", 1)
    if args.request is not None:
        if not 1 <= args.request <= len(report.requests):
            return _fail(f"--request {args.request} out of range (the log has {len(report.requests)} request(s))", 2)
        report = replace(report, requests=(report.requests[args.request - 1],))
    match args.format:
        case "json":
            output = json.dumps(report_to_json(report), ensure_ascii=False, indent=1) + "\n"
        case "html":
            output = report_to_html(report, context_window=args.context_window)
        case _:
            output = report_to_text(report)
    return write_output(output, args.out, "sessionspec replay")
