"""Where a session's input tokens go, as an inline SVG bar chart (no script, no network).

One stacked bar per request, bottom to top in provider cache order:

- ``prefix``: the session prefix (the header's ``messagePrefix`` messages, PFX;
  for ``economics`` the design's prefix blocks).  Its part read from the cache is
  solid, its full-price part hatched (``seg-prefix-full``);
- ``cache-read``: the other tokens (tools, system, history) the cache model
  meters as read from cache;
- ``new``: the other tokens, at full price.

The three add up to the request's input tokens (sessionspec/economics.py estimates;
the cache model decides the hits).  Markers above a bar: ``H`` a ``change``
header took effect at this request, ``R`` a ``resume`` header (a resumed
instance), ``C`` a compaction happened since the previous request.  A dashed
line marks the context window when it is known (the routed model's capacity is
not in the log, CMP-8: ``replay --context-window N``).  A window more than
:data:`OFF_SCALE` times the tallest bar would squash the bars to nothing, so
the axis is broken instead (issue 30): the bars keep their own scale, and the
window's line is drawn above them, marked off scale, with the share of it the
tallest request fills.  Used by ``replay --format html`` and
``economics --format html``; :func:`legend_html` is the one legend of a page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.economics import BlockKind, RequestCost, RequestShape

LEADING: Final = frozenset({BlockKind.TOOLS, BlockKind.SYSTEM})  # before the prefix in cache order
MARKERS: Final = {"header": ("H", "header change", "#05c"), "resume": ("R", "resume", "#a0a"),
                  "compaction": ("C", "compaction", "#b50")}
COLOURS: Final = {"prefix": "#c80", "cache-read": "#5a5", "new": "#36c"}

OFF_SCALE: Final = 2.0  # a context window above this many times the tallest bar breaks the axis
WINDOW_BAND: Final = 18  # extra height above the plot for an off-scale window
PLOT_HEIGHT: Final = 200
LEFT: Final = 64
RIGHT: Final = 12
TOP: Final = 28
BOTTOM: Final = 40
CHART_WIDTH: Final = 1100  # drawn units: about the page's width, so text keeps its size (the svg scales to its box)
MAX_BAR: Final = 48  # a bar is never wider than this, however few the requests
LETTER_SLOT: Final = 10  # a slot narrower than this draws markers as ticks, not letters
LABEL_SIZE: Final = 10
DIGIT_WIDTH: Final = 6.5  # an axis digit's width at LABEL_SIZE, with room to spare
LABEL_GAP: Final = 6


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    """One request's tokens split as the chart draws them (they add up to ``input``)."""

    label: str  # shown under the bar and in its tooltip
    link: str | None  # fragment of the request's section on the page, if any
    input: int
    prefix_read: int
    prefix_full: int
    cache_read: int
    new: int
    markers: tuple[str, ...]  # keys of MARKERS

    @property
    def prefix(self) -> int:
        return self.prefix_read + self.prefix_full


def bar_of(shape: RequestShape, cost: RequestCost, *, label: str, link: str | None = None,
           markers: Sequence[str] = ()) -> Bar:
    """Split a request by its blocks and metered hit.  A hit covers leading
    tokens in cache order (tools, system, prefix, history), so the prefix is
    read after tools and system, and what is not read is full price."""
    assert cost.input_tokens == shape.tokens, "the cost belongs to this shape"
    leading = sum(b.tokens for b in shape.blocks if b.kind in LEADING)
    prefix = sum(b.tokens for b in shape.blocks if b.kind is BlockKind.PREFIX)
    hit = cost.cache_hit_tokens
    prefix_read = min(max(hit - leading, 0), prefix)
    cache_read = hit - prefix_read
    return Bar(label=label, link=link, input=shape.tokens, prefix_read=prefix_read, prefix_full=prefix - prefix_read,
               cache_read=cache_read, new=shape.tokens - prefix - cache_read, markers=tuple(markers))


def _ticks(top: int) -> list[int]:
    if top <= 0:
        return [0]
    step = 10 ** max(len(str(top)) - 1, 0)
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= 5:
            step *= factor
            break
    return list(range(0, top + 1, step))


def label_step(n: int, slot: float) -> int:
    """Every how many requests an axis number is written so that neighbours never touch: the smallest of
    1, 2, 5, 10, 20, 50, ... whose spacing holds the widest number (``n``'s digits) and a gap."""
    needed = len(str(max(n, 1))) * DIGIT_WIDTH + LABEL_GAP
    return _nice(math.ceil(needed / slot)) if slot > 0 else 1


def _nice(step: int) -> int:
    """``step`` rounded up to 1, 2 or 5 times a power of ten."""
    power = 1
    while True:
        for factor in (1, 2, 5):
            if factor * power >= step:
                return factor * power
        power *= 10


def svg_chart(bars: Sequence[Bar], *, title: str, context_window: int | None = None, chart_id: str = "chart",
              width: int = CHART_WIDTH) -> str:
    """The chart as an ``<svg>`` element (inline in an HTML page), drawn ``width`` units wide and scaled to
    the width of its container: the bars share the plot's width (each in a slot, at most :data:`MAX_BAR` wide,
    centred), the axis numbers are thinned so that none touch (:func:`label_step`), and where a slot is too
    narrow for a marker's letter the marker is a coloured tick (its letter in its tooltip)."""
    n = len(bars)
    plot = width - LEFT - RIGHT
    slot = plot / max(n, 1)
    bar_width = max(1.0, min(MAX_BAR, slot * 0.75 if slot >= 4 else slot - 0.5))
    letters = slot >= LETTER_SLOT
    tallest = max([b.input for b in bars] + [1])
    off_scale = context_window is not None and context_window > OFF_SCALE * tallest
    top_value = tallest if off_scale or context_window is None else max(tallest, context_window)
    scale = PLOT_HEIGHT / (top_value * 1.08)
    top = TOP + (WINDOW_BAND if off_scale else 0)  # an off-scale window's line and label sit above the plot
    height = top + PLOT_HEIGHT + BOTTOM
    base = top + PLOT_HEIGHT

    def y(v: float) -> float:
        return round(base - v * scale, 1)

    out: list[str] = [
        f'<svg class="token-chart" id="{html.escape(chart_id)}" role="img" '
        f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet" data-requests="{n}" data-letters="{str(letters).lower()}">',
        f"<title>{html.escape(title)}</title>",
        '<defs><pattern id="' + html.escape(chart_id) + '-hatch" width="4" height="4" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="4" height="4" fill="#fff"/>'
        '<line x1="0" y1="0" x2="0" y2="4" stroke="#c80" stroke-width="2"/></pattern></defs>',
        f'<text class="chart-title" x="{LEFT}" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{base}" x2="{width - RIGHT}" y2="{base}" stroke="#444"/>',
        f'<line x1="{LEFT}" y1="{top}" x2="{LEFT}" y2="{base}" stroke="#444"/>',
    ]
    for tick in _ticks(int(top_value * 1.08)):
        out.append(f'<text class="tick" x="{LEFT - 4}" y="{y(tick) + 4}" font-size="10" text-anchor="end">{tick}</text>'
                   f'<line x1="{LEFT - 2}" y1="{y(tick)}" x2="{LEFT}" y2="{y(tick)}" stroke="#444"/>')
    out.append(f'<text class="axis-title" x="12" y="{top + PLOT_HEIGHT // 2}" font-size="10" '
               f'transform="rotate(-90 12 {top + PLOT_HEIGHT // 2})" text-anchor="middle">input tokens</text>')
    every = label_step(n, slot)
    for i, b in enumerate(bars):
        x = round(LEFT + i * slot + (slot - bar_width) / 2, 2)
        out.append(_bar_svg(b, i, x=x, bar_width=round(bar_width, 2), y=y, scale=scale, base=base, chart_id=chart_id,
                            label=(i + 1) % every == 0 or every == 1, letters=letters))
    if context_window is not None:
        out.append(_window_svg(context_window, tallest, off_scale, y, width, top))
    out.append(f'<text class="axis-title" x="{LEFT}" y="{height - 6}" font-size="10">request (dispatch order'
               f'{"" if every == 1 else f"; every {every}th numbered"})</text>')
    out.append("</svg>")
    return "".join(out)


def _bar_svg(b: Bar, i: int, *, x: float, bar_width: float, y: Callable[[float], float], scale: float, base: int,
             chart_id: str, label: bool, letters: bool) -> str:
    """One request's stacked bar, its markers (letters, or ticks where the slot is narrow), tooltip and link."""
    tip = (f"{b.label}: {b.input} input tokens; prefix {b.prefix} ({b.prefix_read} read from cache), "
           f"cache-read {b.cache_read}, new {b.new}" + "".join(f"; {MARKERS[m][1]}" for m in b.markers))
    group = [f'<g class="bar" data-request="{i + 1}" data-input="{b.input}" data-prefix="{b.prefix}" '
             f'data-prefix-read="{b.prefix_read}" data-cache-read="{b.cache_read}" data-new="{b.new}" '
             f'data-markers="{" ".join(b.markers)}"><title>{html.escape(tip)}</title>']
    level = 0
    for cls, value, fill in (("seg seg-prefix", b.prefix_read, COLOURS["prefix"]),
                             ("seg seg-prefix seg-prefix-full", b.prefix_full, f"url(#{html.escape(chart_id)}-hatch)"),
                             ("seg seg-cache-read", b.cache_read, COLOURS["cache-read"]),
                             ("seg seg-new", b.new, COLOURS["new"])):
        if value > 0:
            group.append(f'<rect class="{cls}" x="{x}" y="{y(level + value)}" width="{bar_width}" '
                         f'height="{round(value * scale, 1)}" fill="{fill}"/>')
        level += value
    centre = round(x + bar_width / 2, 2)
    for k, marker in enumerate(b.markers):
        letter, name, colour = MARKERS[marker]
        if letters:
            group.append(f'<text class="marker marker-{marker}" x="{centre}" y="{y(b.input) - 4 - 11 * k}" font-size="10" '
                         f'font-weight="bold" text-anchor="middle" fill="{colour}">{letter}<title>{name}</title></text>')
        else:
            group.append(f'<rect class="marker marker-{marker}" x="{x}" y="{y(b.input) - 5 - 5 * k}" width="{max(bar_width, 1.5)}" '
                         f'height="3" fill="{colour}"><title>{letter}: {name}</title></rect>')
    if label:
        group.append(f'<text class="label" x="{centre}" y="{base + 12}" font-size="{LABEL_SIZE}" text-anchor="middle">{i + 1}</text>')
    group.append("</g>")
    body = "".join(group)
    return f'<a href="#{html.escape(b.link)}">{body}</a>' if b.link else body


def _window_svg(window: int, tallest: int, off_scale: bool, y: Callable[[float], float], width: int, top: int) -> str:
    """The context window's dashed line: at its height, or, off scale, above the
    bars with a break mark on the axis and the share of it the tallest request fills."""
    if not off_scale:
        return (f'<line class="context-window" data-off-scale="false" x1="{LEFT}" y1="{y(window)}" x2="{width - 10}" '
                f'y2="{y(window)}" stroke="#d00" stroke-dasharray="6 3"/>'
                f'<text x="{width - 12}" y="{y(window) - 3}" font-size="10" text-anchor="end" fill="#d00">'
                f'context window {window}</text>')
    at = top - 8  # above the plot, whose axis ends near the tallest bar
    share = 100 * tallest / window
    gap = top - 2  # the axis break: two slanted strokes across the y axis between the line and the plot
    return (f'<line class="context-window" data-off-scale="true" x1="{LEFT}" y1="{at}" x2="{width - 10}" y2="{at}" '
            f'stroke="#d00" stroke-dasharray="6 3"/>'
            f'<path class="axis-break" d="M{LEFT - 5},{gap + 3} l10,-4 M{LEFT - 5},{gap + 7} l10,-4" stroke="#444" fill="none"/>'
            f'<text class="context-window-label" x="{width - 12}" y="{at - 3}" font-size="10" text-anchor="end" fill="#d00">'
            f'context window {window} (off scale: the tallest request is {share:.1f}% of it)</text>')


def legend_html(context_window: int | None, cache_model: str, *, messages: bool = False, window_note: bool = True) -> str:
    """The one legend of a page (HTML, so it wraps between items, never inside one: each item is one
    ``nowrap`` span): the colours of the chart's segments and, with ``messages``, of the request sections'
    messages (the same colour means the same thing in both), the markers, and how the numbers were made."""
    prefix = "session prefix (messagePrefix; in a bar, hatched where full price)"
    read = ("read from cache (a bar's cache-read tokens; a message shared with the previous request)" if messages
            else "read from cache (cache-read tokens)")
    item = 'class="legend-item" style="white-space:nowrap;display:inline-block;margin-right:14px"'
    keys = [f'<span {item}><span class="key key-{key}" style="border-left:10px solid {COLOURS[key]};padding-left:4px">{text}</span></span>'
            for key, text in (("prefix", prefix), ("cache-read", read), ("new", "new, full price"))]
    keys += [f'<span {item}><span style="color:{colour};font-weight:bold">{letter}</span> {name}</span>'
             for letter, name, colour in MARKERS.values()]
    if context_window is not None:
        window = f"dashed line: the context window, {context_window} tokens (given with --context-window)"
    elif window_note:
        window = "no context window line: the log does not record it (pass --context-window N)"
    else:
        window = ""
    notes = [f"tokens estimated (sessionspec/economics.py), cache hits by the {html.escape(cache_model)} cache model",
             "on a dense chart a marker is a coloured tick above its bar", *([html.escape(window)] if window else [])]
    return (f'<p class="legend" id="legend" style="font-size:12px;line-height:1.7">{"".join(keys)}<br>'
            f'{"; ".join(notes)}</p>')
