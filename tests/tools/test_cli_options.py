"""One spelling for every option (issue 30): every subcommand's ``--help``
shows the option with the metavar docs/cli.md's table gives it; progress is
``--no-progress`` where a command draws progress; ``generate`` writes to
stdout by default like every command; ``--out`` creates missing directories;
``rules --area`` names the areas when it does not know one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sessionspec.cli import COMMANDS, main
from sessionspec.rules_cmd import areas
from sessionspec.spec.registry import rules

ROOT = Path(__file__).resolve().parents[2]


def _documented_options() -> list[tuple[str, str | None, str]]:
    """(option, metavar or None, subcommand) for every row of docs/cli.md's shared-options table."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text.split("| option | values | subcommands | notes |", 1)[1].split("\n\n", 1)[0]
    out: list[tuple[str, str | None, str]] = []
    for row in table.strip().splitlines()[1:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        spelled = cells[0].strip("`").replace("\\|", "|").split(" ", 1)
        for command in re.findall(r"`([a-z -]+)`", cells[2]):
            if command.split()[0] not in COMMANDS:  # a value named beside a command: `replay` (`html`)
                continue
            out.append((spelled[0], spelled[1] if len(spelled) > 1 else None, command))
    return out


DOCUMENTED = _documented_options()


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*command.split(), "--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_table_names_every_shared_option() -> None:
    spelled = {(option, metavar) for option, metavar, _ in DOCUMENTED}
    assert {("--out", "FILE"), ("--out", "DIR"), ("--examples", "N"), ("--seed", "S"), ("--vectors", "DIR"),
            ("--no-progress", None), ("--dialect", "A55|D08"), ("--max-events", "N")} <= spelled


@pytest.mark.parametrize(("option", "metavar", "command"), DOCUMENTED, ids=lambda v: str(v))
def test_help_spells_the_option_as_documented(option: str, metavar: str | None, command: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    shown = _help(command, capsys)
    if metavar is None:
        assert re.search(rf"(^|[ \[]){re.escape(option)}([ \]]|$)", shown), shown
    else:
        assert f"{option} {metavar}" in shown, shown
        assert not re.search(rf"{re.escape(option)} [A-Z_]+\b", shown.replace(f"{option} {metavar}", "")), shown


def test_conform_takes_no_progress_and_quiet_shows_failures_and_the_final_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``--no-progress`` turns the progress lines off; ``-q``/``--quiet`` (issue 46: on every command, the
    failures and the final line only) implies it."""
    shown = _help("conform", capsys)
    assert "--no-progress" in shown and "--quiet" in shown and "-q" in shown.split()
    from sessionspec.cli import build_parser

    assert build_parser().parse_args(["conform", "--adapter", "x", "--no-progress"]).no_progress is True
    for spelling in ("--quiet", "-q"):
        assert build_parser().parse_args(["conform", "--adapter", "x", spelling]).quiet is True
    assert build_parser().parse_args(["conform", "--adapter", "x"]).no_progress is False


def test_generate_writes_to_stdout_by_default(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "generate", "--events", "30"], capture_output=True, timeout=300)
    assert done.returncode == 0 and done.stderr == b""
    (tmp_path / "s.jsonl").write_bytes(done.stdout)
    assert json.loads(done.stdout.splitlines()[0])["type"] == "turn/start"
    assert main(["check", "--no-progress", str(tmp_path / "s.jsonl")]) == 0


@pytest.mark.parametrize("command", [["replay", str(ROOT / "tests/data/groundtruth/a-single-turn-no-prefix/session.jsonl")],
                                     ["economics", "--seeds", "1"], ["generate", "--events", "30"], ["spec"]])
def test_out_creates_missing_directories(command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "deeper" / "out.txt"
    assert main([*command, "--out", str(out)]) == 0
    assert out.stat().st_size > 0 and capsys.readouterr().out == ""


def test_rules_area_is_case_insensitive_and_an_unknown_area_names_the_areas(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--area", "surf"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].startswith(f"{sum(1 for r in rules() if r.area == 'SURF')} rules;")
    assert main(["rules", "--area", "NOPE"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"sessionspec rules: unknown area 'NOPE'; the areas are {', '.join(areas())}\n"
    assert {"SURF", "PFX", "CMP", "LOOP"} <= set(areas())


def test_mutants_shows_a_line_per_mutant_unless_no_progress(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--only", "keep-empty-tools", "--examples", "5"]) == 0
    captured = capsys.readouterr()
    # The mutants' own lines, in order; conform's lines (what its search found, every 10 s) between them.
    assert [line for line in captured.err.splitlines() if not line.startswith("conform: ")] == [
        "mutants: 1/1 keep-empty-tools: running the vectors",
        "mutants: 1/1 keep-empty-tools: vectors killed; conform with 5 traces",
        "mutants: 1/1 keep-empty-tools: vectors killed, conform killed"]
    assert "1/1 mutants killed by both the vectors and conform" in captured.out
    from sessionspec.cli import build_parser

    assert build_parser().parse_args(["mutants", "--no-progress"]).no_progress is True
