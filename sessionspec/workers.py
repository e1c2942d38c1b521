"""How sessionspec starts worker processes (``check --jobs``, ``generate``'s blocks simulated ahead)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context


def worker_context() -> multiprocessing.context.BaseContext:
    """A fork server where the platform has one (Linux, macOS), else spawn: never a fork of the calling process,
    which may run threads (a test runner's, a caller's) whose held locks a forked child would inherit and wait on."""
    return multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
