"""``sessionspec check``: conformance verdicts for session-log files (FMT-7).

Each file is read (:mod:`sessionspec.check.logfile`), its dialect detected (FMT-10) or
forced, legacy shapes migrated in D08 mode (DIA-13, DIA-14), and the events
audited (:func:`sessionspec.check.audit.audit_events`).  The verdict is ``valid``,
``invalid`` (findings name rule, line and seq), ``unknown`` (outside what the
model decides, with the reason) or ``unreadable``.  Files are checked one at a
time and reported as they finish, so memory does not grow with the number of
files; output order is the sorted path order, so it is deterministic.

The report of a file is :mod:`sessionspec.check.report`'s; a run's summary and exit
code (:data:`EXIT_CODES`) are :mod:`sessionspec.check.summary`'s, re-exported here for
the command line, ``sessionspec.api`` and the tests.
"""

from __future__ import annotations

import gc
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, Final

from sessionspec.check.audited_prefix import AuditedPrefix
from sessionspec.check.byte_source import open_regular
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.file_load import header_line_refused, torn_tail_line
from sessionspec.check.judge import ReadLog, finding_of, judge_as
from sessionspec.check.log_pass import Guess, LogPass
from sessionspec.check.logfile import (
    MAX_EVENTS,
    STDIN,
    LineReader,
    LogFile,
    session_id_of,
    stream_handle,
)
from sessionspec.check.os_errors import OSErrorsOnly
from sessionspec.check.paths import Unlistable
from sessionspec.check.report import DialectSource as DialectSource
from sessionspec.check.report import FileReport as FileReport
from sessionspec.check.report import Finding as Finding
from sessionspec.check.report import Verdict as Verdict
from sessionspec.check.report import decide
from sessionspec.check.spool import Spooled
from sessionspec.check.summary import EXIT_CODES as EXIT_CODES
from sessionspec.check.summary import EXIT_PRECEDENCE as EXIT_PRECEDENCE
from sessionspec.check.summary import SCHEMA_VERSION as SCHEMA_VERSION
from sessionspec.check.summary import Summary as Summary
from sessionspec.check.summary import summarize as summarize
from sessionspec.fast.constants import A55, D08
from sessionspec.model.deployment import Deployment
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import DialectEvidence, dialect_evidence
from sessionspec.model.rejected import FailureKind

# Records read before they are folded (see _stream_pass; a packed row is one): memory stays bounded.
BATCH_EVENTS: Final = 512
SAMPLES: Final = Path(__file__).resolve().parents[1] / "samples"


def _choose_dialect(evidence: DialectEvidence, forced: Dialect | None) -> tuple[Dialect, DialectSource] | str:
    """FMT-10: forced, else detected; mixed markers are the reason for ``unknown``."""
    if forced is not None:
        return forced, DialectSource.FORCED
    if evidence.mixed:
        return (
            f"mixed dialect markers (FMT-10): A55 {evidence.a55_reason} at seq {evidence.a55_seq}, "
            f"D08 {evidence.d08_reason} at seq {evidence.d08_seq}; use --dialect to force one"
        )
    if evidence.d08_seq is not None:
        return D08, DialectSource.DETECTED
    if evidence.a55_seq is not None:
        return A55, DialectSource.DETECTED
    return A55, DialectSource.DEFAULT


def _finding_key(finding: Finding) -> tuple[int | None, str, int | None]:
    return finding.line, finding.rule, finding.seq


def _check_mixed(read: ReadLog, prefix: AuditedPrefix, line_findings: list[Finding], mixed: str, strict_quirks: bool) -> FileReport:
    """Mixed dialect markers (FMT-10): the dialect is undecided, but no
    finding is hidden by that.  The events are judged as both dialects; a
    finding both give (same rule, line and seq) holds whichever dialect wrote
    the log, so it is a finding of the file; a finding of one dialect only is
    shown marked ``only if`` that dialect and leaves the verdict ``unknown``."""
    a55 = judge_as(read, prefix, A55, strict_quirks)
    d08 = judge_as(read, prefix, D08, strict_quirks)
    in_d08 = {_finding_key(f) for f in d08.findings}
    in_a55 = {_finding_key(f) for f in a55.findings}
    findings = line_findings + [f for f in a55.findings if _finding_key(f) in in_d08]
    for dialect, judged, other in ((A55, a55, in_d08), (D08, d08, in_a55)):
        findings += [replace(f, only_if=dialect) for f in judged.findings if _finding_key(f) not in other]
    return _verdict(read, None, None, min(a55.live, d08.live), findings, (), unknown=mixed)


def check_log(log: LogFile, forced: Dialect | None = None, strict_quirks: bool = False, deployment: Deployment | None = None) -> FileReport:
    """The verdict for one read file (FMT-7), its events in memory (:func:`check_read` for the rest)."""
    if log.unreadable is not None:
        return FileReport.unreadable(log.name, log.unreadable)
    first_damage = min((f.line for f in log.findings if f.damages and f.line is not None), default=None)

    def again(guess: Guess | None) -> LogPass:
        one = _new_pass(log, guess, forced, deployment)
        for event, line in zip(log.events, log.lines, strict=True):
            one.take(event, line, first_damage)
        one.finish()
        return one

    return check_read(ReadLog(log=log, total=len(log.events), first=again(None), again=again), forced, strict_quirks)


def _new_pass(log: LogFile | LineReader, guess: Guess | None, forced: Dialect | None, deployment: Deployment | None) -> LogPass:
    """A pass over a log's events: its header's dialect evidence (DIA-21), seed and session id
    (a reader's are known once its first line is read)."""
    header = log.header
    evidence = dialect_evidence((), None if header is None else header.value)
    return LogPass(guess, log.seed_length, session_id_of(header), evidence, forced, deployment)


def check_read(read: ReadLog, forced: Dialect | None = None, strict_quirks: bool = False) -> FileReport:
    """The verdict for one read file (FMT-7).  The §17 quirks the log shows
    are notes, or findings with ``strict_quirks``.

    Verdict precedence (docs/check.md): ``unreadable``, else ``invalid`` if
    any finding is of kind invalid, else ``unknown`` (a limit or bug finding,
    or the log outside the model, with the reason), else ``valid``.  No
    dialect or marker decision hides a finding."""
    log = read.log
    if log.unreadable is not None:
        return FileReport.unreadable(log.name, log.unreadable)
    line_findings = [finding_of(read.first.lines, f.rejected, f.line) for f in log.findings]
    prefix = read.first.prefix.finish()
    chosen = _choose_dialect(read.first.evidence, forced)
    if isinstance(chosen, str):
        report = _check_mixed(read, prefix, line_findings, chosen, strict_quirks)
        return report if not prefix.notes else _with_notes(report, prefix.notes)
    dialect, source = chosen
    judged = judge_as(read, prefix, dialect, strict_quirks)
    findings = _file_load_answers(read, dialect, line_findings + list(judged.findings))
    refused = header_line_refused(log.header, dialect)
    header_note = () if refused is None else (f"the JSONL file load refuses this header line: {refused} (QF-14; the harness's JSONL writer always writes it)",)
    report = _verdict(read, dialect, source, judged.live, findings, judged.notes + prefix.notes + header_note, unknown=judged.outside)
    return replace(report, writers=judged.writers, header_refused=refused is not None, undecided=judged.undecided)


def _file_load_answers(read: ReadLog, dialect: Dialect, findings: list[Finding]) -> list[Finding]:
    """Where the real file load answers otherwise than per rule (sessionspec/check/file_load.py): a finding
    on an event its repair walk throws on is refused (QF-13); one in a torn tail after the last ``turn/end``
    is never read, so accepted (QF-15)."""
    log = read.log
    throws = frozenset(read.first.throws[dialect]) if findings else frozenset()
    last_turn_end = read.first.turn_ends.last(log.torn_line)
    torn = torn_tail_line(log.header is not None or read.total > 0, last_turn_end, log.torn_line, ((f.rule, f.line, f.kind) for f in findings))
    answered = [replace(f, loader="refuses") if f.seq in throws and f.kind is FailureKind.INVALID else f for f in findings]
    if torn is None:
        return answered
    return [replace(f, loader="accepts") if f.line is not None and f.line >= torn else f for f in answered]


def _with_notes(report: FileReport, notes: tuple[str, ...]) -> FileReport:
    return replace(report, notes=report.notes + notes)


def _verdict(
    read: ReadLog,
    dialect: Dialect | None,
    source: DialectSource | None,
    live: int,
    findings: Sequence[Finding],
    notes: Sequence[str],
    unknown: str | None = None,
) -> FileReport:
    ordered = tuple(sorted(findings, key=lambda f: (f.line or 0, -1 if f.seq is None else f.seq, f.rule, f.reason)))
    verdict, reason = decide(ordered, unknown)  # the one definition of the verdict (sessionspec/check/report.py)
    if unknown is not None and reason != unknown:
        # A finding decided the verdict; why the log is outside the model stays visible as a note.
        notes = (*notes, unknown)
    return FileReport(
        path=read.log.name,
        verdict=verdict,
        dialect=dialect,
        dialect_source=source,
        events=read.total,
        first_live_seq=live,
        findings=ordered,
        reason=reason,
        notes=tuple(notes),
        outside=unknown,
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one file is checked.

    A log becomes hundreds of thousands of immutable containers, and every
    full collection walks all of them: with the collector running, reading a
    large log grows faster than linearly.  The model's values form no
    reference cycles (frozen tuples and objects), so reference counting frees
    them; the collector's previous state is restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def check_path(path: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS,
               watch: Callable[[BinaryIO], BinaryIO] | None = None, deployment: Deployment | None = None) -> FileReport:
    """Read and check one file (or ``-``): the per-file function of the
    command line, of ``sessionspec.api`` and of its fleet recipes.  The file
    is checked as it is read, its events not kept (issue 26: memory is bounded by the
    surface and the open turn and step); a wrong guess of the dialect or first live
    seq (:mod:`sessionspec.check.log_pass`) reads it once more (standard input from
    the copy :class:`Spooled` kept on disk).  ``watch`` wraps each opened file (``check``'s progress bar
    counts the bytes read through it).  ``deployment``: the deployment's facts, when given (the rules that
    need them are then decided too, :mod:`sessionspec.check.deployment_fold`)."""

    def opener() -> BinaryIO | str:
        handle = open_regular(path)
        return handle if watch is None or isinstance(handle, str) else watch(handle)

    with _gc_paused():
        if path != STDIN:
            return _check_stream(path, Path(path), opener, forced, strict_quirks, max_events, deployment)
        return _check_spooled(sys.stdin.buffer, "<stdin>", None, forced, strict_quirks, max_events, deployment)


def _check_spooled(source: BinaryIO | io.RawIOBase, name: str, sidecar: Path | None, forced: Dialect | None, strict_quirks: bool,
                   max_events: int, deployment: Deployment | None = None) -> FileReport:
    """Check a stream that cannot be opened again (standard input, an fsspec handle) as it is read,
    a second pass reading the copy :class:`Spooled` keeps on disk."""
    spool = Spooled(source)
    first = True

    def opener() -> BinaryIO:
        nonlocal first
        if first:
            first = False
            return io.BufferedReader(spool)
        return spool.again()

    try:
        return _check_stream(name, sidecar, opener, forced, strict_quirks, max_events, deployment)
    finally:
        spool.discard()


def _check_stream(name: str, sidecar: Path | None, opener: Callable[[], BinaryIO | str], forced: Dialect | None, strict_quirks: bool,
                  max_events: int, deployment: Deployment | None = None) -> FileReport:
    """Check what ``opener`` opens, as it is read; ``opener`` again for a second pass."""
    first = _stream_pass(name, sidecar, opener, None, forced, max_events, deployment)
    if isinstance(first, str):
        return FileReport.unreadable(name, first)

    def again(guess: Guess) -> LogPass:
        read = _stream_pass(name, sidecar, opener, guess, forced, max_events, deployment)
        if isinstance(read, str):
            raise _Vanished(read)
        return read[1]

    reader, one = first
    try:
        return check_read(ReadLog(log=reader.log_file((), ()), total=reader.count, first=one, again=again), forced, strict_quirks)
    except _Vanished as gone:
        return FileReport.unreadable(name, f"{gone} (on reading the file again)")


class _Vanished(Exception):
    """The file could not be opened for a second pass."""


def _stream_pass(name: str, sidecar: Path | None, opener: Callable[[], BinaryIO | str], guess: Guess | None, forced: Dialect | None,
                 max_events: int, deployment: Deployment | None = None) -> tuple[LineReader, LogPass] | str:
    """One pass over what ``opener`` opens, its events handed to a :class:`LogPass` as they are read."""
    handle = opener()
    if isinstance(handle, str):
        return handle
    made: list[LogPass] = []
    batch: list[tuple[Event | ChunkRun, int]] = []

    def fold(reader: LineReader) -> None:
        # The first damaged line met so far: the events read before it lie before it (PrefixTracker).
        if not made:
            made.append(_new_pass(reader, guess, forced, deployment))
        one, damage = made[0], reader.first_damage
        for record, line in batch:
            if isinstance(record, ChunkRun):
                one.take_run(record, line, damage)
            else:
                one.take(record, line, damage)
        one.flush()
        batch.clear()

    def take(reader: LineReader, record: Event | ChunkRun, line: int) -> None:
        # Read a batch, then fold it: parsing and folding in turns of a few thousand events keep
        # each one's code and data in the caches (docs/performance.md, step 4: per event they took 22 % more CPU than the old read-then-audit, in batches 10 %).
        batch.append((record, line))
        if len(batch) >= BATCH_EVENTS:
            fold(reader)

    reader = stream_handle(handle, name, sidecar, take, max_events)
    fold(reader)
    made[0].finish()
    return reader, made[0]


def unlistable_report(item: Unlistable) -> FileReport:
    """A directory that could not be listed: ``unreadable``, never skipped."""
    return FileReport.unreadable(item.path, item.reason)


def check_handle(
    handle: BinaryIO, name: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS, sidecar: Path | None = None,
    deployment: Deployment | None = None,
) -> FileReport:
    """Read and check an open binary stream (closed afterwards); a ``name``
    ending ``.zst`` is a zstandard stream.  Errors of the stream's own
    backend are read errors (``unreadable``), never exceptions.  Checked as it is
    read, like a file; a second pass reads the copy kept on disk (:class:`Spooled`)."""
    with _gc_paused(), handle:
        return _check_spooled(OSErrorsOnly(handle), name, sidecar, forced, strict_quirks, max_events, deployment)


def check_location(location: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS,
                   deployment: Deployment | None = None) -> FileReport:
    """A path, or a URL read through fsspec (``file://`` as a local path, so
    only regular files are read); the report's path is ``location``."""
    if "://" not in location:
        return check_path(location, forced, strict_quirks, max_events, deployment=deployment)
    if location.startswith("file://"):
        return check_path(location.removeprefix("file://"), forced, strict_quirks, max_events, deployment=deployment).renamed(location)
    try:
        import fsspec  # the optional fleet extra
    except ImportError:
        return FileReport.unreadable(location, "fsspec is not installed (pip install 'sessionspec[dask]')")
    try:
        handle = fsspec.open(location, "rb").open()
    except Exception as error:  # any storage backend's failure to open is this file's problem, not a bug
        return FileReport.unreadable(location, f"cannot open: {type(error).__name__}: {error}")
    return check_handle(handle, location, forced, strict_quirks, max_events, deployment=deployment)


def sample_paths() -> list[str]:
    """The bundled sample logs (checked when no path is given)."""
    return [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]
