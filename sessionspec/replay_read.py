"""What ``replay`` rebuilds from a log: the log read as ``check`` reads it, up to where it stops being a valid loop log.

``check``'s verdict on the same bytes decides (:func:`sessionspec.check.checker.check_log`, the per-file
function ``check`` runs).  A valid log is rebuilt whole.  An invalid log is rebuilt from its events before
``check``'s first finding (by line, then seq): every request whose events lie before it is shown, and the
finding is the point where the log stops being a valid loop log (:class:`StopPoint`); replay exits 1, as
``check`` does.  An unknown log (a checker limit, a replay script, a pre-A55 design) is rebuilt the same way,
up to its first finding if it has one, and exits 4 as ``check`` does: unknown is not a pass.  What cannot be
rebuilt at all is a :class:`ReadFailure` in ``check``'s words: an unreadable file (exit 2), and mixed dialect
markers (exit 4; ``--dialect`` decides).

The events are the ones the dialect's reader loads: a D08 reader rewrites A55 shapes into D08 shapes
(DIA-13, DIA-14), as the checker does before auditing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.check.checker import DialectSource, FileReport, Finding, Verdict, check_log
from sessionspec.check.logfile import MAX_EVENTS, LogFile, read_path, session_id
from sessionspec.logsource import ReadFailure
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import migrate_legacy

# check's exit codes (sessionspec.check.summary.EXIT_CODES) for each verdict replay can show.
EXIT_OF: Final = {Verdict.VALID: 0, Verdict.INVALID: 1, Verdict.UNKNOWN: 4}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StopPoint:
    """Where the log stops being a valid loop log: ``check``'s first finding, and how many events come before it."""

    finding: Finding
    text: str  # the line check prints for the finding
    events_rebuilt: int

    def to_json(self) -> dict[str, object]:
        f = self.finding
        return {"line": f.line, "rule": f.rule, "seq": f.seq, "reason": f.reason, "kind": f.kind.value, "eventsRebuilt": self.events_rebuilt}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaySource:
    """A log as ``check`` read it, its events up to the stop point (all of them when there is none)."""

    name: str
    events: tuple[Event, ...]
    dialect: Dialect
    dialect_source: DialectSource
    first_live_seq: int
    report: FileReport  # check's verdict on the same bytes
    stop: StopPoint | None
    file: LogFile

    @property
    def exit_code(self) -> int:
        return EXIT_OF[self.report.verdict]

    def line_of(self, seq: int | None) -> int | None:
        """The file line of the event with this seq (its first occurrence)."""
        return self.file.line_of(seq)


def first_finding(report: FileReport) -> Finding | None:
    """The finding where the log stops being valid: the first by line, then seq, that holds whatever the dialect."""
    held = [f for f in report.findings if f.only_if is None]
    return min(held, key=lambda f: (f.line is None, f.line or 0, -1 if f.seq is None else f.seq), default=None)


def events_before(events: Sequence[Event], finding: Finding, line_of: dict[int, int]) -> int:
    """How many leading events lie before ``finding``: before its seq, else before its line (a line that
    could not be read has no seq), else all (a finding about the whole file)."""
    if finding.seq is not None:
        return next((i for i, e in enumerate(events) if e.seq >= finding.seq), len(events))
    if finding.line is not None:
        return next((i for i, e in enumerate(events) if line_of.get(e.seq, 0) >= finding.line), len(events))
    return len(events)


def read_for_replay(path: str, *, dialect: Dialect | None = None, max_events: int = MAX_EVENTS) -> ReplaySource | ReadFailure:
    """Read ``path`` (``.jsonl``, ``.jsonl.zst`` or ``-``) as ``check`` does, ``dialect`` forcing one (FMT-10)."""
    file = read_path(path, max_events)
    report = check_log(file, dialect)
    if report.verdict is Verdict.UNREADABLE:
        return ReadFailure(message=report.verdict_text(), exit_code=2)
    if report.dialect is None or report.dialect_source is None:  # mixed dialect markers: check says why
        return ReadFailure(message=report.verdict_text(), exit_code=4)
    events = tuple(file.events if report.dialect is Dialect.A55 else migrate_legacy(file.events, session_id(file)))
    stop: StopPoint | None = None
    finding = first_finding(report)
    if finding is not None:
        lines = {e.seq: line for e, line in zip(reversed(file.events), reversed(file.lines), strict=True)}
        cut = events_before(events, finding, lines)
        stop = StopPoint(finding=finding, text=finding.text(report.path), events_rebuilt=cut)
        events = events[:cut]
    return ReplaySource(name=report.path, events=events, dialect=report.dialect, dialect_source=report.dialect_source,
                        first_live_seq=report.first_live_seq, report=report, stop=stop, file=file)
