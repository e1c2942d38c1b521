"""One reading path for every command that reads a session-log file (issue 30).

``check`` reads a file with :func:`sessionspec.check.logfile.read_path` (FMT-1
lines and packed rows, zstandard frames for ``.zst``, ``-`` for stdin, only
regular files, the line, depth and ``--max-events`` limits) and decides the
file's dialect (FMT-10: forced, else detected from its markers) and its first
live seq (LOG-8; D08 also DIA-5) in :func:`sessionspec.check.checker.check_log`.
:func:`read_log` runs exactly those two functions, so ``replay`` reads what
``check`` reads, and when it cannot, it says so in ``check``'s own words (the
verdict or finding line ``check`` prints for the file) with ``check``'s exit
code: 2 unreadable, 1 a line the log format rejects, 4 undecided (a limit of
sessionspec, or mixed dialect markers: ``--dialect`` decides).

The events are the ones the dialect's reader loads: a D08 reader rewrites A55
shapes into D08 shapes (DIA-13, DIA-14), as the checker does before auditing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from sessionspec.check.checker import DialectSource, FileReport, Verdict, check_log
from sessionspec.check.logfile import MAX_EVENTS, LineFinding, LogFile, read_path, session_id
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import FailureKind

# check's exit codes for what stops a read (sessionspec.check.checker.EXIT_CODES).
UNREADABLE_EXIT: Final = 2
INVALID_EXIT: Final = 1
UNDECIDED_EXIT: Final = 4


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadLog:
    """A log as ``check`` read it: its events as the dialect's reader loads them."""

    name: str
    events: tuple[Event, ...]
    dialect: Dialect
    dialect_source: DialectSource
    first_live_seq: int
    file: LogFile
    report: FileReport  # check's verdict on the same bytes

    def line_of(self, seq: int | None) -> int | None:
        """The file line of the event with this seq (its first occurrence)."""
        return self.file.line_of(seq)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadFailure:
    """Why the log cannot be read as a whole: ``check``'s line for it and exit code."""

    message: str
    exit_code: int


def _first_damage(file: LogFile) -> LineFinding | None:
    """The first line finding (a line that could not be read as records), if any."""
    if not file.findings:
        return None
    return min(file.findings, key=lambda f: (f.line is None, f.line or 0))


def _finding_text(report: FileReport, damage: LineFinding) -> str:
    """The line ``check`` prints for this line finding."""
    for finding in report.findings:
        if finding.line == damage.line and finding.rule == damage.rejected.rule:
            return finding.text(report.path)
    where = report.path if damage.line is None else f"{report.path}:{damage.line}"
    return f"{where}: {damage.rejected}"


def read_log(path: str, *, dialect: Dialect | None = None, max_events: int = MAX_EVENTS) -> ReadLog | ReadFailure:
    """Read ``path`` (a ``.jsonl`` or ``.jsonl.zst`` file, or ``-`` for stdin)
    as ``check`` does; ``dialect`` forces one instead of detecting it (FMT-10).
    Total: every problem is a :class:`ReadFailure`."""
    file = read_path(path, max_events)
    report = check_log(file, dialect)
    if report.verdict is Verdict.UNREADABLE:
        return ReadFailure(message=report.verdict_text(), exit_code=UNREADABLE_EXIT)
    damage = _first_damage(file)
    if damage is not None:
        code = INVALID_EXIT if damage.rejected.kind is FailureKind.INVALID else UNDECIDED_EXIT
        return ReadFailure(message=_finding_text(report, damage), exit_code=code)
    if report.dialect is None or report.dialect_source is None:  # mixed dialect markers: check says why
        return ReadFailure(message=report.verdict_text(), exit_code=UNDECIDED_EXIT)
    events = file.events if report.dialect is Dialect.A55 else migrate_legacy(file.events, session_id(file))
    return ReadLog(name=report.path, events=tuple(events), dialect=report.dialect, dialect_source=report.dialect_source,
                   first_live_seq=report.first_live_seq, file=file, report=report)
