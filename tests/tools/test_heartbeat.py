"""The suite is never silent for minutes (issue 30): tests/heartbeat.py names a
test that runs longer than the interval, every interval, and says nothing of
a fast one."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def test_a_long_test_is_named_while_it_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSIONSPEC_HEARTBEAT", "0.5")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_sleepy="import time\ndef test_slow():\n    time.sleep(1.8)\ndef test_fast():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "tests.heartbeat", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
    beats = [line for line in result.outlines if line.startswith("[still running after ")]
    assert len(beats) >= 2 and all(line.endswith(" s: test_sleepy.py::test_slow]") for line in beats)


def test_the_heartbeat_can_be_turned_off(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSIONSPEC_HEARTBEAT", "0")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_sleepy="import time\ndef test_slow():\n    time.sleep(1.2)\n")
    result = pytester.runpytest_subprocess("-p", "tests.heartbeat", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    assert "still running" not in result.stdout.str()
