"""Failures that show their cause (issue 45, part 4) and the per-rule report (issue 46, part 6).

A failure's signature, runs of missing or extra items folded, long strings elided in the middle, the rule a
failing vector's first difference breaks apart from the rules it exercises, the whole operation in force in
text and JSON, the per-rule table of ``vectors run`` and ``conform``, and the mutants table's two rules.
"""

from __future__ import annotations

import json
import sys

import pytest

from sessionspec.cli import main
from sessionspec.conformance.conform.search import run_conform
from sessionspec.conformance.mutants import adapter_command
from sessionspec.conformance.vectors.command import VECTORS_DIR
from sessionspec.conformance.vectors.diff import Diff, collapse_runs, elide, signature
from sessionspec.conformance.vectors.rule_table import RuleTable

MUTANT = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant keep-empty-tools"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_signature_is_the_operation_and_the_first_path_without_indices() -> None:
    assert signature("send", [Diff("$.requests[3].messages[1].content", "a", "b", "…")]) == "send/requests.messages.content"
    assert signature("send", [Diff("$.appended[30]", "user/message 'late'", None,
                                   "$.appended: missing at [30]: user/message 'late'")]) == "send/appended:missing=user/message"
    assert signature("send", [Diff("$.requests[0].messages[5]", None, "user message 'x'",
                                   "$.requests[0].messages: extra at [5]: user message 'x'")]) == \
        "send/requests.messages:extra=user-message"
    assert signature("send", [Diff("$", "{}", "{…}", "$: rejected (LOOP-1) but a value was expected")]) == "send/$:rejected"
    assert signature("log", []) == "log/$"


def test_runs_of_missing_or_extra_items_fold_into_one_line() -> None:
    lines = ["$.appended: extra at [4]: assistant/chunk chunk=block-start",
             "$.appended: missing at [5]: turn/end reason=error",
             "$.appended: extra at [5]: assistant/chunk chunk=text-delta 'a'",
             "$.appended: extra at [6]: assistant/chunk chunk=block-end",
             "$.appended: extra at [7]: assistant/message 'a'",
             "$.requests: extra at [0]: request"]
    assert collapse_runs(lines) == ["$.appended: extra at [4..6]: 3 × assistant/chunk",
                                    "$.appended: missing at [5]: turn/end reason=error",
                                    "$.appended: extra at [7]: assistant/message 'a'",
                                    "$.requests: extra at [0]: request"]
    assert collapse_runs(lines[:2]) == lines[:2]  # fewer than three: as they are


def test_the_session_line_names_the_agent_the_seed_log_and_the_steps_before() -> None:
    from sessionspec.conformance.vectors.runner import session_line

    assert session_line({"agent": {"system": "S"}}, ()) == 'in force: init {"agent": {"system": "S"}}'
    assert session_line({"agent": {"system": "x" * 1000}, "log": ["{}"]}, ("send", "resume")) == (
        'in force: init {"agent": {"system": "' + "x" * 20 + "…[1,000 chars]…" + "x" * 20 + '"}} with a seed log of '
        "1 line (initial.log), then steps 0 send, 1 resume")
    assert session_line({}, ("send",)) == 'in force: init {"agent": {}}, then step 0 send'


def test_long_strings_are_elided_in_the_middle() -> None:
    op = {"op": "send", "replies": [{"toolCalls": [{"result": "a" * 20 + "r" * 1560 + "z" * 20}]}], "short": "kept"}
    shown = elide(op)
    assert isinstance(shown, dict) and shown["short"] == "kept"
    result = shown["replies"][0]["toolCalls"][0]["result"]
    assert result == "a" * 20 + "…[1,600 chars]…" + "z" * 20


def test_a_failing_vector_names_the_rule_its_first_difference_breaks(capsys: pytest.CaptureFixture[str]) -> None:
    """keep-empty-tools keeps ``tools: []`` (HDR-2 broken): the real single-turn vector, which exercises LOOP-5,
    LOOP-9, PFX-10 and WIRE-1, fails with its first difference in the request's tools: it breaks HDR-2."""
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", MUTANT, "--id", "gt/a-single-turn-no-prefix")
    code, out = _cli(capsys, *common)
    assert code == 1
    assert "FAIL gt/a-single-turn-no-prefix [LOOP-5, LOOP-9, PFX-10, WIRE-1] breaks HDR-2" in out
    assert "    breaks HDR-2: `canonical(h)` MUST return a new object with key order" in out
    assert "    exercises LOOP-5, LOOP-9, PFX-10, WIRE-1" in out
    assert "    a — one text turn, no prefix contributors" in out  # the vector's description
    code, out = _cli(capsys, *common, "--format", "json")
    (result,) = json.loads(out)["results"]
    assert result["breaks"] == ["HDR-2"] and result["signature"] == "send/requests.tools"
    assert result["steps"][0]["sent"]["op"] == "send"


def test_quiet_shows_the_failures_and_the_final_line(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", MUTANT, "--group", "groundtruth")
    _, out = _cli(capsys, *common, "-q")
    lines = out.splitlines()
    assert lines[-1].endswith("skipped") and "vectors passed" in lines[-1]
    assert all(line.startswith(("FAIL ", "    ")) for line in lines[:-1])
    assert "per rule" not in out and "verdict agreement" not in out
    assert _cli(capsys, *common, "--failures-only")[1] == out


def test_the_per_rule_report_of_vectors_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Each vector counts for every rule it names: the rules of the failing vectors have failures."""
    common = ("vectors", "run", str(VECTORS_DIR), "--adapter", MUTANT, "--group", "groundtruth")
    _, out = _cli(capsys, *common, "--format", "json")
    document = json.loads(out)
    rules = {r["rule"]: r for r in document["rules"]}
    failed = [r for r in document["results"] if r["status"] == "fail"]
    assert failed
    for rule in {rule for r in failed for rule in r["rules"]}:
        assert rules[rule]["failed"] == sum(1 for r in failed if rule in r["rules"])
    named = {rule for r in document["results"] for rule in r["rules"]}
    assert set(rules) == named
    assert all(r["passed"] + r["failed"] + r["skipped"] + r["expected"] == sum(1 for v in document["results"] if r["rule"] in v["rules"])
               for r in document["rules"])
    _, out = _cli(capsys, *common)
    assert "per rule (vectors): " in out and "  rule        passed  failed  skipped  expected" in out
    _, verbose = _cli(capsys, *common, "-v")
    assert all(f"\n  {rule:10} " in verbose for rule in named)


def test_rule_table_counts_and_shows() -> None:
    """Each rule is counted in one class of the summary: HDR-2 passed where it ran and was skipped elsewhere
    (before, such a rule was in no class, so the classes did not add up to the rules)."""
    table = RuleTable()
    table.add(["PFX-2", "LOOP-6", "HDR-2"], "passed")
    table.add(["LOOP-6"], "failed")
    table.add(["CMP-6", "HDR-2"], "skipped")
    table.add(["WIRE-3"], "expected")
    assert table.lines("traces") == [
        "per rule (traces): 1 of 5 rules all passed, 1 passed where they ran (others skipped), 1 with a failure, "
        "1 failing only as expected, 1 only skipped (-v: every rule)",
        "  rule        passed  failed  skipped  expected",
        "  LOOP-6           1       1        0         0",
        "  WIRE-3           0       0        0         1"]
    assert table.fared() == {"passed": 1, "passedWhereRun": 1, "failed": 1, "expected": 1, "skipped": 1}
    assert table.as_json()[0] == {"rule": "CMP-6", "passed": 0, "failed": 0, "skipped": 1, "expected": 0}


def test_a_conform_divergence_shows_the_whole_operation_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(capsys, "conform", "--adapter", MUTANT, "--examples", "20", "--no-progress", "--format", "json")
    divergence = json.loads(out)["divergence"]
    assert code == 1 and divergence["op"] == json.loads(divergence["sent"])
    assert divergence["ruleSentence"].startswith(f"{divergence['rule']}: ")
    assert divergence["key"] == f"conform/{divergence['signature']}"
    code, text = _cli(capsys, "conform", "--adapter", MUTANT, "--examples", "20", "--no-progress")
    assert f"    sent: {divergence['sent']}" in text and f"    expect with: {divergence['key']}  <reason>" in text
    assert f"    maps to {divergence['ruleSentence']}" in text
    rules = {r["rule"]: r for r in json.loads(out)["rules"]}
    assert rules[divergence["rule"]]["failed"] == 1


def test_the_shrinker_shrinks_payload_sizes() -> None:
    """snapshot-after-request breaks LOOP-6 whatever the size of the tool results: the shrunk trace's results
    are smaller than the 1,600 characters most of them are generated with."""
    divergence = run_conform(adapter_command("snapshot-after-request"), examples=200)
    assert divergence is not None
    sizes = [len(c["result"]) for op in divergence.trace for r in op.get("replies", []) for c in r.get("toolCalls", [])]
    assert sizes and max(sizes) < 1600


def test_the_mutants_table_shows_the_broken_rule_and_the_reported_one_apart(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(capsys, "mutants", "--only", "keep-empty-tools", "--examples", "20", "--no-progress", "--format", "json")
    (row,) = json.loads(out)["mutants"]
    assert code == 0 and row["breaks"] == "HDR-2" and row["vectorReports"] == ["HDR-2"]
    assert row["vectorRules"] and row["conformRule"] == "HDR-2"
    code, text = _cli(capsys, "mutants", "--only", "keep-empty-tools", "--examples", "20", "--no-progress")
    header, line = text.splitlines()[:2]
    assert header.split() == ["mutant", "breaks", "killed", "by", "vector", "vector", "reports", "conform", "reports"]
    assert header.index("vector reports") == line.index("HDR-2", line.index(row["vector"]))  # the columns line up
    assert line.split()[:4] == ["keep-empty-tools", "HDR-2", row["vector"], "HDR-2"]


def test_verbose_gives_each_named_rule_its_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from sessionspec.spec.registry import rule

    _, out = _cli(capsys, "vectors", "run", str(VECTORS_DIR), "--adapter", MUTANT, "--id", "gt/a-single-turn-no-prefix", "-v")
    for named in ("LOOP-5", "LOOP-9", "PFX-10", "WIRE-1"):
        assert f"    exercises {named}: {rule(named).sentence[:60]}" in out
