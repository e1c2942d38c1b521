"""``sessionspec check``: conformance verdicts for session-log files (FMT-7).

Each file is read (:mod:`spec.logfile`), its dialect detected (FMT-10) or
forced, legacy shapes migrated in D08 mode (DIA-13, DIA-14), and the events
audited (:func:`model.audit.audit_events`).  The verdict is ``valid``,
``invalid`` (findings name rule, line and seq), ``unknown`` (outside what the
model decides, with the reason) or ``unreadable``.  Files are checked one at a
time and reported as they finish, so memory does not grow with the number of
files; output order is the sorted path order, so it is deterministic.

Exit codes: 0 every file valid or unknown; 1 some file invalid; 2 some input
unreadable, or a usage error.  See ``docs/check.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Final, TextIO, final

from model.audit import audit_events, check_fork_seed
from model.log import Dialect, Event
from model.migrate import dialect_evidence, migrate_legacy
from model.rejected import FailureKind, Rejected
from spec.logfile import STDIN, LogFile, find_parent_file, read_path, session_id

HELP: Final = "check session-log files (.jsonl, .jsonl.zst, directories, - for stdin) and give a verdict per file"
SAMPLES: Final = Path(__file__).parent / "samples"
LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zst")
SCHEMA_VERSION: Final = 1


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

    def text(self, path: str) -> str:
        where = f"{path}:{self.line}" if self.line is not None else path
        at = f" seq {self.seq}" if self.seq is not None else ""
        return f"{where}: {self.rule}{at}: {self.reason}"

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "rule": self.rule, "seq": self.seq, "kind": self.kind.value, "reason": self.reason}


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
        }


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


def check_log(log: LogFile, forced: Dialect | None = None) -> FileReport:
    """The verdict for one read file (FMT-7)."""
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
    return _verdict(log, dialect, source, live, findings, audit.notes + fork_notes)


def _check_fork(log: LogFile, events: Sequence[Event], dialect: Dialect) -> tuple[list[Rejected], tuple[str, ...]]:
    """FMT-11 for a seeded child whose parent file lies beside it."""
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


def check_path(path: str, forced: Dialect | None = None) -> FileReport:
    """Read and check one file (or ``-``)."""
    report = check_log(read_path(path), forced)
    return report


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files or directories (recursive), - for stdin; none: the bundled samples")
    parser.add_argument("--dialect", choices=[d.name for d in Dialect], help="force a dialect instead of detecting it per file (FMT-10)")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="text (default) or json (JSON Lines, one object per file, then a summary)")
    parser.add_argument("-q", "--quiet", action="store_true", help="text format: omit the verdict lines of valid files")
    parser.add_argument("--no-progress", action="store_true", help="never draw the progress line on stderr")


def _emit(out: TextIO, report: FileReport, fmt: str, quiet: bool) -> None:
    if fmt == "json":
        out.write(json.dumps(report.to_json(), ensure_ascii=False, sort_keys=False) + "\n")
        return
    for finding in report.findings:
        out.write(finding.text(report.path) + "\n")
    if not (quiet and report.verdict is Verdict.VALID):
        out.write(report.verdict_text() + "\n")


def run(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.paths) or _sample_paths()
    if not paths:
        print("sessionspec check: no paths given and no bundled samples found", file=sys.stderr)
        return 2
    if paths.count(STDIN) > 1:
        print("sessionspec check: - (stdin) may be given only once", file=sys.stderr)
        return 2
    forced = Dialect[args.dialect] if args.dialect else None
    out: TextIO = sys.stdout
    progress = not args.no_progress and sys.stderr.isatty()
    tally = _Tally(counts={})
    for path in iter_log_paths(paths):
        report = check_path(path, forced)
        tally.add(report.verdict)
        _emit(out, report, args.format, args.quiet)
        if progress and tally.total % 10 == 0:
            sys.stderr.write(f"\rchecked {tally.total} files")
            sys.stderr.flush()
    if progress and tally.total >= 10:
        sys.stderr.write("\r" + " " * 40 + "\r")
    if tally.total == 0:
        print(f"sessionspec check: no session-log files (*.jsonl, *.jsonl.zst) under {' '.join(paths)}", file=sys.stderr)
        return 2
    if args.format == "json":
        out.write(json.dumps(tally.to_json()) + "\n")
    else:
        out.write(tally.summary() + "\n")
    out.flush()
    return tally.exit_code()
