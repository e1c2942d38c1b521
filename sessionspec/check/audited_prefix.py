"""Which events of a read log are audited: those before its first damage (a lost line, a seq break)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from sessionspec.check.logfile import LogFile


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AuditedPrefix:
    """The events audited (the first ``count``), why not more, and the first
    seq break as (seq, line): the break event repeats an earlier seq, so
    findings on it are placed by this line, not the seq's first line."""

    count: int
    notes: tuple[str, ...] = ()
    seq_break: tuple[int, int] | None = None


def audited_prefix(log: LogFile) -> AuditedPrefix:
    """How many events are audited: those up to the first damage.

    A line that could not be read loses its events, and an event whose seq
    breaks LOG-1 (``events[i].seq == i``) desynchronizes every positional
    fold after it; what follows (seq contiguity LOG-1, nesting LOG-13, ...)
    would only report the same damage again.  So the damage is reported
    once: the events before a damaged line, or up to and including the first
    seq break, are audited, and a note says how many events were not."""
    count = len(log.events)
    where = ""
    seq_break: tuple[int, int] | None = None
    damaged = [f.line for f in log.findings if f.damages and f.line is not None]
    if damaged:
        first = min(damaged)
        count = sum(1 for line in log.lines if line < first)
        where = f"the damaged line {first}"
    for index, event in enumerate(log.events[:count]):
        if event.seq != index:
            count = index + 1
            seq_break = (event.seq, log.lines[index])
            where = f"the seq break at line {log.lines[index]} (seq {event.seq}, expected {index}, LOG-1)"
            break
    after = len(log.events) - count
    if after == 0:
        return AuditedPrefix(count=count, seq_break=seq_break)
    note = f"{after} event{'s' if after != 1 else ''} after {where} not audited: their findings could follow from it"
    return AuditedPrefix(count=count, notes=(note,), seq_break=seq_break)
