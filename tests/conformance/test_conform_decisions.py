"""conform reports which decisions of the model its run reached (issue 43 item 3), in text and in JSON."""

from __future__ import annotations

import json
import sys

import pytest

from sessionspec.cli import main
from sessionspec.spec.decision_table import reachable_outcomes

ADAPTER = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"


def test_conform_json_counts_the_decisions_the_run_reached(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", ADAPTER, "--examples", "4", "--format", "json", "--no-progress"]) == 0
    decisions = json.loads(capsys.readouterr().out)["decisions"]
    assert decisions["reachable"] == len(reachable_outcomes())
    assert 0 < decisions["reached"] < decisions["reachable"]
    assert decisions["missing"] == decisions["reachable"] - decisions["reached"] == sum(decisions["missingByModule"].values())
    # the loop runs for every trace: its turn decisions are reached, so the loop cannot miss all of its outcomes
    reachable_turn = sum(1 for o in reachable_outcomes() if o.startswith("loop.turn:"))
    assert decisions["missingByModule"].get("loop.turn", 0) < reachable_turn
    # a conform trace runs the loop, never the deployment's rules: every outcome of model/deployment.py is missing and
    # counted among those the protocol cannot reach, and no more are counted than are missing
    deployment = sum(1 for o in reachable_outcomes() if o.startswith("deployment:"))
    assert deployment <= decisions["missingOutOfReach"] <= decisions["missing"]


def test_conform_text_names_the_share_and_the_modules_left(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", ADAPTER, "--examples", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("decisions: the model took "))
    assert f"of its {len(reachable_outcomes())} reachable decision outcomes" in line
    assert "not reached, by module: " in out
    assert "no trace of the adapter protocol can reach (their groups in docs/decisions.md say why)" in out


def test_conform_no_decisions_leaves_them_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", ADAPTER, "--examples", "2", "--format", "json", "--no-decisions"]) == 0
    assert "decisions" not in json.loads(capsys.readouterr().out)
