"""``sessionspec spec``: the committed docs/SPEC.md is a fresh rendering of the registry (issue 7)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sessionspec.spec.registry import rule, rule_ids, rules, unclaimed_lines
from sessionspec.spec_render import REGENERATE, SEED_CLAIMS, contracts_of, render

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "SPEC.md"


def test_committed_spec_equals_fresh_rendering() -> None:
    committed = SPEC.read_text(encoding="utf-8") if SPEC.exists() else ""
    fresh = render()
    if committed != fresh:
        old, new = committed.splitlines(), fresh.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        raise AssertionError(
            f"docs/SPEC.md is stale (first difference at line {first + 1}); regenerate it with: {REGENERATE}"
        )


@pytest.mark.slow  # minutes under load: out of the quick loop (issue 42 item 4), in .ci/run
def test_rendering_is_deterministic() -> None:
    assert render() == render()


def _book_block(book: list[str], rule_id: str) -> list[str]:
    """The rule's lines as a reader of the book sees them: from ``**ID**`` to the next heading,
    ``---`` or rule outside a code fence, trailing blank lines dropped (read here independently of the
    registry's parser)."""
    start = next(i for i, line in enumerate(book) if line.startswith(f"**{rule_id}**"))
    block, fenced = [book[start].removeprefix(f"**{rule_id}**").strip()], False
    for line in book[start + 1:]:
        if not fenced and (line.startswith(("#", "---")) or re.match(r"\*\*[A-Z]+-\d+\*\*", line)):
            break
        block.append(line)
        fenced ^= line.startswith("```")
    while not block[-1].strip():
        block.pop()
    return block


def test_spec_shows_every_rules_whole_block_bullets_included() -> None:
    """Issue 14: the rendering used to stop a rule at its first bullet (45 rules lost text)."""
    book = (ROOT / "spec" / "rulebook.md").read_text(encoding="utf-8").splitlines()
    committed = SPEC.read_text(encoding="utf-8")
    for r in rules():
        quoted = "\n".join(f"> {line}".rstrip() for line in _book_block(book, r.id))
        assert f"### {r.id}\n\n{quoted}\n\n" in committed, r.id


def test_LOG_9_keeps_its_type_table() -> None:
    """Issue 28: the block parser stopped at the blank line before LOG-9's table, so its 13 types were lost."""
    text = rule("LOG-9").text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 12  # 13 types: step/start and step/end share a row
    assert "- `TokenUsage` is" in text
    assert rule("LOG-9").lead == "The core A55 vocabulary MUST be exactly these 13 types. Only the four marked ✓ are surface-eligible."


def test_every_line_of_the_rule_sections_belongs_to_a_rule_or_a_heading() -> None:
    """Issue 28: every line of §1–§15 is some rule's text, a heading, or a heading's one introductory paragraph."""
    assert unclaimed_lines((ROOT / "spec" / "rulebook.md").read_text(encoding="utf-8")) == ()


def test_unclaimed_lines_finds_text_no_rule_holds() -> None:
    book = "\n".join([
        "## 1. LOG", "", "An introduction.", "", "**LOG-1** A rule.", "", "| a table |", "", "---",
        "Lost text after a rule.", "## 2. SURF", "", "Intro.", "", "A second paragraph no rule holds.",
        "**SURF-1** x", "```", "**NOT-1** inside a fence", "```", "## 16. PROPERTIES", "tail",
    ])
    assert unclaimed_lines(book) == ((10, "Lost text after a rule."), (15, "A second paragraph no rule holds."))


def test_spec_shows_the_inv_5_equations() -> None:
    section = SPEC.read_text(encoding="utf-8").split("### INV-5\n", 1)[1].split("\n### ", 1)[0]
    assert "> - `messages_k == (H_k.messagePrefix or []) ++ derive(log[0:b_k])`, where `H_k = fold(log[0:c_k])`;" in section
    assert "all equal `H_k`" in section


def test_seed_claims_link_to_registered_rules() -> None:
    """Every claim of the seed note is linked to rules that exist in the book."""
    known = rule_ids()
    for claim, ids in SEED_CLAIMS:
        assert ids, claim
        assert set(ids) <= known, (claim, sorted(set(ids) - known))


def test_contracts_are_rendered_from_docstrings() -> None:
    from sessionspec.model.surface import replacement_range

    contracts = contracts_of(replacement_range)
    assert contracts and all(c.startswith("post: ") for c in contracts)
    assert f"- `{contracts[0]}`" in render()


@pytest.mark.slow  # minutes under load: out of the quick loop (issue 42 item 4), in .ci/run
def test_cli_writes_out_file_and_stdout(tmp_path: Path) -> None:
    out = tmp_path / "SPEC.md"
    written = subprocess.run([sys.executable, "-m", "sessionspec.cli", "spec", "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    printed = subprocess.run([sys.executable, "-m", "sessionspec.cli", "spec"], cwd=ROOT, capture_output=True, text=True)
    assert printed.returncode == 0
    assert printed.stdout == out.read_text(encoding="utf-8")


def test_cli_reports_unwritable_out_without_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "sessionspec.cli", "spec", "--out", str(blocker / "SPEC.md")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2  # cannot write FILE: 2, as for every command (the one exit-code table)
    assert "cannot write" in result.stderr and "Traceback" not in result.stderr


def test_every_repeated_implementation_links_to_the_rule_where_its_source_is_shown() -> None:
    """Issue 28: 57 entries said "(source shown above)" with no link (one of them 3,453 lines below its source)."""
    sections = dict(re.findall(r"^### ([A-Z]+-\d+)\n(.*?)(?=^### |\Z)", SPEC.read_text(encoding="utf-8"), re.M | re.S))
    links = re.findall(r"\*Implemented by\* `([^`]+)` \(source shown under \[([A-Z]+-\d+)\]\(#([a-z]+-\d+)\)\)", "".join(sections.values()))
    assert links
    for name, rule_id, anchor in links:
        assert anchor == rule_id.lower()
        assert f"*Implemented by* `{name}`:\n\n```python\n" in sections[rule_id], (name, rule_id)
