"""A heartbeat for long tests (issue 30): the suite prints a dot per test
(``addopts = -q``), so one test that runs for minutes (CrossHair in
tests/proofs/test_proofs.py) looks like a hang.  While a test runs longer than
``SESSIONSPEC_HEARTBEAT`` seconds (default 30; 0 turns it off), a line names
it and how long it has run, every that many seconds.

The line is written to a copy of the terminal's file descriptor taken at start
up: while a test runs, pytest captures the process's stdout and stderr.
Loaded by tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Generator

import pytest

INTERVAL_ENV = "SESSIONSPEC_HEARTBEAT"
DEFAULT_INTERVAL = 30.0
TERMINAL = pytest.StashKey[int]()


def interval() -> float:
    """The heartbeat interval in seconds (0: off); a bad value is the default."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL))
    except ValueError:
        return DEFAULT_INTERVAL
    return max(value, 0.0)


def pytest_configure(config: pytest.Config) -> None:
    if interval() > 0 and not hasattr(config, "workerinput"):  # xdist workers have no terminal of their own
        with contextlib.suppress(OSError):  # no stdout to copy: no heartbeat
            config.stash[TERMINAL] = os.dup(1)


def pytest_unconfigure(config: pytest.Config) -> None:
    fd = config.stash.get(TERMINAL, None)
    if fd is not None:
        os.close(fd)
        del config.stash[TERMINAL]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    fd = item.config.stash.get(TERMINAL, None)
    if fd is None:
        return (yield)
    every = interval()
    done = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        while not done.wait(every):
            line = f"\n[still running after {time.monotonic() - start:.0f} s: {item.nodeid}]\n"
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            except OSError:
                return

    thread = threading.Thread(target=beat, name="sessionspec-heartbeat", daemon=True)
    thread.start()
    try:
        return (yield)
    finally:
        done.set()
        thread.join()
