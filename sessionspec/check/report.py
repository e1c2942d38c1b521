"""What ``sessionspec check`` says of one file (FMT-7): its verdict, its findings (rule, line, seq,
reason, the real loader's answer) and its notes, in the text and JSON formats (docs/check.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Final, final

from sessionspec.check.loader_levels import LOADER_LEVELS
from sessionspec.check.paths import escape_text
from sessionspec.check.pickling import reduce_by_fields
from sessionspec.check.writers import TurnWriter
from sessionspec.model.log import Dialect
from sessionspec.model.rejected import FailureKind

# How a finding's loader answer reads in the text format.
LOADER_TEXT: Final = {"refuses": "loader refuses", "companion-refuses": "loader: only its invariant companion refuses", "accepts": "loader accepts"}


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

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py
