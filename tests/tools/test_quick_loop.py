"""The quick loop (issue 42): ``pytest -m "not slow"`` leaves out the slow tests and still touches every area."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _collected(*options: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", *options],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line for line in done.stdout.splitlines() if line.startswith("tests/")}


@pytest.mark.slow  # minutes under load: out of the quick loop (issue 42 item 4), in .ci/run
def test_the_quick_loop_leaves_out_the_slow_tests_and_keeps_every_area() -> None:
    everything, quick = _collected(), _collected("-m", "not slow")
    slow = everything - quick
    assert quick < everything
    # What the README names as slow is out of the quick loop: CrossHair, the browser, Dask, the wheel builds.
    # (tests/check/test_dask.py collects nothing without the optional extra: an install of `[dev]` alone.)
    dask = ("tests/check/test_dask.py::",) if importlib.util.find_spec("dask") is not None else ()
    for marked in ("tests/proofs/test_proofs.py::test_ci_subset_finds_no_counterexample", *dask,
                   "tests/replay/test_replay_browser.py::", "tests/packaging/test_builds.py::"):
        assert any(item.startswith(marked) for item in slow), marked
    areas = {path.name for path in (ROOT / "tests").iterdir() if path.is_dir() and any(path.glob("test_*.py"))}
    kept = {item.split("/")[1] for item in quick}
    assert areas - {"packaging"} <= kept, sorted(areas - kept)
