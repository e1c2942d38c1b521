"""What the real loader does with a log a finding is about, in three levels (docs/check.md, "Two answers per file").

``LOADER_REFUSES``: LOG-8 seed validation, LOG-17 persistence load, line decoding; ``COMPANION_REFUSES``: the
session invariant companion.  A leaf: the report, the judge and the audit table read it.
"""

from __future__ import annotations

from typing import Final

from sessionspec.model.rejected import FailureKind

# Rules the real loader enforces too (LOG-8 seed validation, LOG-17 load, line decoding).
LOADER_REFUSES: Final = frozenset({
    "LOG-1", "LOG-2", "LOG-3", "LOG-4", "LOG-8", "LOG-17", "LOG-18",
    "SURF-2", "SURF-3", "SURF-4", "SURF-5", "SURF-6", "SURF-7", "SURF-9",
    "HDR-8", "LEG-1", "LEG-2", "LEG-3", "LEG-4", "LEG-5", "LEG-6", "LEG-10",
    "CHK-5", "CHK-8", "FMT-1", "FMT-5", "DIA-10", "DIA-11",
})


# Rules the harness's session invariant companion vetoes at load (LOG-13: it replays the seed's
# relational checks on session/created), on in the harness's own tests and dev runs, off in a bare
# core load (the adapter's check op with HARNESS_ADAPTER_INVARIANTS=0).
COMPANION_REFUSES: Final = frozenset({"LOG-13"})

# The three answers of the real loader, from the strictest load to none (docs/check.md).
LOADER_LEVELS: Final = ("refuses", "companion-refuses", "accepts")


def loader_level(rule: str, kind: FailureKind) -> str:
    """The loader's answer for one finding in three levels: ``refuses`` (the core load refuses it),
    ``companion-refuses`` (only the invariant companion does), ``accepts``."""
    if kind is not FailureKind.INVALID:
        return "accepts"
    if rule in LOADER_REFUSES:
        return "refuses"
    return "companion-refuses" if rule in COMPANION_REFUSES else "accepts"


def loader_answer(rule: str, kind: FailureKind) -> str:
    """``refuses`` when the real loader rejects a log for this finding too,
    else ``accepts`` (the loader has no checker limits, and quirks are what
    the real code does)."""
    return "refuses" if kind is FailureKind.INVALID and rule in LOADER_REFUSES else "accepts"
