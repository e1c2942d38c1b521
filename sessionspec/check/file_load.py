"""Where the real file load answers otherwise than the per-rule table (``audit_table.LOADER_REFUSES``).

Two places, both measured against the real load (docs/fidelity.md, "The file load"):

* **QF-15, a torn tail it drops.**

The JSONL file load (``session-persistence-jsonl/src/format.ts`` ``scanLog`` at ``a55f148516``,
lines 226 and 279-295) keeps the contiguous prefix of a log: it ignores a last line without its
newline, and from the first unparsable line (JSON or a packed row, FMT-1 / CHK-5) or seq gap (LOG-1)
*after the last valid* ``turn/end`` it stops and drops the rest, which the coordinator then truncates
(``coordinator.ts`` ``commitRepair``, line 322).  The same hole at or before that ``turn/end`` is
committed corruption and the load throws.  So a finding at or after the torn line is one the loader
never sees: its loader answer is ``accepts``.
* **QF-13, the crash-repair walk that throws.**  Before any validation the load walks every
``assistant/message`` (``core/session/src/repair.ts`` ``interruptedTurnClosers``, line 54: ``for (const
block of event.data.content) if (block.type === 'tool-call') ...``, called from ``coordinator.ts``
``loadCore``, line 317), so a ``content`` that is not iterable, or a block that is ``null``, makes the
load throw: a finding on that event reads ``loader refuses``.

* **QF-14, a header line it does not take for one.**  The file load's ``isHeaderLine``
(``session-persistence-jsonl/src/format.ts`` lines 79-93 at ``a55f148516``, 89-107 at ``611615650f``)
requires a number ``version``, a string ``id``, and ``createdAt`` and ``delegationDepth`` as
non-negative safe integers (D08 also ``origin`` absent or ``"subagent"``, ``agentPreset`` absent or a
string), else "corrupt session log: first line is not a session header".  The harness's JSONL writer
always writes them; its test tooling has written headers without ``delegationDepth``, so such a log is
not invalid: the file's loader answer is ``refuses`` with a note.

The checker's verdicts are not changed by any of these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

from sessionspec.model.codec import SessionHeader
from sessionspec.model.jsonval import Absent, Json
from sessionspec.model.log import Dialect, Event
from sessionspec.model.log_file import header_line_refused as refused_header_line
from sessionspec.model.rejected import FailureKind

# The findings that mark a hole the scan tolerates after the last turn/end.
HOLE_RULES: Final = frozenset({"FMT-1", "CHK-5", "LOG-1"})


def torn_tail_line(anything_read: bool, last_turn_end: int, torn_line: int | None,
                   findings: Iterable[tuple[str, int | None, FailureKind]]) -> int | None:
    """The first line of the tail the file load drops, given the findings ``(rule, line, kind)``; None
    when the load reads the whole file.  From what a reader kept: whether the file held a header line
    or an event, the line of its last ``turn/end`` not on the torn line (0: none, :class:`TurnEndLines`),
    and the torn line."""
    if not anything_read:
        return None  # neither a header line nor an event (a torn first line): nothing the load could read
    holes = [line for rule, line, kind in findings
             if rule in HOLE_RULES and kind is FailureKind.INVALID and line is not None and line > last_turn_end]
    return min([*holes, *([] if torn_line is None else [torn_line])], default=None)


@final
class TurnEndLines:
    """The lines of the last two ``turn/end`` events met, on different lines: the scan splits at
    newlines, so a last line without one is never parsed, whatever it holds, and its ``turn/end``
    (when it parsed for the checker) does not count."""

    __slots__ = ("latest", "before")

    def __init__(self) -> None:
        self.latest = 0
        self.before = 0

    def take(self, event: Event, line: int) -> None:
        if event.type == "turn/end" and line != self.latest:
            self.latest, self.before = line, self.latest

    def last(self, torn_line: int | None) -> int:
        """The last ``turn/end``'s line not on ``torn_line`` (0: none)."""
        return self.before if self.latest == torn_line else self.latest


def repair_walk_throws(content: Json | Absent) -> bool:
    """Whether the load's repair walk throws on an ``assistant/message`` with this content (QF-13): its content as
    the dialect's reader reads it (:func:`sessionspec.model.message_shape.message_content`; D08's
    ``data.message.content``, ``repair.ts`` line 55 at ``611615650f``, DIA-10) is neither an array nor a string
    (JS iterates a string's characters), or an array holding ``null``."""
    if isinstance(content, str):
        return False
    # ``in`` finds a null block without a generator: no other JSON value equals null.
    return not isinstance(content, tuple) or None in content


def header_line_refused(header: SessionHeader | None, dialect: Dialect) -> str | None:
    """QF-14: why the file load refuses this header line (:func:`sessionspec.model.log_file.header_line_refused`),
    or None (also for a file without a header line, which is no session file the file load would read)."""
    return None if header is None else refused_header_line(header.value, dialect)
