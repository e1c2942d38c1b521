"""The lines of a raw log file, decided line by line (FMT-1): the session header on the first line, a storage
record on every further non-empty line, and what a line that cannot be read is (a torn last line: QF-15).

The header line's own shape is :func:`sessionspec.model.codec.parse_session_header`'s (FMT-1's definition, LOG-17,
LOG-18), a record's :func:`sessionspec.model.codec.decode_record`'s.  ``sessionspec check`` reads a file line by line
(``sessionspec/check/logfile.py``: the bytes, the limits of the checker, blank lines skipped as FMT-1 allows) and
hands each line these definitions decide to them; ``tests/model/test_log_file.py`` holds them against the files the
loop simulator's logs are written to, both ways.
"""

from __future__ import annotations

from collections.abc import Callable

from sessionspec.model.codec import SessionHeader, parse_session_header
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, get
from sessionspec.model.log import Dialect
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides


@decides("FMT-1")
def header_line(value: Json, first_record: bool) -> SessionHeader | Rejected | None:
    """FMT-1's line 1: a ``session`` object on the file's first non-blank line is its header
    (:func:`sessionspec.model.codec.parse_session_header`); on any other line it is no storage record (FMT-1).
    None for any other value: a storage record."""
    if not (isinstance(value, JsonObject) and get(value, "type") == "session"):
        return None
    if first_record:
        return parse_session_header(value)
    return Rejected(rule="FMT-1", reason="session header line after the first line")


@decides("FMT-1", "QF-15")
def unreadable_line(rejected: Rejected, newline: bool, first_record: bool) -> Rejected:
    """What a line that does not parse (``rejected``) is: with its newline, that rejection; without it, the last
    line, a torn write (FMT-1): the file load never reads it, so the log is not invalid for it (QF-15's quirk),
    unless it is the first line, which leaves the file no header (FMT-1)."""
    if newline:
        return rejected
    if first_record:
        return Rejected(rule="FMT-1", reason=f"truncated last line (a crash mid-write?): {rejected.reason}", kind=rejected.kind)
    # QF-15: the file load ignores such a line (scanLog), so the log is what the writer committed before it.
    return Rejected(rule="QF-15", reason=f"torn last line (a crash mid-write), ignored by the file load: {rejected.reason}", kind=rejected.kind)


@decides("FMT-1")
def not_utf8(start: int) -> Rejected:
    """FMT-1: a log file is UTF-8; a line that is not, from byte ``start`` of it, cannot be read."""
    return Rejected(rule="FMT-1", reason=f"invalid UTF-8 at byte {start}")


@decides("FMT-1")
def check_not_empty(lines: int, read: bool) -> Rejected | None:
    """FMT-1: a log file holds its header line: one of no ``lines``, or whose non-blank lines gave nothing
    (``read``: no header, no record, no finding), is empty."""
    if lines == 0 or not read:
        return Rejected(rule="FMT-1", reason="empty file: no session header and no events")
    return None


def _safe_non_negative(value: Json) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


def a55_header_line_flaw(value: JsonObject) -> str | None:
    """A55's ``isHeaderLine`` bounds no other key."""
    return None


def d08_header_line_flaw(value: JsonObject) -> str | None:
    """D08's ``isHeaderLine`` (``format.ts`` lines 89-107 at ``611615650f``) also bounds the fields DIA-21 adds:
    ``origin`` (absent or ``"subagent"``) and ``agentPreset`` (absent or a string)."""
    origin, preset = get(value, "origin"), get(value, "agentPreset")
    if origin is not ABSENT and origin != "subagent":
        return "an origin other than \"subagent\""
    if preset is not ABSENT and not isinstance(preset, str):
        return "a non-string agentPreset"
    return None


def header_line_flaw(dialect: Dialect) -> Callable[[JsonObject], str | None]:
    """The dialect's further bounds on a header line: none (A55), or D08's on DIA-21's fields."""
    match dialect:
        case Dialect.A55:
            return a55_header_line_flaw
        case Dialect.D08:
            return d08_header_line_flaw


@decides("QF-14")
def header_line_refused(value: JsonObject, dialect: Dialect) -> str | None:
    """QF-14: why the JSONL file load's ``isHeaderLine`` (``session-persistence-jsonl/src/format.ts`` lines 79-93
    at ``a55f148516``) refuses a header line the header parser reads, or None: it requires a number ``version``,
    a string ``id``, and ``createdAt`` and ``delegationDepth`` as non-negative safe integers, and D08's also
    bounds ``origin`` and ``agentPreset`` (:func:`header_line_flaw`)."""
    if get(value, "type") != "session":
        return "its type is not \"session\""
    version = get(value, "version")
    if not isinstance(version, (int, float)) or isinstance(version, bool):
        return "no number version"
    if not isinstance(get(value, "id"), str):
        return "no string id"
    for key in ("createdAt", "delegationDepth"):
        field = get(value, key)
        if field is ABSENT or not _safe_non_negative(field):
            return f"no non-negative safe-integer {key}"
    return header_line_flaw(dialect)(value)
