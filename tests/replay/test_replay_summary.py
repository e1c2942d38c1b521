"""The replay page's summary block and timeline sentences (issue 46, item 3), without a browser.

Expected numbers are reasoned from the rules on scenario b: three requests, each append-extending the one before
(P-INV-4), so under the neutral cache model request k+1 reads all of request k from the cache and request 1 reads
nothing; the session prefix (three messages) is the same in every request, so without it the requests still
append-extend one another.  Cost is full price + 0.1 x cache reads (docs/economics.md)."""

from __future__ import annotations

import re

from sessionspec.economics import NEUTRAL, BlockKind, shape_of_request
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import make_event
from sessionspec.replay import LoadedLog, ReplayReport, load_log_text, replay, request_of
from sessionspec.replay_html import report_to_html
from sessionspec.replay_summary import session_costs
from sessionspec.replay_timeline import header_sentence, turn_end_sentence, turn_start_sentence
from tests.support import GROUNDTRUTH


def _report(scenario: str) -> ReplayReport:
    loaded = load_log_text((GROUNDTRUTH / scenario / "session.jsonl").read_text(encoding="utf-8"))
    assert isinstance(loaded, LoadedLog)
    report = replay(loaded.events)
    assert isinstance(report, ReplayReport)
    return report


def test_the_summary_counts_reads_cost_and_both_baselines() -> None:
    report = _report("b-prefix-idioms-tool-roundtrip")
    shapes = [shape_of_request(request_of(r), r.prefix_length) for r in report.requests]
    sizes = [s.tokens for s in shapes]
    prefix = [sum(b.tokens for b in s.blocks if b.kind is BlockKind.PREFIX) for s in shapes]
    assert len(sizes) == 3 and prefix[0] == prefix[1] == prefix[2] > 0
    costs = session_costs(report, NEUTRAL)
    assert costs.input_tokens == sum(sizes)
    assert costs.cache_read_tokens == sizes[0] + sizes[1]  # each request reads all of the one before
    assert costs.cost == (sum(sizes) - sizes[0] - sizes[1]) + 0.1 * (sizes[0] + sizes[1])
    assert costs.no_cache_cost == sum(sizes)
    bare = [size - p for size, p in zip(sizes, prefix)]
    assert costs.no_prefix_cost == (sum(bare) - bare[0] - bare[1]) + 0.1 * (bare[0] + bare[1])
    page = report_to_html(report)
    assert page.index('id="summary"') < page.index("<svg") < page.index('id="contents"') < page.index('id="timeline"')
    stats = dict(re.findall(r'data-key="([a-z-]+)"><dt>[^<]*</dt><dd><b>([^<]*)</b>', page))
    assert stats == {"requests": "3", "input": f"{sum(sizes):,}", "cache-read": f"{sizes[0] + sizes[1]:,}", "cost": f"{costs.cost:,.0f}",
                     "no-cache": f"{sum(sizes):,}", "no-prefix": f"{costs.no_prefix_cost:,.0f}"}
    assert f"hit ratio {100 * (sizes[0] + sizes[1]) / sum(sizes):.1f}%" in page


def test_a_log_without_a_session_prefix_says_so_instead_of_a_zero_prefix_cost() -> None:
    """Scenario a sends no messagePrefix: the baseline without the prefix is the cost itself, and the summary says
    why rather than 'the prefix costs 0 (0.0% more ...)'; scenario b's prefix is priced."""
    report = _report("a-single-turn-no-prefix")
    costs = session_costs(report, NEUTRAL)
    assert costs.prefix_tokens == 0 and costs.no_prefix_cost == costs.cost
    page = report_to_html(report)
    assert "the same: no request carries a session prefix" in page and "the prefix costs" not in page
    priced = report_to_html(_report("b-prefix-idioms-tool-roundtrip"))
    assert "the prefix costs " in priced and "no request carries a session prefix" not in priced


def test_the_navigation_and_contents_reach_every_request() -> None:
    report = _report("g-header-change-system-and-tools")
    page = report_to_html(report)
    nav = re.search(r'<nav class="topnav" id="nav">(.*?)</nav>', page, re.S)
    assert nav and all(f'href="#{a}"' in nav.group(1) for a in ("summary", "chart", "contents", "timeline-heading", "requests"))
    contents = re.search(r'<section id="contents">(.*?)</section>', page, re.S)
    assert contents and re.findall(r'href="#request-(\d+)"', contents.group(1)) == [str(i + 1) for i in range(len(report.requests))]


def _event(kind: str, data: object) -> object:
    return make_event(kind, seq=7, time=0, data=freeze(data))


def test_turn_ends_read_as_sentences() -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"kind": "completed"}, "Turn 2 ends: completed."),
        ({"kind": "max-tokens"}, "Turn 2 ends: the model ran out of output tokens (max-tokens)."),
        ({"kind": "rejected", "reason": "policy"}, "Turn 2 ends: the prompt was blocked (rejected) (because: policy)."),
        ({"kind": "error", "step": 3, "message": "boom"}, "Turn 2 ends: an error (at step 3, “boom”)."),
        ({"kind": "aborted", "reason": {"kind": "user"}}, "Turn 2 ends: aborted (because: user)."),
    ]
    for reason, said in cases:
        event = _event("turn/end", {"turn": 2, "reason": reason})
        assert turn_end_sentence(event) == said  # type: ignore[arg-type]
    assert turn_start_sentence(_event("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})) == \
        "Turn 1 starts: a message from user."  # type: ignore[arg-type]
    header = _event("request/header", {"header": {"config": {"provider": "p", "model": "m"}, "tools": [{"name": "t"}],
                                                  "messagePrefix": [{"role": "user", "content": "x"}]}, "reason": "initial"})
    assert header_sentence(header) == "Header snapshot (initial): to p/m, 1 tool, a session prefix of 1 message."  # type: ignore[arg-type]


def test_the_timeline_shows_no_raw_json_but_keeps_it_on_demand() -> None:
    page = report_to_html(_report("b-prefix-idioms-tool-roundtrip"))
    timeline = re.search(r'<div class="timeline" id="timeline">(.*)', page, re.S)
    assert timeline
    lines = re.findall(r'<div class="ev [^"]*" data-seq="\d+">([^<]*)<', timeline.group(1))
    assert lines and all("{" not in line for line in lines)
    assert lines[0].startswith("Turn 1 starts") and any(line.startswith("Turn 2 ends: completed.") for line in lines)
    assert timeline.group(1).count("<summary>event JSON</summary>") == len(lines)
