"""``sessionspec check`` as a CI linter (issue 46): ``--select``/``--ignore`` and the ``[tool.sessionspec]``
table, ``--exclude``, the GitHub, SARIF and JUnit formats, knock-on findings grouped under their cause, the
real loader's answer worded apart from the verdict, and a bar of the bytes read for one large file.

Expected findings come from the rules: a ``surfaceOp`` of ``"none"`` breaks SURF-3 (``surfaceOp`` is
``"append"`` or a replace object) and the load refuses the log (LOG-8); the loop rules then miss the
message the fold did not take (LOOP-3: no prompt before the turn's steps)."""

from __future__ import annotations

import io
import json
import os
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

from sessionspec.check.config import Exclusion
from sessionspec.check.selection import Selection, SelectorError, parse_selectors
from sessionspec.cli import main
from tests.support import GROUNDTRUTH, REAL

GOOD = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"
SAMPLE = Path(__file__).resolve().parents[2] / "sessionspec" / "samples" / "simulated-150-s1.jsonl"
SARIF_SCHEMA = Path(__file__).resolve().parent / "sarif" / "sarif-schema-2.1.0.json"
CHECK_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "check.v4.schema.json"
RALPH = REAL / "a55f148516" / "examples" / "headless-agent" / "tests" / "snapshots" / "ralph-loop"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--no-progress", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _bad_prompt(tmp_path: Path) -> tuple[Path, int]:
    """The sample with the prompt of a multi-step turn (seq 57) given ``surfaceOp: "none"``: its line."""
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    index = next(i for i, r in enumerate(rows) if r["type"] == "user/message" and r["seq"] == 57)
    rows[index]["surfaceOp"] = "none"
    path = tmp_path / "prompt.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    return path, index + 1


# --------------------------------------------------------------------------- knock-ons


def test_the_findings_that_follow_a_refused_event_are_grouped_under_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, line = _bad_prompt(tmp_path)
    code, out, _ = _run(capsys, str(path))
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == f"{path}:{line}: SURF-3 seq 57: user/message carries an invalid surfaceOp (real loader: would refuse to load the log)"
    assert lines[1].startswith(f"  caused by SURF-3 at line {line}: 3 more: LOOP-3 x3 (lines ") and lines[1].endswith("(-v shows each)")
    assert lines[2].startswith(f"{path}: invalid [A55 detected, 180 events]") and len(lines) == 4
    code, out, _ = _run(capsys, "-v", str(path))
    knock_ons = [x for x in out.splitlines() if x.endswith(f"[follows from SURF-3 at line {line}]")]
    assert len(knock_ons) == 3 and all(": LOOP-3 seq " in x for x in knock_ons)
    code, out, _ = _run(capsys, "--format", "json", str(path))
    findings = json.loads(out.splitlines()[0])["findings"]
    assert findings[0]["causedBy"] is None
    assert [f["causedBy"] for f in findings[1:]] == [{"rule": "SURF-3", "line": line, "seq": 57}] * 3
    validator = Draft202012Validator(json.loads(CHECK_SCHEMA.read_text(encoding="utf-8")))
    assert [e.message for e in validator.iter_errors(json.loads(out.splitlines()[0]))] == []


def test_a_valid_file_the_loader_refuses_does_not_read_as_two_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    """ralph-loop's empty session: valid (nothing a harness could not write), but its header line lacks
    delegationDepth, so the real JSONL file load would refuse it (QF-14): said as the loader's conditional."""
    code, out, _ = _run(capsys, str(RALPH / "session.jsonl"))
    verdict = out.splitlines()[0]
    assert verdict.startswith(f"{RALPH / 'session.jsonl'}: valid [A55 default, 0 events]")
    assert verdict.endswith("[real loader: would refuse to load the log]") and "loader refuses" not in verdict


# --------------------------------------------------------------------------- select / ignore / config


def test_selection_takes_the_most_specific_selector() -> None:
    assert Selection().everything and Selection().keeps("SURF-3")
    assert not Selection(ignore=("SURF",)).keeps("SURF-3") and Selection(ignore=("SURF",)).keeps("LOOP-3")
    assert Selection(select=("SURF",), ignore=("SURF-3",)).keeps("SURF-5")
    assert not Selection(select=("SURF",), ignore=("SURF-3",)).keeps("SURF-3")
    assert Selection(select=("SURF-3",), ignore=("SURF",)).keeps("SURF-3")
    assert not Selection(select=("SURF",), ignore=("SURF",)).keeps("SURF-3")  # a tie: ignored
    assert not Selection(select=("LOOP",)).keeps("SURF-3") and Selection(select=("ALL",), ignore=("Q",)).keeps("QF-14")
    assert parse_selectors(["surf-3, loop", "Q"], "--select") == ("SURF-3", "LOOP", "Q")
    with pytest.raises(SelectorError, match="'SURF-99' names no rule"):
        parse_selectors(["SURF-99"], "--select")


def test_ignoring_a_rule_hides_its_findings_and_decides_on_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _bad_prompt(tmp_path)
    code, out, _ = _run(capsys, "--ignore", "LOOP", str(path))
    assert code == 1 and out.count("LOOP-3") == 0 and "3 findings of rules left out by --select/--ignore not shown" in out
    code, out, _ = _run(capsys, "--ignore", "SURF-3,LOOP-3", "--format", "json", str(path))
    record = json.loads(out.splitlines()[0])
    assert code == 0 and record["verdict"] == "valid" and record["findings"] == [] and record["ignored"] == 4
    code, out, _ = _run(capsys, "--select", "LOOP", "--format", "json", str(path))
    record = json.loads(out.splitlines()[0])
    assert code == 1 and {f["rule"] for f in record["findings"]} == {"LOOP-3"} and record["ignored"] == 1
    # Their cause is not shown: each knock-on says what it follows from.
    code, out, _ = _run(capsys, "--select", "LOOP", str(path))
    assert out.count("[follows from SURF-3 at line") == 3


def test_a_checker_limit_cannot_be_ignored_into_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--max-events 100 stops reading the broken sample at line 80 (FMT-1, a limit), after SURF-3 and its three
    LOOP-3 (invalid); ignoring every rule leaves out those four, never the limit: the file was not read to its end,
    so it is unknown (exit 4), not valid."""
    path, line = _bad_prompt(tmp_path)
    code, out, _ = _run(capsys, "--max-events", "100", "--format", "json", str(path))
    record = json.loads(out.splitlines()[0])
    assert code == 1 and record["verdict"] == "invalid"
    assert [(f["rule"], f["line"], f["kind"]) for f in record["findings"]] == [("SURF-3", line, "invalid")] + [
        ("LOOP-3", n, "invalid") for n in (40, 50, 69)] + [("FMT-1", 80, "limit")]
    for ignore in ("ALL", "FMT,SURF,LOOP"):
        code, out, _ = _run(capsys, "--max-events", "100", "--ignore", ignore, "--format", "json", str(path))
        record = json.loads(out.splitlines()[0])
        assert code == 4 and record["verdict"] == "unknown" and record["reason"].startswith("limit: FMT-1: more than 100 events")
        assert [f["rule"] for f in record["findings"]] == ["FMT-1"] and record["ignored"] == 4


def test_an_unknown_selector_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--ignore", "NOPE-1", str(GOOD))
    assert code == 2 and out == "" and "--ignore: 'NOPE-1' names no rule, area or quirk" in err and "SURF" in err


def test_the_nearest_pyproject_table_is_read_and_the_command_line_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _bad_prompt(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.sessionspec]\nignore = ["SURF-3", "LOOP-3"]\n', encoding="utf-8")
    deeper = tmp_path / "sub" / "deeper"
    deeper.mkdir(parents=True)
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")  # no table: passed over
    monkeypatch.chdir(deeper)
    assert _run(capsys, str(path))[0] == 0
    assert _run(capsys, "--ignore", "LOOP-3", str(path))[0] == 1  # the option replaces the key
    assert _run(capsys, "--isolated", str(path))[0] == 1
    other = tmp_path / "other.toml"
    other.write_text('[tool.sessionspec]\nselect = ["LOOP"]\n', encoding="utf-8")
    code, out, _ = _run(capsys, "--config", str(other), "--format", "json", str(path))
    assert code == 1 and {f["rule"] for f in json.loads(out.splitlines()[0])["findings"]} == {"LOOP-3"}


@pytest.mark.parametrize(("table", "says"), [('select = "SURF"\nfoo = 1\n', "has no key 'foo'"),
                                             ("ignore = [1]\n", "ignore must be a list of strings"),
                                             ('select = ["NOPE"]\n', "select: 'NOPE' names no rule")])
def test_a_bad_table_is_a_usage_error_naming_the_file(table: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.sessionspec]\n" + table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, str(GOOD))
    assert code == 2 and out == "" and str(tmp_path / "pyproject.toml") in err and says in err


# --------------------------------------------------------------------------- exclude


def test_exclude_leaves_out_what_a_walk_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """check of a folder holding two replay scripts (unknown: exit 4) and a good log: --exclude leaves the scripts
    out (by a name on the way, or a path from the current directory), and the run passes; a file named on the
    command line is checked all the same."""
    (tmp_path / "logs" / "ralph-loop").mkdir(parents=True)
    for name in ("session.1.jsonl", "session.2.jsonl"):
        (tmp_path / "logs" / "ralph-loop" / name).write_bytes((RALPH / name).read_bytes())
    (tmp_path / "logs" / "good.jsonl").write_bytes(GOOD.read_bytes())
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "logs")
    assert code == 4 and "--exclude GLOB" in err
    for pattern in ("ralph-loop", "session.?.jsonl", "logs/ralph-loop", "logs/**/session.*.jsonl"):
        code, out, err = _run(capsys, "--exclude", pattern, "logs")
        assert code == 0 and err == "" and out.splitlines()[-1].startswith("checked 1 file: 1 valid"), pattern
    code, out, _ = _run(capsys, "--exclude", "ralph-loop", "logs/ralph-loop/session.1.jsonl")
    assert code == 4
    # Everything a walk finds left out: no file to check (exit 2), and the message says the exclusion did it.
    code, out, err = _run(capsys, "--exclude", "*.jsonl", "logs")
    assert code == 2 and out == ""
    assert err == "sessionspec check: no session-log files (*.jsonl, *.jsonl.zst) under logs: the 3 found are all left out by --exclude or the configuration's exclude\n"
    (tmp_path / "pyproject.toml").write_text('[tool.sessionspec]\nexclude = ["logs/ralph-loop"]\n', encoding="utf-8")
    assert _run(capsys, "logs")[0] == 0


def test_exclusion_patterns() -> None:
    root = Path("/p")
    exclusion = Exclusion(tuple((p, root) for p in ("*.replay.jsonl", "a/b", "x/**/y.jsonl")))
    assert exclusion.excludes("/p/q/s.replay.jsonl") and exclusion.excludes("/p/a/b/c/d.jsonl")
    assert not exclusion.excludes("/p/z/a/b/d.jsonl")  # a path pattern is anchored at its root
    assert exclusion.excludes("/p/x/y.jsonl") and exclusion.excludes("/p/x/1/2/y.jsonl") and not exclusion.excludes("/p/x/z.jsonl")
    assert not Exclusion() and not Exclusion().excludes("/p/a/b/c.jsonl")


# --------------------------------------------------------------------------- GitHub, SARIF, JUnit


def test_github_annotations_name_file_line_and_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path, line = _bad_prompt(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "--format", "github", str(path), str(RALPH / "session.1.jsonl"), str(GOOD))
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == (f"::error file=prompt.jsonl,line={line},title=sessionspec SURF-3 seq 57::user/message carries an invalid "
                        f"surfaceOp (real loader: would refuse to load the log)%0Acaused by SURF-3 at line {line}: 3 more: LOOP-3 x3 "
                        + lines[0].split("LOOP-3 x3 ", 1)[1])
    assert lines[1].startswith(f"::warning file={RALPH / 'session.1.jsonl'},title=sessionspec%3A unknown::a replay script")
    assert lines[2] == "checked 3 files: 1 valid, 1 invalid, 1 unknown, 0 unreadable" and len(lines) == 3
    code, out, _ = _run(capsys, "--format", "github", "-v", str(path))
    assert sum(x.startswith("::error file=prompt.jsonl") for x in out.splitlines()) == 4
    assert f"follows from SURF-3 at line {line}" in out


def _sarif_validator() -> Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def test_sarif_is_valid_sarif_2_1_0_with_what_code_scanning_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path, line = _bad_prompt(tmp_path)
    missing = tmp_path / "missing.jsonl"
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "--format", "sarif", str(path), str(RALPH / "session.1.jsonl"), str(GOOD), str(missing))
    log = json.loads(out)
    assert code == 2
    validator = _sarif_validator()
    assert [e.message for e in validator.iter_errors(log)] == []
    (run,) = log["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["SURF-3", "LOOP-3", "sessionspec/unknown", "sessionspec/unreadable"]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("SURF-3", "error")] + [("LOOP-3", "error")] * 3 + [
        ("sessionspec/unknown", "warning"), ("sessionspec/unreadable", "error")]
    first = results[0]
    assert first["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "prompt.jsonl", "uriBaseId": "%SRCROOT%"},
                                                         "region": {"startLine": line}}
    assert all(rules[r["ruleIndex"]] == r["ruleId"] and len(r["partialFingerprints"]) == 1 for r in results)
    assert results[1]["properties"]["causedBy"] == {"rule": "SURF-3", "line": line, "seq": 57}
    assert results[1]["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": line}
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 2}]
    # Negative control: the schema rejects a result without a message.
    del results[0]["message"]
    assert list(validator.iter_errors(log))


def test_junit_has_a_testcase_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _bad_prompt(tmp_path)
    code, out, _ = _run(capsys, "--format", "junit", str(GOOD), str(path), str(RALPH / "session.1.jsonl"), str(tmp_path / "missing.jsonl"))
    assert code == 2
    root = ElementTree.fromstring(out.split("\n", 1)[1])
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "1", "1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [str(GOOD), str(path), str(RALPH / "session.1.jsonl"), str(tmp_path / "missing.jsonl")]
    assert [[child.tag for child in c if child.tag not in ("system-out", "properties")] for c in cases] == [[], ["failure"], ["skipped"], ["error"]]
    # A file whose check could not decide some rules says which as the case's properties (issue 44): the valid
    # log's assistant messages open A55 post-step points, which only the deployment's facts decide (CMP-6).
    listed = [(p.get("name"), p.get("value", "").split(":")[0]) for p in cases[0].iter("property")]
    assert ("not-decided CMP-6", "deployment") in listed and cases[3].find("properties") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message", "").startswith("invalid: 4 findings, the first SURF-3 at line")
    assert (failure.text or "").count("[follows from SURF-3") == 3


# --------------------------------------------------------------------------- progress for one large file


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.mark.interpreted_only("patches BYTES_BAR_MIN, a constant the compiled checker binds natively")
def test_one_large_file_gets_a_bar_of_the_bytes_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import sessionspec.check.command as command

    monkeypatch.setattr(command, "BYTES_BAR_MIN", 1000)  # the sample is 20 kB; the threshold is what is tested elsewhere
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    size = os.path.getsize(SAMPLE)
    assert main(["check", str(SAMPLE)]) == 0
    drawn = terminal.text
    assert "[" + "#" * 30 + "]" in drawn and " 100%" in drawn and "KiB" in drawn and drawn.endswith("\r")
    assert f"{size / 1024:.1f} KiB" in drawn
    assert capsys.readouterr().out.startswith(f"{SAMPLE}: valid")
    terminal.text = ""
    assert main(["check", "-q", str(SAMPLE)]) == 0 and terminal.text == ""


def test_the_bytes_bar_starts_at_4_mib_of_one_local_file_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The threshold itself (sparse files: only their size is read): one file of 4 MiB gets a bar of its bytes,
    one byte less none; never for two files (the bar of files decides), stdin, or off a terminal."""
    from sessionspec.check.command import BYTES_BAR_MIN, _bytes_bar

    assert BYTES_BAR_MIN == 4 * 1024 * 1024  # docs/cli.md and check --help say 4 MiB
    large, small = tmp_path / "large.jsonl", tmp_path / "small.jsonl"
    with large.open("wb") as handle:
        handle.truncate(BYTES_BAR_MIN)
    with small.open("wb") as handle:
        handle.truncate(BYTES_BAR_MIN - 1)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    drawn = _bytes_bar([str(large)], True)
    assert drawn is not None and drawn[0] == str(large) and drawn[1].total == BYTES_BAR_MIN and drawn[1].unit == "bytes"
    assert _bytes_bar([str(small)], True) is None and _bytes_bar([str(large)], False) is None
    assert _bytes_bar([str(large), str(small)], True) is None and _bytes_bar(["-"], True) is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _bytes_bar([str(large)], True) is None


# --------------------------------------------------------------------------- the same documents with --dask


@pytest.mark.slow  # Dask's local scheduler: the quick loop leaves it out
@pytest.mark.parametrize("fmt", ["sarif", "junit", "github"])
def test_dask_gives_the_same_ci_documents(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The documents are built from the json records, so a run on Dask (its 'synchronous' scheduler) writes what
    a local run writes, the selection and the exclusion applied alike."""
    pytest.importorskip("dask.bag", reason="the optional extra is not installed: pip install -e '.[dask]'")
    path, _ = _bad_prompt(tmp_path)
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "session.1.jsonl").write_bytes((RALPH / "session.1.jsonl").read_bytes())
    (tmp_path / "good.jsonl").write_bytes(GOOD.read_bytes())
    monkeypatch.chdir(tmp_path)
    argv = ("--format", fmt, "--ignore", "LOOP-3", "--exclude", "skip", ".")
    local = _run(capsys, *argv)
    on_dask = _run(capsys, "--dask", "synchronous", *argv)
    assert local[0] == on_dask[0] == 1 and on_dask[1] == local[1] and "session.1.jsonl" not in local[1]
    assert "prompt.jsonl" in local[1] and "LOOP-3" not in local[1]
