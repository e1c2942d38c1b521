"""The exit codes of ``sessionspec vectors`` (``generate``, ``run`` and ``pack`` alike), for their ``--help``."""

from __future__ import annotations

from typing import Final

EXIT_CODES: Final = (
    (0, "every selected vector agreed (or failed as --expect lists), and the floor met"),
    (1, "a failing vector, an xpass, an expectations entry that expects nothing, a run below the floor "
        "(generate --check: the directory is stale)"),
    (2, "a usage error, unreadable vectors, no vector selected, or an adapter that failed (no answer in time, "
        "malformed, died)"),
    (3, "a bug in sessionspec itself"),
    (130, "interrupted (Ctrl-C)"),
)
