"""Issue 45 on an implementation in another language: the partial adapter (tests/partial_adapter/adapter.mjs,
Node) declares shapes, not only operations, and the kit tells it the truth: a shape refused at run time
leaves only that shape, ``init`` may decline, what ran is counted from its answers, an expected divergence
is recorded and the search goes on, a failure with another signature is a failure, a run below the floor
fails, and an expectations entry that expects nothing is an error.

The adapter's two modes: by default ``hello`` declares init/send/log/dispose/resume and five shapes
(tool-calls, tool-error, and three it gets wrong: reply-empty, request-inject, request-mutation); with
``--undeclared`` it declares nothing and refuses what it lacks with words that name it (``unsupported: reply
kind error-thrown``, ``unsupported: agent option requestConfig`` for an init), and ``configure``/``fork``
with a bare ``unsupported``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.shapes import SHAPES, table_markdown
from sessionspec.conformance.vectors.command import VECTORS_DIR

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
PARTIAL = f"{NODE} {ROOT / 'tests' / 'partial_adapter' / 'adapter.mjs'}"
UNDECLARED = f"{PARTIAL} --undeclared"
DECLARED_SHAPES = {"tool-calls", "tool-error", "reply-empty", "request-inject", "request-mutation"}
# Its three real failures (the shapes it gets wrong) and how each fails (diff.signature).
FAILURES = {"loop/derive/messages-are-immutable": "send/appended:extra=assistant/chunk",
            "shrunk/snapshot-after-request": "send/appended:missing=user/message",
            "shrunk/keep-empty-assistant": "send/appended:extra=assistant/chunk"}

needs_node = pytest.mark.skipif(NODE is None, reason="no node runtime on PATH (the partial adapter is JavaScript)")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = _cli(capsys, *argv, "--format", "json")
    document: dict[str, Any] = json.loads(out)
    return code, document


def _expectations(tmp_path: Path, text: str) -> str:
    path = tmp_path / "expected.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_shape_is_named_in_one_table_of_the_docs() -> None:
    """docs/conformance.md shows the table shapes.py holds (names, what carries each, its rule)."""
    doc = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert table_markdown() in doc
    assert len({s.name for s in SHAPES}) == len(SHAPES)


@needs_node
def test_a_shape_refused_at_run_time_leaves_only_that_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``unsupported: reply kind error-thrown`` names the shape reply-error-thrown: the vectors that use it are
    skipped with those very words and counted under that name (never ``op send``), and conform leaves out that
    shape only: sends go on being generated and answered after it."""
    code, document = _json(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", UNDECLARED, "--min-run", "0")
    results = {r["id"]: r for r in document["results"]}
    thrown = [r for r in results.values() if r["skipReason"] == "unsupported: reply kind error-thrown"]
    assert thrown and all(r["skipped"] == ["feature reply-error-thrown"] for r in thrown)
    assert not any(r["skipped"] == ["op send"] for r in results.values())
    assert "op send" not in {u["need"] for u in document["unlock"]}
    _, text, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", UNDECLARED, "-v", "--min-run", "0")
    assert f"SKIP {thrown[0]['id']} [{', '.join(thrown[0]['rules'])}] (unsupported: reply kind error-thrown)" in text

    code, run = _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "40", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/*  not implemented yet\n"))
    dropped = {d["words"]: d for d in run["dropped"]}
    assert dropped["unsupported: reply kind error-thrown"] == {"needs": ["feature reply-error-thrown"],
                                                             "words": "unsupported: reply kind error-thrown", "op": "send"}
    assert all("op send" not in d["needs"] for d in run["dropped"]) and run["degraded"] is True
    assert dropped["unsupported"]["needs"] in (["op configure"], ["op fork"])  # words that name no shape: the operation
    assert run["executed"]["operations"]["send"] >= 20 and run["counts"]["run"] == 40


@needs_node
def test_every_rule_is_in_one_class_of_the_per_rule_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """The partial adapter passes gt/a-single-turn-no-prefix, which names LOOP-5, LOOP-9, PFX-10 and WIRE-1,
    and skips other vectors naming them: those rules passed where they ran.  The summary's classes add up to
    the rules in the table (before, such rules were in no class: 0 + 4 + 0 + 176 of 185)."""
    _, document = _json(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL)
    rows = {r["rule"]: r for r in document["rules"]}
    partly = {rule for rule, r in rows.items() if r["passed"] and r["skipped"] and not (r["failed"] or r["expected"])}
    assert {"LOOP-5", "LOOP-9", "PFX-10", "WIRE-1"} <= partly
    _, text, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL)
    (summary,) = [line for line in text.splitlines() if line.startswith("per rule (vectors): ")]
    found = re.fullmatch(r"per rule \(vectors\): (\d+) of (\d+) rules all passed, (\d+) passed where they ran "
                         r"\(others skipped\), (\d+) with a failure, (\d+) failing only as expected, (\d+) only skipped "
                         r"\(-v: every rule\)", summary)
    assert found is not None, summary
    clean, total, where_run, failing, expected, skipped = (int(n) for n in found.groups())
    assert total == len(rows) and clean + where_run + failing + expected + skipped == total
    assert where_run == len(partly) and failing == sum(1 for r in rows.values() if r["failed"])


@needs_node
def test_a_failure_shows_the_session_its_step_ran_in(capsys: pytest.CaptureFixture[str]) -> None:
    """The undeclared adapter takes ``persistence`` as declared but ignores a seed log: loop/decision/0021 then
    fails at step 0 with every turn number and seq off by the seed.  The failure says the step ran over a seed
    log of 12 lines, which is the cause, without opening the vector file (JSON: ``initial``)."""
    ident = "loop/decision/0021"
    _, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", UNDECLARED, "--id", ident)
    assert '    in force: init {"agent": {"system": "S", "tools": []}} with a seed log of 12 lines (initial.log)\n' \
           "    step 0: sent " in out
    _, document = _json(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", UNDECLARED, "--id", ident)
    (result,) = document["results"]
    assert result["status"] == "fail" and len(result["initial"]["log"]) == 12


@needs_node
def test_init_may_decline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The undeclared adapter answers an init whose agent has a request config ``unsupported: agent option
    requestConfig``: the vector is skipped with those words, and conform leaves the request config out of its
    agents and runs on (before issue 45: exit 2)."""
    _, document = _json(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", UNDECLARED,
                        "--id", "loop/turn/request-config", "--min-run", "0")
    (result,) = document["results"]
    assert (result["status"], result["skipReason"], result["skipped"]) == (
        "skip", "unsupported: agent option requestConfig", ["feature request-config"])
    code, run = _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "30", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/*  not implemented yet\n"))
    assert {"needs": ["feature request-config"], "words": "unsupported: agent option requestConfig", "op": "init"} in run["dropped"]
    # Every trace that ran was started by an answered init, and so were the skipped ones not refused at init.
    assert code == 0 and run["counts"]["run"] == 30
    assert 30 <= run["executed"]["operations"]["init"] < 30 + run["counts"]["skipped"]


@needs_node
def test_what_conform_reports_as_executed_is_what_the_adapter_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted from the adapter's answers, not the generator's: the operations conform reports executed are
    those the adapter logged it executed (every divergence expected, so no shrink replays), and the shapes are
    only those it declared."""
    oplog = tmp_path / "ops.log"
    monkeypatch.setenv("PARTIAL_ADAPTER_OPLOG", str(oplog))
    code, run = _json(capsys, "conform", "--adapter", PARTIAL, "--examples", "25", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/*  the three shapes it gets wrong\n"))
    assert code == 0 and run["status"] in ("pass", "xfail") and run["counts"]["run"] == 25
    assert run["executed"]["operations"] == dict(Counter(oplog.read_text(encoding="utf-8").split()))
    assert set(run["executed"]["shapes"]) <= DECLARED_SHAPES and run["degraded"] is False


@needs_node
def test_the_coverage_report_is_of_what_the_adapter_answered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The undeclared adapter refuses every interrupt (``unsupported: interrupts``): the generator drew them (the
    run says so, DEGRADED), but no interrupt was answered, so the coverage report visits no window and no
    abort kind (before issue 45 it counted the model's side: the windows the generator drew)."""
    code, out, _ = _cli(capsys, "conform", "--adapter", UNDECLARED, "--examples", "40", "--seed", "11", "--no-progress",
                        "--no-decisions", "--expect", _expectations(tmp_path, "conform/*  not implemented yet\n"))
    assert code == 0 and "feature interrupts (send answered 'unsupported: interrupts')" in out
    assert "  interrupt windows: 0/14 (not visited: " in out and "  abort kinds: 0/3 cancel 0, dispose 0, foreign 0" in out
    started = re.search(r"coverage of what the adapter answered, in the (\d+) traces it started:", out)
    executed = re.search(r"executed by the adapter: \d+ operations \(.*init (\d+)", out)
    assert started is not None and executed is not None and started.group(1) == executed.group(1)


@needs_node
def test_a_conform_entry_keyed_on_a_rule_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``conform/LOOP-6`` keyed on the rule a divergence is mapped to (a guess that also hid real LOOP-6
    divergences): a usage error saying what to write instead."""
    code, _, err = _cli(capsys, "conform", "--adapter", PARTIAL, "--examples", "5", "--no-progress",
                        "--expect", _expectations(tmp_path, "conform/LOOP-6  old style\n"))
    assert code == 2 and "'conform/LOOP-6': conform entries key on how a divergence fails, not on the rule" in err
    assert "write conform/SIGNATURE, the 'expect with:' line conform prints" in err


@needs_node
def test_an_expected_divergence_is_recorded_and_the_search_goes_on(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Without expectations the search stops at the partial adapter's first divergence; with its key listed
    (and the others'), every divergence is recorded with a count and the search runs all 30 traces."""
    code, first = _json(capsys, "conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress")
    assert code == 1 and first["counts"]["run"] < 30 and first["counts"]["failed"] == 1
    code, run = _json(capsys, "conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/send/*  empty replies, injects, mutations\n"))
    assert (code, run["status"], run["counts"]["run"], run["divergence"]) == (0, "xfail", 30, None)
    assert sum(e["count"] for e in run["expected"]) == run["counts"]["xfailed"] >= 1
    assert first["divergence"]["key"] in {e["key"] for e in run["expected"]}
    _, text, _ = _cli(capsys, "conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/send/*  empty replies, injects, mutations\n"))
    assert f"XFAIL {first['divergence']['key']} (empty replies, injects, mutations): seen in " in text


@needs_node
def test_a_failure_with_another_signature_is_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An entry may pin how its vector fails (``@SIGNATURE``): pinned right it is xfail, pinned wrong the
    vector fails, saying both signatures; conform the same for a divergence."""
    ident = "shrunk/keep-empty-assistant"
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--id", ident)
    right = _expectations(tmp_path, f"{ident} @send/appended:* empty replies log an empty text block\n")
    code, document = _json(capsys, *common, "--expect", right)
    assert code == 0 and document["results"][0]["status"] == "xfail" and document["results"][0]["signature"] == FAILURES[ident]
    wrong = _expectations(tmp_path, f"{ident} @send/requests.* empty replies are sent\n")
    code, out, _ = _cli(capsys, *common, "--expect", wrong)
    assert code == 1 and f"FAIL {ident} " in out
    assert f"listed (empty replies are sent) as failing @send/requests.*, but fails @{FAILURES[ident]}" in out
    code, run = _json(capsys, "conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress",
                      "--expect", _expectations(tmp_path, "conform/send/* @send/requests.* only requests differ\n"))
    assert code == 1 and run["status"] == "fail" and not run["divergence"]["signature"].startswith("send/requests.")


@needs_node
def test_a_run_below_the_floor_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The partial adapter runs 6 of the vectors (its 3 failures listed as expected): green by default
    (something ran), red under --min-run 50% or --fail-on-skip; the same through the pytest plugin."""
    expect = _expectations(tmp_path, "".join(f"{i} @{s} a known bug\n" for i, s in FAILURES.items()))
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--expect", expect)
    code, document = _json(capsys, *common)
    ran = document["selected"] - document["counts"]["skip"]
    assert (code, ran, document["floor"]) == (0, 6, {"rule": "min-run 1", "problem": None})
    code, out, _ = _cli(capsys, *common, "--min-run", "50%")
    share = 100 * ran / document["selected"]
    assert code == 1 and f"FAIL: below the floor: 6 of {document['selected']} vectors ran ({share:.1f} %), less than --min-run 50%" in out
    code, out, _ = _cli(capsys, *common, "--fail-on-skip")
    assert code == 1 and f"FAIL: below the floor: {document['counts']['skip']} vectors skipped (--fail-on-skip)" in out
    assert _cli(capsys, *common, "--min-run", "6")[0] == 0 and _cli(capsys, *common, "--min-run", "7")[0] == 1
    with pytest.raises(SystemExit) as usage:
        main([*common, "--min-run", "lots"])
    assert usage.value.code == 2 and "give a count (N) or a share (P%)" in capsys.readouterr().err


@needs_node
def test_conform_below_the_floor_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The undeclared adapter refuses shapes at run time, so conform skips traces: --fail-on-skip fails."""
    expect = _expectations(tmp_path, "conform/*  not implemented yet\n")
    code, run = _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "20", "--no-progress", "--expect", expect)
    assert code == 0 and run["counts"]["skipped"] >= 1
    code, run = _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "20", "--no-progress", "--expect", expect,
                      "--fail-on-skip")
    assert code == 1 and run["status"] == "fail" and run["floor"]["problem"].endswith("traces skipped (--fail-on-skip)")
    # --min-run: a share of the traces started (run and skipped), or a count of those run.
    started = run["counts"]["run"] + run["counts"]["skipped"]
    share = 100 * run["counts"]["run"] / started
    code, low = _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "20", "--no-progress", "--expect", expect,
                      "--min-run", f"{share + 1:.0f}%")
    assert (code, low["status"], low["floor"]["rule"]) == (1, "fail", f"min-run {share + 1:.0f}%")
    assert low["floor"]["problem"] == (f"{run['counts']['run']} of {started} traces ran ({share:.1f} %), less than "
                                       f"--min-run {share + 1:.0f}%")
    assert _json(capsys, "conform", "--adapter", UNDECLARED, "--examples", "20", "--no-progress", "--expect", expect,
                 "--min-run", f"{int(share)}%")[0] == 0
    code, out, _ = _cli(capsys, "conform", "--adapter", UNDECLARED, "--examples", "20", "--no-progress", "--expect", expect,
                        "--min-run", "21", "-q")
    assert code == 1 and out.splitlines()[0] == "FAIL: below the floor: 20 traces ran, fewer than --min-run 21"


@needs_node
def test_an_expectations_entry_that_expects_nothing_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An entry that matches only vectors this adapter skips (loop/prefix/* needs contributors) or no vector at
    all is reported and fails the run; conform's entries, and entries for a file not loaded, are not judged."""
    expect = _expectations(tmp_path, "loop/prefix/*  no contributors yet\nloop/no-such-*  a typo\n"
                                     "conform/*  conform's\n" + "".join(f"{i} a known bug\n" for i in FAILURES))
    code, document = _json(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--expect", expect)
    problems = document["expectationProblems"]
    assert code == 1 and len(problems) == 2
    assert any("'loop/prefix/*' matches only skipped vectors" in p for p in problems)
    assert any("'loop/no-such-*' matches no vector" in p for p in problems)
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR / "codec.json"), "--adapter", PARTIAL, "--expect",
                        _expectations(tmp_path, "loop/x  another file's\n"), "--min-run", "0")
    assert code == 0 and "EXPECTATIONS" not in out


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
@needs_node
def test_the_plugin_keeps_the_words_floors_and_names_items_by_node_id(pytester: pytest.Pytester,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Through pytest, from a subdirectory of the rootdir: a runtime refusal's words are the skip reason, and
    both SKIPPED and XFAIL lines name the item ``sessionspec/<group>::<id>`` (pytest would print it as a path
    relative to the invocation directory, ``../sessionspec/…``); the floor fails the session."""
    pytester.makeini("[pytest]\n")
    sub = pytester.mkdir("sub")
    expect = sub / "expected.txt"
    expect.write_text("shrunk/keep-empty-assistant  empty replies\n", encoding="utf-8")
    monkeypatch.chdir(sub)
    select = "keep-empty-assistant or loop/turn/request-config"
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "-rsx", "--sessionspec-adapter", UNDECLARED,
                                "--sessionspec-examples", "0", "--sessionspec-expect", str(expect), "-k", select)
    result.assert_outcomes(skipped=1, xfailed=1)
    out = result.stdout.str()
    assert "SKIPPED [1] sessionspec/loop::loop/turn/request-config: unsupported: agent option requestConfig" in out
    assert "XFAIL sessionspec/shrunk::shrunk/keep-empty-assistant - empty replies" in out
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "--sessionspec-adapter", UNDECLARED,
                                "--sessionspec-examples", "0", "--sessionspec-expect", str(expect), "-k", select,
                                "--sessionspec-min-run", "100%")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED below the floor: 1 of 2 sessionspec items ran (50.0 %), less than --sessionspec-min-run 100%" in \
        result.stdout.str()
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "--sessionspec-adapter", UNDECLARED,
                                "--sessionspec-examples", "0", "--sessionspec-expect", str(expect), "-k", select,
                                "--sessionspec-fail-on-skip")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED below the floor: 1 sessionspec items skipped (--sessionspec-fail-on-skip)" in result.stdout.str()
    loop_only = sub / "loop.txt"
    loop_only.write_text("loop/turn/request-config  needs request configs\n", encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "addopts=", "--sessionspec-adapter", UNDECLARED,
                                "--sessionspec-examples", "0", "--sessionspec-expect", str(loop_only), "-k", select)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "'loop/turn/request-config' matches only skipped vectors (1)" in result.stdout.str()
    loop_only.write_text("loop/no-such-vector  a typo\n", encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "--sessionspec-adapter", UNDECLARED, "--sessionspec-expect",
                                str(loop_only))
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "matches no vector" in result.stderr.str()


def test_the_partial_adapter_is_plain_node(tmp_path: Path) -> None:
    """It needs nothing but the node runtime (no package): a fresh machine gets node from its package manager."""
    source = (ROOT / "tests" / "partial_adapter" / "adapter.mjs").read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.startswith("import ")]
    assert imports and all('from "node:' in line for line in imports)
    if NODE is not None:
        done = subprocess.run([NODE, str(ROOT / "tests" / "partial_adapter" / "adapter.mjs")], input='{"id":1,"op":"hello"}\n',
                              capture_output=True, text=True, timeout=60, env={"PATH": os.environ.get("PATH", ""),
                                                                                "HOME": str(tmp_path)})
        hello = json.loads(done.stdout)["ok"]
        assert set(hello["features"]) == DECLARED_SHAPES  # shapes declared, not only operations
