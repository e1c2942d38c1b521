"""Which events of a read log are audited: those before its first damage (a lost line, a seq break)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import final


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AuditedPrefix:
    """The events audited (the first ``count``), why not more, and the first
    seq break as (seq, line): the break event repeats an earlier seq, so
    findings on it are placed by this line, not the seq's first line."""

    count: int
    notes: tuple[str, ...] = ()
    seq_break: tuple[int, int] | None = None


@final
class PrefixTracker:
    """How many events are audited: those up to the first damage, decided one event at a time.

    A line that could not be read loses its events, and an event whose seq
    breaks LOG-1 (``events[i].seq == i``) desynchronizes every positional
    fold after it; what follows (seq contiguity LOG-1, nesting LOG-13, ...)
    would only report the same damage again.  So the damage is reported
    once: the events before a damaged line, or up to and including the first
    seq break, are audited, and a note says how many events were not."""

    __slots__ = ("count", "taken", "open", "where", "seq_break")

    def __init__(self) -> None:
        self.count = 0
        self.taken = 0
        self.open = True
        self.where = ""
        self.seq_break: tuple[int, int] | None = None

    def take(self, seq: int, line: int, first_damage: int | None) -> bool:
        """Whether the next event (its seq, its line) is audited, given the first damaged
        line met so far (lines come in order: a damage is met before the events after it)."""
        self.taken += 1
        if not self.open:
            return False
        if first_damage is not None and line >= first_damage:
            self.open = False
            self.where = f"the damaged line {first_damage}"
            return False
        index = self.count
        self.count += 1
        if seq != index:
            self.open = False
            self.seq_break = (seq, line)
            self.where = f"the seq break at line {line} (seq {seq}, expected {index}, LOG-1)"
        return True

    def take_all(self, seq: int, count: int, line: int, first_damage: int | None) -> bool:
        """Whether ``count`` events on one line, seqs ``seq`` onwards (a packed row's chunks), are all
        audited, and if so :meth:`take` of each; if not, nothing is taken (the caller takes them
        one by one)."""
        if not self.open or (first_damage is not None and line >= first_damage) or seq != self.count:
            return False
        self.taken += count
        self.count += count
        return True

    def finish(self) -> AuditedPrefix:
        """The prefix, after the last event."""
        after = self.taken - self.count
        if after == 0:
            return AuditedPrefix(count=self.count, seq_break=self.seq_break)
        note = f"{after} event{'s' if after != 1 else ''} after {self.where} not audited: their findings could follow from it"
        return AuditedPrefix(count=self.count, notes=(note,), seq_break=self.seq_break)
