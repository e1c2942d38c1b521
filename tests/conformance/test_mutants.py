"""Mutants prove the conformance kit can fail: every mutant adapter (the model
with one rule broken, patched inside its own ``serve-model --mutant`` process)
is killed both by the committed vectors and by ``conform``."""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.conform.search import run_conform
from sessionspec.conformance.mutants import MUTANTS, adapter_command, kill_table, table_text
from sessionspec.conformance.vectors.command import VECTORS_DIR, load_dir, run_vectors
from sessionspec.spec.registry import rule_ids

# Enough generated traces for every mutant under the derandomized search (each
# kill takes a few hundred milliseconds; a survivor would cost the whole budget).
CONFORM_EXAMPLES = 200

@pytest.fixture(scope="module")
def vectors() -> list[dict[str, Any]]:
    return load_dir(VECTORS_DIR)


def test_there_are_at_least_twelve_mutants_each_breaking_a_registered_rule() -> None:
    assert len(MUTANTS) >= 12
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert {m.rule for m in MUTANTS} <= rule_ids()


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_is_killed_by_the_vectors(vectors: list[dict[str, Any]], mutant: Any) -> None:
    results = run_vectors(vectors, adapter_command(mutant.name), stop_at_first=True)
    killer = next((r for r in results if not r.passed), None)
    assert killer is not None, f"{mutant.name} ({mutant.rule}) survived every vector"
    # The killing vector names rules and says what differed.
    assert killer.rules and killer.failures


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_is_killed_by_its_shrunk_vector(vectors: list[dict[str, Any]], mutant: Any) -> None:
    """The shrunk conform trace recorded for each mutant (vectors/shrunk.json) still kills it."""
    (shrunk,) = [{**f, "vectors": [v for v in f["vectors"] if v["id"] == f"shrunk/{mutant.name}"]}
                 for f in vectors if f["group"] == "shrunk"]
    (result,) = run_vectors([shrunk], adapter_command(mutant.name))
    assert not result.passed and result.rules == (mutant.rule,)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_is_killed_by_conform(mutant: Any) -> None:
    divergence = run_conform(adapter_command(mutant.name), examples=CONFORM_EXAMPLES)
    assert divergence is not None, f"{mutant.name} ({mutant.rule}) survived {CONFORM_EXAMPLES} conform traces"
    assert divergence.rule in rule_ids()
    assert divergence.trace, "the divergence comes with a replayable trace"


def test_kill_table_reports_the_killers() -> None:
    kills = kill_table(VECTORS_DIR, examples=30, names=("keep-empty-tools",))
    text = table_text(kills)
    (kill,) = kills
    assert kill.vector is not None and kill.conform_rule is not None
    assert "keep-empty-tools" in text and "1/1 mutants killed" in text


def test_mutants_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(m.name in listed for m in MUTANTS)
    assert main(["mutants", "--only", "nope"]) == 2
    assert main(["mutants", "--only", "prefix-after-history", "--examples", "20"]) == 0
    assert "1/1 mutants killed by both" in capsys.readouterr().out
