"""One exit-code table, the true one (issue 30): `sessionspec --help`, docs/cli.md,
docs/guide.md and the README show exactly ``sessionspec.options.EXIT_CODES``,
and each code is what a command really returns in the situation its row names."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import sessionspec.rules_cmd
from sessionspec.check.checker import EXIT_CODES as CHECK_EXIT_CODES
from sessionspec.cli import main
from sessionspec.conformance.vectors.command import VECTORS_DIR, load_dir
from sessionspec.conformance.vectors.format import file_text
from sessionspec.options import EXIT_CODES
from tests.support import GROUNDTRUTH

ROOT = Path(__file__).resolve().parents[2]
GOOD = str(GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl")


def _markdown_rows(path: Path, after: str) -> list[tuple[int, str]]:
    """The rows of the first ``| code | meaning |`` table after ``after``."""
    section = path.read_text(encoding="utf-8").split(after, 1)[1]
    table = section.split("| code | meaning |", 1)[1].split("\n\n", 1)[0]
    return [(int(code), meaning) for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", table, re.M)]


@pytest.mark.parametrize(("document", "after"), [("docs/cli.md", "## Exit codes"), ("docs/guide.md", "## Commands"),
                                                 ("README.md", "## Set up and run")])
def test_the_documents_show_the_one_table(document: str, after: str) -> None:
    assert _markdown_rows(ROOT / document, after) == list(EXIT_CODES)


def test_help_shows_the_one_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    help_text = capsys.readouterr().out
    shown = re.findall(r"^  (\d+)\s+(.+)$", help_text.split("exit codes:\n", 1)[1], re.M)
    assert [(int(code), meaning) for code, meaning in shown] == list(EXIT_CODES)


def test_checks_own_table_uses_the_same_codes() -> None:
    """check's table (docs/check.md, `check --help`) details the same codes: 4 is
    undecided, not a pass, in both; check adds no code of its own."""
    codes = dict(EXIT_CODES)
    assert {code for code, _ in CHECK_EXIT_CODES} <= set(codes)
    assert "not a pass" in dict(CHECK_EXIT_CODES)[4] and "not a pass" in codes[4]
    assert "unknown" not in codes[0]  # 0 is success only: an undecided log is 4


def _code(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _bad_line_log(tmp_path: Path) -> str:
    lines = Path(GOOD).read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-1]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_0_success(capsys: pytest.CaptureFixture[str]) -> None:
    assert _code(capsys, "check", "--no-progress", GOOD)[0] == 0
    assert _code(capsys, "replay", GOOD)[0] == 0


def test_1_a_finding_an_invalid_log_and_a_failing_vector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bad_line_log(tmp_path)
    assert _code(capsys, "check", "--no-progress", bad)[0] == 1
    assert _code(capsys, "replay", bad)[0] == 1
    # keep-empty-tools breaks HDR-2: the vector that sends `tools: []` fails against it
    document = next(d for d in load_dir(VECTORS_DIR) if d["group"] == "loop")
    vector = next(v for v in document["vectors"] if v["id"] == "loop/header/empty-tools")
    one = tmp_path / "one"
    one.mkdir()
    (one / "loop.json").write_text(file_text({**document, "vectors": [vector]}), encoding="utf-8")
    mutant = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"
    assert _code(capsys, "vectors", "run", str(one), "--adapter", mutant)[0] == 1
    assert _code(capsys, "vectors", "run", str(one))[0] == 0  # the model itself passes it


def test_2_usage_error_or_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.jsonl")
    assert _code(capsys, "check", "--no-progress", missing)[0] == 2
    code, out, err = _code(capsys, "replay", missing)
    assert code == 2 and out == "" and err.count("\n") == 1
    with pytest.raises(SystemExit) as exited:
        main(["replay", GOOD, "--format", "pdf"])
    assert exited.value.code == 2
    assert main([]) == 2  # no command: the usage goes to stderr


def test_3_an_internal_error_is_reported_without_a_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(args: object) -> int:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(sessionspec.rules_cmd, "run", broken)
    code, _, err = _code(capsys, "rules")
    assert code == 3
    assert err == "sessionspec: internal error (a bug in sessionspec, please report): ZeroDivisionError: planted\n"


def test_4_undecided_is_not_a_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _code(capsys, "check", "--no-progress", "--max-events", "5", "--format", "json", GOOD)
    assert code == 4 and json.loads(out.splitlines()[0])["verdict"] == "unknown"
    code, out, err = _code(capsys, "replay", "--max-events", "5", GOOD)
    # What can be rebuilt before the limit is shown; the replay is undecided, as check says.
    assert code == 4 and "check: unknown" in out.splitlines()[0] and "checker limit)" in err


def test_130_interrupted(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sessionspec.rules_cmd, "run", interrupted)
    assert _code(capsys, "rules") == (130, "", "sessionspec: interrupted\n")
