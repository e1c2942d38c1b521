"""``sessionspec economics``: the session-prefix design against its rejected
alternatives, over the same generated workloads (see docs/economics.md)."""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final

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
from sessionspec.economics_verdict import conclusions, design_sentence
from sessionspec.options import add_verbosity, describe, write_output

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


EXIT_CODES: Final = ((0, "the comparison is written"), (2, "a usage error (--seeds below 1, a negative --notice-chars), or FILE cannot be written"))
DOCS: Final = "docs/economics.md"
DOCS_FILE: Final = Path(__file__).resolve().parents[1] / DOCS  # present in a source checkout, not in a wheel


def docs_href(out: str | None, docs: Path = DOCS_FILE) -> str | None:
    """Where the page's link to docs/economics.md points: relative to the page written with ``--out`` (so it
    follows the checkout), the file itself for a page on standard output, or None where no docs are installed."""
    if not docs.is_file():
        return None
    if out is None:
        return docs.as_uri()
    return Path(os.path.relpath(docs, Path(out).resolve().parent)).as_posix()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see=DOCS)
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral",
                        help="the provider cache model that meters cache hits (docs/economics.md: minimum, granularity, what counts as a hit)")
    parser.add_argument("--seeds", type=int, default=3, metavar="N", help="generated scenarios per workload: seeds 1..N")
    parser.add_argument("--notice-chars", type=int, metavar="N",
                        help="size of design (a+)'s durable change notice (default: the opener's size, 8000)")
    parser.add_argument("--format", choices=("text", "markdown", "json", "html"), default="text",
                        help="text: a table per workload and what it concludes; markdown: the same as markdown tables; json: "
                             "the rows and conclusions (docs/schemas/economics.v1.schema.json); html: one page with the conclusions, "
                             "the designs, the tables and the token charts (seed 1's scenario; designs whose charts are the same bars, or within 1%%, share one)")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout (default: stdout; missing directories are created)")
    add_verbosity(parser, quiet="text and markdown: the tables alone, without the conclusions",
                  verbose="text and markdown: also one sentence per design saying what it does with the opener")


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
            output = economics_html(results, model, args.notice_chars, docs_href(args.out))
        case _:
            output = economics_text(results, model, markdown=args.format == "markdown", conclude=not args.quiet, designs=args.verbose)
    return write_output(output, args.out, "sessionspec economics")


def economics_json(results: tuple[DesignResult, ...], model: CacheModel) -> dict[str, object]:
    """``--format json`` (docs/schemas/economics.v1.schema.json)."""
    return {"cacheModel": model.name, "source": model.source, "rows": [
        {"workload": r.workload.value, "design": r.design.value, "requests": r.requests, "inputTokens": r.input_tokens,
         "fullPriceTokens": r.full_price_tokens, "cacheReadTokens": r.cache_read_tokens,
         "effectiveCost": round(effective_cost(r, model), 1), "resumeDriftTokens": r.resume_drift_tokens,
         "headerChanges": r.header_changes, "staleRequests": r.stale_requests, "afterSlotTokens": r.after_tokens}
        for r in results],
        "conclusions": [{"workload": w.value, "text": text} for w, text in conclusions(results, model)]}


def economics_text(results: tuple[DesignResult, ...], model: CacheModel, *, markdown: bool, conclude: bool = True,
                   designs: bool = False) -> str:
    """``--format text`` (aligned columns) or ``markdown`` (one table per workload), each table followed by what it
    concludes; ``designs``: first a sentence per design."""
    lines = [f"cache model: {model.name} ({model.source}); cost = full-price + {model.read_price} x cache-read"]
    if designs:
        lines += ["", *((f"- {design_sentence(d)}" if markdown else f"  {design_sentence(d)}") for d in Design)]
    said = dict(conclusions(results, model))
    for workload in Workload:
        rows = [r for r in results if r.workload is workload]
        lines.append("")
        if markdown:
            lines += [f"**opener {workload.value}**", "", "| design | " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
            lines += [f"| {DESIGN_TITLES[r.design]} | " + " | ".join(_row(r, effective_cost(r, model))) + " |" for r in rows]
        else:
            lines += [f"opener {workload.value}", f"  {'design':34}" + "".join(f"{c:>13}" for c in COLUMNS)]
            lines += [f"  {DESIGN_TITLES[r.design]:34}" + "".join(f"{v:>13}" for v in _row(r, effective_cost(r, model))) for r in rows]
        if conclude and workload in said:
            lines += ["", said[workload]] if markdown else [f"  {said[workload]}"]
    lines += ["", f"What the columns count and each design: {DOCS}"] if conclude else []
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
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left} th[title]{text-decoration:underline dotted;cursor:help}
.columns{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px;max-width:1100px}
.columns dt{font-weight:bold} .columns dd{margin:0}
.conclusions li,.designs li{margin:.3em 0;max-width:1100px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px 20px;margin:.5em 0 1.5em}
.chart{min-width:0} svg.token-chart{width:100%;height:auto}
"""


NEAR: Final = 0.01  # charts whose every segment is within this share of the tallest bar read the same: one is drawn


def nearly_the_same(a: Sequence[Bar], b: Sequence[Bar]) -> bool:
    """Would the two charts look the same: as many bars, the same markers, and every segment (prefix read and
    full price, cache read, new) of each bar within :data:`NEAR` of the tallest bar of either chart?"""
    if len(a) != len(b) or any(x.markers != y.markers for x, y in zip(a, b)):
        return False
    tallest = max((bar.input for bar in (*a, *b)), default=0)
    return all(abs(getattr(x, part) - getattr(y, part)) <= NEAR * tallest
               for x, y in zip(a, b) for part in ("prefix_read", "prefix_full", "cache_read", "new"))


@final
@dataclass(frozen=True, slots=True)
class ChartGroup:
    """Designs of a workload drawn as one chart: the first design's bars; ``exact`` when every design's bars are
    those, else each is :func:`nearly_the_same` as them."""

    designs: tuple[Design, ...]
    bars: tuple[Bar, ...]
    exact: bool

    def title(self, workload: Workload) -> str:
        names = [DESIGN_TITLES[d].split(" ", 1)[0] for d in self.designs]
        if len(names) == 1:
            return f"{DESIGN_TITLES[self.designs[0]]}, opener {workload.value}"
        how = "the same requests" if self.exact else f"nearly the same: within {NEAR:.0%}"
        return f"{', '.join(names)} ({how}), opener {workload.value}"


def chart_groups(workload: Workload, model: CacheModel, notice_chars: int | None) -> list[ChartGroup]:
    """The designs of a workload whose charts are the same bars, or nearly (seed 1's scenario), as one group each,
    in design order."""
    groups: list[ChartGroup] = []
    for design in Design:
        bars = tuple(design_bars(workload, design, model, notice_chars))
        index = next((i for i, g in enumerate(groups) if nearly_the_same(g.bars, bars)), None)
        if index is None:
            groups.append(ChartGroup(designs=(design,), bars=bars, exact=True))
        else:
            group = groups[index]
            groups[index] = ChartGroup(designs=(*group.designs, design), bars=group.bars, exact=group.exact and bars == group.bars)
    return groups


def economics_html(results: tuple[DesignResult, ...], model: CacheModel, notice_chars: int | None,
                   docs: str | None = None) -> str:
    """One self-contained page (no script, no network): what it concludes per workload, a sentence per design,
    what the columns mean and the page's one legend, then per workload the table of every design and the token
    charts for the scenario of seed 1 in a grid, designs whose charts are the same bars, or within 1% (:func:`nearly_the_same`), sharing one."""
    parts = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>sessionspec economics</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>sessionspec economics: the session-prefix design against its alternatives</h1>"
             f"<p>cache model {html.escape(model.name)} ({html.escape(model.source)}); cost = full-price + "
             f"{model.read_price} &times; cache-read. Tables sum the generated scenarios; charts show seed 1's scenario. "
             "How the designs and workloads are built, and what the seed note claims: "
             + (f'<a href="{html.escape(docs)}" id="docs-link">{DOCS}</a>.</p>' if docs else f"{DOCS} in the sessionspec source.</p>"),
             '<h2 id="conclusions">What the numbers say</h2><ul class="conclusions">'
             + "".join(f'<li data-workload="{w.name}">{html.escape(text)}</li>' for w, text in conclusions(results, model)) + "</ul>",
             '<h2 id="designs">The designs</h2><ul class="designs">'
             + "".join(f'<li data-design="{d.name}">{html.escape(design_sentence(d))}</li>' for d in Design) + "</ul>",
             "<h2>Columns</h2><dl class=\"columns\" id=\"columns\">"
             + "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(meaning)}</dd>" for name, meaning in COLUMN_MEANINGS)
             + "</dl>",
             legend_html(None, model.name, window_note=False)]
    said = dict(conclusions(results, model))
    for workload in Workload:
        parts.append(f"<h2 id=\"workload-{workload.name.lower()}\">opener {html.escape(workload.value)}</h2>"
                     f"<p class=\"conclusion\">{html.escape(said.get(workload, ''))}</p><table><tr><th>design</th>"
                     + "".join(f"<th title=\"{html.escape(meaning)}\">{html.escape(name)}</th>" for name, meaning in COLUMN_MEANINGS)
                     + "</tr>")
        for r in (r for r in results if r.workload is workload):
            parts.append(f"<tr><td>{html.escape(DESIGN_TITLES[r.design])}</td>"
                         + "".join(f"<td>{v}</td>" for v in _row(r, effective_cost(r, model))) + "</tr>")
        parts.append("</table><div class=\"charts\">")
        for group in chart_groups(workload, model, notice_chars):
            names = ", ".join(DESIGN_TITLES[d] for d in group.designs)
            chart_id = f"chart-{workload.name.lower()}-{group.designs[0].name.lower()}"
            parts.append(f"<div class=\"chart\" data-designs=\"{' '.join(d.name for d in group.designs)}\" data-workload=\"{workload.name}\" "
                         f"data-exact=\"{str(group.exact).lower()}\" title=\"{html.escape(names)}\">"
                         + svg_chart(list(group.bars), title=group.title(workload), chart_id=chart_id, width=640) + "</div>")
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "".join(parts)
