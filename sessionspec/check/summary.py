"""The summary of a ``sessionspec check`` run (counts per verdict) and its exit code (:data:`EXIT_CODES`,
the one table: ``docs/check.md``, ``docs/guide.md`` and ``--help`` show it, a test keeps them equal)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, final

from sessionspec.check.pickling import reduce_by_fields
from sessionspec.check.report import FileReport, Verdict

SCHEMA_VERSION: Final = 4

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

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def summarize(reports: Iterable[FileReport]) -> Summary:
    """The fold of ``Summary.add`` over reports: what the command line prints last."""
    summary = Summary()
    for report in reports:
        summary = summary.add(report)
    return summary
