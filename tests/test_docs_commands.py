"""Docs match behaviour (issue 30): the commands the README and the guides show
are run here and do what the text around them says."""

from __future__ import annotations

import re
from pathlib import Path

from tests.heartbeat import DEFAULT_INTERVAL

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _indented_block_after(text: str, marker: str) -> list[str]:
    """The indented (code) lines of the first block after ``marker``."""
    rest = text.split(marker, 1)[1]
    block = re.search(r"\n\n((?:    .*\n)+)", rest)
    assert block is not None, marker
    return [line[4:] for line in block.group(1).splitlines()]


def test_the_readme_test_command_is_exactly_what_ci_runs() -> None:
    [command] = _indented_block_after(README, "The tests, exactly what `.ci/run` runs")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    steps = [line for line in ci.splitlines() if line and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert steps == [command]
    assert "HYPOTHESIS_PROFILE=ci " in command  # the profile is in the command itself, not only in CI's environment


def test_the_readme_states_the_heartbeat_interval() -> None:
    assert f"longer than {DEFAULT_INTERVAL:.0f} seconds, every {DEFAULT_INTERVAL:.0f} seconds" in README


def test_economics_md_explains_every_column_as_the_page_does() -> None:
    from sessionspec.economics_cmd import COLUMN_MEANINGS

    text = (ROOT / "docs" / "economics.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", text.split("| column | what it counts |", 1)[1].split("\n\n", 1)[0], re.M)
    assert rows == [(name, meaning.replace("|", "/")) for name, meaning in COLUMN_MEANINGS]
