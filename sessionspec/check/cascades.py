"""Knock-on findings: a finding that follows from an earlier one carries it as its cause (``causedBy``).

One damage to a log often shows as several findings.  The first says what is wrong; the others are what
the later checks see of a log that is already damaged there.  A reader (and a CI annotation) wants the
cause first and the rest under it (``caused by SURF-3 at line 12: 9 more``), so each knock-on names the
finding it follows from (:class:`sessionspec.check.report.Cause`); none is dropped, ``check -v`` and the
JSON format show every one.  Two relations, each what the checker's folds do with a damage:

- **a repeated nesting complaint** (LOG-13): one nesting state gone wrong (a bad ``step/start``, a lost
  ``turn/start``) makes the nesting check say the same thing about every later event of the step or turn;
  the consecutive findings with the same complaint (:func:`complaint`) follow from the first;
- **an event the load refuses**: a finding the real loader refuses the log for (a bad ``surfaceOp``, an
  event shape the load rejects: the audit table's ``refuses`` column) names an event the folds did not take
  as written, so what the writers' rules and the invariant companion say about the later events of the
  same turn (a missing message, a call left unanswered) follows from it.  A later finding of the load
  itself in that turn is a damage of its own.

A knock-on's cause is always a finding that follows from nothing (the chain is followed to its start).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from sessionspec.check.report import Finding
from sessionspec.check.writers import TurnWriter

CASCADE_RULES: Final = frozenset({"LOG-13"})


def complaint(finding: Finding) -> tuple[str, str]:
    """A nesting finding's complaint without the event type it was met on:
    ``assistant/chunk names turn 1 step 1, but turn 1 step 7 is open`` and the
    same of a ``step/end`` are one complaint about the nesting state."""
    head, _, rest = finding.reason.partition(" ")
    return finding.rule, (rest if "/" in head else finding.reason)


def _turn_of(seq: int, turns: Sequence[TurnWriter]) -> tuple[int, int] | None:
    """The seq range of the turn (or the events between turns) that holds ``seq``."""
    return next(((t.first_seq, t.last_seq) for t in turns if t.first_seq <= seq <= t.last_seq), None)


def _drops_event(finding: Finding) -> bool:
    """A finding the real loader refuses the log for, about one event, whatever the dialect."""
    return finding.loader == "refuses" and finding.seq is not None and finding.only_if is None


def knock_ons(findings: Sequence[Finding], turns: Sequence[TurnWriter]) -> list[Finding]:
    """``findings`` (in the order given), each knock-on carrying the finding it follows from.  ``turns``:
    the writers' turn ranges (FMT-7; empty when the dialect is undecided, and then only repeats are knock-ons)."""
    order = sorted(range(len(findings)), key=lambda i: (findings[i].line or 0, -1 if findings[i].seq is None else findings[i].seq))
    parent: dict[int, int] = {}
    run_first: int | None = None
    dropped: list[tuple[int, int, int]] = []  # a load refusal's index, its seq, and the last seq of its turn
    for i in order:
        finding = findings[i]
        if finding.rule in CASCADE_RULES:
            if run_first is not None and complaint(findings[run_first]) == complaint(finding):
                parent[i] = run_first
            else:
                run_first = i
        seq = finding.seq
        if seq is None:
            continue
        if i not in parent and not _drops_event(finding):
            cause = next((index for index, at, last in dropped if at < seq <= last), None)
            if cause is not None:
                parent[i] = cause
        span = _turn_of(seq, turns) if _drops_event(finding) and i not in parent else None
        if span is not None:
            dropped.append((i, seq, span[1]))

    def root(i: int) -> int:
        while i in parent:
            i = parent[i]
        return i

    return [replace(f, caused_by=findings[root(i)].cause()) if i in parent else f for i, f in enumerate(findings)]
