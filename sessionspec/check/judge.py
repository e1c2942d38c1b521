"""One file's judgement as one dialect (FMT-7): the audit of its events, placed on lines, with the
seed (FMT-11, DIA-5), the quirk and writer notes; :class:`ReadLog` is what reading a file leaves
for it (the checker, :mod:`sessionspec.check.checker`, puts the report together)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import final

from sessionspec.check.audited_prefix import AuditedPrefix
from sessionspec.check.cascades import knock_ons
from sessionspec.check.declines import FileNotDecided
from sessionspec.check.line_table import LineTable
from sessionspec.check.loader_levels import loader_level
from sessionspec.check.log_pass import Guess, LogPass
from sessionspec.check.logfile import LogFile, read_path, session_id
from sessionspec.check.report import Finding
from sessionspec.check.sidecar import find_parent_file
from sessionspec.check.writers import Attribution, TurnWriter, writer_note
from sessionspec.model.log import Dialect, Event
from sessionspec.model.migrate import as_read
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.seed_log import check_end_seed, check_fork_child, check_seed_within


def finding_of(lines: LineTable, rejected: Rejected, line: int | None = None) -> Finding:
    return Finding(
        line=line if line is not None else lines.line_of(rejected.seq),
        rule=rejected.rule,
        seq=rejected.seq,
        reason=rejected.reason,
        kind=rejected.kind,
        loader=loader_level(rejected.rule, rejected.kind),
    )


def _is_quirk(rule: str) -> bool:
    return rule.startswith(("Q-", "QF-"))


def quirk_notes(quirks: Sequence[Finding]) -> tuple[str, ...]:
    """One note per quirk ID (§17: the model follows the real code; a note, not a failure), then one per rule
    the writer's own invariant guard caught it breaking (``model.guard``: the writer stopped itself)."""
    by_rule: dict[str, list[Finding]] = {}
    for quirk in quirks:
        by_rule.setdefault(quirk.rule, []).append(quirk)
    notes: list[str] = []
    for rule in sorted(by_rule, key=lambda r: (not _is_quirk(r), int(r.split("-")[1]))):
        first = by_rule[rule][0]
        where = ", ".join(part for part in (f"line {first.line}" if first.line is not None else "", f"seq {first.seq}" if first.seq is not None else "") if part)
        count = len(by_rule[rule])
        times = f"{count} time{'s' if count != 1 else ''}, first at {where}"
        if _is_quirk(rule):
            notes.append(f"quirk {rule} ({times}): {first.reason} (the real code does this; --strict-quirks makes it a finding)")
        else:
            notes.append(f"the writer's own invariant guard caught it breaking {rule} ({times}): {first.reason} "
                         "(the writer stopped itself: a note; --strict-quirks makes it a finding)")
    return tuple(notes)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """One dialect's judgement of a file's events."""

    live: int
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    outside: str | None
    writers: tuple[TurnWriter, ...] = ()
    undecided: tuple[FileNotDecided, ...] = ()


def audit_finding(lines: LineTable, rejected: Rejected, prefix: AuditedPrefix) -> Finding:
    """An audit finding, placed on the seq break's own line when it is about
    the break (LOG-1, or LOG-13's order check), not the seq's first line."""
    if prefix.seq_break is not None and rejected.seq == prefix.seq_break[0]:
        if rejected.rule == "LOG-1" or (rejected.rule == "LOG-13" and "does not increase" in rejected.reason):
            return finding_of(lines, rejected, prefix.seq_break[1])
    return finding_of(lines, rejected)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadLog:
    """What reading a file leaves besides its events: the file (its events not kept when it was
    streamed), its event count, the first pass over its events, and how to pass over them again
    with the dialect and live seq known (:class:`LogPass`: a wrong guess costs a pass)."""

    log: LogFile
    total: int
    first: LogPass
    again: Callable[[Guess], LogPass]

    def judged(self, dialect: Dialect) -> LogPass:
        """A pass whose folds judged the events as ``dialect`` with its first live seq."""
        want = Guess(dialect, self.first.live(dialect))
        if self.first.judged_as == want and self.first.audit() is not None:
            return self.first
        return self.again(want)


def judge_as(read: ReadLog, prefix: AuditedPrefix, dialect: Dialect, strict_quirks: bool) -> Judged:
    """Audit the first ``prefix.count`` events as ``dialect``."""
    log, lines = read.log, read.first.lines
    judged = read.judged(dialect)
    live = read.first.live(dialect)
    read_quirks = [finding_of(lines, q.rejected, q.line) for q in log.quirks]
    if prefix.count > 0 and judged.replay_script:
        # Not audited, but what reading its lines showed (a torn last line, QF-15; a short row, Q-29) stays.
        script = "a replay script of bare assistant/chunk events, not a loop log (no turns or steps)"
        if strict_quirks:
            return Judged(live=live, findings=tuple(read_quirks), notes=(), outside=script)
        return Judged(live=live, findings=(), notes=quirk_notes(read_quirks), outside=script)
    audit = judged.audit()
    assert audit is not None
    events = judged.audited()
    attribution = audit.writers
    notes_of_writers = writer_notes(attribution)
    found = list(audit.findings)
    findings = knock_ons([audit_finding(lines, r, prefix) for r in found], attribution.turns)
    complete = prefix.count == read.total and not any(f.rejected.kind is FailureKind.LIMIT for f in log.findings)
    fork_findings, fork_notes = check_fork(log, events, dialect, complete)
    findings += [finding_of(lines, r) for r in fork_findings]
    if complete:
        findings += [finding_of(lines, r) for r in check_end_seed(events, log.seed_length, dialect)]
    quirks = sorted(
        read_quirks + [finding_of(lines, r) for r in audit.quirks],
        key=lambda f: (f.line or 0, -1 if f.seq is None else f.seq, f.rule),
    )
    # LEG-7: a pre-A55 design is outside the model: unknown, unless invalid anyway.
    outside = "; ".join(audit.outside) or None
    notes = notes_of_writers + audit.notes + fork_notes
    if strict_quirks:
        return Judged(live=live, findings=tuple(findings + quirks), notes=notes, outside=outside, writers=attribution.turns,
                      undecided=audit.undecided)
    return Judged(live=live, findings=tuple(findings), notes=notes + quirk_notes(quirks), outside=outside, writers=attribution.turns,
                  undecided=audit.undecided)


def writer_notes(attribution: Attribution) -> tuple[str, ...]:
    """The writers of the log's turns (FMT-7 Writers), when not one loop alone."""
    note = writer_note(attribution)
    return () if note is None else (note,)


def check_fork(log: LogFile, events: Sequence[Event], dialect: Dialect, complete: bool = True) -> tuple[list[Rejected], tuple[str, ...]]:
    """FMT-11 for a seeded child whose parent file lies beside it; a seed
    longer than the log is reported whether or not the parent is found.
    ``complete`` is False when ``events`` stop short of the file (a damage or
    a limit): a seed reaching past them is not judged."""
    if log.seed_length > len(events) and not complete:
        return [], (f"seedLength {log.seed_length} reaches past the {len(events)} events audited; seed not compared (FMT-11)",)
    beyond = check_seed_within(log.seed_length, len(events))
    if beyond:
        return beyond, ()
    if log.parent_session is None or log.seed_length <= 0 or log.name == "<stdin>":
        return [], ()
    parent_path = find_parent_file(Path(log.name), log.parent_session)
    if parent_path is None:
        return [], (f"fork parent {log.parent_session} not found beside the file; seed not compared (FMT-11)",)
    parent = read_path(str(parent_path))
    if parent.unreadable is not None:
        return [], (f"fork parent {parent_path.name} unreadable; seed not compared (FMT-11)",)
    return check_fork_child(events, as_read(parent.events, dialect, session_id(parent)), log.seed_length), ()
