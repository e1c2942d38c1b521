"""``sessionspec check``: conformance verdicts for session-log files (FMT-7).

Each file is read (:mod:`sessionspec.check.logfile`), its dialect detected (FMT-10) or
forced, legacy shapes migrated in D08 mode (DIA-13, DIA-14), and the events
audited (:func:`sessionspec.check.audit.audit_events`).  The verdict is ``valid``,
``invalid`` (findings name rule, line and seq), ``unknown`` (outside what the
model decides, with the reason) or ``unreadable``.  Files are checked one at a
time and reported as they finish, so memory does not grow with the number of
files; output order is the sorted path order, so it is deterministic.

Exit codes: 0 every file valid or unknown; 1 some file invalid; 2 some input
unreadable, or a usage error.  See ``docs/check.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Final, TextIO, final

from model.log import Dialect, Event
from model.migrate import dialect_evidence, migrate_legacy
from model.rejected import FailureKind, Rejected
from sessionspec.check.audit import audit_events, check_fork_seed
from sessionspec.check.audit_table import loader_answer
from sessionspec.check.logfile import STDIN, LogFile, find_parent_file, read_path, session_id

HELP: Final = "check session-log files (.jsonl, .jsonl.zst, directories, - for stdin) and give a verdict per file"
SAMPLES: Final = Path(__file__).resolve().parents[1] / "samples"
LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zst")
SCHEMA_VERSION: Final = 2


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
    """One finding: ``path:line: RULE seq N: reason (loader refuses)``.

    ``loader`` answers the second question (docs/check.md): would the real
    loader refuse the log for this too (``refuses``), or load it (``accepts``)."""

    line: int | None
    rule: str
    seq: int | None
    reason: str
    kind: FailureKind
    loader: str = "accepts"

    def text(self, path: str) -> str:
        where = f"{path}:{self.line}" if self.line is not None else path
        at = f" seq {self.seq}" if self.seq is not None else ""
        return f"{where}: {self.rule}{at}: {self.reason} (loader {self.loader})"

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "rule": self.rule, "seq": self.seq, "kind": self.kind.value, "reason": self.reason, "loader": self.loader}


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

    def verdict_text(self) -> str:
        parts = [self.verdict.value]
        if self.dialect is not None and self.dialect_source is not None:
            parts.append(f"[{self.dialect.name} {self.dialect_source.value}, {self.events} events]")
        if self.reason:
            parts.append(f"({self.reason})")
        notes = f" (notes: {'; '.join(self.notes)})" if self.notes else ""
        return f"{self.path}: " + " ".join(parts) + notes

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
        }

    def loader(self) -> str | None:
        """The second answer for the whole file: would the real loader refuse it
        (some finding says so), or load it; None for an unreadable file."""
        if self.verdict is Verdict.UNREADABLE:
            return None
        return "refuses" if any(f.loader == "refuses" for f in self.findings) else "accepts"


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
        loader=loader_answer(rejected.rule, rejected.kind),
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


def check_log(log: LogFile, forced: Dialect | None = None, strict_quirks: bool = False) -> FileReport:
    """The verdict for one read file (FMT-7).  The §17 quirks the log shows
    are notes, or findings with ``strict_quirks``."""
    if log.unreadable is not None:
        return FileReport(path=log.name, verdict=Verdict.UNREADABLE, dialect=None, dialect_source=None, events=0, first_live_seq=0, findings=(), reason=log.unreadable)
    line_findings = [_finding(log, f.rejected, f.line) for f in log.findings]
    chosen = _choose_dialect(log, forced)
    if isinstance(chosen, str):
        return _verdict(log, None, None, 0, line_findings, (), unknown=chosen)
    dialect, source = chosen
    events: Sequence[Event] = log.events
    if dialect is Dialect.D08:
        events = migrate_legacy(events, session_id(log))
    live = _first_live_seq(log, events, dialect)
    if _is_replay_script(events):
        return _verdict(log, dialect, source, live, line_findings, (), unknown="a replay script of bare assistant/chunk events, not a loop log (no turns or steps)")
    audit = audit_events(events, dialect, live)
    findings = line_findings + [_finding(log, r) for r in audit.findings]
    fork_findings, fork_notes = _check_fork(log, events, dialect)
    findings += [_finding(log, r) for r in fork_findings]
    quirks = sorted(
        [_finding(log, q.rejected, q.line) for q in log.quirks] + [_finding(log, r) for r in audit.quirks],
        key=lambda f: (f.line or 0, -1 if f.seq is None else f.seq, f.rule),
    )
    # LEG-7: a pre-A55 design is outside the model: unknown, unless invalid anyway.
    outside = "; ".join(audit.outside) or None
    if strict_quirks:
        return _verdict(log, dialect, source, live, findings + quirks, audit.notes + fork_notes, unknown=outside)
    return _verdict(log, dialect, source, live, findings, audit.notes + fork_notes + _quirk_notes(quirks), unknown=outside)


def _check_fork(log: LogFile, events: Sequence[Event], dialect: Dialect) -> tuple[list[Rejected], tuple[str, ...]]:
    """FMT-11 for a seeded child whose parent file lies beside it; a seed
    longer than the log is reported whether or not the parent is found."""
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
    invalid = [f for f in ordered if f.kind is FailureKind.INVALID]
    limited = [f for f in ordered if f.kind is not FailureKind.INVALID]
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


def check_path(path: str, forced: Dialect | None = None, strict_quirks: bool = False) -> FileReport:
    """Read and check one file (or ``-``)."""
    with _gc_paused():
        return check_log(read_path(path), forced, strict_quirks)


def iter_log_paths(paths: Sequence[str]) -> Iterator[str]:
    """Files as given; directories walked recursively in sorted order for
    ``*.jsonl`` and ``*.jsonl.zst``.  A missing path is yielded as is (its
    report is ``unreadable``)."""
    for path in paths:
        if path != STDIN and os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(LOG_SUFFIXES):
                        yield os.path.join(root, name)
        else:
            yield path


def _sample_paths() -> list[str]:
    return [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]


@final
@dataclass(slots=True, kw_only=True)
class _Tally:
    counts: dict[Verdict, int]

    def add(self, verdict: Verdict) -> None:
        self.counts[verdict] = self.counts.get(verdict, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def exit_code(self) -> int:
        if self.counts.get(Verdict.UNREADABLE):
            return 2
        return 1 if self.counts.get(Verdict.INVALID) else 0

    def summary(self) -> str:
        parts = ", ".join(f"{self.counts.get(v, 0)} {v.value}" for v in Verdict)
        return f"checked {self.total} file{'s' if self.total != 1 else ''}: {parts}"

    def to_json(self) -> dict[str, object]:
        return {"kind": "summary", "schema": SCHEMA_VERSION, "files": self.total, **{v.value: self.counts.get(v, 0) for v in Verdict}, "exit": self.exit_code()}


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files or directories (recursive), - for stdin; none: the bundled samples")
    parser.add_argument("--dialect", choices=[d.name for d in Dialect], help="force a dialect instead of detecting it per file (FMT-10)")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="text (default) or json (JSON Lines, one object per file, then a summary)")
    parser.add_argument("-q", "--quiet", action="store_true", help="text format: omit the verdict lines of valid files")
    parser.add_argument("-j", "--jobs", type=_positive_int, default=1, metavar="N",
                        help="check files in N worker processes (default 1); output order stays the input order")
    parser.add_argument("--strict-quirks", action="store_true",
                        help="report the quirks of the real code a log shows (spec/rulebook.md section 17: Q-4, Q-17, Q-29) as findings instead of notes")
    parser.add_argument("--no-progress", action="store_true", help="never draw the progress bar on stderr")


def _emit(out: TextIO, report: FileReport, fmt: str, quiet: bool) -> None:
    if fmt == "json":
        out.write(json.dumps(report.to_json(), ensure_ascii=False, sort_keys=False) + "\n")
        return
    for finding in report.findings:
        out.write(finding.text(report.path) + "\n")
    if not (quiet and report.verdict is Verdict.VALID):
        out.write(report.verdict_text() + "\n")


# --------------------------------------------------------------------------- progress


PROGRESS_MIN_FILES: Final = 5
PROGRESS_BAR_CELLS: Final = 30
PROGRESS_INTERVAL_S: Final = 0.1


def progress_line(done: int, total: int, invalid: int, cells: int = PROGRESS_BAR_CELLS) -> str:
    """The bar's text: ``[#####.....] done/total files  NN%`` (and the invalid count)."""
    filled = cells * done // total if total else cells
    percent = 100 * done // total if total else 100
    bad = f", {invalid} invalid" if invalid else ""
    return f"[{'#' * filled}{'.' * (cells - filled)}] {done}/{total} files {percent:3d}%{bad}"


@final
@dataclass(slots=True, kw_only=True)
class ProgressBar:
    """A one-line bar redrawn in place with ``\\r`` on a terminal stream.

    Redraws at most every ``interval`` seconds (and always at the end), and
    is cleared before report lines are written so they never mix with it."""

    stream: TextIO
    total: int
    clock: Callable[[], float] = time.monotonic
    interval: float = PROGRESS_INTERVAL_S
    _shown: int = 0
    _last: float | None = None

    def update(self, done: int, invalid: int) -> None:
        now = self.clock()
        if done < self.total and self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        text = progress_line(done, self.total, invalid)
        self.stream.write("\r" + text)
        self.stream.flush()
        self._shown = len(text)

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0


def _progress_bar(paths: list[str], enabled: bool) -> ProgressBar | None:
    """A bar when asked for, stderr is a terminal and there are many files."""
    if not enabled or len(paths) < PROGRESS_MIN_FILES or not sys.stderr.isatty():
        return None
    return ProgressBar(stream=sys.stderr, total=len(paths))


# --------------------------------------------------------------------------- running


def _check_task(task: tuple[str, Dialect | None, bool]) -> FileReport:
    """One file in a worker process (module level, so it can be pickled)."""
    path, forced, strict_quirks = task
    return check_path(path, forced, strict_quirks)


def _reports(paths: Iterable[str], forced: Dialect | None, jobs: int, strict_quirks: bool = False) -> Iterator[FileReport]:
    """Reports in input order.  With ``jobs > 1`` files are checked in worker
    processes; ``imap`` hands results back in submission order, so the output
    does not depend on which worker finishes first."""
    if jobs <= 1:
        for path in paths:
            yield check_path(path, forced, strict_quirks)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with context.Pool(processes=jobs) as pool:
        yield from pool.imap(_check_task, ((path, forced, strict_quirks) for path in paths), chunksize=1)


def run(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.paths) or _sample_paths()
    if not paths:
        print("sessionspec check: no paths given and no bundled samples found", file=sys.stderr)
        return 2
    if paths.count(STDIN) > 1:
        print("sessionspec check: - (stdin) may be given only once", file=sys.stderr)
        return 2
    forced = Dialect[args.dialect] if args.dialect else None
    # Workers cannot share the parent's stdin: a run that reads - stays in one process.
    jobs = 1 if STDIN in paths else args.jobs
    out: TextIO = sys.stdout
    wants_bar = not args.no_progress and sys.stderr.isatty()
    # The bar needs the total, so the paths are listed first only when it is drawn.
    log_paths: Iterable[str] = list(iter_log_paths(paths)) if wants_bar else iter_log_paths(paths)
    bar = _progress_bar(log_paths, wants_bar) if isinstance(log_paths, list) else None
    tally = _Tally(counts={})
    for report in _reports(log_paths, forced, jobs, args.strict_quirks):
        tally.add(report.verdict)
        if bar is not None:
            bar.clear()
        _emit(out, report, args.format, args.quiet)
        if bar is not None:
            out.flush()
            bar.update(tally.total, tally.counts.get(Verdict.INVALID, 0))
    if bar is not None:
        bar.clear()
    if tally.total == 0:
        print(f"sessionspec check: no session-log files (*.jsonl, *.jsonl.zst) under {' '.join(paths)}", file=sys.stderr)
        return 2
    if args.format == "json":
        out.write(json.dumps(tally.to_json()) + "\n")
    else:
        out.write(tally.summary() + "\n")
    out.flush()
    return tally.exit_code()
