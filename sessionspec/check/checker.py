"""``sessionspec check``: conformance verdicts for session-log files (FMT-7).

Each file is read (:mod:`sessionspec.check.logfile`), its dialect detected (FMT-10) or
forced, legacy shapes migrated in D08 mode (DIA-13, DIA-14), and the events
audited (:func:`sessionspec.check.audit.audit_events`).  The verdict is ``valid``,
``invalid`` (findings name rule, line and seq), ``unknown`` (outside what the
model decides, with the reason) or ``unreadable``.  Files are checked one at a
time and reported as they finish, so memory does not grow with the number of
files; output order is the sorted path order, so it is deterministic.

Exit codes: :data:`EXIT_CODES` (the one table; ``docs/check.md``, ``docs/guide.md``
and ``--help`` show it, a test keeps them equal).
"""

from __future__ import annotations

import contextlib
import gc
import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import BinaryIO, Final, final

from model.log import Dialect, Event
from model.migrate import dialect_evidence, migrate_legacy
from model.rejected import FailureKind, Rejected
from sessionspec.check import by_definition  # noqa: F401  (registers the audits that are definitions)
from sessionspec.check.audit import audit_events, check_end_seed, check_fork_seed
from sessionspec.check.audit_table import LOADER_LEVELS, loader_level
from sessionspec.check.file_load import header_line_refused, repair_walk_throws, torn_tail_line
from sessionspec.check.logfile import MAX_EVENTS, LogFile, find_parent_file, read_handle, read_path, session_id
from sessionspec.check.paths import Unlistable, escape_text
from sessionspec.check.writers import Attribution, TurnWriter, attribute, check_turn_dialects, writer_note

SAMPLES: Final = Path(__file__).resolve().parents[1] / "samples"
SCHEMA_VERSION: Final = 3
# How a finding's loader answer reads in the text format.
LOADER_TEXT: Final = {"refuses": "loader refuses", "companion-refuses": "loader: only its invariant companion refuses", "accepts": "loader accepts"}

# The exit codes of `sessionspec check`, the one table (docs/check.md, docs/guide.md and --help
# show it; tests/check/test_hostile_files.py keeps them equal).  When several apply the first listed in
# EXIT_PRECEDENCE wins: unknown is not a pass, but a definite failure says more.
EXIT_CODES: Final = (
    (0, "every file is valid"),
    (1, "some file is invalid (and none is unreadable)"),
    (2, "some input is unreadable (missing, not a regular file, a directory that cannot be listed, a cut or corrupt zstd stream), or a usage error"),
    (3, "an internal error of sessionspec (a bug; please report it)"),
    (4, "no file is invalid or unreadable, but some file is unknown (a checker limit, mixed dialect markers, a design outside the model): not decided, so not a pass"),
)
EXIT_PRECEDENCE: Final = (3, 2, 1, 4, 0)


class Verdict(Enum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"
    UNREADABLE = "unreadable"


class DialectSource(Enum):
    DETECTED = "detected"
    FORCED = "forced"
    DEFAULT = "default"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One finding: ``path:line: RULE seq N: reason``."""

    line: int | None
    rule: str
    seq: int | None
    reason: str
    kind: FailureKind
    # Would the real loader refuse the log for this too, in the three levels of LOADER_LEVELS
    # (docs/check.md): its core load, or only its invariant companion (LOG-13), or neither.
    loader: str = "accepts"
    # Set when the dialect is undecided (mixed markers) and only this dialect
    # gives the finding: shown, but it cannot make the file invalid.
    only_if: Dialect | None = None

    def text(self, path: str) -> str:
        """One output line; control characters are escaped (``escape_text``)."""
        path = escape_text(path)
        where = f"{path}:{self.line}" if self.line is not None else path
        at = f" seq {self.seq}" if self.seq is not None else ""
        condition = f"(only if {self.only_if.name}) " if self.only_if is not None else ""
        return f"{where}: {self.rule}{at}: {condition}{escape_text(self.reason)} ({LOADER_TEXT[self.loader]})"

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line, "rule": self.rule, "seq": self.seq, "kind": self.kind.value, "reason": self.reason, "loader": self.loader,
            "onlyIf": None if self.only_if is None else self.only_if.value,
        }


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FileReport:
    path: str
    verdict: Verdict
    dialect: Dialect | None
    dialect_source: DialectSource | None
    events: int
    first_live_seq: int
    findings: tuple[Finding, ...]
    reason: str | None = None
    notes: tuple[str, ...] = ()
    # FMT-7 Writers: which writer each turn is attributed to (empty when the dialect is undecided).
    writers: tuple[TurnWriter, ...] = ()
    # QF-14: the file load refuses the header line itself (its answer on a file no finding decides).
    header_refused: bool = False

    @staticmethod
    def unreadable(path: str, reason: str) -> FileReport:
        """The report of an input that could not be read, with the reason."""
        return FileReport(path=path, verdict=Verdict.UNREADABLE, dialect=None, dialect_source=None, events=0, first_live_seq=0, findings=(), reason=reason)

    def renamed(self, path: str) -> FileReport:
        """The same report under another path (a URL for a local file)."""
        return replace(self, path=path)

    def verdict_text(self) -> str:
        parts = [self.verdict.value]
        if self.dialect is not None and self.dialect_source is not None:
            parts.append(f"[{self.dialect.name} {self.dialect_source.value}, {self.events} events]")
        if self.reason:
            parts.append(f"({self.reason})")
        notes = f" (notes: {'; '.join(self.notes)})" if self.notes else ""
        loader = self.loader()
        shown = f" [{LOADER_TEXT[loader]}]" if loader is not None and (loader != "accepts" or self.verdict is Verdict.INVALID) else ""
        return escape_text(f"{self.path}: " + " ".join(parts) + notes + shown)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": "file",
            "path": self.path,
            "verdict": self.verdict.value,
            "dialect": None if self.dialect is None else self.dialect.value,
            "dialectSource": None if self.dialect_source is None else self.dialect_source.value,
            "events": self.events,
            "firstLiveSeq": self.first_live_seq,
            "reason": self.reason,
            "notes": list(self.notes),
            "findings": [f.to_json() for f in self.findings],
            "loader": self.loader(),
            "writers": [w.to_json() for w in self.writers],
        }

    def loader(self) -> str | None:
        """The second answer for the whole file, the strictest its findings give: the real core
        load ``refuses`` it, or only the invariant companion does (``companion-refuses``), or it
        ``accepts``; None for an unreadable file.  A finding shown only under one dialect
        (``onlyIf``) counts too: the loader of that dialect would refuse it."""
        if self.verdict is Verdict.UNREADABLE:
            return None
        answers = {f.loader for f in self.findings} | ({"refuses"} if self.header_refused else set())
        return next(level for level in LOADER_LEVELS if level in answers or level == "accepts")


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


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Prefix:
    """The events audited (the first ``count``), why not more, and the first
    seq break as (seq, line): the break event repeats an earlier seq, so
    findings on it are placed by this line, not the seq's first line."""

    count: int
    notes: tuple[str, ...] = ()
    seq_break: tuple[int, int] | None = None


def _audited_prefix(log: LogFile) -> _Prefix:
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
        return _Prefix(count=count, seq_break=seq_break)
    note = f"{after} event{'s' if after != 1 else ''} after {where} not audited: their findings could follow from it"
    return _Prefix(count=count, notes=(note,), seq_break=seq_break)


def _audit_finding(log: LogFile, rejected: Rejected, prefix: _Prefix) -> Finding:
    """An audit finding, placed on the seq break's own line when it is about
    the break (LOG-1, or LOG-13's order check), not the seq's first line."""
    if prefix.seq_break is not None and rejected.seq == prefix.seq_break[0]:
        if rejected.rule == "LOG-1" or (rejected.rule == "LOG-13" and "does not increase" in rejected.reason):
            return _finding(log, rejected, prefix.seq_break[1])
    return _finding(log, rejected)


def _judge(log: LogFile, prefix: _Prefix, dialect: Dialect, strict_quirks: bool) -> _Judged:
    """Audit the first ``prefix.count`` events as ``dialect``."""
    logged: Sequence[Event] = log.events[: prefix.count]
    events = migrate_legacy(logged, session_id(log)) if dialect is Dialect.D08 else logged
    live = _first_live_seq(log, events, dialect)
    if _is_replay_script(events):
        return _Judged(live=live, findings=(), notes=(), outside="a replay script of bare assistant/chunk events, not a loop log (no turns or steps)")
    audit = audit_events(events, dialect, live)
    # FMT-7 Writers: judged on the events as logged (the D08 migration would hide a legacy event's shape).
    attribution = attribute(logged, dialect, live)
    writer_notes = _writer_notes(attribution)
    found = [*audit.findings, *check_turn_dialects(logged, live)]
    findings, cascade_notes = _collapse_cascades([_audit_finding(log, r, prefix) for r in found])
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


CASCADE_RULES: Final = frozenset({"LOG-13"})


def _complaint(finding: Finding) -> tuple[str, str]:
    """A nesting finding's complaint without the event type it was met on:
    ``assistant/chunk names turn 1 step 1, but turn 1 step 7 is open`` and the
    same of a ``step/end`` are one complaint about the nesting state."""
    head, _, rest = finding.reason.partition(" ")
    return finding.rule, (rest if "/" in head else finding.reason)


def _collapse_cascades(findings: Sequence[Finding]) -> tuple[list[Finding], tuple[str, ...]]:
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
        if run and _complaint(run[0]) == _complaint(finding):
            run.append(finding)
            continue
        close()
        run.append(finding)
        kept.append(finding)
    close()
    return kept, tuple(notes)


def _finding_key(finding: Finding) -> tuple[int | None, str, int | None]:
    return finding.line, finding.rule, finding.seq


def _check_mixed(log: LogFile, prefix: _Prefix, line_findings: list[Finding], mixed: str, strict_quirks: bool) -> FileReport:
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
    prefix = _audited_prefix(log)
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
        return check_log(read_handle(io.BufferedReader(_OSErrors(handle)), name, sidecar, max_events), forced, strict_quirks)


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


class _OSErrors(io.RawIOBase):
    """A stream whose failures, whatever a storage backend raises, are OSError."""

    def __init__(self, inner: BinaryIO) -> None:
        super().__init__()
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(buffer))
        except Exception as error:
            raise OSError(f"{type(error).__name__}: {error}") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(Exception):  # a failing close loses nothing already read
                self._inner.close()
        super().close()


def sample_paths() -> list[str]:
    """The bundled sample logs (checked when no path is given)."""
    return [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]


@final
@dataclass(frozen=True, slots=True)
class Summary:
    """The summary of a run: counts per verdict.  A fold: ``add`` one report,
    ``merge`` two partial summaries (associative and commutative, so a fleet
    engine may reduce in any grouping); ``Summary()`` is the empty one."""

    valid: int = 0
    invalid: int = 0
    unknown: int = 0
    unreadable: int = 0

    def add(self, report: FileReport) -> Summary:
        return self.merge(Summary(**{report.verdict.value: 1}))

    def merge(self, other: Summary) -> Summary:
        return Summary(self.valid + other.valid, self.invalid + other.invalid, self.unknown + other.unknown, self.unreadable + other.unreadable)

    def count(self, verdict: Verdict) -> int:
        return int(getattr(self, verdict.value))

    @property
    def files(self) -> int:
        return self.valid + self.invalid + self.unknown + self.unreadable

    def exit_code(self) -> int:
        """EXIT_CODES: unreadable 2, else invalid 1, else unknown 4, else 0."""
        present = {2: self.unreadable > 0, 1: self.invalid > 0, 4: self.unknown > 0}
        return next((code for code in EXIT_PRECEDENCE if present.get(code)), 0)

    def text(self) -> str:
        parts = ", ".join(f"{self.count(v)} {v.value}" for v in Verdict)
        return f"checked {self.files} file{'s' if self.files != 1 else ''}: {parts}"

    def to_json(self) -> dict[str, object]:
        return {"kind": "summary", "schema": SCHEMA_VERSION, "files": self.files, **{v.value: self.count(v) for v in Verdict}, "exit": self.exit_code()}


def summarize(reports: Iterable[FileReport]) -> Summary:
    """The fold of ``Summary.add`` over reports: what the command line prints last."""
    summary = Summary()
    for report in reports:
        summary = summary.add(report)
    return summary
