"""What ``sessionspec check`` says of one file (FMT-7): its verdict, its findings (rule, line, seq,
reason, the real loader's answer, the earlier finding it follows from) and its notes, in the text and
JSON formats (docs/check.md).  :func:`decide` is the verdict's one definition (verdict precedence,
docs/check.md): the checker decides with it, and so does a run that leaves rules out (``--ignore``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Final, final

from sessionspec.check.declines import FileNotDecided
from sessionspec.check.loader_levels import LOADER_LEVELS
from sessionspec.check.paths import escape_text
from sessionspec.check.pickling import reduce_by_fields
from sessionspec.check.writers import TurnWriter
from sessionspec.model.log import Dialect
from sessionspec.model.rejected import FailureKind
from sessionspec.options import dialect_text

# How the real loader's answer reads in the text format: what another program (the harness's loader) would
# do with the log, worded so that it cannot read as a verdict of its own beside ``valid`` or ``invalid``.
LOADER_TEXT: Final = {"refuses": "real loader: would refuse to load the log",
                      "companion-refuses": "real loader: only its invariant companion would refuse the log",
                      "accepts": "real loader: would load the log"}


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
class Cause:
    """The earlier finding a knock-on finding follows from (sessionspec/check/cascades.py): its rule and place."""

    rule: str
    line: int | None
    seq: int | None

    def text(self) -> str:
        """``SURF-3 at line 12`` (``at seq N`` when the finding has no line)."""
        where = f"line {self.line}" if self.line is not None else f"seq {self.seq}" if self.seq is not None else "the file"
        return f"{self.rule} at {where}"

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "line": self.line, "seq": self.seq}

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


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
    # A knock-on: the earlier finding this one follows from (sessionspec/check/cascades.py), or None.
    caused_by: Cause | None = None

    def text(self, path: str, *, with_cause: bool = False) -> str:
        """One output line; control characters are escaped (``escape_text``).  ``with_cause``: a knock-on
        says which finding it follows from (``-v``, or when that finding is not shown)."""
        path = escape_text(path)
        where = f"{path}:{self.line}" if self.line is not None else path
        at = f" seq {self.seq}" if self.seq is not None else ""
        condition = f"(only if {dialect_text(self.only_if)}) " if self.only_if is not None else ""
        cause = f" [follows from {self.caused_by.text()}]" if with_cause and self.caused_by is not None else ""
        return f"{where}: {self.rule}{at}: {condition}{escape_text(self.reason)} ({self.loader_text()}){cause}"

    def loader_text(self) -> str:
        """The real loader's answer in words (:data:`LOADER_TEXT`)."""
        return LOADER_TEXT[self.loader]

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line, "rule": self.rule, "seq": self.seq, "kind": self.kind.value, "reason": self.reason, "loader": self.loader,
            "onlyIf": dialect_text(self.only_if), "causedBy": None if self.caused_by is None else self.caused_by.to_json(),
        }

    def cause(self) -> Cause:
        """This finding as the cause of its knock-ons."""
        return Cause(rule=self.rule, line=self.line, seq=self.seq)

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


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
    # Why the log is outside what the model decides (mixed dialect markers, a replay script, LEG-7), whatever
    # its findings: the reason of an unknown verdict no finding decided, else one of the notes.
    outside: str | None = None
    # Findings of rules the run left out (--select/--ignore, sessionspec/check/selection.py): counted, not shown.
    ignored: int = 0
    # The rules the check declined to decide in this log, and why (sessionspec/check/declines.py).
    undecided: tuple[FileNotDecided, ...] = ()

    @staticmethod
    def unreadable(path: str, reason: str) -> FileReport:
        """The report of an input that could not be read, with the reason."""
        return FileReport(path=path, verdict=Verdict.UNREADABLE, dialect=None, dialect_source=None, events=0, first_live_seq=0, findings=(), reason=reason)

    def renamed(self, path: str) -> FileReport:
        """The same report under another path (a URL for a local file)."""
        return replace(self, path=path)

    def all_notes(self) -> tuple[str, ...]:
        """The notes, and how many findings the run left out."""
        left_out = (f"{self.ignored} finding{'s' if self.ignored != 1 else ''} of rules left out by --select/--ignore not shown",) \
            if self.ignored else ()
        return self.notes + left_out

    def verdict_text(self) -> str:
        parts = [self.verdict.value]
        if self.dialect is not None and self.dialect_source is not None:
            parts.append(f"[{dialect_text(self.dialect)} {self.dialect_source.value}, {self.events} events]")
        if self.reason:
            parts.append(f"({self.reason})")
        notes = f" (notes: {'; '.join(self.all_notes())})" if self.all_notes() else ""
        loader = self.loader()
        shown = f" [{LOADER_TEXT[loader]}]" if loader is not None and (loader != "accepts" or self.verdict is Verdict.INVALID) else ""
        return escape_text(f"{self.path}: " + " ".join(parts) + notes + shown)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": "file",
            "path": self.path,
            "verdict": self.verdict.value,
            "dialect": dialect_text(self.dialect),
            "dialectSource": None if self.dialect_source is None else self.dialect_source.value,
            "events": self.events,
            "firstLiveSeq": self.first_live_seq,
            "reason": self.reason,
            "notes": list(self.all_notes()),
            "findings": [f.to_json() for f in self.findings],
            "loader": self.loader(),
            "writers": [w.to_json() for w in self.writers],
            "ignored": self.ignored,
            "notDecided": [item.to_json() for item in self.undecided],
        }

    def selected(self, keep: Callable[[str], bool]) -> FileReport:
        """The report of a run that shows only the findings whose rule ``keep`` keeps (``--select``,
        ``--ignore``): the verdict decided again from them (:func:`decide`), the others counted.  A ``limit``
        or ``bug`` finding is always kept: it says what sessionspec could not decide, not what the log breaks,
        so leaving it out would call a log valid that was never read to its end."""
        if self.verdict is Verdict.UNREADABLE:
            return self
        shown = tuple(f for f in self.findings if f.kind is not FailureKind.INVALID or keep(f.rule))
        # The rules not decided are listed only for the rules the run asks about.
        undecided = tuple(item for item in self.undecided if keep(item.rule))
        if len(shown) == len(self.findings):
            return self if len(undecided) == len(self.undecided) else replace(self, undecided=undecided)
        verdict, reason = decide(shown, self.outside)
        # Why the log is outside the model: the reason, or (a finding decided the verdict) a note.
        notes = tuple(n for n in self.notes if n != self.outside) + \
            ((self.outside,) if self.outside is not None and reason != self.outside else ())
        return replace(self, findings=shown, verdict=verdict, reason=reason, notes=notes, undecided=undecided,
                       ignored=self.ignored + len(self.findings) - len(shown))

    def loader(self) -> str | None:
        """The second answer for the whole file, the strictest its findings give: the real core
        load ``refuses`` it, or only the invariant companion does (``companion-refuses``), or it
        ``accepts``; None for an unreadable file.  A finding shown only under one dialect
        (``onlyIf``) counts too: the loader of that dialect would refuse it."""
        if self.verdict is Verdict.UNREADABLE:
            return None
        answers = {f.loader for f in self.findings} | ({"refuses"} if self.header_refused else set())
        return next(level for level in LOADER_LEVELS if level in answers or level == "accepts")

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def decide(findings: Sequence[Finding], outside: str | None) -> tuple[Verdict, str | None]:
    """A read file's verdict and its reason (verdict precedence, docs/check.md): ``invalid`` if a finding
    of kind invalid holds whatever the dialect; else ``unknown`` for a ``limit`` or ``bug`` finding (the
    reason names the first) or a log ``outside`` the model; else ``valid``."""
    if any(f.kind is FailureKind.INVALID and f.only_if is None for f in findings):
        return Verdict.INVALID, None
    first = next((f for f in findings if f.kind is not FailureKind.INVALID and f.only_if is None), None)
    if first is not None:
        return Verdict.UNKNOWN, f"{first.kind.value}: {first.rule}: {first.reason}"
    if outside is not None:
        return Verdict.UNKNOWN, outside
    return Verdict.VALID, None
