"""Docs match behaviour (issue 30): the commands the README and the guides show
are run here and do what the text around them says."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.heartbeat import DEFAULT_INTERVAL

ROOT = Path(__file__).resolve().parents[2]
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


# --------------------------------------------------------------------------- commands the documents show


def _sessionspec(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sessionspec.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_the_version_example_is_the_real_output() -> None:
    example = re.search(r"for example `(sessionspec [^`]+)`", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert example is not None
    done = _sessionspec("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == example.group(1), (
        "docs/cli.md's --version example is stale (the rule registry changed): replace it with the real output")


# The README's other commands, run as written (from a scratch directory that sees the checkout's
# tests/ and vectors/, so `vectors pack` writes its archive there).  Left out as not practical here:
# `mutants` (19 adapters x 200 conform traces; tests/conformance/test_mutants.py runs it) and the pytest line
# (tests/conformance/test_pytest_plugin.py runs the plugin).
SLOW = ("sessionspec mutants", "pytest -m sessionspec")


def _readme_commands() -> list[str]:
    lines = _indented_block_after(README, "Other commands (`sessionspec --help` lists them all")
    return [line.split("  #", 1)[0].strip() for line in lines]


def test_the_readme_lists_every_command_it_runs() -> None:
    commands = _readme_commands()
    assert len(commands) == 7 and sum(1 for c in commands if c.startswith(SLOW) or c.split("/")[-1].startswith(SLOW)) == 2


@pytest.mark.parametrize("command", [c for c in _readme_commands() if not c.removeprefix(".venv/bin/").startswith(SLOW)])
def test_a_readme_command_runs_as_written(command: str, tmp_path: Path) -> None:
    for name in ("tests", "vectors"):
        (tmp_path / name).symlink_to(ROOT / name)
    # `.venv/bin/sessionspec` is this environment's `python -m sessionspec.cli`, also inside an --adapter argument
    this = f"{shlex.quote(sys.executable)} -m sessionspec.cli"
    argv = [arg.replace(".venv/bin/sessionspec", this) for arg in shlex.split(command)]
    assert argv[0] == this
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() and "Traceback" not in done.stderr


def test_conformance_md_counts_and_lists_every_mutant() -> None:
    from sessionspec.conformance.mutants import MUTANTS

    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert f"can fail: {len(MUTANTS)} adapters, each the model with one rule broken" in text
    table = text.split("| Mutant | Breaks | How |", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^\| `([a-z-]+)` \| ([A-Z]+-\d+) \|", table, re.M)
    assert listed == [(m.name, m.rule) for m in MUTANTS]


def test_conformance_md_getting_started_step_4_works_on_a_fresh_machine(tmp_path: Path) -> None:
    """Step 4 writes the divergence into a directory that does not exist yet,
    then replays it with `vectors run`, as the text says."""
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    step = re.search(r"4\. Run `sessionspec conform --adapter CMD --out (\S+)`.*?`sessionspec vectors run (\S+) --adapter CMD`", text, re.S)
    assert step is not None
    out, directory = Path(step.group(1)), Path(step.group(2))
    assert out.parent == directory
    adapter = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"
    target = tmp_path / out.relative_to(out.anchor)  # the documented path, under a fresh directory
    assert not target.parent.exists()
    done = _sessionspec("conform", "--adapter", adapter, "--examples", "20", "--no-progress", "--out", str(target), cwd=tmp_path)
    assert done.returncode == 1 and "DIVERGENCE (HDR-2)" in done.stdout, done.stderr
    assert target.is_file()
    replayed = _sessionspec("vectors", "run", str(target.parent), "--adapter", adapter, cwd=tmp_path)
    assert replayed.returncode == 1 and "0/1 vectors passed" in replayed.stdout
    assert _sessionspec("vectors", "run", str(target.parent), cwd=tmp_path).returncode == 0  # the model passes it


def test_the_documented_synopses_name_the_real_options() -> None:
    """docs/replay.md's and docs/conformance.md's synopses list exactly the options `--help` shows."""
    from sessionspec.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for document, command, start in (("replay.md", "replay", "```\nsessionspec replay LOG"),
                                      ("conformance.md", "conform", "`sessionspec conform --adapter CMD [")):
        text = (ROOT / "docs" / document).read_text(encoding="utf-8")
        synopsis = text.split(start, 1)[1].split("`", 1)[0]
        documented = set(re.findall(r"(--[a-z-]+)", start + synopsis))
        shown = {o for a in commands[command]._actions if a.help != argparse.SUPPRESS for o in a.option_strings
                 if o.startswith("--") and o != "--help"}
        assert documented == shown, (document, documented ^ shown)
