"""The token chart of ``replay --format html`` and ``economics --format html``
(sessionspec/chart.py), checked structurally without a browser.

Expected values come from the rules and the raw log, not from the chart code:
the first request has an empty cache; under the neutral cache model a request
that append-extends the previous one (P-INV-4) reads all of it from cache; the
markers sit where the raw log has a ``change``/``resume`` header (HDR-7) or a
``compact/start`` (CMP-15) between two requests.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sessionspec.chart import Bar
from sessionspec.cli import main
from sessionspec.designs import Design, Workload, design_requests, generate_scenario
from sessionspec.economics import NEUTRAL
from sessionspec.economics_cmd import design_bars, economics_html, nearly_the_same
from sessionspec.replay import LoadedLog, ReplayReport, load_log_text, replay
from sessionspec.replay_html import report_to_html
from tests.support import GROUNDTRUTH

SVG = ""  # inline SVG in HTML needs no namespace attribute; the parser places it


def _report(scenario: str, economics: bool = True) -> tuple[ReplayReport, list[dict[str, object]]]:
    text = (GROUNDTRUTH / scenario / "session.jsonl").read_text(encoding="utf-8")
    loaded = load_log_text(text)
    assert isinstance(loaded, LoadedLog)
    report = replay(loaded.events, cache_model=NEUTRAL if economics else None)
    assert isinstance(report, ReplayReport)
    return report, [json.loads(line) for line in text.splitlines() if line.strip()]


def _svgs(page: str) -> list[ET.Element]:
    out: list[ET.Element] = []
    start = 0
    while (at := page.find("<svg", start)) >= 0:
        end = page.index("</svg>", at) + len("</svg>")
        out.append(ET.fromstring(page[at:end]))
        start = end
    return out


def _bars(svg: ET.Element) -> list[dict[str, str]]:
    return [dict(g.attrib) for g in svg.iter(f"{SVG}g") if g.get("class") == "bar"]


@pytest.mark.parametrize("scenario", ["b-prefix-idioms-tool-roundtrip", "g-header-change-system-and-tools",
                                      "h1-resume-no-drift", "j1-pressure-compaction"])
def test_one_bar_per_request_and_the_segments_add_up(scenario: str) -> None:
    report, _ = _report(scenario)
    page = report_to_html(report)
    assert page.index("<svg") < page.index('<section class="request"')  # the chart is at the top
    (svg,) = _svgs(page)
    bars = _bars(svg)
    assert len(bars) == len(report.requests) == int(svg.get("data-requests", "-1"))
    for bar, r in zip(bars, report.requests):
        assert r.cost is not None
        parts = int(bar["data-prefix"]) + int(bar["data-cache-read"]) + int(bar["data-new"])
        assert parts == int(bar["data-input"]) == r.cost.input_tokens
        assert int(bar["data-prefix-read"]) + int(bar["data-cache-read"]) == r.cost.cache_hit_tokens
    assert bars[0]["data-prefix-read"] == bars[0]["data-cache-read"] == "0"  # nothing is cached before the first request


def test_an_append_extension_reads_the_whole_previous_request_from_cache() -> None:
    report, _ = _report("j1-pressure-compaction")
    (svg,) = _svgs(report_to_html(report))
    bars = _bars(svg)
    extended = [i for i, r in enumerate(report.requests) if i > 0 and r.cost is not None and r.cost.previous_covered]
    assert extended
    for i in extended:
        read = int(bars[i]["data-prefix-read"]) + int(bars[i]["data-cache-read"])
        assert read >= int(bars[i - 1]["data-input"])


def _expected_markers(report: ReplayReport, rows: list[dict[str, object]]) -> list[set[str]]:
    """From the raw log: the header reason of each request's header snapshot when it is new, and
    any compact/start whose seq lies between the previous request's step/start and this one's."""
    reasons = {row["seq"]: row["data"]["reason"] for row in rows if row.get("type") == "request/header"}  # type: ignore[index]
    compactions = [row["seq"] for row in rows if row.get("type") == "compact/start"]
    out: list[set[str]] = []
    previous_start, previous_header = report.first_live_seq, None
    for r in report.requests:
        expected: set[str] = set()
        if r.point.header_seq != previous_header:
            expected |= {"change": {"header"}, "resume": {"resume"}}.get(str(reasons.get(r.point.header_seq)), set())
        if any(previous_start <= s < r.point.step_start_seq for s in compactions):  # type: ignore[operator]
            expected.add("compaction")
        out.append(expected)
        previous_start, previous_header = r.point.step_start_seq, r.point.header_seq
    return out


@pytest.mark.parametrize(("scenario", "marker"), [("g-header-change-system-and-tools", "header"),
                                                  ("h1-resume-no-drift", "resume"), ("j1-pressure-compaction", "compaction")])
def test_markers_for_header_changes_resumes_and_compactions(scenario: str, marker: str) -> None:
    report, rows = _report(scenario)
    (svg,) = _svgs(report_to_html(report))
    shown = [set(b["data-markers"].split()) for b in _bars(svg)]
    expected = _expected_markers(report, rows)
    assert shown == expected and any(marker in s for s in shown)
    letters = [t for t in svg.iter(f"{SVG}text") if (t.get("class") or "").startswith("marker ")]
    assert len(letters) == sum(len(s) for s in shown)


def test_context_window_line_only_when_given_and_above_smaller_bars() -> None:
    report, _ = _report("j1-pressure-compaction", economics=False)  # the chart works without --economics too
    (plain,) = _svgs(report_to_html(report))
    assert not [line for line in plain.iter(f"{SVG}line") if line.get("class") == "context-window"]
    (svg,) = _svgs(report_to_html(report, context_window=5000))
    (window,) = [line for line in svg.iter(f"{SVG}line") if line.get("class") == "context-window"]
    tops = [float(r.get("y", "0")) for r in svg.iter(f"{SVG}rect") if (r.get("class") or "").startswith("seg")]
    assert tops and float(window.get("y1", "0")) < min(tops)  # SVG y grows downwards: the line is above every bar


def test_the_page_loads_nothing() -> None:
    report, _ = _report("b-prefix-idioms-tool-roundtrip")
    page = report_to_html(report)
    assert "<script" not in page and "src=" not in page and "@import" not in page and "url(http" not in page
    assert "http://" not in page and "https://" not in page


def test_replay_cli_context_window_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl")
    with pytest.raises(SystemExit) as exited:
        main(["replay", log, "--format", "html", "--context-window", "0"])
    assert exited.value.code == 2 and "--context-window" in capsys.readouterr().err
    out = tmp_path / "page.html"
    assert main(["replay", log, "--format", "html", "--context-window", "9000", "--out", str(out)]) == 0
    assert 'class="context-window"' in out.read_text(encoding="utf-8")


def test_economics_html_has_a_chart_per_design_and_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    """Every design of every workload is drawn once; designs whose requests give the same bars, or bars within 1%
    of the tallest, share one chart (issue 46: near-identical charts merged), each chart's bars those of its first
    design's requests."""
    import re

    assert main(["economics", "--format", "html", "--seeds", "1"]) == 0
    page = capsys.readouterr().out
    found = re.findall(r'<div class="chart" data-designs="([A-Z_ ]+)" data-workload="([A-Z_]+)" data-exact="(true|false)"', page)
    charts = [(names, workload) for names, workload, _ in found]
    svgs = _svgs(page)
    assert len(svgs) == len(charts) < len(Design) * len(Workload)
    for workload in Workload:
        drawn = [d for names, w in charts if w == workload.name for d in names.split()]
        assert sorted(drawn) == sorted(d.name for d in Design)
    for (names, workload_name), svg in zip(charts, svgs):
        workload = Workload[workload_name]
        designs = [Design[n] for n in names.split()]
        drawn_bars = design_bars(workload, designs[0], NEUTRAL, None)
        exact = all(design_bars(workload, d, NEUTRAL, None) == drawn_bars for d in designs)
        assert all(nearly_the_same(design_bars(workload, d, NEUTRAL, None), drawn_bars) for d in designs)
        assert dict(((n, w), e == "true") for n, w, e in found)[(names, workload_name)] is exact
        requests = design_requests(generate_scenario(workload, 1), designs[0])
        bars = _bars(svg)
        assert len(bars) == len(requests)
        assert [("resume" in b["data-markers"]) for b in bars] == [r.first_of_instance and i > 0 for i, r in enumerate(requests)]
        assert [("header" in b["data-markers"]) for b in bars] == [r.header_changed for r in requests]
    # (a) and (e) send the same requests when the opener never changes (docs/economics.md, claim 6): one chart.
    assert ("FROZEN_PREFIX FROZEN_PREFIX_NOTICE PER_TURN", "NEVER", "true") in found
    # (c) and (d) then differ only by where the opener sits (history or system prompt): a few tokens of framing.
    assert ("DURABLE_OPENER SYSTEM_SECTION", "NEVER", "false") in found
    assert "(c), (d) (nearly the same: within 1%), opener never changes" in page
    # (b)'s tail slot (208 tokens a request, over 2% of the tallest bar) keeps its own chart.
    assert ("SLOTS", "NEVER", "true") in found
    assert "<script" not in page


def test_nearly_the_same_charts() -> None:
    """Within 1% of the tallest bar, segment by segment, with the same markers and as many bars; else apart."""
    def bar(new: int, read: int = 900, markers: tuple[str, ...] = ()) -> Bar:
        return Bar(label="r", link=None, input=new + read, prefix_read=0, prefix_full=0, cache_read=read, new=new, markers=markers)

    tall = [bar(100), bar(100, read=1900)]  # the tallest bar: 2000 tokens, so 1% is 20
    assert nearly_the_same(tall, [bar(120), bar(100, read=1900)]) and nearly_the_same(tall, tall)
    assert not nearly_the_same(tall, [bar(121), bar(100, read=1900)])
    assert not nearly_the_same(tall, [bar(100, markers=("resume",)), bar(100, read=1900)])
    assert not nearly_the_same(tall, tall[:1]) and nearly_the_same([], [])


def test_design_bars_count_only_prefix_blocks_as_prefix() -> None:
    """Design (a) carries the opener (8000 chars, over 2000 tokens) as the session
    prefix; design (d) moves it into the system prompt, so its bars have no prefix."""
    frozen = design_bars(Workload.NEVER, Design.FROZEN_PREFIX, NEUTRAL, None)
    assert all(b.prefix >= 8000 // 4 for b in frozen)
    assert all(b.prefix == 0 for b in design_bars(Workload.NEVER, Design.SYSTEM_SECTION, NEUTRAL, None))
    assert 0 < economics_html((), NEUTRAL, None).count("<svg") < len(Design) * len(Workload)


def test_prefix_segment_is_the_message_prefix() -> None:
    """Scenario a has no session prefix (its bars have none); b has one, and it is the
    messagePrefix's messages: no more than the request's prefix messages' tokens."""
    from sessionspec.economics import estimate_message
    from sessionspec.model.jsonval import get

    report, _ = _report("a-single-turn-no-prefix")
    assert all(b["data-prefix"] == "0" for b in _bars(_svgs(report_to_html(report))[0]))
    report, _ = _report("b-prefix-idioms-tool-roundtrip")
    for bar, r in zip(_bars(_svgs(report_to_html(report))[0]), report.requests):
        messages = get(r.request, "messages")
        assert isinstance(messages, tuple) and r.prefix_length > 0
        assert int(bar["data-prefix"]) == sum(estimate_message(m) for m in messages[: r.prefix_length])
