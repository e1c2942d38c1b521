"""What crosses processes pickles (issue 42): ``check --jobs`` sends each worker a ``Task`` and gets a ``FileReport``
back, the Dask path folds ``Summary`` values, and a user's Spark or Ray job ships reports.  In the compiled wheel these
are mypyc classes, whose default unpickling fails on a frozen class (``check --jobs 2`` hung): tests/packaging runs this
module on the compiled build, and these round trips are what it checks there."""

from __future__ import annotations

import pickle
from pathlib import Path

from sessionspec.check.checker import check_path
from sessionspec.check.report import Verdict
from sessionspec.check.summary import Summary, summarize
from sessionspec.check.task import Task
from sessionspec.model.log import Dialect
from tests.support import GROUNDTRUTH


def test_a_report_with_findings_writers_and_notes_comes_back_equal(tmp_path: Path) -> None:
    good = GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"
    lines = good.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:3] + lines[4:]))  # a seq gap: LOG-1 findings
    for path in (good, broken):
        report = check_path(str(path))
        assert report.writers or report.findings  # something beyond the verdict travels
        assert pickle.loads(pickle.dumps(report)) == report
    assert check_path(str(broken)).verdict is Verdict.INVALID


def test_a_task_and_a_summary_come_back_equal() -> None:
    task = Task(path="a/b.jsonl", forced=Dialect.D08, strict_quirks=True, max_events=7)
    assert pickle.loads(pickle.dumps(task)) == task
    summary = summarize([check_path(str(GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl"))]).merge(Summary(invalid=2))
    assert pickle.loads(pickle.dumps(summary)) == summary
