"""The replay page's structure without a browser (issue 30): text blocks as
text, tool calls and results on one line, JSON only on demand, one legend,
messages already shown collapsed, and the context window off scale when it
would squash the bars.  Expected values come from the ground-truth log
(scenario b: a three-message session prefix, the echo tool called with
``{"text":"ping"}`` answered ``echo:ping``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from sessionspec.chart import OFF_SCALE
from sessionspec.economics import NEUTRAL
from sessionspec.replay import LoadedLog, ReplayReport, load_log_text, replay
from sessionspec.replay_html import block_html, report_to_html
from tests.support import GROUNDTRUTH


def _page(scenario: str, **kw: object) -> tuple[ReplayReport, str]:
    loaded = load_log_text((GROUNDTRUTH / scenario / "session.jsonl").read_text(encoding="utf-8"))
    assert isinstance(loaded, LoadedLog)
    report = replay(loaded.events, cache_model=NEUTRAL)
    assert isinstance(report, ReplayReport)
    return report, report_to_html(report, **kw)  # type: ignore[arg-type]


def _sections(page: str) -> list[str]:
    return re.findall(r'<section class="request".*?</section>', page, re.S)


class _Visible(HTMLParser):
    """The text a reader sees without opening anything: a closed <details>
    shows its <summary> only; an open one (``open``) shows everything."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []  # (tag, hidden)
        self.out: list[str] = []

    def _hidden(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent, parent_hidden = self.stack[-1] if self.stack else ("", False)
        # inside a closed <details> only its <summary> shows
        hidden = parent_hidden or (parent == "details" and tag != "summary" and self._closed[-1])
        if tag == "details":
            self._closed.append(not any(name == "open" for name, _ in attrs))
        self.stack.append((tag, hidden))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            popped, _ = self.stack.pop()
            if popped == "details":
                self._closed.pop()
            if popped == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._hidden():
            self.out.append(data)

    _closed: list[bool]

    def reset(self) -> None:
        super().reset()
        self._closed = []


def _outside_details(fragment: str) -> str:
    """What shows without opening anything (see _Visible)."""
    parser = _Visible()
    parser.feed(fragment)
    return "".join(parser.out)


def test_text_is_text_and_tool_calls_are_one_line() -> None:
    _, page = _page("b-prefix-idioms-tool-roundtrip")
    last = _sections(page)[-1]
    assert '<div class="block text">let me echo</div>' in last
    assert '→ echo({&quot;text&quot;:&quot;ping&quot;}) <span class="hdr">call-1</span>' in last
    assert "← call-1: echo:ping" in last
    shown = _outside_details(last)
    assert "let me echo" in shown and 'echo({"text":"ping"})' in shown and "← call-1: echo:ping" in shown
    assert '"type"' not in shown and '"role"' not in shown  # no JSON unless asked for ...
    assert last.count("message JSON") == last.count('class="msg ') == 8  # ... and every message offers it
    assert shown.count("message JSON") == 2  # the two new messages; the six sent before are collapsed


def test_a_prefix_already_sent_and_shared_messages_are_collapsed() -> None:
    report, page = _page("b-prefix-idioms-tool-roundtrip")
    first, second, _ = _sections(page)
    assert '<details class="group" data-group="prefix" open>' in first and "messages 0–2: session prefix<" in first
    assert '<details class="group" data-group="prefix">' in second and "session prefix, as sent before" in second
    assert '<details class="group" data-group="shared">' in second and "message 3: shared with request 1 (cacheable)" in second
    # every message is still on the page, in its region, for a reader who opens the groups
    for section, r in zip(_sections(page), report.requests):
        assert section.count('data-region="prefix"') == r.prefix_length == 3
        assert section.count('data-region="shared"') == max(r.shared_messages - r.prefix_length, 0)


def test_one_legend_names_both_the_bars_and_the_messages() -> None:
    _, page = _page("g-header-change-system-and-tools")
    assert page.count('class="legend"') == 1 and 'class="chart-legend"' not in page
    legend = re.search(r'<p class="legend".*?</p>', page, re.S)
    assert legend is not None
    assert "a message shared with the previous request" in legend.group(0) and "cache-read" in legend.group(0)


def test_long_text_shows_its_start_and_the_rest_on_demand() -> None:
    from sessionspec.model.jsonval import JsonObject

    text = "\n".join(f"line {i}" for i in range(50))
    shown = block_html(JsonObject((("type", "text"), ("text", text))))
    visible = _outside_details(shown)
    assert "line 11" in visible and "line 12" not in visible  # 12 lines, then the rest on demand
    assert "line 49" not in visible
    assert f"all {len(text)} characters (50 lines)" in shown and "line 49" in shown


def _window(svg_page: str) -> ET.Element:
    at = svg_page.index("<svg")
    svg = ET.fromstring(svg_page[at: svg_page.index("</svg>", at) + 6])
    (line,) = [e for e in svg.iter("line") if e.get("class") == "context-window"]
    return line


def test_a_window_far_above_the_bars_is_drawn_off_scale_with_a_broken_axis() -> None:
    report, page = _page("j1-pressure-compaction", context_window=200_000)
    tallest = max(r.cost.input_tokens for r in report.requests if r.cost is not None)
    assert OFF_SCALE * tallest < 200_000
    assert _window(page).get("data-off-scale") == "true"
    assert 'class="axis-break"' in page
    assert f"context window 200000 (off scale: the tallest request is {100 * tallest / 200_000:.1f}% of it)" in page
    # the bars keep their own scale: the tallest fills the plot (200 px at 1.08 headroom)
    heights = [float(h) for h in re.findall(r'<g class="bar" data-request="\d+" data-input="' + str(tallest) + r'".*?</g>', page, re.S)
               for h in re.findall(r'height="([\d.]+)"', h)]
    assert abs(sum(heights) - 200 / 1.08) < 1


def test_a_window_near_the_bars_is_drawn_to_scale() -> None:
    report, page = _page("j1-pressure-compaction", context_window=1_000)
    tallest = max(r.cost.input_tokens for r in report.requests if r.cost is not None)
    assert tallest < 1_000 <= OFF_SCALE * tallest
    assert _window(page).get("data-off-scale") == "false" and 'class="axis-break"' not in page
