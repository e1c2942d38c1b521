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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Final, final

from model.log import Dialect, Event
from model.migrate import dialect_evidence, migrate_legacy
from model.rejected import FailureKind, Rejected
from sessionspec.check import by_definition  # noqa: F401  (registers the audits that are definitions)
from sessionspec.check.audit import audit_events, check_end_seed, check_fork_seed
from sessionspec.check.audit_table import loader_level
from sessionspec.check.audited_prefix import AuditedPrefix, audited_prefix
from sessionspec.check.cascades import collapse_cascades
from sessionspec.check.file_load import header_line_refused, repair_walk_throws, torn_tail_line
from sessionspec.check.logfile import MAX_EVENTS, LogFile, find_parent_file, read_handle, read_path, session_id
from sessionspec.check.os_errors import OSErrorsOnly
from sessionspec.check.paths import Unlistable
from sessionspec.check.report import DialectSource as DialectSource
from sessionspec.check.report import FileReport as FileReport
from sessionspec.check.report import Finding as Finding
from sessionspec.check.report import Verdict as Verdict
from sessionspec.check.summary import EXIT_CODES as EXIT_CODES
from sessionspec.check.summary import EXIT_PRECEDENCE as EXIT_PRECEDENCE
from sessionspec.check.summary import SCHEMA_VERSION as SCHEMA_VERSION
from sessionspec.check.summary import Summary as Summary
from sessionspec.check.summary import summarize as summarize
from sessionspec.check.writers import Attribution, TurnWriter, writer_note

SAMPLES: Final = Path(__file__).resolve().parents[1] / "samples"


def _first_live_seq(log: LogFile, events: Sequence[Event], dialect: Dialect) -> int:
    """LOG-8: the seed length; D08 readers take the last ``session/end-seed`` (DIA-5)."""
    live = log.seed_length
    if dialect is Dialect.D08:
        for event in reversed(events):
            if event.type == "session/end-seed":
                live = max(live, event.seq + 1)
                break
    return live


def _is_replay_script(events: Sequence[Event]) -> bool:
    """A file of bare ``assistant/chunk`` events is a scripted model reply
    (test replay fixtures), not a loop log: no turn, step or message."""
    return bool(events) and all(e.type == "assistant/chunk" for e in events)


def _finding(log: LogFile, rejected: Rejected, line: int | None = None) -> Finding:
    return Finding(
        line=line if line is not None else log.line_of(rejected.seq),
        rule=rejected.rule,
        seq=rejected.seq,
        reason=rejected.reason,
        kind=rejected.kind,
        loader=loader_level(rejected.rule, rejected.kind),
    )


def _choose_dialect(log: LogFile, forced: Dialect | None) -> tuple[Dialect, DialectSource] | str:
    """FMT-10: forced, else detected; mixed markers are the reason for ``unknown``."""
    if forced is not None:
        return forced, DialectSource.FORCED
    evidence = dialect_evidence(log.events, None if log.header is None else log.header.value)
    if evidence.mixed:
        return (
            f"mixed dialect markers (FMT-10): A55 {evidence.a55_reason} at seq {evidence.a55_seq}, "
            f"D08 {evidence.d08_reason} at seq {evidence.d08_seq}; use --dialect to force one"
        )
    if evidence.d08_seq is not None:
        return Dialect.D08, DialectSource.DETECTED
    if evidence.a55_seq is not None:
        return Dialect.A55, DialectSource.DETECTED
    return Dialect.A55, DialectSource.DEFAULT


def _quirk_notes(quirks: Sequence[Finding]) -> tuple[str, ...]:
    """One note per quirk ID (§17: the model follows the real code; a note, not a failure)."""
    by_rule: dict[str, list[Finding]] = {}
    for quirk in quirks:
        by_rule.setdefault(quirk.rule, []).append(quirk)
    notes: list[str] = []
    for rule in sorted(by_rule, key=lambda r: int(r.split("-")[1])):
        first = by_rule[rule][0]
        where = ", ".join(part for part in (f"line {first.line}" if first.line is not None else "", f"seq {first.seq}" if first.seq is not None else "") if part)
        count = len(by_rule[rule])
        notes.append(f"quirk {rule} ({count} time{'s' if count != 1 else ''}, first at {where}): {first.reason} (the real code does this; --strict-quirks makes it a finding)")
    return tuple(notes)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Judged:
    """One dialect's judgement of a file's events."""

    live: int
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    outside: str | None
    writers: tuple[TurnWriter, ...] = ()


def _audit_finding(log: LogFile, rejected: Rejected, prefix: AuditedPrefix) -> Finding:
    """An audit finding, placed on the seq break's own line when it is about
    the break (LOG-1, or LOG-13's order check), not the seq's first line."""
    if prefix.seq_break is not None and rejected.seq == prefix.seq_break[0]:
        if rejected.rule == "LOG-1" or (rejected.rule == "LOG-13" and "does not increase" in rejected.reason):
            return _finding(log, rejected, prefix.seq_break[1])
    return _finding(log, rejected)


def _judge(log: LogFile, prefix: AuditedPrefix, dialect: Dialect, strict_quirks: bool) -> _Judged:
    """Audit the first ``prefix.count`` events as ``dialect``."""
    logged: Sequence[Event] = log.events[: prefix.count]
    events = migrate_legacy(logged, session_id(log)) if dialect is Dialect.D08 else logged
    live = _first_live_seq(log, events, dialect)
    if _is_replay_script(events):
        return _Judged(live=live, findings=(), notes=(), outside="a replay script of bare assistant/chunk events, not a loop log (no turns or steps)")
    # FMT-7 Writers: judged on the events as logged (the D08 migration would hide a legacy event's shape).
    audit = audit_events(events, dialect, live, logged)
    attribution = audit.writers
    writer_notes = _writer_notes(attribution)
    found = list(audit.findings)
    findings, cascade_notes = collapse_cascades([_audit_finding(log, r, prefix) for r in found])
    complete = prefix.count == len(log.events) and not any(f.rejected.kind is FailureKind.LIMIT for f in log.findings)
    fork_findings, fork_notes = _check_fork(log, events, dialect, complete)
    findings += [_finding(log, r) for r in fork_findings]
    if dialect is Dialect.D08 and complete:
        findings += [_finding(log, r) for r in check_end_seed(events, log.seed_length)]
    quirks = sorted(
        [_finding(log, q.rejected, q.line) for q in log.quirks] + [_finding(log, r) for r in audit.quirks],
        key=lambda f: (f.line or 0, -1 if f.seq is None else f.seq, f.rule),
    )
    # LEG-7: a pre-A55 design is outside the model: unknown, unless invalid anyway.
    outside = "; ".join(audit.outside) or None
    notes = writer_notes + audit.notes + fork_notes + cascade_notes
    if strict_quirks:
        return _Judged(live=live, findings=tuple(findings + quirks), notes=notes, outside=outside, writers=attribution.turns)
    return _Judged(live=live, findings=tuple(findings), notes=notes + _quirk_notes(quirks), outside=outside, writers=attribution.turns)


def _writer_notes(attribution: Attribution) -> tuple[str, ...]:
    """The writers of the log's turns (FMT-7 Writers), when not one loop alone."""
    note = writer_note(attribution)
    return () if note is None else (note,)


def _finding_key(finding: Finding) -> tuple[int | None, str, int | None]:
    return finding.line, finding.rule, finding.seq


def _check_mixed(log: LogFile, prefix: AuditedPrefix, line_findings: list[Finding], mixed: str, strict_quirks: bool) -> FileReport:
    """Mixed dialect markers (FMT-10): the dialect is undecided, but no
    finding is hidden by that.  The events are judged as both dialects; a
    finding both give (same rule, line and seq) holds whichever dialect wrote
    the log, so it is a finding of the file; a finding of one dialect only is
    shown marked ``only if`` that dialect and leaves the verdict ``unknown``."""
    a55 = _judge(log, prefix, Dialect.A55, strict_quirks)
    d08 = _judge(log, prefix, Dialect.D08, strict_quirks)
    in_d08 = {_finding_key(f) for f in d08.findings}
    in_a55 = {_finding_key(f) for f in a55.findings}
    findings = line_findings + [f for f in a55.findings if _finding_key(f) in in_d08]
    for dialect, judged, other in ((Dialect.A55, a55, in_d08), (Dialect.D08, d08, in_a55)):
        findings += [replace(f, only_if=dialect) for f in judged.findings if _finding_key(f) not in other]
    return _verdict(log, None, None, min(a55.live, d08.live), findings, (), unknown=mixed)


def check_log(log: LogFile, forced: Dialect | None = None, strict_quirks: bool = False) -> FileReport:
    """The verdict for one read file (FMT-7).  The §17 quirks the log shows
    are notes, or findings with ``strict_quirks``.

    Verdict precedence (docs/check.md): ``unreadable``, else ``invalid`` if
    any finding is of kind invalid, else ``unknown`` (a limit or bug finding,
    or the log outside the model, with the reason), else ``valid``.  No
    dialect or marker decision hides a finding."""
    if log.unreadable is not None:
        return FileReport.unreadable(log.name, log.unreadable)
    line_findings = [_finding(log, f.rejected, f.line) for f in log.findings]
    prefix = audited_prefix(log)
    chosen = _choose_dialect(log, forced)
    if isinstance(chosen, str):
        report = _check_mixed(log, prefix, line_findings, chosen, strict_quirks)
        return report if not prefix.notes else _with_notes(report, prefix.notes)
    dialect, source = chosen
    judged = _judge(log, prefix, dialect, strict_quirks)
    findings = _file_load_answers(log, dialect, line_findings + list(judged.findings))
    refused = header_line_refused(log.header, dialect)
    header_note = () if refused is None else (f"the JSONL file load refuses this header line: {refused} (QF-14; the harness's JSONL writer always writes it)",)
    report = _verdict(log, dialect, source, judged.live, findings, judged.notes + prefix.notes + header_note, unknown=judged.outside)
    return replace(report, writers=judged.writers, header_refused=refused is not None)


def _file_load_answers(log: LogFile, dialect: Dialect, findings: list[Finding]) -> list[Finding]:
    """Where the real file load answers otherwise than per rule (sessionspec/check/file_load.py): a finding
    on an event its repair walk throws on is refused (QF-13); one in a torn tail after the last ``turn/end``
    is never read, so accepted (QF-15)."""
    throws = repair_walk_throws(log.events, dialect)
    torn = torn_tail_line(log, ((f.rule, f.line, f.kind) for f in findings))
    answered = [replace(f, loader="refuses") if f.seq in throws and f.kind is FailureKind.INVALID else f for f in findings]
    if torn is None:
        return answered
    return [replace(f, loader="accepts") if f.line is not None and f.line >= torn else f for f in answered]


def _with_notes(report: FileReport, notes: tuple[str, ...]) -> FileReport:
    return FileReport(
        path=report.path, verdict=report.verdict, dialect=report.dialect, dialect_source=report.dialect_source, events=report.events,
        first_live_seq=report.first_live_seq, findings=report.findings, reason=report.reason, notes=report.notes + notes,
    )


def _check_fork(log: LogFile, events: Sequence[Event], dialect: Dialect, complete: bool = True) -> tuple[list[Rejected], tuple[str, ...]]:
    """FMT-11 for a seeded child whose parent file lies beside it; a seed
    longer than the log is reported whether or not the parent is found.
    ``complete`` is False when ``events`` stop short of the file (a damage or
    a limit): a seed reaching past them is not judged."""
    if log.seed_length > len(events) and not complete:
        return [], (f"seedLength {log.seed_length} reaches past the {len(events)} events audited; seed not compared (FMT-11)",)
    if log.seed_length > len(events):
        return [Rejected(rule="FMT-11", reason=f"seedLength {log.seed_length} exceeds the log's {len(events)} events")], ()
    if log.parent_session is None or log.seed_length <= 0 or log.name == "<stdin>":
        return [], ()
    parent_path = find_parent_file(Path(log.name), log.parent_session)
    if parent_path is None:
        return [], (f"fork parent {log.parent_session} not found beside the file; seed not compared (FMT-11)",)
    parent = read_path(str(parent_path))
    if parent.unreadable is not None:
        return [], (f"fork parent {parent_path.name} unreadable; seed not compared (FMT-11)",)
    parent_events: Sequence[Event] = parent.events
    if dialect is Dialect.D08:
        parent_events = migrate_legacy(parent_events, session_id(parent))
    return check_fork_seed(events, parent_events, log.seed_length), ()


def _verdict(
    log: LogFile,
    dialect: Dialect | None,
    source: DialectSource | None,
    live: int,
    findings: Sequence[Finding],
    notes: Sequence[str],
    unknown: str | None = None,
) -> FileReport:
    ordered = tuple(sorted(findings, key=lambda f: (f.line or 0, -1 if f.seq is None else f.seq, f.rule, f.reason)))
    invalid = [f for f in ordered if f.kind is FailureKind.INVALID and f.only_if is None]
    limited = [f for f in ordered if f.kind is not FailureKind.INVALID and f.only_if is None]
    reason: str | None = None
    if invalid:
        verdict = Verdict.INVALID
    elif limited:
        verdict = Verdict.UNKNOWN
        first = limited[0]
        reason = f"{first.kind.value}: {first.rule}: {first.reason}"
    elif unknown is not None:
        verdict, reason = Verdict.UNKNOWN, unknown
    else:
        verdict = Verdict.VALID
    if unknown is not None and reason != unknown:
        # A finding decided the verdict; why the log is outside the model stays visible as a note.
        notes = (*notes, unknown)
    return FileReport(
        path=log.name,
        verdict=verdict,
        dialect=dialect,
        dialect_source=source,
        events=len(log.events),
        first_live_seq=live,
        findings=ordered,
        reason=reason,
        notes=tuple(notes),
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


def check_path(path: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS) -> FileReport:
    """Read and check one file (or ``-``): the per-file function of the
    command line, of ``sessionspec.api`` and of its fleet recipes."""
    with _gc_paused():
        return check_log(read_path(path, max_events), forced, strict_quirks)


def unlistable_report(item: Unlistable) -> FileReport:
    """A directory that could not be listed: ``unreadable``, never skipped."""
    return FileReport.unreadable(item.path, item.reason)


def check_handle(
    handle: BinaryIO, name: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS, sidecar: Path | None = None
) -> FileReport:
    """Read and check an open binary stream (closed afterwards); a ``name``
    ending ``.zst`` is a zstandard stream.  Errors of the stream's own
    backend are read errors (``unreadable``), never exceptions."""
    with _gc_paused():
        return check_log(read_handle(io.BufferedReader(OSErrorsOnly(handle)), name, sidecar, max_events), forced, strict_quirks)


def check_location(location: str, forced: Dialect | None = None, strict_quirks: bool = False, max_events: int = MAX_EVENTS) -> FileReport:
    """A path, or a URL read through fsspec (``file://`` as a local path, so
    only regular files are read); the report's path is ``location``."""
    if "://" not in location:
        return check_path(location, forced, strict_quirks, max_events)
    if location.startswith("file://"):
        return check_path(location.removeprefix("file://"), forced, strict_quirks, max_events).renamed(location)
    try:
        import fsspec  # the optional fleet extra
    except ImportError:
        return FileReport.unreadable(location, "fsspec is not installed (pip install 'sessionspec[dask]')")
    try:
        handle = fsspec.open(location, "rb").open()
    except Exception as error:  # any storage backend's failure to open is this file's problem, not a bug
        return FileReport.unreadable(location, f"cannot open: {type(error).__name__}: {error}")
    return check_handle(handle, location, forced, strict_quirks, max_events)


def sample_paths() -> list[str]:
    """The bundled sample logs (checked when no path is given)."""
    return [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]
