"""The replay page a reader opens first (issue 46, item 3), laid out by the real browser (chromium) at 3 and at
300 requests: the summary block at the top, a chart across the page's width whose letters never touch (element
boxes measured in the page), a legend that wraps between items and never inside one, a bar of links that stays
at the top of the window, the contents, and a timeline in sentences.  The structure without a browser:
tests/replay/test_replay_html.py."""

from __future__ import annotations

import html as html_module
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionspec.generate import write_log
from tests.replay.browser import BROWSER, browser, png_pixels
from tests.support import GROUNDTRUTH

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH (run .ci/install-browser.sh; it needs root and apt)")]

CACHE_READ_FILL, NEW_FILL = (0x55, 0xAA, 0x55), (0x33, 0x66, 0xCC)
THREE = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"

MEASURE = """<script>
window.addEventListener("load", () => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = document.querySelector("svg.token-chart");
  const texts = [...svg.querySelectorAll("text")].map(t => ({cls: t.getAttribute("class") || "", text: t.firstChild ? t.firstChild.textContent : "", box: box(t)}));
  const bars = [...svg.querySelectorAll("g.bar rect.seg")].map(box);
  const body = document.body.getBoundingClientRect();
  const legend = [...document.querySelectorAll(".legend-item")].map(e => e.getClientRects().length);
  const stats = Object.fromEntries([...document.querySelectorAll("#summary .stat")].map(e => [e.dataset.key, e.querySelector("b").textContent]));
  const firstSection = document.querySelector("section.request");
  const out = {
    viewport: [innerWidth, innerHeight], bodyWidth: body.width, svg: box(svg), texts: texts, bars: bars, legend: legend, stats: stats,
    summaryTop: document.querySelector("#summary").getBoundingClientRect().top, chartTop: svg.getBoundingClientRect().top,
    requestLinks: document.querySelectorAll("#contents a").length,
    timeline: [...document.querySelectorAll("#timeline .ev")].slice(0, 6).map(e => e.childNodes[0].textContent),
  };
  scrollTo(0, document.documentElement.scrollHeight);
  out.navAfterScroll = box(document.querySelector("#nav"));
  out.scrolled = scrollY;
  out.firstRequestTop = firstSection ? firstSection.getBoundingClientRect().top + scrollY : null;
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _page(log: Path, tmp: Path, *, measure: bool = True) -> Path:
    """The page ``replay --format html`` writes for ``log``; with ``measure``, the script that measures it
    (and scrolls to the end to see the navigation bar stay)."""
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "replay", str(log), "--format", "html"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = tmp / f"{log.stem}.html"
    page.write_text(done.stdout.replace("</body>", MEASURE + "</body>") if measure else done.stdout, encoding="utf-8")
    return page


def _measure(page: Path, size: tuple[int, int] = (1280, 900)) -> dict[str, Any]:
    done = browser(f"--window-size={size[0]},{size[1]}", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="measure">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    value: dict[str, Any] = json.loads(html_module.unescape(found.group(1)))
    return value


def _long_log(tmp: Path) -> Path:
    """A generated valid log of about 5,200 events: 315 loop requests (seed 1)."""
    text = io.StringIO()
    write_log(text, 5200, 1)
    path = tmp / "long.jsonl"
    path.write_text(text.getvalue(), encoding="utf-8")
    return path


def _overlaps(boxes: list[list[float]]) -> list[tuple[int, int]]:
    """Pairs of boxes that share more than a hair (0.5 px) in both directions."""
    found = []
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5:
                found.append((i, j))
    return found


@pytest.mark.parametrize("requests", [3, 300])
def test_the_page_lays_out_legibly(requests: int, tmp_path: Path) -> None:
    log = THREE if requests == 3 else _long_log(tmp_path)
    measured = _measure(_page(log, tmp_path))
    count = int(measured["stats"]["requests"].replace(",", ""))
    assert count == 3 if requests == 3 else count >= 300
    # The summary first, then the chart.
    assert measured["summaryTop"] < measured["chartTop"] and set(measured["stats"]) == {"requests", "input", "cache-read", "cost",
                                                                                       "no-cache", "no-prefix"}
    # The chart uses the width: the svg spans the body, and the bars spread across the plot.
    left, _, right, _ = measured["svg"]
    assert right - left >= 0.95 * measured["bodyWidth"]
    bars = measured["bars"]
    assert max(b[2] for b in bars) - min(b[0] for b in bars) >= 0.6 * (right - left)
    # No letters collide: every text of the chart (numbers, markers, titles) has a box of its own.
    texts = measured["texts"]
    labels = [t for t in texts if t["cls"] == "label"]
    assert labels and len(labels) <= count
    assert _overlaps([t["box"] for t in texts]) == [], [(texts[i]["text"], texts[j]["text"]) for i, j in _overlaps([t["box"] for t in texts])][:5]
    # The legend wraps between items, never inside one.
    assert measured["legend"] and all(rects == 1 for rects in measured["legend"]), measured["legend"]
    # Contents link every request; the timeline speaks in sentences.
    assert measured["requestLinks"] == count
    assert measured["timeline"][0].startswith("Turn 1 starts") and not any("{" in line for line in measured["timeline"])
    # The bar of links stays at the top of the window when the page is scrolled to its end.
    assert measured["scrolled"] > 0 and abs(measured["navAfterScroll"][1]) < 1


@pytest.mark.parametrize("requests", [3, 300])
def test_the_screenshot_shows_the_chart_at_the_top(requests: int, tmp_path: Path) -> None:
    log = THREE if requests == 3 else _long_log(tmp_path)
    page = _page(log, tmp_path, measure=False)
    shot = tmp_path / "top.png"
    # The top 700 px of the window: the summary and the chart (the messages below use other colours).
    done = browser(f"--screenshot={shot}", "--window-size=1280,700", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    colours = png_pixels(shot.read_bytes())
    assert CACHE_READ_FILL in colours and NEW_FILL in colours


def test_an_invalid_log_marks_where_it_stops(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in THREE.read_text(encoding="utf-8").splitlines()]
    next(r for r in rows if r["type"] == "assistant/message" and r["seq"] > 23)["surfaceOp"] = "none"
    log = tmp_path / "broken.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "replay", str(log), "--format", "html"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    page = tmp_path / "broken.html"
    page.write_text(done.stdout, encoding="utf-8")
    dom = browser("--window-size=1280,900", "--dump-dom", page.as_uri()).stdout
    assert dom.count('<section class="request"') == 2 and 'class="stop-banner"' in dom and 'id="stop"' in dom
