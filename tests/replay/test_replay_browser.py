"""The replay HTML in a real headless browser (Debian's chromium).

`.ci/install-browser.sh` installs chromium when it can; where no browser is
available the tests skip and say so.  The page must render (the DOM the
browser built holds one element per request and the prefix markers) and the
regions must be visibly distinct (the screenshot contains the prefix, shared
and new background colours).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionspec.replay import LoadedLog, ReplayReport, load_log_text, replay
from sessionspec.replay_html import report_to_html
from tests.replay.browser import BROWSER, browser, png_pixels
from tests.support import GROUNDTRUTH

# Slow (a browser: minutes; the quick loop leaves it out), and skipped with the reason where there is no browser.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH (run .ci/install-browser.sh; it needs root and apt)")]

_browser, _png_pixels = browser, png_pixels
PREFIX_BG, SHARED_BG, NEW_BG = (0xFF, 0xF6, 0xE0), (0xEE, 0xF8, 0xEE), (0xEE, 0xF2, 0xFF)


def _page(scenario: str, tmp: Path) -> tuple[Path, ReplayReport]:
    loaded = load_log_text((GROUNDTRUTH / scenario / "session.jsonl").read_text(encoding="utf-8"))
    assert isinstance(loaded, LoadedLog)
    report = replay(loaded.events)
    assert isinstance(report, ReplayReport)
    page = tmp / "replay.html"
    page.write_text(report_to_html(report), encoding="utf-8")
    return page, report


def test_replay_html_renders_requests_and_prefix_markers(tmp_path: Path) -> None:
    page, report = _page("b-prefix-idioms-tool-roundtrip", tmp_path)
    done = _browser("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert dom.count('<section class="request"') == len(report.requests) == 3
    prefix_total = sum(r.prefix_length for r in report.requests)
    assert prefix_total > 0 and dom.count('data-region="prefix"') == prefix_total
    assert 'data-region="shared"' in dom and 'data-region="new"' in dom
    assert 'id="timeline"' in dom


def test_replay_html_screenshot_shows_distinct_regions(tmp_path: Path) -> None:
    page, _ = _page("b-prefix-idioms-tool-roundtrip", tmp_path)
    shot = tmp_path / "shot.png"
    done = _browser(f"--screenshot={shot}", "--window-size=1200,6000", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    colours = _png_pixels(shot.read_bytes())
    assert PREFIX_BG in colours and SHARED_BG in colours and NEW_BG in colours


def test_replay_html_screenshot_has_no_prefix_colour_without_a_prefix(tmp_path: Path) -> None:
    """Negative control: scenario a has no session prefix, so no prefix region is painted."""
    page, report = _page("a-single-turn-no-prefix", tmp_path)
    assert all(r.prefix_length == 0 for r in report.requests)
    shot = tmp_path / "shot.png"
    done = _browser(f"--screenshot={shot}", "--window-size=1200,3000", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    colours = _png_pixels(shot.read_bytes())
    assert PREFIX_BG not in colours and NEW_BG in colours


# --------------------------------------------------------------------------- the token chart (issue 20)

CACHE_READ_FILL, NEW_FILL = (0x55, 0xAA, 0x55), (0x33, 0x66, 0xCC)


class _Proxy:
    """A local HTTP proxy that records every connection the browser makes to it."""

    def __init__(self) -> None:
        import socket
        import threading

        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.requests: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.requests.append(conn.recv(4096).split(b"\r\n", 1)[0])
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    self.requests.append(b"(connection)")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()


# Chromium's own service traffic (network time, component updates, sign-in), seen
# for a blank page too; matched exactly so a page's own request (fonts.googleapis.com,
# a CDN) is never mistaken for it.
BROWSER_SERVICE = (b"GET http://clients2.google.com/time/1/current?", b"CONNECT update.googleapis.com:443 ",
                   b"POST http://update.googleapis.com/service/update2/json?", b"CONNECT accounts.google.com:443 ")


def _through_proxy(page: Path) -> list[bytes]:
    """The requests the browser made while loading ``page``, its own service traffic left out."""
    proxy = _Proxy()
    try:
        done = _browser(f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>",
                        "--dump-dom", page.as_uri())
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        proxy.close()
    return [r for r in proxy.requests if not r.startswith(BROWSER_SERVICE)]


def _chart_page(scenario: str, tmp: Path) -> tuple[Path, ReplayReport]:
    from sessionspec.economics import NEUTRAL

    loaded = load_log_text((GROUNDTRUTH / scenario / "session.jsonl").read_text(encoding="utf-8"))
    assert isinstance(loaded, LoadedLog)
    report = replay(loaded.events, cache_model=NEUTRAL)
    assert isinstance(report, ReplayReport)
    page = tmp / "chart.html"
    page.write_text(report_to_html(report, context_window=2000), encoding="utf-8")
    return page, report


def test_chart_renders_one_bar_per_request(tmp_path: Path) -> None:
    page, report = _chart_page("j1-pressure-compaction", tmp_path)
    done = _browser("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert dom.count("<svg") == 1 and dom.count('<g class="bar"') == len(report.requests) == 8
    assert dom.count('class="context-window"') == 1


def test_chart_screenshot_shows_the_cache_read_and_new_segments(tmp_path: Path) -> None:
    page, _ = _chart_page("j1-pressure-compaction", tmp_path)
    shot = tmp_path / "chart.png"
    # Only the top of the page (title, summary and chart): the message regions below use other colours.
    done = _browser(f"--screenshot={shot}", "--window-size=900,800", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    colours = _png_pixels(shot.read_bytes())
    assert CACHE_READ_FILL in colours and NEW_FILL in colours


def test_replay_and_economics_pages_make_no_network_request(tmp_path: Path) -> None:
    from sessionspec.designs import compare_designs
    from sessionspec.economics import NEUTRAL
    from sessionspec.economics_cmd import economics_html

    page, _ = _chart_page("g-header-change-system-and-tools", tmp_path)
    economics = tmp_path / "economics.html"
    economics.write_text(economics_html(compare_designs((1,), NEUTRAL), NEUTRAL, None), encoding="utf-8")
    # Control: the detector sees a page that does load something.
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><body><img src="http://sessionspec.invalid/x.png"></body></html>', encoding="utf-8")
    assert _through_proxy(control), "the proxy saw no request from the control page"
    assert _through_proxy(page) == []
    assert _through_proxy(economics) == []


# --------------------------------------------------------------------------- layout (issue 30)

VIEWPORT = (1280, 800)
MEASURE = """<script>
window.addEventListener("load", () => {
  const box = e => e.getBoundingClientRect();
  const blocks = [...document.querySelectorAll(".msg, .group, .summary")].filter(e => e.offsetParent !== null);
  const bars = [...document.querySelectorAll("g.bar")].map(g => box(g).height);
  const window_ = document.querySelector("line.context-window");
  const charts = [...document.querySelectorAll("div.chart")].map(c => [Math.round(box(c).top + scrollY), Math.round(box(c).left)]);
  const out = {
    viewport: [innerWidth, innerHeight], page: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
    tallestBlock: Math.max(0, ...blocks.map(e => box(e).height)), blocks: blocks.length,
    legends: document.querySelectorAll(".legend, .chart-legend").length,
    bars: bars, barTops: [...document.querySelectorAll("g.bar")].map(g => box(g).top),
    window: window_ ? {top: box(window_).top, offScale: window_.getAttribute("data-off-scale")} : null,
    charts: charts,
    columns: [...document.querySelectorAll("#columns dt")].map(e => e.textContent),
    headerTitles: [...document.querySelectorAll("th[title]")].length,
  };
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _measure(page_html: str, tmp: Path, size: tuple[int, int] = VIEWPORT) -> dict[str, Any]:
    """Lay the page out in chromium at ``size`` and read what the script measured."""
    import html as html_module
    import json
    import re

    page = tmp / "measured.html"
    page.write_text(page_html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    done = _browser(f"--window-size={size[0]},{size[1]}", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="measure">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    value: dict[str, Any] = json.loads(html_module.unescape(found.group(1)))
    return value


def _html(log: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "replay", str(log), "--format", "html", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _long_log(tmp: Path, kind: str) -> Path:
    """Scenario b with its first prompt replaced by 400 lines of text (about
    30,000 characters), or by 120 short text blocks (120 lines of text)."""
    import json

    rows = [json.loads(line) for line in (GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl").read_text().splitlines()]
    user = next(r for r in rows if r["type"] == "user/message")
    if kind == "long-text":
        user["data"]["content"] = [{"type": "text", "text": "\n".join(f"line {i}: " + "lorem ipsum " * 6 for i in range(400))}]
    else:
        user["data"]["content"] = [{"type": "text", "text": f"item {i}"} for i in range(120)]
    path = tmp / f"{kind}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("log", ["b-prefix-idioms-tool-roundtrip", "j1-pressure-compaction", "long-text", "many-blocks"])
def test_no_message_block_is_taller_than_the_viewport(log: str, tmp_path: Path) -> None:
    path = _long_log(tmp_path, log) if log in ("long-text", "many-blocks") else GROUNDTRUTH / log / "session.jsonl"
    measured = _measure(_html(path), tmp_path)
    width, height = measured["viewport"]  # the window less the browser's own bars
    assert measured["blocks"] > 0 and measured["tallestBlock"] <= height, measured
    assert measured["page"][0] <= width  # nothing wider than the window


def test_a_three_request_page_is_short(tmp_path: Path) -> None:
    """Scenario b (3 requests) once rendered taller than 2,000 px: text as text,
    JSON on demand, a prefix and shared messages already shown collapsed.  The summary
    block and the contents (issue 46) add about 250 px."""
    measured = _measure(_html(GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"), tmp_path)
    assert measured["page"][1] < 2300, measured["page"]


def test_the_replay_page_has_one_legend(tmp_path: Path) -> None:
    measured = _measure(_html(GROUNDTRUTH / "g-header-change-system-and-tools" / "session.jsonl", "--economics"), tmp_path)
    assert measured["legends"] == 1


@pytest.mark.parametrize("window", [200_000, 1_000])
def test_bars_stay_visible_with_a_context_window(window: int, tmp_path: Path) -> None:
    """j1's requests are 100 to 900 tokens: a 200,000-token window drawn to scale
    would leave them under a pixel.  Off scale (the axis broken), the tallest bar
    keeps most of the plot; a 1,000-token window is drawn to scale, above the bars."""
    measured = _measure(_html(GROUNDTRUTH / "j1-pressure-compaction" / "session.jsonl", "--context-window", str(window)), tmp_path)
    bars, tops = measured["bars"], measured["barTops"]
    assert len(bars) == 8
    assert max(bars) >= 150 and min(bars) >= 10, bars  # the plot is 200 px high
    assert measured["window"] is not None and measured["window"]["top"] < min(tops)
    assert measured["window"]["offScale"] == ("true" if window == 200_000 else "false")


def test_the_economics_page_lays_its_charts_out_in_a_grid_and_explains_its_columns(tmp_path: Path) -> None:
    from sessionspec.designs import Design, Workload, compare_designs
    from sessionspec.economics import NEUTRAL
    from sessionspec.economics_cmd import COLUMNS, chart_groups, economics_html

    measured = _measure(economics_html(compare_designs((1,), NEUTRAL), NEUTRAL, None), tmp_path, size=(1400, 900))
    charts = measured["charts"]
    # Designs whose charts are the same bars share one (issue 46): fewer charts than designs, each design drawn once.
    groups = [g for w in Workload for g in chart_groups(w, NEUTRAL, None)]
    assert len(charts) == len(groups) < len(Design) * len(Workload)
    assert sum(len(group.designs) for group in groups) == len(Design) * len(Workload)
    rows = {top for top, _ in charts}
    # At least two charts side by side in every row (a workload's last row may hold one).
    assert len(rows) <= sum(-(-len(chart_groups(w, NEUTRAL, None)) // 2) for w in Workload)
    assert measured["page"][0] <= measured["viewport"][0]
    assert measured["columns"] == list(COLUMNS) and measured["headerTitles"] == len(COLUMNS) * len(Workload)
    assert measured["legends"] == 1
