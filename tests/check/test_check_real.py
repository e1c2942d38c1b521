"""Every real log (corpus and ground truth) gets the verdict the rules give it (FMT-7).

A real log is ``valid`` unless it is listed below with the reason it is not:
replay scripts are ``unknown`` (outside the loop model), a hand-edited fixture
is ``invalid`` with the rule it breaks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionspec.check.checker import DialectSource, Verdict, check_path
from sessionspec.model.log import Dialect
from tests.support import GROUNDTRUTH, REAL

_REPLAY = "a replay script: bare assistant/chunk events (a scripted model reply), no turns or steps"
# path under tests/data/real -> (verdict, why / rules that must be among the findings)
NOT_VALID: dict[str, tuple[Verdict, frozenset[str]]] = {
    "a55f148516/examples/headless-agent/tests/snapshots/ralph-loop/session.1.jsonl": (Verdict.UNKNOWN, frozenset()),
    "a55f148516/examples/headless-agent/tests/snapshots/ralph-loop/session.2.jsonl": (Verdict.UNKNOWN, frozenset()),
    "611615650f/examples/headless-agent/tests/snapshots/ralph-loop/session.1.jsonl": (Verdict.UNKNOWN, frozenset()),
    "611615650f/examples/headless-agent/tests/snapshots/ralph-loop/session.2.jsonl": (Verdict.UNKNOWN, frozenset()),
    "611615650f/examples/headless-agent/tests/snapshots/subagent-settlement/child.replay.jsonl": (Verdict.UNKNOWN, frozenset()),
    # Not listed, so valid: acp-agent agent-instructions plants a checkpoint-sourced
    # replace with no compaction bracket open.  The real harness wrote this
    # snapshot with its companions active, so it accepted it: DIA-19 vetoes a
    # checkpoint that names the wrong id *of an open bracket* only (QF-1).
}

REAL_FILES = sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*.jsonl"))
GROUNDTRUTH_FILES = sorted(p.relative_to(GROUNDTRUTH).as_posix() for p in GROUNDTRUTH.rglob("*.jsonl"))


def test_corpus_is_present() -> None:
    assert len(REAL_FILES) > 100 and len(GROUNDTRUTH_FILES) >= 17
    assert set(NOT_VALID) <= set(REAL_FILES)


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_log_verdict(name: str) -> None:
    report = check_path(str(REAL / name))
    expected, rules = NOT_VALID.get(name, (Verdict.VALID, frozenset()))
    assert report.verdict is expected, [f.text(name) for f in report.findings]
    if expected is Verdict.INVALID:
        assert {f.rule for f in report.findings} & rules
    if expected is Verdict.UNKNOWN:
        assert report.reason is not None and "replay script" in report.reason, _REPLAY


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_log_dialect_matches_its_commit(name: str) -> None:
    """FMT-10: where a file shows dialect markers, they match the commit it came from."""
    report = check_path(str(REAL / name))
    if report.dialect_source is DialectSource.DETECTED:
        assert report.dialect is (Dialect.A55 if name.startswith("a55f148516/") else Dialect.D08)


@pytest.mark.parametrize("name", GROUNDTRUTH_FILES)
def test_groundtruth_log_is_valid(name: str) -> None:
    report = check_path(str(GROUNDTRUTH / name))
    assert report.verdict is Verdict.VALID, [f.text(name) for f in report.findings]
    assert report.dialect is Dialect.A55


def test_groundtruth_fork_child_reads_seed_length_from_sidecar() -> None:
    """The ground-truth child has no header line; sessions.json gives seedLength 24."""
    report = check_path(str(GROUNDTRUTH / "k-fork-seeded-child" / "session.jsonl"))
    assert report.first_live_seq == 24 and report.verdict is Verdict.VALID


def test_groundtruth_files_are_headerless_and_corpus_files_are_not() -> None:
    first = Path(GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl").read_text().splitlines()[0]
    assert '"type":"session"' not in first
    corpus_first = Path(REAL / REAL_FILES[0]).read_text().splitlines()[0]
    assert corpus_first.startswith('{"type":"session"')
