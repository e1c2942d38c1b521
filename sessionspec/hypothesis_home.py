"""Hypothesis's cache directory kept out of the user's directory (issue 30).

``conform`` (and ``mutants``, and the pytest plugin's ``conform`` item) search
with Hypothesis, which keeps a cache directory, by default ``.hypothesis/`` in
the current directory (a cache of the constants it finds in the source it
reads, and its example database; conform uses no database).  A command run in
a user's project must leave nothing there, so for the length of a command
Hypothesis's home is a temporary directory, removed afterwards.  A home the
user chose with ``HYPOTHESIS_STORAGE_DIRECTORY`` is kept.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV: str = "HYPOTHESIS_STORAGE_DIRECTORY"


@contextmanager
def scratch_hypothesis_home() -> Iterator[None]:
    """Point Hypothesis's home at a temporary directory until the block ends,
    then restore what was in force (Hypothesis need not be imported yet: it
    reads the environment variable when it first needs its home)."""
    if os.environ.get(ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="sessionspec-hypothesis-", ignore_cleanup_errors=True) as scratch:
        configuration = sys.modules.get("hypothesis.configuration")
        previous: Path | None = None
        if configuration is not None:
            previous = configuration.storage_directory(intent_to_write=False).home_directory
            configuration.set_hypothesis_home_dir(scratch)
        os.environ[ENV] = scratch
        try:
            yield
        finally:
            del os.environ[ENV]
            configuration = sys.modules.get("hypothesis.configuration")
            if configuration is not None:
                # None: imported inside the block, so resolve again from the environment later.
                configuration.set_hypothesis_home_dir(previous)
