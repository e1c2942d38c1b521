"""``conform --exhaustive``: every trace of the small scope, in a fixed order, against the model's answers
(sessionspec/conformance/conform/exhaustive.py; docs/conformance.md section 4.1)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.conformance.conform.exhaustive import ALPHABET, INITIAL_AGENTS, extensions, leaves, run_exhaustive, trace_counts
from sessionspec.conformance.mutants import adapter_command


def test_the_scope_counts_follow_from_the_alphabet_and_its_rules() -> None:
    """90 symbols: 3 plain sends, dispose, resume, change, and 2 sends x 14 windows x 3 kinds interrupted.
    Depth 2, per initial agent: after a plain send any of 90; after dispose only text, resume, change (3);
    after resume or change all but a repeat (89 each); after an interrupted send only the 6 uninterrupted
    symbols (one interruption per trace): 3*90 + 3 + 89 + 89 + 84*6 = 955; times 4 agents = 3820."""
    assert len(ALPHABET) == 3 + 3 + 2 * 14 * 3 and len(INITIAL_AGENTS) == 4
    assert trace_counts(2) == (360, 3820)


def test_the_scope_rules_hold_on_every_trace_of_depth_3() -> None:
    """One interrupted send per trace; no repeated change; no resume right after resume; on a disposed
    instance neither a second dispose nor any send but ``text``."""
    def walk(prefix: tuple[str, ...], depth: int) -> int:
        if depth == 0:
            return 1
        n = 0
        for s in extensions([next(a for a in ALPHABET if a.name == name) for name in prefix]):
            names = (*prefix, s.name)
            assert sum("!" in name for name in names) <= 1 and names.count("change") <= 1
            assert "resume" not in [a for a, b in zip(names, names[1:]) if a == b]
            after_dispose = names[names.index("dispose") + 1:] if "dispose" in names else ()
            live = after_dispose[after_dispose.index("resume"):] if "resume" in after_dispose else ()
            assert all(n in ("text", "resume", "change") for n in after_dispose[:len(after_dispose) - len(live)])
            n += walk(names, depth - 1)
        return n
    assert walk((), 3) * len(INITIAL_AGENTS) == trace_counts(3)[2]


def test_the_run_order_is_deterministic_and_every_leaf_carries_the_models_answers() -> None:
    first = [(leaf.agent, [s.name for s in leaf.symbols]) for leaf in leaves(1)]
    assert first == [(leaf.agent, [s.name for s in leaf.symbols]) for leaf in leaves(1)]
    assert len(first) == 360 and first[0] == ("no-contributor", ["text"])
    leaf = next(leaves(1))
    # init, the one operation, then log.
    assert len(leaf.answers) == 3 and leaf.answers[0] == {"length": 0} and "log" in leaf.answers[2]


def test_the_model_agrees_with_itself_on_every_trace_of_depth_1() -> None:
    result = run_exhaustive(None, depth=1, jobs=1)
    assert result.divergence is None and result.run == 360 and result.counts == (360,)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_mutant_is_caught_at_depth_1_with_the_first_diverging_trace(jobs: int) -> None:
    """The requeued-turns-outlive-interrupt mutant runs the second re-queued steering item after the
    interruption fired in the first (QF-9).  In the run's order (agents, then text, tools, blocked, dispose,
    resume, change, then tools and blocked interrupted, window by window, cancel first) the first trace that
    shows it is the blocked send cancelled at after-assembly: the two prologue windows fire in the blocked
    turn itself, before anything is re-queued, and after-assembly is first passed in turn 2.  The same trace
    is reported whatever the number of adapters."""
    result = run_exhaustive(adapter_command("requeued-turns-outlive-interrupt"), depth=1, jobs=jobs)
    assert result.divergence is not None and result.agent == "no-contributor"
    (op,) = result.divergence.trace
    assert op["prompt"]["blockReason"] == "policy"
    assert op["interrupt"] == {"window": "after-assembly", "kind": "cancel"}


def test_conform_exhaustive_cli(capsys: pytest.CaptureFixture[str]) -> None:
    serve = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"
    assert main(["conform", "--exhaustive", "--depth", "1", "--jobs", "2", "--no-progress", "--adapter", serve]) == 0
    out = capsys.readouterr().out
    assert "depth 1: 360" in out and "no divergence in any trace of up to 1 operations" in out
    assert main(["conform", "--exhaustive", "--depth", "0", "--adapter", serve]) == 2


def test_an_adapter_that_crashes_is_restarted_and_the_run_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43: the adapter dies after 250 answers (every restarted one too); each crash is counted, the first
    of its kind reported with what the adapter wrote on its standard error, and every trace of depth 1 is still
    sent; exit 1."""
    hostile = f"{sys.executable} {Path(__file__).parents[1] / 'hostile_adapter.py'} {','.join(['model'] * 250 + ['scream'])}"
    code = main(["conform", "--adapter", hostile, "--exhaustive", "--depth", "1", "--jobs", "1", "--no-progress",
                 "--timeout", "20"])
    out = capsys.readouterr().out
    summary = re.search(r"^(\d+)/(\d+) traces passed, 0 failed, 0 skipped, (\d+) crashed the adapter$", out, re.MULTILINE)
    assert code == 1 and summary is not None, out
    passed, total, crashed = map(int, summary.groups())
    assert total == 360 and crashed >= 2 and passed == total - crashed
    assert "CRASH (crash/" in out and "    | hostile_adapter: fatal: out of cheese" in out
