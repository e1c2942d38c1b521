"""Where the real file load stops reading: a torn tail after the last ``turn/end`` (QF-15).

The JSONL file load (``session-persistence-jsonl/src/format.ts`` ``scanLog`` at ``a55f148516``,
lines 226 and 279-295) keeps the contiguous prefix of a log: it ignores a last line without its
newline, and from the first unparsable line (JSON or a packed row, FMT-1 / CHK-5) or seq gap (LOG-1)
*after the last valid* ``turn/end`` it stops and drops the rest, which the coordinator then truncates
(``coordinator.ts`` ``commitRepair``, line 322).  The same hole at or before that ``turn/end`` is
committed corruption and the load throws.  So a finding at or after the torn line is one the loader
never sees: its loader answer is ``accepts``.  The checker's verdict is not changed by this.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from model.rejected import FailureKind
from sessionspec.check.logfile import LogFile

# The findings that mark a hole the scan tolerates after the last turn/end.
HOLE_RULES: Final = frozenset({"FMT-1", "CHK-5", "LOG-1"})


def torn_tail_line(log: LogFile, findings: Iterable[tuple[str, int | None, FailureKind]]) -> int | None:
    """The first line of the tail the file load drops, given the findings ``(rule, line, kind)``; None
    when the load reads the whole file."""
    last_turn_end = max((line for event, line in zip(log.events, log.lines, strict=True) if event.type == "turn/end"), default=0)
    holes = [line for rule, line, kind in findings
             if rule in HOLE_RULES and kind is FailureKind.INVALID and line is not None and line > last_turn_end]
    return min(holes, default=None)
