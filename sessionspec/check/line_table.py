"""Which line each event of a file came from, kept in a few machine words per line (issue 26).

A finding names a seq; the report names its line, the line of the **first** event with that
seq (a duplicated seq keeps the first).  The checker reads a log once, in file order, and does
not keep its events, so the line of every seq is kept here as runs: consecutive seqs on one
line (a packed row, CHK-6) or on consecutive lines (one event per line).  A well-formed log is a
few runs per row; the lookup is a binary search while the seqs increase, as LOG-1 makes them.
A file whose seqs do not increase (a corrupt one) is looked up through a map built on the first
lookup, which only such a file pays for.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import final


@final
class LineTable:
    """seq -> line of its first event, for the events given to :meth:`add` in file order."""

    __slots__ = ("seqs", "lines", "counts", "steps", "increasing", "last_seq", "first",
                 "open_seq", "open_line", "open_count", "open_step")

    def __init__(self) -> None:
        # Run i covers seqs seqs[i] .. seqs[i] + counts[i] - 1, on lines lines[i] + k * steps[i]
        # (steps: 0 one line, 1 one line each, -1 a single event so far).  The last run is kept
        # open in plain fields (open_count 0: none yet) and moved to the arrays when the next
        # begins: compiled, an array element is a generic item access and a boxed integer, and
        # most events extend the open run.
        self.seqs = array("q")
        self.lines = array("q")
        self.counts = array("q")
        self.steps = array("b")
        self.open_seq = self.open_line = self.open_count = 0
        self.open_step = -1
        self.increasing = True
        self.last_seq = -1
        self.first: dict[int, int] | None = None

    def __len__(self) -> int:
        """The number of runs (0: no event added yet)."""
        return len(self.seqs) + (1 if self.open_count else 0)

    def add(self, seq: int, line: int) -> None:
        """The next event of the file, in file order."""
        if seq <= self.last_seq:
            self.increasing = False
        self.last_seq = seq
        count, step = self.open_count, self.open_step
        if count and seq == self.open_seq + count:
            offset = line - (self.open_line + (count - 1) * (step if step > 0 else 0))
            if (offset == 0 or offset == 1) and (step == -1 or step == offset):
                self.open_count = count + 1
                self.open_step = offset
                return
        self._open(seq, line, 1, -1)

    def _open(self, seq: int, line: int, count: int, step: int) -> None:
        """Close the open run and open this one."""
        self._close()
        self.open_seq, self.open_line, self.open_count, self.open_step = seq, line, count, step

    def _close(self) -> None:
        """Move the open run, if any, into the arrays (none is open after)."""
        if self.open_count:
            self.seqs.append(self.open_seq)
            self.lines.append(self.open_line)
            self.counts.append(self.open_count)
            self.steps.append(self.open_step)
            self.open_count = 0

    def add_run(self, seq: int, count: int, line: int) -> None:
        """:meth:`add` of ``seq`` .. ``seq + count - 1``, all on ``line`` (a packed row's chunks)."""
        self.add(seq, line)
        if count == 1:
            return
        # ``seq`` ends the open run.  On one line (step 0, or alone) the rest extend it; after events
        # one a line (step 1) the next is a new run on this line, which the rest extend.
        if self.open_step == 1:
            self._open(seq + 1, line, count - 1, 0 if count > 2 else -1)
        else:
            self.open_count += count - 1
            self.open_step = 0
        self.last_seq = seq + count - 1

    def line_of(self, seq: int | None) -> int | None:
        """The line of the first event with this seq (None: no such event, or no seq)."""
        if seq is None:
            return None
        # The open run joins the arrays (an event added later opens a new run: same lines).
        self._close()
        if self.increasing:
            run = bisect_right(self.seqs, seq) - 1
            if run < 0 or seq >= self.seqs[run] + self.counts[run]:
                return None
            return self._line(run, seq)
        if self.first is None:
            self.first = {}
            for run in range(len(self.seqs)):
                for number in range(self.seqs[run], self.seqs[run] + self.counts[run]):
                    self.first.setdefault(number, self._line(run, number))
        return self.first.get(seq)

    def _line(self, run: int, seq: int) -> int:
        return self.lines[run] + (seq - self.seqs[run]) * max(self.steps[run], 0)
