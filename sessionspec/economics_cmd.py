"""``sessionspec economics``: the session-prefix design against its rejected
alternatives, over the same generated workloads (see docs/economics.md)."""

from __future__ import annotations

import argparse
import html
import json
import sys
from typing import Final

from sessionspec.chart import Bar, bar_of, legend_html, svg_chart
from sessionspec.designs import (
    DESIGN_TITLES,
    Design,
    DesignResult,
    Workload,
    compare_designs,
    design_requests,
    effective_cost,
    generate_scenario,
)
from sessionspec.economics import PRESETS, CacheModel, request_costs
from sessionspec.options import write_output

HELP = "compare the session-prefix design with its alternatives (full-price vs cache-read tokens, resume drift)"

# Every column with what it counts (docs/economics.md says the same; the HTML page shows it).
COLUMN_MEANINGS: Final = (
    ("requests", "requests the design sends, summed over the generated scenarios"),
    ("input", "input tokens of those requests (the meter's estimate, MTR-2..4)"),
    ("full-price", "input tokens not read from the provider's cache"),
    ("cache-read", "input tokens read from the cache, under the cache model"),
    ("cost", "full-price + the cache model's read price x cache-read, in full-price tokens"),
    ("resume-drift", "tokens of the previous request that the first request of a resumed instance does not reuse"),
    ("changes", "\"change\" headers: the request-only envelope changed inside a loop instance (LOOP-9)"),
    ("stale", "requests that carry an older opener than the current one"),
    ("after-slot", "tokens in request-tail slots, behind the history (design (b)'s after slot)"),
)
COLUMNS: Final = tuple(name for name, _ in COLUMN_MEANINGS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral", help="provider cache model")
    parser.add_argument("--seeds", type=int, default=3, metavar="N", help="generated scenarios per workload (seeds 1..N)")
    parser.add_argument("--notice-chars", type=int, metavar="N",
                        help="size of design (a+)'s durable change notice (default: the opener's size, 8000)")
    parser.add_argument("--format", choices=("text", "markdown", "json", "html"), default="text",
                        help="html: one page with the token chart of every design and workload (seed 1's scenario)")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout (missing directories are created)")


def _row(r: DesignResult, cost: float) -> tuple[str, ...]:
    return (str(r.requests), str(r.input_tokens), str(r.full_price_tokens), str(r.cache_read_tokens), f"{cost:.0f}",
            str(r.resume_drift_tokens), str(r.header_changes), str(r.stale_requests), str(r.after_tokens))


def run(args: argparse.Namespace) -> int:
    if args.seeds < 1 or (args.notice_chars is not None and args.notice_chars < 0):
        print("sessionspec economics: --seeds must be at least 1 and --notice-chars non-negative", file=sys.stderr)
        return 2
    model = PRESETS[args.cache_model]
    results = compare_designs(tuple(range(1, args.seeds + 1)), model, args.notice_chars)
    match args.format:
        case "json":
            output = json.dumps(economics_json(results, model), indent=1) + "\n"
        case "html":
            output = economics_html(results, model, args.notice_chars)
        case _:
            output = economics_text(results, model, markdown=args.format == "markdown")
    return write_output(output, args.out, "sessionspec economics")


def economics_json(results: tuple[DesignResult, ...], model: CacheModel) -> dict[str, object]:
    """``--format json`` (docs/schemas/economics.v1.schema.json)."""
    return {"cacheModel": model.name, "source": model.source, "rows": [
        {"workload": r.workload.value, "design": r.design.value, "requests": r.requests, "inputTokens": r.input_tokens,
         "fullPriceTokens": r.full_price_tokens, "cacheReadTokens": r.cache_read_tokens,
         "effectiveCost": round(effective_cost(r, model), 1), "resumeDriftTokens": r.resume_drift_tokens,
         "headerChanges": r.header_changes, "staleRequests": r.stale_requests, "afterSlotTokens": r.after_tokens}
        for r in results]}


def economics_text(results: tuple[DesignResult, ...], model: CacheModel, *, markdown: bool) -> str:
    """``--format text`` (aligned columns) or ``markdown`` (one table per workload)."""
    lines = [f"cache model: {model.name} ({model.source}); cost = full-price + {model.read_price} x cache-read"]
    for workload in Workload:
        rows = [r for r in results if r.workload is workload]
        lines.append("")
        if markdown:
            lines += [f"**opener {workload.value}**", "", "| design | " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
            lines += [f"| {DESIGN_TITLES[r.design]} | " + " | ".join(_row(r, effective_cost(r, model))) + " |" for r in rows]
        else:
            lines += [f"opener {workload.value}", f"  {'design':34}" + "".join(f"{c:>13}" for c in COLUMNS)]
            lines += [f"  {DESIGN_TITLES[r.design]:34}" + "".join(f"{v:>13}" for v in _row(r, effective_cost(r, model))) for r in rows]
    return "\n".join(lines) + "\n"


def design_bars(workload: Workload, design: Design, model: CacheModel, notice_chars: int | None, seed: int = 1) -> list[Bar]:
    """One bar per request the design sends in the scenario of ``seed``: markers
    for a ``change`` header (the envelope changed inside an instance) and for
    each resumed instance's first request."""
    requests = design_requests(generate_scenario(workload, seed, notice_chars=notice_chars), design)
    costs = request_costs([r.shape for r in requests], model)
    return [bar_of(r.shape, c, label=f"request {i + 1} (instance {r.instance})",
                   markers=(("header",) if r.header_changed else ()) + (("resume",) if r.first_of_instance and i > 0 else ()))
            for i, (r, c) in enumerate(zip(requests, costs))]


_CSS: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left} th[title]{text-decoration:underline dotted;cursor:help}
.columns{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px;max-width:1100px}
.columns dt{font-weight:bold} .columns dd{margin:0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px 20px;margin:.5em 0 1.5em}
.chart{min-width:0} svg.token-chart{width:100%;height:auto}
"""


def economics_html(results: tuple[DesignResult, ...], model: CacheModel, notice_chars: int | None) -> str:
    """One self-contained page (no script, no network): what the columns mean
    and the page's one legend, then per workload the table of every design and
    each design's token chart for the scenario of seed 1, in a grid."""
    parts = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>sessionspec economics</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>sessionspec economics: the session-prefix design against its alternatives</h1>"
             f"<p>cache model {html.escape(model.name)} ({html.escape(model.source)}); cost = full-price + "
             f"{model.read_price} &times; cache-read. Tables sum the generated scenarios; charts show seed 1's scenario.</p>",
             "<h2>Columns</h2><dl class=\"columns\" id=\"columns\">"
             + "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(meaning)}</dd>" for name, meaning in COLUMN_MEANINGS)
             + "</dl>",
             legend_html(None, model.name, window_note=False)]
    for workload in Workload:
        parts.append(f"<h2 id=\"workload-{workload.name.lower()}\">opener {html.escape(workload.value)}</h2><table><tr><th>design</th>"
                     + "".join(f"<th title=\"{html.escape(meaning)}\">{html.escape(name)}</th>" for name, meaning in COLUMN_MEANINGS)
                     + "</tr>")
        for r in (r for r in results if r.workload is workload):
            parts.append(f"<tr><td>{html.escape(DESIGN_TITLES[r.design])}</td>"
                         + "".join(f"<td>{v}</td>" for v in _row(r, effective_cost(r, model))) + "</tr>")
        parts.append("</table><div class=\"charts\">")
        for design in Design:
            chart_id = f"chart-{workload.name.lower()}-{design.name.lower()}"
            title = f"{DESIGN_TITLES[design]}, opener {workload.value}"
            parts.append(f"<div class=\"chart\" data-design=\"{design.name}\" data-workload=\"{workload.name}\">"
                         + svg_chart(design_bars(workload, design, model, notice_chars), title=title, chart_id=chart_id)
                         + "</div>")
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "".join(parts)
