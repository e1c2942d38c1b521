"""The summary block at the top of the replay page: what the session's requests cost, against two baselines.

The numbers a reader looks for first (issue 46): how many requests, their input tokens, how many of those the
cache model meters as read from the cache (the hit ratio), and the cost in full-price tokens (full price +
the model's read price x cache reads, as ``sessionspec economics`` counts it, docs/economics.md) against

- **no cache**: every input token at full price (what the requests cost where nothing is cached);
- **no session prefix**: the same requests without their session-prefix messages (PFX), under the same cache
  model: what the session would cost if it had no prefix, so the difference is what the prefix costs.

Tokens are the meter's estimate (MTR-1..4, sessionspec/economics.py), hits the cache model's.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import final

from sessionspec.economics import BlockKind, CacheModel, RequestShape, request_costs, shape_of_request
from sessionspec.replay import ReplayReport, request_of, stop_sentence


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionCosts:
    requests: int
    input_tokens: int
    cache_read_tokens: int
    prefix_tokens: int
    cost: float
    no_cache_cost: float
    no_prefix_cost: float
    model: CacheModel

    @property
    def hit_ratio(self) -> float:
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0


def _cost(shapes: list[RequestShape], model: CacheModel) -> tuple[int, int, float]:
    """Input tokens, cache reads and cost (full price + read price x reads) of a request sequence."""
    costs = request_costs(shapes, model)
    total = sum(c.input_tokens for c in costs)
    read = sum(c.cache_hit_tokens for c in costs)
    return total, read, (total - read) + model.read_price * read


def without_prefix(shape: RequestShape) -> RequestShape:
    """The request as it would be sent with no session prefix."""
    return RequestShape(route=shape.route, blocks=tuple(b for b in shape.blocks if b.kind is not BlockKind.PREFIX))


def session_costs(report: ReplayReport, model: CacheModel) -> SessionCosts:
    shapes = [shape_of_request(request_of(r), r.prefix_length) for r in report.requests]
    total, read, cost = _cost(shapes, model)
    _, _, bare = _cost([without_prefix(s) for s in shapes], model)
    prefix = sum(b.tokens for s in shapes for b in s.blocks if b.kind is BlockKind.PREFIX)
    return SessionCosts(requests=len(shapes), input_tokens=total, cache_read_tokens=read, prefix_tokens=prefix, cost=cost,
                        no_cache_cost=float(total), no_prefix_cost=bare, model=model)


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _row(key: str, name: str, value: str, note: str) -> str:
    return (f'<div class="stat" data-key="{key}"><dt>{html.escape(name)}</dt><dd><b>{html.escape(value)}</b> '
            f'<span class="hdr">{html.escape(note)}</span></dd></div>')


def overview_html(report: ReplayReport, costs: SessionCosts) -> str:
    """The summary block: the log's verdict (and where it stops being valid), then the numbers."""
    parts = ['<section id="summary" class="overview"><h2>Summary</h2>']
    if report.stop is not None:
        parts.append(f'<p class="stop-banner" data-verdict="{html.escape(report.verdict)}">check finds this log '
                     f'<b>{html.escape(report.verdict)}</b>: {html.escape(stop_sentence(report))} '
                     f'(<a href="#stop">where it stops</a>).</p>')
    elif report.verdict != "valid":
        parts.append(f'<p class="stop-banner" data-verdict="{html.escape(report.verdict)}">check finds this log '
                     f"<b>{html.escape(report.verdict)}</b>: the model does not decide it; the requests are rebuilt as the log stands.</p>")
    m = costs.model
    saved_by_cache = costs.no_cache_cost - costs.cost
    prefix_extra = costs.cost - costs.no_prefix_cost
    parts.append('<dl class="stats">')
    parts.append(_row("requests", "requests", f"{costs.requests:,}",
                      f"loop requests rebuilt; {len(report.summaries)} summariser request(s) besides"))
    parts.append(_row("input", "input tokens", f"{costs.input_tokens:,}",
                      f"estimated (MTR-1..4); {costs.prefix_tokens:,} of them session prefix"))
    parts.append(_row("cache-read", "cache reads", f"{costs.cache_read_tokens:,}",
                      f"hit ratio {_percent(costs.cache_read_tokens, costs.input_tokens)} under the {m.name} cache model"))
    parts.append(_row("cost", "cost", f"{costs.cost:,.0f}", f"full-price tokens: full price + {m.read_price} x cache reads"))
    parts.append(_row("no-cache", "without a cache", f"{costs.no_cache_cost:,.0f}",
                      f"every token at full price: the cache saves {saved_by_cache:,.0f} ({_percent(saved_by_cache, costs.no_cache_cost)})"))
    without = (f"the same requests without their prefix messages: the prefix costs {prefix_extra:,.0f} "
               f"({_percent(prefix_extra, costs.no_prefix_cost)} more: its own tokens, and the cache reads lost where it changes)"
               if costs.prefix_tokens else
               "the same: no request carries a session prefix (D08 has none, DIA-8; or the messagePrefix is empty)")
    parts.append(_row("no-prefix", "without the session prefix", f"{costs.no_prefix_cost:,.0f}", without))
    parts.append("</dl></section>")
    return "".join(parts)
