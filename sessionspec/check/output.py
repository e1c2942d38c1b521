"""What ``sessionspec check`` writes for each file, in the formats that stream: ``text``, ``json`` and ``github``.

``text`` shows each finding that follows from nothing, then its knock-ons as one line under it
(``  caused by SURF-3 at line 12: 9 more: LOOP-3 (lines 13-40)``, sessionspec/check/cascades.py); ``-v`` shows
every knock-on on its own line, saying what it follows from, and under the verdict the rules this log's check
could not decide and why (``PATH: not decided: CMP-6: ...``, sessionspec/check/declines.py).  ``json`` is one record per file (schema 4, every
finding with its ``causedBy``).  ``github`` is one GitHub Actions workflow command per finding
(``::error file=F,line=N,title=T::message``), which a workflow run shows as an annotation on the file and line;
the summary line is plain text.  The formats written whole at the end are sessionspec/check/sarif.py and
sessionspec/check/junit.py, built from the ``json`` records.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Final, Protocol

from sessionspec.check.declines import file_not_decided_text
from sessionspec.check.paths import escape_text
from sessionspec.check.report import Cause, FileReport, Finding, Verdict
from sessionspec.check.summary import Summary
from sessionspec.check.undecided import NotDecided, not_decided_text
from sessionspec.model.rejected import FailureKind

STREAMED: Final = ("text", "json", "github")
DOCUMENTS: Final = ("sarif", "junit")
FORMATS: Final = STREAMED + DOCUMENTS


def json_line(value: dict[str, object]) -> str:
    """One JSON Lines record.  A path that is not UTF-8 (surrogate escapes)
    is written with ``\\udcNN`` escapes rather than failing to encode."""
    text = json.dumps(value, ensure_ascii=False)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = json.dumps(value, ensure_ascii=True)
    return text + "\n"


def knock_ons_of(findings: Sequence[Finding]) -> tuple[list[Finding], dict[Cause, list[Finding]]]:
    """The findings shown on their own line (a cause, or a knock-on whose cause is not shown), and each
    shown cause's knock-ons in order."""
    causes = {f.cause() for f in findings if f.caused_by is None}
    shown = [f for f in findings if f.caused_by is None or f.caused_by not in causes]
    under: dict[Cause, list[Finding]] = {}
    for finding in findings:
        if finding.caused_by is not None and finding.caused_by in causes:
            under.setdefault(finding.caused_by, []).append(finding)
    return shown, under


def _lines(numbers: Sequence[int]) -> str:
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    if len(numbers) <= 3:
        return "lines " + ", ".join(map(str, numbers))
    return f"lines {min(numbers)}-{max(numbers)}"


def group_text(cause: Cause, knock_ons: Sequence[Finding]) -> str:
    """``caused by SURF-3 at line 12: 9 more: LOG-13 x7 (lines 13-40), LOOP-12 (line 41)``."""
    by_rule: dict[str, list[int]] = {}
    for finding in knock_ons:
        by_rule.setdefault(finding.rule, []).append(-1 if finding.line is None else finding.line)
    parts = []
    for rule, lines in by_rule.items():
        known = sorted({n for n in lines if n >= 0})
        count = f" x{len(lines)}" if len(lines) > 1 else ""
        parts.append(f"{rule}{count}" + (f" ({_lines(known)})" if known else ""))
    return f"caused by {cause.text()}: {len(knock_ons)} more: {', '.join(parts)}"


def text_lines(report: FileReport, *, quiet: bool = False, verbose: bool = False) -> str:
    """The text format of one file: its findings (knock-ons grouped, or each with ``verbose``), its verdict."""
    lines: list[str] = []
    if verbose:
        lines = [f.text(report.path, with_cause=True) for f in report.findings]
    else:
        shown, under = knock_ons_of(report.findings)
        for finding in shown:
            lines.append(finding.text(report.path, with_cause=True))
            if finding.caused_by is None and finding.cause() in under:
                lines.append(f"  {group_text(finding.cause(), under[finding.cause()])} (-v shows each)")
    if quiet and report.verdict is Verdict.VALID:
        return "".join(line + "\n" for line in lines)
    lines.append(report.verdict_text())
    # With -v, the rules this log's check could not decide, and why, under its verdict.
    return "".join(line + "\n" for line in lines) + (file_not_decided_text(report.path, report.undecided) if verbose else "")


# --------------------------------------------------------------------------- GitHub workflow commands


def _data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): also ``:`` and ``,`` escaped."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str) -> str:
    """A path as CI tools locate it: relative to the current directory (the checkout) when it lies under it,
    with ``/`` separators; else as given."""
    if "://" in path or path.startswith("<"):
        return path
    relative = os.path.relpath(os.path.abspath(path))
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def _level(finding: Finding) -> str:
    """``error`` for a finding that makes the file invalid; ``warning`` for a limit, a bug, an ``only if``."""
    return "error" if finding.kind is FailureKind.INVALID and finding.only_if is None else "warning"


def _annotation(level: str, path: str, line: int | None, title: str, *message: str) -> str:
    """One workflow command; the message's parts each on a line of the annotation."""
    where = f"file={_property(workspace_path(path))}" + (f",line={line}" if line is not None else "")
    return f"::{level} {where},title={_property(title)}::{_data(chr(10).join(escape_text(part) for part in message))}\n"


def github_lines(report: FileReport, *, verbose: bool = False) -> str:
    """One annotation per finding (its knock-ons in its message, or each its own with ``verbose``); an
    unknown or unreadable file without findings gets one for its verdict.  Valid files write nothing."""
    out: list[str] = []
    shown, under = (list(report.findings), {}) if verbose else knock_ons_of(report.findings)
    for finding in shown:
        message = [f"{finding.reason} ({finding.loader_text()})"]
        if finding.caused_by is not None:
            message.append(f"follows from {finding.caused_by.text()}")
        if finding.caused_by is None and finding.cause() in under:
            message.append(group_text(finding.cause(), under[finding.cause()]))
        seq = f" seq {finding.seq}" if finding.seq is not None else ""
        out.append(_annotation(_level(finding), report.path, finding.line, f"sessionspec {finding.rule}{seq}", *message))
    if not report.findings and report.verdict in (Verdict.UNKNOWN, Verdict.UNREADABLE):
        level = "error" if report.verdict is Verdict.UNREADABLE else "warning"
        out.append(_annotation(level, report.path, None, f"sessionspec: {report.verdict.value}", report.reason or report.verdict.value))
    return "".join(out)


def report_line(report: FileReport, fmt: str, quiet: bool = False, verbose: bool = False) -> str:
    """What one report writes in a streamed format (a document format's record is its JSON line)."""
    if fmt == "text":
        return text_lines(report, quiet=quiet, verbose=verbose)
    if fmt == "github":
        return github_lines(report, verbose=verbose)
    return json_line(report.to_json())


class Document(Protocol):
    """A format written whole at the end (SARIF, JUnit), fed the ``json`` records."""

    def add(self, record: dict[str, object]) -> None: ...

    def finish(self, summary: dict[str, object]) -> str: ...


class RecordSink:
    """What ``--dask`` writes its ``json`` lines to (it calls ``write`` and ``flush`` only): each record into a
    :class:`Document`, the summary record kept for its end.  A plain class, not an ``io`` subclass: this
    package is compiled by mypyc, whose classes do not derive from ``io``'s."""

    def __init__(self, document: Document) -> None:
        self._document = document
        self._pending = ""
        self.summary: dict[str, object] | None = None

    def flush(self) -> None:
        pass

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            if line.strip():
                record = json.loads(line)
                if record.get("kind") == "summary":
                    self.summary = record
                else:
                    self._document.add(record)
        return len(text)


def summary_record(summary: Summary, undecided: tuple[NotDecided, ...] | None = None) -> dict[str, object]:
    """The summary record; ``undecided``, when given, the rules the run could not decide (``notDecided``)."""
    record = summary.to_json()
    return record if undecided is None else {**record, "notDecided": [item.to_json() for item in undecided]}


def summary_line(summary: Summary, fmt: str, undecided: tuple[NotDecided, ...] | None = None, verbose: bool = False) -> str:
    """The summary, last; with ``undecided``, the rules the run could not decide: in json the record's
    ``notDecided``, in text (with ``-v``) a line after the summary line."""
    if fmt == "json" or fmt in DOCUMENTS:
        return json_line(summary_record(summary, undecided))
    return summary.text() + "\n" + (f"{not_decided_text(undecided)}\n" if verbose and fmt == "text" and undecided else "")
