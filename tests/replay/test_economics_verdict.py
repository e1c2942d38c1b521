"""What ``sessionspec economics`` concludes (issue 46 item 4; sessionspec/economics_verdict.py): per workload, the
design that wins on cost (the lowest full price + read price x cache reads; designs within 0.5% share the win) and
why, and the cheapest design that never sends a stale opener; a sentence per design.

The sentences are checked two ways: against the real comparison under every cache model (the names said are the
ones the table's columns make the winners), and on hand-made rows that take each branch, with the words expected
reasoned from the columns given."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.designs import DESIGN_TITLES, Design, DesignResult, Workload, compare_designs, effective_cost
from sessionspec.economics import NEUTRAL, PRESETS
from sessionspec.economics_cmd import DOCS_FILE, docs_href, economics_html
from sessionspec.economics_verdict import DESIGN_SENTENCES, TIE, conclusion, conclusions, design_sentence


def _short(design: Design) -> str:
    return DESIGN_TITLES[design].split(" ", 1)[0]


def _named(clause: str) -> set[str]:
    return set(re.findall(r"\([a-e]\+?\)", clause))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_workload_names_the_winners_its_columns_make(preset: str) -> None:
    model = PRESETS[preset]
    results = compare_designs((1, 2), model)
    said = dict(conclusions(results, model))
    assert set(said) == set(Workload)
    for workload, sentence in said.items():
        rows = [r for r in results if r.workload is workload]
        cheapest = min(effective_cost(r, model) for r in rows)
        winners = {_short(r.design) for r in rows if effective_cost(r, model) <= cheapest * (1 + TIE)}
        on_cost, on_staleness = sentence.split("; on staleness ", 1)
        assert sentence.startswith(f"Opener {workload.value}: on cost ")
        named = re.match(r"Opener [^:]+: on cost (.+?) wins? \(", on_cost)
        assert named is not None and _named(named.group(1)) == winners, (sentence, winners)
        assert f"({cheapest:.0f}, against {max(effective_cost(r, model) for r in rows):.0f} for " in on_cost
        fresh = [r for r in rows if r.stale_requests == 0]
        if len(fresh) == len(rows):
            assert on_staleness == "no design sends a stale opener."
        else:
            best = min(effective_cost(r, model) for r in fresh)
            fresh_winners = {_short(r.design) for r in fresh if effective_cost(r, model) <= best * (1 + TIE)}
            named = on_staleness.split(", the cheapest", 1)[0]
            assert _named(named) == fresh_winners and f"opener ({best:.0f}), while " in on_staleness
            for r in rows:
                if r.stale_requests:
                    assert re.search(rf"{re.escape(_short(r.design))} (sends an outdated opener )?on {r.stale_requests}\b", on_staleness)


def _row(design: Design, *, full: int, read: int = 0, drift: int = 0, after: int = 0, changes: int = 0, stale: int = 0,
         extra: int = 0) -> DesignResult:
    return DesignResult(design=design, workload=Workload.MID_SESSION, requests=10, input_tokens=full + read + extra,
                        full_price_tokens=full + extra, cache_read_tokens=read, resume_drift_tokens=drift, header_changes=changes,
                        stale_requests=stale, after_tokens=after)


def test_one_winner_and_why_the_largest_differences_first() -> None:
    """(c) costs 1000 + 0.1 x 5000 = 1500; (b) sends 7200 tokens, 4000 at full price (2000 of them lost at a resume,
    1200 its tail slot) and 3200 read: 4000 + 320 = 4320.  Its input is 1200 more than (c)'s, all tail slot, so there
    is no 'fewer input tokens' reason: the drift first (2000), then the slot (1200)."""
    rows = [_row(Design.DURABLE_OPENER, full=1000, read=5000, stale=4),
            _row(Design.SLOTS, full=2800, read=3200, drift=2000, after=1200, extra=1200)]
    said = conclusion(Workload.MID_SESSION, rows, NEUTRAL)
    assert said == ("Opener changes mid-session: on cost (c) wins (1500, against 4320 for (b)): no cache lost at a resume "
                    "((b) loses 2000 tokens) and no tail slot re-paid on every request ((b): 1200 tokens); on staleness (b) wins, "
                    "the cheapest of the designs that never send a stale opener (4320), while (c) sends an outdated opener on "
                    "4 requests.")


def test_a_tie_within_half_a_percent_is_shared_and_a_notice_is_named() -> None:
    """(a) 2000, (e) 2009 (0.45% more: a tie), (a+) 3000 whose extra input restates the opener in a notice."""
    rows = [_row(Design.FROZEN_PREFIX, full=2000), _row(Design.PER_TURN, full=2009),
            _row(Design.FROZEN_PREFIX_NOTICE, full=2000, extra=1000, changes=1)]
    said = conclusion(Workload.MID_SESSION, rows, NEUTRAL)
    assert said.startswith("Opener changes mid-session: on cost (a) and (e) win (2000, against 3000 for (a+)): 1000 fewer input "
                           "tokens than (a+) (it restates the opener in a notice) and no envelope change inside an instance "
                           "((a+): 1 change header)")
    assert said.endswith("; on staleness no design sends a stale opener.")
    # 0.55% more is no tie.
    assert conclusion(Workload.MID_SESSION, [rows[0], _row(Design.PER_TURN, full=2011), rows[2]], NEUTRAL).startswith(
        "Opener changes mid-session: on cost (a) wins (2000,")


def test_every_design_stale_and_no_difference_to_tell() -> None:
    rows = [_row(Design.DURABLE_OPENER, full=1000, stale=3), _row(Design.SYSTEM_SECTION, full=1000, stale=1)]
    said = conclusion(Workload.MID_SESSION, rows, NEUTRAL)
    assert said == ("Opener changes mid-session: on cost no design wins: (c) and (d) cost the same (1000); on staleness none "
                    "wins: every design sends a stale opener ((c) sends an outdated opener on 3 requests and (d) on 1).")
    # (b) reads 1000 more tokens (1100 against 1000) and logs two change headers, said in the plural.
    said = conclusion(Workload.MID_SESSION, [_row(Design.FROZEN_PREFIX, full=1000), _row(Design.SLOTS, full=1000, read=1000, changes=2)],
                      NEUTRAL)
    assert said.startswith("Opener changes mid-session: on cost (a) wins (1000, against 1100 for (b)): 1000 fewer input tokens than "
                           "(b) and no envelope change inside an instance ((b): 2 change headers);")


def test_a_sentence_for_every_design_in_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(DESIGN_SENTENCES) == set(Design)
    assert main(["economics", "--seeds", "1", "--format", "html"]) == 0
    page = capsys.readouterr().out
    for design in Design:
        assert design_sentence(design).startswith(DESIGN_TITLES[design] + " ")
        assert f'<li data-design="{design.name}">' in page
    assert page.count('<li data-workload="') == len(Workload)
    assert f'<a href="{DOCS_FILE.as_uri()}" id="docs-link">docs/economics.md</a>' in page  # on stdout: the file itself
    assert main(["economics", "--seeds", "1", "--format", "markdown", "-v"]) == 0
    markdown = capsys.readouterr().out
    assert all(f"- {design_sentence(d)}" in markdown for d in Design) and markdown.count("; on staleness ") == len(Workload)


def test_the_docs_link_follows_the_page_and_is_no_dead_link_without_docs(tmp_path: Path) -> None:
    """The page's link to docs/economics.md works where the page is written: relative to ``--out`` in a checkout
    (opened beside it or elsewhere), and without installed docs (a wheel) it names them instead of linking."""
    docs = tmp_path / "checkout" / "docs" / "economics.md"
    docs.parent.mkdir(parents=True)
    docs.write_text("# economics", encoding="utf-8")
    assert docs_href(str(tmp_path / "checkout" / "page.html"), docs) == "docs/economics.md"
    assert docs_href(str(tmp_path / "out" / "deep" / "page.html"), docs) == "../../checkout/docs/economics.md"
    assert docs_href(None, docs) == docs.as_uri()
    assert docs_href("page.html", tmp_path / "absent.md") is None
    page = economics_html((), NEUTRAL, None, None)
    assert 'id="docs-link"' not in page and "docs/economics.md in the sessionspec source." in page
