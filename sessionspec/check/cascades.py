"""One damaged nesting state reported once (LOG-13): the repeats of its complaint become a note."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.check.report import Finding

CASCADE_RULES: Final = frozenset({"LOG-13"})


def complaint(finding: Finding) -> tuple[str, str]:
    """A nesting finding's complaint without the event type it was met on:
    ``assistant/chunk names turn 1 step 1, but turn 1 step 7 is open`` and the
    same of a ``step/end`` are one complaint about the nesting state."""
    head, _, rest = finding.reason.partition(" ")
    return finding.rule, (rest if "/" in head else finding.reason)


def collapse_cascades(findings: Sequence[Finding]) -> tuple[list[Finding], tuple[str, ...]]:
    """One nesting state gone wrong (a bad ``step/start``, a lost
    ``turn/start``) makes the nesting check (LOG-13) complain about every
    later event of the step or turn with the same words.  Those repeats
    follow from the first: it is kept, and a note counts the rest with their
    lines."""
    kept: list[Finding] = []
    notes: list[str] = []
    run: list[Finding] = []

    def close() -> None:
        if len(run) > 1:
            lines = [f.line for f in run[1:] if f.line is not None]
            where = f" (lines {min(lines)}-{max(lines)})" if lines else ""
            notes.append(f"{len(run) - 1} more {run[0].rule} finding{'s' if len(run) > 2 else ''} like line {run[0].line}{where}: "
                         f"the same complaint on later events, following from it")
        run.clear()

    for finding in findings:
        if finding.rule not in CASCADE_RULES:
            kept.append(finding)
            continue
        if run and complaint(run[0]) == complaint(finding):
            run.append(finding)
            continue
        close()
        run.append(finding)
        kept.append(finding)
    close()
    return kept, tuple(notes)
