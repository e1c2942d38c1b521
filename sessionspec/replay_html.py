"""``replay --format html``: one self-contained page (inline CSS, no script, no network).

Read top to bottom, with a bar of links that stays at the top of the window: the summary
(sessionspec/replay_summary.py: requests, input, cache reads and hit ratio, cost against the
no-cache and no-prefix baselines, and where check finds the log stops being valid), the token
chart of the session across the page's width with the page's one legend, the contents (every
request, by turn), the timeline in sentences (sessionspec/replay_timeline.py), then one section
per request.  Messages
are shown as a reader wants them (issue 30): text blocks as text, tool calls
and results on one line each, the JSON of a message, header or summariser
request only on demand (``<details>``).  A message is shown open where it is
new to the model, and the session prefix the first time it is sent; messages
shared with the previous request (the cacheable part) are collapsed under one
line, as is a prefix already sent.  No message block is taller than the
window: long text shows its start, the rest on demand, and a block scrolls
rather than grows past 80% of the viewport.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Final

from sessionspec.chart import COLOURS, Bar, bar_of, legend_html, svg_chart
from sessionspec.economics import PRESETS, CacheModel, request_costs, shape_of_request
from sessionspec.model.header import EpochHeader, header_to_json, prefix_messages
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, json_eq, thaw
from sessionspec.options import dialect_text
from sessionspec.replay import ReplayedRequest, ReplayReport, difference_text, replace_kind, request_of, short, stop_sentence
from sessionspec.replay_summary import overview_html, session_costs
from sessionspec.replay_timeline import timeline_html

PREVIEW_CHARS: Final = 600  # a longer text shows this much, the rest on demand
PREVIEW_LINES: Final = 12
INLINE_CHARS: Final = 160  # a tool call's arguments, a tool result, an unknown block: one line

_CSS: Final = f"""
body{{font:14px/1.45 system-ui,sans-serif;margin:0 2em 1em;color:#222;max-width:1200px}}
h1{{font-size:1.3em}} h2{{font-size:1.15em;margin-top:1.4em}} h3{{font-size:1em;margin:.2em 0 .4em}}
[id]{{scroll-margin-top:3em}}
.topnav{{position:sticky;top:0;z-index:10;background:#fff;border-bottom:1px solid #ccc;padding:6px 0;font-size:13px}}
.topnav a{{margin-right:1.2em;white-space:nowrap}} .topnav b{{margin-right:1.2em}}
.stats{{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:4px 24px;margin:.4em 0}}
.stat dt{{font-size:12px;color:#555}} .stat dd{{margin:0}}
.stop-banner{{background:#fde8e8;border-left:6px solid #c00;padding:6px 10px}}
.ev-stop{{background:#fde8e8;border-left:6px solid #c00;padding:4px 8px;margin:6px 0;font-weight:bold}}
svg.token-chart{{width:100%;height:auto;display:block}}
.toc-turn{{display:inline-block;margin:2px 2em 2px 0;font-size:13px;white-space:nowrap}} .toc-turn b{{margin-right:.4em}} .toc-turn a{{margin-right:.4em}}
.legend{{font-size:12px;margin:.3em 0 1em}} .legend .key{{padding:0 6px 0 4px;border-left:10px solid}}
.key-prefix{{border-color:{COLOURS["prefix"]}}} .key-cache-read{{border-color:{COLOURS["cache-read"]}}} .key-new{{border-color:{COLOURS["new"]}}}
.timeline{{border-left:3px solid #888;padding-left:1em;margin-bottom:1.5em;max-height:70vh;overflow:auto}}
.ev .seq{{color:#888;font-size:12px}} .ev details.json{{display:inline-block;margin-left:.6em}}
.ev{{margin:2px 0}} .ev-turn{{font-weight:bold;margin-top:.6em}} .ev-header{{color:#05c}} .ev-compaction{{color:#b50;font-weight:bold}}
.ev-prune{{color:#a0a;font-weight:bold}} .ev-request a{{color:#070}}
.request{{border:1px solid #aaa;border-radius:6px;padding:.4em 1em .6em;margin:1em 0}}
.request ul{{margin:.2em 0;padding-left:1.4em}} .hdr{{font-size:.9em;color:#444;margin:.2em 0}}
.msg{{margin:3px 0;padding:3px 8px;border-left:6px solid #ccc;max-height:80vh;overflow:auto}}
.group{{margin:3px 0}} .group>summary{{padding:3px 8px;border-left:6px solid #ccc;cursor:pointer;color:#333}}
.region-prefix{{border-left-color:{COLOURS["prefix"]};background:#fff6e0}} .region-shared{{border-left-color:{COLOURS["cache-read"]};background:#eef8ee}}
.region-new{{border-left-color:{COLOURS["new"]};background:#eef2ff}}
.group>summary.region-prefix{{background:#fff6e0;border-left-color:{COLOURS["prefix"]}}}
.group>summary.region-shared{{background:#eef8ee;border-left-color:{COLOURS["cache-read"]}}}
.role{{font-weight:bold;margin-right:.4em}} .block{{white-space:pre-wrap;word-break:break-word;margin:1px 0}}
.reasoning{{color:#666;font-style:italic}} .tool-call,.tool-result,.other{{font-family:ui-monospace,monospace;font-size:.9em}}
.tool-result.error{{color:#b00}} .json{{font-size:.85em;color:#555}} .json pre,.more pre{{white-space:pre-wrap;word-break:break-word;margin:.2em 0}}
.more>summary,.json>summary{{cursor:pointer;color:#555}}
"""


# --------------------------------------------------------------------------- content as text


def _text(value: str, cls: str = "text") -> str:
    """A text block as text: long text shows its start, the whole on demand."""
    lines = value.split("\n")
    if len(value) <= PREVIEW_CHARS and len(lines) <= PREVIEW_LINES:
        return f'<div class="block {cls}">{html.escape(value)}</div>'
    preview = "\n".join(lines[:PREVIEW_LINES])[:PREVIEW_CHARS]
    return (f'<div class="block {cls}">{html.escape(preview)}…</div>'
            f'<details class="more"><summary>all {len(value)} characters ({len(lines)} lines)</summary>'
            f'<div class="block {cls}">{html.escape(value)}</div></details>')


def _inline(value: Json | Absent, limit: int = INLINE_CHARS) -> str:
    """A value on one line: a string as itself, anything else as compact JSON, cut at ``limit``."""
    text = "(absent)" if value is ABSENT else value if isinstance(value, str) else js_stringify(value)
    text = " ".join(text.split())
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…")


def _result_text(content: Json | Absent) -> Json | Absent:
    """A tool result's content as one string when it is text blocks, else as it is."""
    if isinstance(content, tuple) and all(isinstance(b, JsonObject) and get(b, "type") == "text" for b in content):
        return " ".join(str(get(b, "text")) for b in content)
    return content


def block_html(block: Json) -> str:
    """One content block: text and reasoning as text, a tool call or result on one line."""
    kind = get(block, "type") if isinstance(block, JsonObject) else ABSENT
    if isinstance(block, JsonObject) and kind in ("text", "reasoning") and isinstance(get(block, "text"), str):
        text = get(block, "text")
        assert isinstance(text, str)
        return _text(text) if kind == "text" else _text(text, "reasoning")
    if isinstance(block, JsonObject) and kind == "tool-call":
        arguments = get(block, "arguments")
        return (f'<div class="block tool-call">→ {_inline(get(block, "name"), 60)}({_inline(arguments)})'
                f' <span class="hdr">{_inline(get(block, "id"), 60)}</span></div>{_rest(arguments)}')
    if isinstance(block, JsonObject) and kind == "tool-result":
        error = get(block, "isError") is True
        result = _result_text(get(block, "content"))
        return (f'<div class="block tool-result{" error" if error else ""}">← {_inline(get(block, "toolCallId"), 60)}'
                f'{" (error)" if error else ""}: {_inline(result)}</div>{_rest(result)}')
    return f'<div class="block other">{_inline(block)}</div>{_rest(block)}'


def _rest(value: Json | Absent) -> str:
    """All of a value cut on its one line, on demand."""
    text = "" if value is ABSENT else value if isinstance(value, str) else js_stringify(value)
    if len(" ".join(text.split())) <= INLINE_CHARS:
        return ""
    return (f'<details class="more"><summary>all {len(text)} characters</summary>'
            f'<div class="block other">{html.escape(text)}</div></details>')


def content_html(content: Json | Absent) -> str:
    """A message's content: a string is one text block; a list, its blocks."""
    if isinstance(content, str):
        return _text(content)
    if isinstance(content, tuple):
        return "".join(block_html(b) for b in content) or '<div class="block other">(no blocks)</div>'
    return f'<div class="block other">{_inline(content)}</div>'


def json_details(value: Json | Absent, label: str = "JSON") -> str:
    """The value as pretty JSON, shown on demand."""
    text = "(absent)" if value is ABSENT else json.dumps(thaw(value), ensure_ascii=False, indent=1)
    return f'<details class="json"><summary>{html.escape(label)}</summary><pre>{html.escape(text)}</pre></details>'


def header_summary(header: EpochHeader) -> str:
    """A header in one line (route, system size, tool names, prefix size), its JSON on demand."""
    config = header.config
    route = "/".join(str(v) for v in (get(config, "provider"), get(config, "model"), get(config, "reasoningEffort")) if isinstance(v, str))
    parts = [f"route {html.escape(route or '?')}"]
    if isinstance(header.system, str):
        parts.append(f"system {len(header.system)} chars")
    if isinstance(header.tools, tuple):
        names = [str(get(t, "name")) for t in header.tools if isinstance(get(t, "name"), str)]
        parts.append(f"tools {html.escape(', '.join(names)) or '(none)'}")
    prefix = len(prefix_messages(header))
    if prefix:
        parts.append(f"session prefix {prefix} message(s)")
    return "; ".join(parts) + json_details(header_to_json(header), "header JSON")


# --------------------------------------------------------------------------- the chart


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


def chart_of(report: ReplayReport, *, context_window: int | None = None, model: CacheModel | None = None) -> str:
    """The token chart of the session and the page's one legend, under ``model`` (default: the cache
    model of ``--economics``, else the neutral one)."""
    model = model or PRESETS[report.cache_model or "neutral"]
    shapes = [shape_of_request(request_of(r), r.prefix_length) for r in report.requests]
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
        legend_html(context_window, model.name, messages=True)


# --------------------------------------------------------------------------- the page


def message_html(index: int, message: Json, region: str) -> str:
    """One message: its role and index, its content as text, its JSON on demand."""
    return (f'<div class="msg region-{region}" data-region="{region}" data-index="{index}">'
            f'<span class="role">[{index}] {_inline(get(message, "role"), 20)}</span>'
            f'{content_html(get(message, "content"))}{json_details(message, "message JSON")}</div>')


def _group(messages: Sequence[Json], start: int, region: str, label: str, *, open_: bool) -> str:
    """Consecutive messages of one region under one line, open or collapsed."""
    if not messages:
        return ""
    last = start + len(messages) - 1
    span = f"message {start}" if last == start else f"messages {start}–{last}"
    body = "".join(message_html(start + k, m, region) for k, m in enumerate(messages))
    return (f'<details class="group" data-group="{region}"{" open" if open_ else ""}>'
            f'<summary class="region-{region}">{span}: {html.escape(label)}</summary>{body}</details>')


def request_html(r: ReplayedRequest, previous: ReplayedRequest | None) -> str:
    p = r.point
    reason = "?" if r.header_reason is ABSENT else short(r.header_reason, 40)
    messages = get(r.request, "messages")
    assert isinstance(messages, tuple)
    prefix_is_new = previous is None or not json_eq(prefix_messages(previous.header), prefix_messages(r.header))
    shared_end = max(r.shared_messages, r.prefix_length)
    parts = [f'<section class="request" id="request-{r.index + 1}" data-index="{r.index}" '
             f'data-prefix="{r.prefix_length}" data-shared="{r.shared_messages}">',
             f"<h3>request {r.index + 1}: turn {p.turn}, step {p.step}, step/start seq {p.step_start_seq}, "
             f"header seq {p.header_seq} ({html.escape(reason)})</h3>",
             "<ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in r.changes) + "</ul>"]
    if r.cost is not None:
        parts.append(f'<p class="hdr">tokens: input {r.cost.input_tokens}, cache hit {r.cost.cache_hit_tokens}, '
                     f"first differing block: {html.escape(difference_text(r))}</p>")
    parts.append(f'<div class="hdr">header: {header_summary(r.header)}</div>')
    parts.append(_group(messages[: r.prefix_length], 0, "prefix",
                        "session prefix" + ("" if prefix_is_new else ", as sent before"), open_=prefix_is_new))
    parts.append(_group(messages[r.prefix_length: shared_end], r.prefix_length, "shared",
                        f"shared with request {r.index} (cacheable)", open_=False))
    parts += [message_html(i, m, "new") for i, m in enumerate(messages) if i >= shared_end]
    if not messages:
        parts.append('<p class="hdr">no messages</p>')
    parts.append("</section>")
    return "".join(parts)


def summary_html(index: int, request: JsonObject) -> str:
    """A summariser request in one line (route, message count, its last message), its JSON on demand."""
    messages = get(request, "messages")
    count = len(messages) if isinstance(messages, tuple) else 0
    last = messages[-1] if isinstance(messages, tuple) and messages else ABSENT
    return (f'<section class="summary" data-index="{index}"><h3>summariser request {index + 1}: '
            f'{_inline(get(request, "provider"), 40)}/{_inline(get(request, "model"), 40)}, {count} message(s)</h3>'
            f'{message_html(count - 1, last, "new") if last is not ABSENT else ""}{json_details(request, "request JSON")}</section>')


def contents_html(report: ReplayReport) -> str:
    """Every request, by turn, as links: the way into a long log."""
    by_turn: dict[int | None, list[ReplayedRequest]] = {}
    for r in report.requests:
        by_turn.setdefault(r.point.turn, []).append(r)
    rows = [f'<div class="toc-turn"><b>turn {"?" if turn is None else turn}</b>' + "".join(f'<a href="#request-{r.index + 1}">{r.index + 1}</a>' for r in rs)
            + "</div>" for turn, rs in by_turn.items()]
    return '<section id="contents"><h2>Contents</h2>' + ("".join(rows) or "<p>no request</p>") + "</section>"


def nav_html(report: ReplayReport) -> str:
    """The bar of links that stays at the top of the window."""
    links = [("summary", "Summary"), ("chart", "Chart"), ("contents", "Contents"), ("timeline-heading", "Timeline"),
             ("requests", f"Requests ({len(report.requests)})")]
    if report.stop is not None:
        links.append(("stop", "Where the log stops"))
    if report.summaries:
        links.append(("summaries", f"Summariser requests ({len(report.summaries)})"))
    return '<nav class="topnav" id="nav"><b>sessionspec replay</b>' + "".join(f'<a href="#{a}">{t}</a>' for a, t in links) + "</nav>"


def report_to_html(report: ReplayReport, *, context_window: int | None = None, cache_model: CacheModel | None = None) -> str:
    """The page: the navigation bar, the summary, the chart and its legend, the contents, the timeline, the requests."""
    model = cache_model or PRESETS[report.cache_model or "neutral"]
    source = f" ({report.dialect_source})" if report.dialect_source else ""
    parts: list[str] = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>sessionspec replay</title>',
                        f"<style>{_CSS}</style></head><body>", nav_html(report),
                        f"<h1>sessionspec replay: {len(report.requests)} request(s), dialect {dialect_text(report.dialect)}{source}</h1>",
                        overview_html(report, session_costs(report, model)),
                        f'<section id="chart"><div class="chart">{chart_of(report, context_window=context_window, model=model)}</div></section>',
                        contents_html(report)]
    parts += timeline_html(report)
    parts.append('<h2 id="requests">Requests</h2>')
    previous: ReplayedRequest | None = None
    for r in report.requests:
        parts.append(request_html(r, previous))
        previous = r
    if report.stop is not None:
        parts.append(f'<p class="ev-stop" id="stop-after-requests">{html.escape(stop_sentence(report).capitalize())}: '
                     f'{html.escape(report.stop.text)}</p>')
    if report.summaries:
        parts.append('<h2 id="summaries">Summariser requests</h2>')
        parts += [summary_html(i, s) for i, s in enumerate(report.summaries)]
    if report.summaries_note:
        parts.append(f'<p class="hdr">note: {html.escape(report.summaries_note)}</p>')
    if report.skipped_without_header:
        parts.append(f'<p class="hdr">note: {report.skipped_without_header} step(s) without any request/header are not shown (INV-2)</p>')
    parts.append("</body></html>\n")
    return "".join(parts)
