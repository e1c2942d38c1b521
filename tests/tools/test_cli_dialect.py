"""One CLI dialect (issue 20 part 4): the same spelling of ``--dialect`` in every
subcommand and ``--version`` (the exit-code table: tests/tools/test_exit_codes.py); one spelling of
each dialect in every output (issue 46: ``A55``, ``D08``; every other spelling is still read)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.model.log import Dialect
from sessionspec.options import dialect_value
from sessionspec.spec.registry import registry_digest
from tests.support import GROUNDTRUTH

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
LOG = str(GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl")


@pytest.mark.parametrize(("text", "dialect"), [("a55", Dialect.A55), ("A55", Dialect.A55), ("d08", Dialect.D08),
                                               ("D08", Dialect.D08), ("a55f148516", Dialect.A55), ("611615650F", Dialect.D08)])
def test_every_spelling_of_a_dialect_is_accepted(text: str, dialect: Dialect) -> None:
    assert dialect_value(text) is dialect


@pytest.mark.parametrize("spelling", ["a55", "A55"])
def test_check_and_replay_take_the_same_spellings(spelling: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--dialect", spelling, "--format", "json", LOG]) == 0
    assert '"dialectSource": "forced"' in capsys.readouterr().out
    assert main(["replay", LOG, "--dialect", spelling]) == 0
    assert "dialect A55 (forced)" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["check", LOG], ["replay", LOG]])
def test_an_unknown_dialect_is_a_usage_error_naming_the_spelling(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--dialect", "z99"])
    assert exited.value.code == 2
    assert "choose A55 or D08" in capsys.readouterr().err


def test_help_shows_one_metavar_for_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("check", "replay"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--dialect A55|D08" in capsys.readouterr().out


def test_version() -> None:
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert re.fullmatch(r"sessionspec \S+ \((pure Python|compiled \(mypyc\)); rule registry [0-9a-f]{16}, sessionspec-vectors/1, dialects A55 D08\)\n", done.stdout)
    assert registry_digest() in done.stdout


def test_every_output_spells_each_dialect_one_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """check's text and JSON, replay's text, JSON and page: ``A55``, never ``a55`` nor the commit name."""
    outputs = []
    for argv in (["check", LOG], ["check", "--format", "json", LOG], ["check", "--format", "sarif", LOG], ["replay", LOG],
                 ["replay", LOG, "--format", "json"], ["replay", LOG, "--format", "html"]):
        assert main(argv) == 0
        outputs.append(capsys.readouterr().out)
    for text in outputs:
        assert "A55" in text or '"version": "2.1.0"' in text
        # (a writer's kind, a55-loop or d08-loop, names a loop, not a dialect spelling)
        assert not re.search(r"a55f148516|\ba55\b(?!-loop)|611615650f|\bd08\b(?!-loop)", text), text[:300]


def test_a_d08_log_is_spelt_d08_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real D08 log (copied, so its path names no commit) in each of check's five formats, with its quirks as
    findings so the CI formats carry results, and in replay's three: ``D08``, never ``d08`` nor ``611615650f``."""
    from tests.support import REAL

    log = tmp_path / "session.jsonl"
    log.write_bytes((REAL / "611615650f" / "examples" / "headless-agent" / "tests" / "snapshots" / "advanced-toolchain"
                     / "session.jsonl").read_bytes())
    runs = [(["check", "--strict-quirks", "--format", fmt, str(log)], 1) for fmt in ("text", "json", "github", "sarif", "junit")]
    runs += [(["replay", str(log), "--format", fmt], 0) for fmt in ("text", "json", "html")]
    for argv, code in runs:
        assert main(argv) == code, argv
        text = capsys.readouterr().out
        assert "Q-17" in text or argv[0] == "replay", argv
        assert not re.search(r"a55f148516|\ba55\b(?!-loop)|611615650f|\bd08\b(?!-loop)", text), (argv, text[:300])
        if argv[0] == "replay" or argv[-2] in ("text", "json"):
            assert "D08" in text, argv
