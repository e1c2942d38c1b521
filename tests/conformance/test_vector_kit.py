"""Issue 27: the conformance kit for an implementer half-way there.

Capabilities (``hello`` declares operations and features; the rest is skipped, never failed), ``--expect``
(xfail/xpass), aligned failure diffs, selection (``PATH``, ``--id/--group/--rule``, 0 selected is exit 2),
and a partial adapter written in another language (``tests/partial_adapter/adapter.mjs``, Node) that gets a
clean run: its passes, its skips by capability and its real failures, each shown once with an aligned diff.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.capabilities import Capabilities, from_hello, unlock_ranking, vector_needs
from sessionspec.conformance.adapter.protocol import AdapterError
from sessionspec.conformance.conform.exhaustive import ALPHABET, INITIAL_AGENTS
from sessionspec.conformance.conform.outcome import Dropped, Tally
from sessionspec.conformance.conform.search import run_conform
from sessionspec.conformance.vectors.command import VECTORS_DIR
from sessionspec.conformance.vectors.diff import collapse_runs, diff
from sessionspec.conformance.vectors.expectations import ExpectationsError, parse_expectations
from sessionspec.conformance.vectors.files import load_dir

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
PARTIAL = f"{NODE} {ROOT / 'tests' / 'partial_adapter' / 'adapter.mjs'}"
needs_node = pytest.mark.skipif(NODE is None, reason="no node runtime on PATH (the partial adapter is JavaScript)")


def _vectors() -> dict[str, dict[str, Any]]:
    return {v["id"]: v for d in load_dir(VECTORS_DIR) for v in d["vectors"]}


def _schema_errors(name: str, document: Any) -> list[str]:
    """Real output against its schema in docs/schemas (tests/tools/test_schemas.py checks the passing shapes)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads((ROOT / "docs" / "schemas" / name).read_text(encoding="utf-8")))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- capabilities


def test_hello_declarations_are_read_and_nothing_declared_means_everything() -> None:
    assert from_hello({"protocol": "sessionspec-adapter/2"}) == Capabilities()
    declared = from_hello({"protocol": "p", "operations": ["init", "send"], "features": []})
    assert declared.missing(["op init", "op send", "op hello"]) == ()
    assert declared.missing(["op check", "feature D08"]) == ("op check", "feature D08")
    assert Capabilities().missing(["op check", "feature D08"]) == ()
    with pytest.raises(AdapterError, match="operations must be a list of names"):
        from_hello({"protocol": "p", "operations": "init"})


def test_a_vector_needs_its_operations_and_the_features_its_content_uses() -> None:
    vectors = _vectors()
    # The real single-turn scenario: an agent with no contributors, one send, the final log.
    assert vector_needs(vectors["gt/a-single-turn-no-prefix"]) == ("op init", "op log", "op send")
    check = next(v for i, v in vectors.items() if i.startswith("check/") and v["steps"][0]["op"].get("dialect") == "D08")
    assert {"op check", "feature D08"} <= set(vector_needs(check))
    prefix = vectors["loop/prefix/compose-once"]
    assert "feature contributors" in vector_needs(prefix)


def test_the_capabilities_that_unlock_most_skips_come_first() -> None:
    skipped = [("op check",), ("op check",), ("op check", "feature D08"), ("op replay",), ("feature D08", "op compact")]
    assert unlock_ranking(skipped) == [("op check", 2, 3), ("op replay", 1, 1), ("feature D08", 0, 2), ("op compact", 0, 1)]


# --------------------------------------------------------------------------- aligned diffs


def _event(seq: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": seq, "data": data}


def _events_pattern(events: list[dict[str, Any]]) -> dict[str, Any]:
    from sessionspec.conformance.vectors.build import recorded_expectation

    pattern = recorded_expectation({"appended": json.loads(json.dumps(events))})
    assert isinstance(pattern, dict)
    return pattern


def test_one_missing_event_is_one_line_not_a_cascade() -> None:
    """The expected turn has a ``change`` header at [3]; the answer lacks it.  Index-wise every later event
    differs (type and seq); aligned, it is one missing item and one folded line for the shifted seqs."""
    kinds: list[tuple[str, dict[str, Any]]] = [("turn/start", {"turn": 1, "trigger": {"kind": "message"}}), ("user/message", {"content": []}),
             ("step/start", {"step": 1, "turn": 1}), ("request/header", {"header": {}, "reason": "change"}),
             ("step/end", {"step": 1, "turn": 1}), ("turn/end", {"reason": {"kind": "completed"}, "turn": 1})]
    expected = [_event(i, k, d) for i, (k, d) in enumerate(kinds)]
    actual = [_event(i, k, d) for i, (k, d) in enumerate(kinds[:3] + kinds[4:])]
    lines = [d.text for d in diff(_events_pattern(expected), {"appended": actual})]
    assert lines == ["$.appended: missing at [3]: request/header reason=change",
                     "$.appended: 2 seq/sourceEventSeqs differences after [3] follow from the missing or extra items"]


def test_an_extra_message_in_a_request_is_named_by_role_and_text() -> None:
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "model": "m"}
    got = {**request, "messages": [*request["messages"], {"role": "user", "content": [{"type": "text", "text": "late"}]}]}
    lines = [d.text for d in diff({"eq": request}, got)]
    assert lines == ["$.messages: extra at [1]: user message 'late'"]


def test_a_matching_answer_has_no_diff() -> None:
    events = [_event(0, "turn/start", {"turn": 1})]
    assert diff(_events_pattern(events), {"appended": events}) == []


# --------------------------------------------------------------------------- expectations


def test_expectations_text_and_json_spellings() -> None:
    text = parse_expectations("# known\nloop/prefix/*   no contributors yet\ncheck/x\tnot done\n")
    assert text.reason_for("loop/prefix/compose-once") == "no contributors yet"
    assert text.reason_for("check/x") == "not done" and text.reason_for("check/y") is None
    assert parse_expectations('{"a/*": "r"}').reason_for("a/b") == "r"
    assert parse_expectations('[{"id": "a", "reason": "r"}]').reason_for("a") == "r"
    with pytest.raises(ExpectationsError, match="has no reason"):
        parse_expectations("loop/x\n")
    with pytest.raises(ExpectationsError):
        parse_expectations('{"a": ""}')


# --------------------------------------------------------------------------- selection and safety


def test_selection_by_file_id_group_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR / "loop.json"), "--id", "loop/prefix/compose-once")
    assert code == 0 and "1/1 vectors passed, 0 failed, 0 skipped" in out
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--group", "replay", "--rule", "WIRE-*", "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["selected"] == len(document["results"]) > 0
    assert {r["group"] for r in document["results"]} == {"replay"}
    assert all(any(rule.startswith("WIRE-") for rule in r["rules"]) for r in document["results"])


@pytest.mark.parametrize("argv", [("--id", "no/such/*"), ("--group", "nope"), ("--rule", "XYZ-1")])
def test_a_selection_of_no_vector_is_a_usage_error(argv: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "vectors", "run", str(VECTORS_DIR), *argv)
    assert code == 2 and "no vector selected" in err and "passed" not in out


def test_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "vectors", "run", str(tmp_path / "nothing.json"))
    assert code == 2 and "no such file or directory" in err


def test_expect_turns_a_failure_into_xfail_and_a_pass_into_xpass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The mutant keep-empty-tools fails shrunk/keep-empty-tools (its own regression vector, HDR-2) and passes
    check/valid/a-single-turn-no-prefix (the log checker is not the loop: the mutant leaves it alone)."""
    adapter = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"
    expect = tmp_path / "expected.txt"
    expect.write_text("shrunk/keep-empty-tools  empty tools kept (HDR-2)\ncheck/valid/a-single-turn-no-prefix  not yet\n", encoding="utf-8")
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", adapter, "--id", "shrunk/keep-empty-tools",
              "--id", "check/valid/a-single-turn-no-prefix", "--expect", str(expect))
    code, out, _ = _cli(capsys, *common)
    assert code == 1, out  # the listed vector that passes: the file is out of date
    assert "XPASS check/valid/a-single-turn-no-prefix" in out and "remove it from the file" in out
    assert "0/2 vectors passed, 0 failed, 0 skipped, 1 failed as expected, 1 passed unexpectedly" in out
    expect.write_text("shrunk/keep-empty-tools  empty tools kept (HDR-2)\n", encoding="utf-8")
    code, out, _ = _cli(capsys, *common, "--format", "json")
    statuses = {r["id"]: r["status"] for r in json.loads(out)["results"]}
    assert code == 0 and statuses == {"shrunk/keep-empty-tools": "xfail", "check/valid/a-single-turn-no-prefix": "pass"}


# --------------------------------------------------------------------------- the partial adapter


@needs_node
def test_the_partial_adapter_gets_a_clean_run(capsys: pytest.CaptureFixture[str]) -> None:
    """It declares init/send/log/dispose/resume and five shapes, and implements text and tool-call replies.
    Expected, reasoned from docs/conformance.md: the real single-turn scenario passes; every vector needing
    an undeclared operation or feature is skipped; the three vectors whose replies use what it does not
    implement fail, each once, with an aligned diff: a ``requestInject`` (its message joins the log and the
    next request, LOOP-6), an ``empty`` reply (no assistant content, DER-5), a ``mutationError`` (the turn
    ends in error, WIRE-3)."""
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--format", "json")
    document = json.loads(out)
    status = {r["id"]: r for r in document["results"]}
    assert code == 1 and _schema_errors("vectors-run.v3.schema.json", document) == []
    assert document["capabilities"] == {"operations": ["dispose", "init", "log", "resume", "send"],
                                        "features": ["reply-empty", "request-inject", "request-mutation", "tool-calls",
                                                     "tool-error"]}
    assert status["gt/a-single-turn-no-prefix"]["status"] == "pass"
    assert status["loop/prefix/compose-once"]["status"] == "skip"
    assert status["loop/prefix/compose-once"]["skipped"] == ["feature contributors"]
    failed = {i for i, r in status.items() if r["status"] == "fail"}
    assert {"shrunk/snapshot-after-request", "shrunk/keep-empty-assistant", "loop/derive/messages-are-immutable"} <= failed
    assert all(r["status"] in ("pass", "fail", "skip") for r in status.values())
    assert all(r["skipped"] for r in status.values() if r["status"] == "skip")
    inject = [d["text"] for d in status["shrunk/snapshot-after-request"]["diffs"]]
    assert "$.appended: missing at [30]: user/message 'late'" in inject
    assert "$.requests[3].messages: missing at [5]: user message 'late'" in inject
    assert document["unlock"][0]["need"] == "op check"

    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL)
    for ident in failed:
        assert out.count(f"FAIL {ident} ") == 1
    assert "    step 0: sent {\"op\": \"send\"" in out
    assert f"{len(status) - len(failed) - document['counts']['pass']} skipped" in out
    assert "skipped for lack of: op check (" in out
    rerun = next(x for x in out.splitlines() if x.startswith("rerun one: ")).removeprefix("rerun one: ")
    bin_dir = Path(sys.executable).parent
    done = subprocess.run(rerun, shell=True, capture_output=True, text=True, cwd=ROOT,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert done.returncode == 1 and "0/1 vectors passed, 1 failed, 0 skipped" in done.stdout, done.stderr


@needs_node
def test_a_long_failure_is_cut_with_a_count_and_verbose_shows_all(capsys: pytest.CaptureFixture[str]) -> None:
    """The partial adapter ignores a request mutation: the turn it should end in error streams on, so the
    answer has extra chunks and a missing error end.  The text folds the run of extra chunks into one line
    (collapse_runs) and shows at most 8 lines, then a count; -v shows every line."""
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", PARTIAL, "--id", "loop/derive/messages-are-immutable")
    _, out, _ = _cli(capsys, *common, "--format", "json")
    texts = [d["text"] for d in json.loads(out)["results"][0]["diffs"]]
    folded = collapse_runs(texts)
    assert len(folded) < len(texts) and any(" × assistant/chunk" in line for line in folded)
    _, out, _ = _cli(capsys, *common, "-v")
    assert "more (-v shows all)" not in out and out.count("\n      $.") == len(folded)
    assert all(f"      {line}" in out for line in folded)
    _, out, _ = _cli(capsys, *common)
    shown = min(8, len(folded))
    assert out.count("\n      $.") == shown
    assert (f"… {len(folded) - 8} more (-v shows all)" in out) == (len(folded) > 8)


@needs_node
def test_conform_generates_only_declared_operations(capsys: pytest.CaptureFixture[str]) -> None:
    """No configure, fork, contributors, compaction or steering reach the partial adapter (it would answer
    ``unsupported``, an error, or diverge on a feature it lacks); the divergence it has is a real one."""
    code, out, err = _cli(capsys, "conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress", "--format", "json")
    document = json.loads(out)
    assert code in (0, 1) and "adapter failure" not in err
    assert _schema_errors("conform.v3.schema.json", document) == []
    if document["divergence"] is not None:
        ops = {op["op"] for op in document["divergence"]["trace"]}
        assert ops <= {"send", "log", "dispose", "resume"}
        assert "contributors" not in document["divergence"]["initial"]["agent"]


def test_the_printed_replay_line_runs_as_printed(tmp_path: Path) -> None:
    """``conform --out`` creates the missing directories; the ``replay with:`` line is a shell command that
    reproduces the divergence (exit 1) exactly as printed, even with a space in the path."""
    out = tmp_path / "new dir" / "deeper" / "divergence.json"
    adapter = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(bin_dir / "sessionspec"), "conform", "--adapter", adapter, "--examples", "20",
                           "--no-progress", "--out", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1 and out.is_file(), done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("replay with: "))
    replayed = subprocess.run(line.removeprefix("replay with: "), shell=True, capture_output=True, text=True, env=env,
                              cwd=ROOT)
    assert replayed.returncode == 1 and "0/1 vectors passed, 1 failed" in replayed.stdout, replayed.stderr


# --------------------------------------------------------------------------- the vector index


def test_the_pack_manifest_indexes_every_vector(tmp_path: Path) -> None:
    import io
    import tarfile

    from sessionspec.conformance.vectors.pack import build_pack

    with tarfile.open(fileobj=io.BytesIO(build_pack(VECTORS_DIR, pack_version="0"))) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/MANIFEST.json"))
        extracted = tar.extractfile(member)
        assert extracted is not None
        index = {v["id"]: v for v in json.loads(extracted.read())["vectors"]}
    vectors = _vectors()
    assert set(index) == set(vectors)
    single = index["gt/a-single-turn-no-prefix"]
    assert single == {"id": "gt/a-single-turn-no-prefix", "group": "groundtruth", "file": "vectors/groundtruth.json",
                      "rules": vectors["gt/a-single-turn-no-prefix"]["rules"], "operations": ["init", "log", "send"],
                      "features": []}
    assert "contributors" in index["loop/prefix/compose-once"]["features"]


def test_lists_of_patterns_that_are_not_values_still_align() -> None:
    """An ``any`` item (an event time, an error text) stands for no value; a list of them that differs in
    length is still aligned (the real harness's answers hit this: an internal error before)."""
    pattern = {"array": [{"array": [{"any": {}}, {"eq": 1}]}, {"eq": 2}]}
    lines = [d.text for d in diff(pattern, [[1], 2])]
    assert lines and all("[0]" in line for line in lines)


@needs_node
def test_an_adapter_that_declares_nothing_is_learned_from_its_unsupported_answers(capsys: pytest.CaptureFixture[str]) -> None:
    """Declaring nothing means "everything until I say unsupported": vectors whose operation it refuses are
    skipped (never failed), and conform drops a refused operation from its traces instead of stopping
    (before issue 27 it stopped with exit 2 at the first one)."""
    undeclared = f"{PARTIAL} --undeclared"
    code, out, _ = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", undeclared, "--format", "json")
    status = {r["id"]: r for r in json.loads(out)["results"]}
    assert status["check/valid/a-single-turn-no-prefix"]["status"] == "skip"
    assert status["check/valid/a-single-turn-no-prefix"]["skipped"] == ["op check"]
    assert status["gt/a-single-turn-no-prefix"]["status"] == "pass"
    code, out, err = _cli(capsys, "conform", "--adapter", undeclared, "--examples", "50", "--no-progress")
    assert code in (0, 1) and "adapter failure" not in err
    # The summary line, as the vectors run's: a trace that used a refused operation is skipped (and the
    # operation dropped), the others passed, or failed (the first divergence, exit 1).
    summary = re.search(r"^(\d+)/(\d+) traces passed, ([01]) failed, (\d+) skipped$", out, re.MULTILINE)
    assert summary is not None, out
    passed, total, failed, skipped = map(int, summary.groups())
    assert passed + failed + skipped == total and failed == (code == 1) and skipped >= 1
    assert re.search(r"^DEGRADED: left out at run time \(their traces skipped, not failed\): .*"
                     r"op configure \(configure answered 'unsupported'\)", out, re.MULTILINE), out
    assert "restricted to what the adapter declares" not in out  # it declared nothing


@needs_node
def test_exhaustive_conform_covers_only_the_declared_scope(capsys: pytest.CaptureFixture[str]) -> None:
    """Declared: init, send, log, dispose, resume; no feature.  Of the scope of docs/conformance.md 4.1 that
    leaves the agent without contributors and four symbols: `text`, `tools`, `dispose`, `resume` (`blocked`
    queues steering, `change` is a configure, the interrupted sends need interrupts).  Depth 1: 4 traces."""
    code, out, err = _cli(capsys, "conform", "--adapter", PARTIAL, "--exhaustive", "--depth", "1", "--jobs", "1",
                          "--no-progress")
    assert "scope: 1 initial agents x 4 operations" in out and "traces depth 1: 4 " in out, out + err
    assert code == 0 and "no divergence in any trace of up to 1 operations" in out
    assert "4/4 traces passed, 0 failed, 0 skipped" in out
    assert (f"restricted to what the adapter declares: 1 of {len(INITIAL_AGENTS)} initial agents, 4 of {len(ALPHABET)} "
            "operations") in out


def test_conform_counts_its_traces_as_the_vectors_run_does() -> None:
    """The model in-process declares nothing and agrees with itself: every generated trace passes, none is
    skipped, nothing restricted or dropped; what it executed is counted from its answers."""
    tally = Tally()
    assert run_conform(None, examples=12, tally=tally) is None
    assert (tally.passed, tally.failed, tally.skipped, tally.declared, tally.dropped) == (12, 0, 0, None, [])
    assert tally.lines()[0] == "12/12 traces passed, 0 failed, 0 skipped"
    assert tally.operations["init"] == 12 and tally.operations["log"] == 12
    assert tally.lines()[1].startswith(f"executed by the adapter: {sum(tally.operations.values())} operations (")
    shown = Tally(passed=3, failed=1, skipped=2, declared="operations init, send",
                  dropped=[Dropped(("op fork",), "unsupported", "fork"),
                           Dropped(("feature reply-empty",), "unsupported: empty replies", "send")])
    assert shown.lines() == ["3/6 traces passed, 1 failed, 2 skipped",
                             "restricted to what the adapter declares: operations init, send",
                             "DEGRADED: left out at run time (their traces skipped, not failed): op fork (fork answered "
                             "'unsupported'); feature reply-empty (send answered 'unsupported: empty replies')"]


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
@needs_node
def test_a_divergence_and_an_expected_one_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With 30 traces conform finds a divergence of the partial adapter; listed in ``--expect`` by its key
    (``conform/SIGNATURE``, the ``expect with:`` line) it is xfail (exit 0) and the search runs on to 30
    traces.  Both documents follow conform.v3."""
    common = ("conform", "--adapter", PARTIAL, "--examples", "30", "--no-progress", "--format", "json")
    code, out, _ = _cli(capsys, *common, "--out", str(tmp_path / "d" / "div.json"))
    found = json.loads(out)
    assert code == 1 and found["status"] == "fail" and _schema_errors("conform.v3.schema.json", found) == []
    assert found["divergence"]["diffs"] and found["divergence"]["replay"].startswith("sessionspec vectors run ")
    key = found["divergence"]["key"]
    assert key == f"conform/{found['divergence']['signature']}" and "[" not in key
    expect = tmp_path / "expect.txt"
    expect.write_text(f"{key}  not fixed yet\n", encoding="utf-8")
    code, out, _ = _cli(capsys, *common, "--expect", str(expect))
    again = json.loads(out)
    assert _schema_errors("conform.v3.schema.json", again) == []
    seen = {e["key"]: e for e in again["expected"]}
    assert seen[key]["reason"] == "not fixed yet" and seen[key]["count"] >= 1
    # The expected one no longer ends the search: the traces after it ran (another divergence may end it).
    assert again["counts"]["run"] > found["counts"]["run"]
    assert (code, again["status"]) in ((0, "xfail"), (1, "fail"))
    assert again["status"] == "xfail" or again["divergence"]["key"] != key


@needs_node
def test_exhaustive_conform_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "conform", "--adapter", PARTIAL, "--exhaustive", "--depth", "1", "--jobs", "1",
                        "--no-progress", "--format", "json")
    document = json.loads(out)
    assert code == 0 and _schema_errors("conform.v3.schema.json", document) == []
    assert (document["mode"], document["depth"], document["traces"], document["status"]) == ("exhaustive", 1, 4, "pass")

