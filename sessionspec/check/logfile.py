"""Reading one session-log file into events with their line numbers (FMT-1, FMT-2, FMT-5).

Total and bounded: every problem of the bytes becomes a :class:`LineFinding`
(naming the rule and the line) or, when the file cannot be read at all, an
``unreadable`` reason; nothing raises to the caller.  A line longer than
:data:`MAX_LINE_BYTES` or nested deeper than :data:`MAX_DEPTH` is a
``FailureKind.LIMIT`` finding (the checker's limit, not the log's fault).  A
last line without its newline is what a crash mid-write leaves, and the file
load never reads it (QF-15): when it does not parse it is a quirk note, not a
finding, and the rest of the file is still checked.

Reading streams line by line (plain, stdin or zstandard-compressed), so memory
is one file's events, independent of how many files a run checks.

Reads are typed and bounded (issue 15, ``byte_source``): only regular files and ``-`` (stdin)
are read; a FIFO, socket or device is ``unreadable`` without being opened, so
nothing can block.  A zstandard stream must end at a frame boundary with every
frame complete, else it is ``unreadable`` naming the byte offset.  A log with
more than ``max_events`` events stops being read there (a ``limit`` finding),
so memory stays bounded whatever a small compressed file expands to.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final, final

from model.codec import MIN_RUN, ROW_TAGS, SessionHeader, decode_record, parse_session_header
from model.jsonval import JsonObject, get
from model.log import Event
from model.rejected import FailureKind, Rejected
from sessionspec.check.audits import audits
from sessionspec.check.byte_source import ZstdFrames, open_regular
from sessionspec.fast.parse import parse_decoded

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
MAX_DEPTH: Final = 200
# Events per file (--max-events).  Checking peaks at about 1.2 KB of memory per
# event (docs/performance.md: 1.18 GB for 1M events); the reference machine has
# 24 GiB and 2 cores (--jobs <= 2), so two files at the limit peak near 12 GiB,
# half the memory.
MAX_EVENTS: Final = 5_000_000
STDIN: Final = "-"

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_OPENERS: Final = frozenset(b"[{")
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LineFinding:
    """A problem of the file at ``line`` (1-based; None: the file as a whole)."""

    line: int | None
    rejected: Rejected
    # Whether the line's events were lost (an unparsed line): later findings
    # could only follow from the gap, so the checker audits up to this line.
    damages: bool = True


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LogFile:
    """What one file holds: the optional header line, the events (rows
    expanded, CHK-6) with the line each came from, and line-level findings."""

    name: str
    header: SessionHeader | None
    events: tuple[Event, ...]
    lines: tuple[int, ...]
    findings: tuple[LineFinding, ...]
    unreadable: str | None = None
    seed_length: int = 0
    # The parent session id (header line, or the sidecar for headerless logs).
    parent_session: str | None = None
    # seq -> line of its first occurrence (a duplicated seq keeps the first),
    # built on the first ``line_of`` call: only a log with findings needs it.
    seq_lines: dict[int, int] = field(default_factory=dict)
    # §17 quirks of the storage lines (Q-29, QF-15), notes unless --strict-quirks.
    quirks: tuple[LineFinding, ...] = ()
    # The last line when it has no newline: the JSONL file load ignores it (QF-15).
    torn_line: int | None = None

    def line_of(self, seq: int | None) -> int | None:
        """The line of the first event with this seq."""
        if seq is None:
            return None
        if not self.seq_lines and self.events:
            for event, line in zip(self.events, self.lines):
                self.seq_lines.setdefault(event.seq, line)
        return self.seq_lines.get(seq)


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text nests ``[``/``{`` deeper than ``limit`` (strings
    skipped).  Texts with at most ``limit`` brackets cannot, and skip the scan."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return nesting_depth(raw) > limit


def nesting_depth(raw: bytes) -> int:
    """The deepest ``[``/``{`` nesting of a JSON text (strings skipped)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


def _lines(stream: BinaryIO) -> Iterator[tuple[bytes, bool, bool]]:
    """(line without newline, had a newline, was cut at the length limit)."""
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            # Skip the rest of the over-long line without holding it.
            tail = raw
            while tail and not tail.endswith(b"\n"):
                tail = stream.readline(1024 * 1024)
            yield b"", bool(tail), True
            continue
        newline = raw.endswith(b"\n")
        yield (raw[:-1] if newline else raw), newline, False


def _sidecar_table(directory: Path) -> dict[str, dict[str, object]]:
    """``sessions.json`` beside ground-truth logs: ``{sessionId: {file, header}}``
    (those logs have no header line).  Empty when absent or malformed."""
    sidecar = directory / "sessions.json"
    try:
        if not sidecar.is_file() or sidecar.stat().st_size > 16 * 1024 * 1024:
            return {}
        table = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, dict)}


def _sidecar_header(path: Path) -> dict[str, object]:
    """The live session header the sidecar records for this file."""
    for entry in _sidecar_table(path.parent).values():
        header = entry.get("header")
        if entry.get("file") == path.name and isinstance(header, dict):
            return header
    return {}


def _first_line_id(path: Path) -> str | None:
    """The ``id`` of a file's session header line (its first line only)."""
    try:
        if not path.is_file():  # never open a FIFO or device: it could block
            return None
        with path.open("rb") as handle:
            first = handle.readline(1024 * 1024)
        value = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


def find_parent_file(child: Path, parent_id: str) -> Path | None:
    """FMT-11: the parent session's file beside a child (sidecar table, else a
    sibling ``*.jsonl`` whose header line names ``parent_id``)."""
    entry = _sidecar_table(child.parent).get(parent_id)
    if entry is not None and isinstance(entry.get("file"), str):
        candidate = child.parent / str(entry["file"])
        return candidate if candidate.is_file() else None
    for sibling in sorted(child.parent.glob("*.jsonl")):
        if sibling != child and _first_line_id(sibling) == parent_id:
            return sibling
    return None


@audits("FMT-1")
def read_stream(
    stream: BinaryIO,
    name: str,
    sidecar_path: Path | None = None,
    read_errors: tuple[type[Exception], ...] = (),
    max_events: int = MAX_EVENTS,
) -> LogFile:
    """Read one log from a binary stream (FMT-1: header line, then records).

    Stops at the first non-blank line after ``max_events`` events (a
    ``limit`` finding), so memory is bounded by the limit."""
    header: SessionHeader | None = None
    events: list[Event] = []
    lines: list[int] = []
    findings: list[LineFinding] = []
    quirks: list[LineFinding] = []
    first_record = True
    number = 0
    torn_line: int | None = None
    try:
        for number, (raw, newline, cut) in enumerate(_lines(stream), start=1):
            if cut:
                findings.append(
                    LineFinding(line=number, rejected=Rejected(rule="FMT-1", reason=f"line longer than {MAX_LINE_BYTES} bytes (checker limit)", kind=FailureKind.LIMIT))
                )
                first_record = False
                continue
            if not raw.strip():
                continue  # FMT-1: blank lines are ignored
            if not newline and not first_record:
                torn_line = number  # a torn first line leaves no header, which the file load refuses
            if len(events) >= max_events:
                reason = f"more than {max_events} events: reading stopped at this line (--max-events {max_events}, checker limit)"
                findings.append(LineFinding(line=number, rejected=Rejected(rule="FMT-1", reason=reason, kind=FailureKind.LIMIT)))
                break
            finding = _read_line(raw, newline, number, first_record, events, lines, quirks)
            first_record = False
            if isinstance(finding, SessionHeader):
                header = finding
            elif finding is not None:
                findings.append(finding)
    except (OSError, EOFError, ValueError) + read_errors as error:
        # zstandard reports a corrupt frame as ZstdError (a ValueError subclass in
        # recent versions) or OSError; either way the file cannot be read.
        return LogFile(name=name, header=header, events=tuple(events), lines=tuple(lines), findings=tuple(findings), unreadable=f"read error at line {number + 1}: {error}")
    if number == 0 or (not events and header is None and not findings):
        findings.append(LineFinding(line=None, rejected=Rejected(rule="FMT-1", reason="empty file: no session header and no events")))
    seed = header.seed_length if header is not None else 0
    parent: object = get(header.value, "parentSession") if header is not None else None
    if header is None and sidecar_path is not None:
        recorded = _sidecar_header(sidecar_path)
        value = recorded.get("seedLength")
        seed = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
        parent = recorded.get("parentSession")
    return LogFile(name=name, header=header, events=tuple(events), lines=tuple(lines), findings=tuple(findings), seed_length=seed,
        parent_session=parent if isinstance(parent, str) else None, quirks=tuple(quirks), torn_line=torn_line,
    )


def _read_line(
    raw: bytes, newline: bool, number: int, first_record: bool, events: list[Event], lines: list[int], quirks: list[LineFinding]
) -> LineFinding | SessionHeader | None:
    """One non-blank line: the header (first line only), events, or a finding.

    Q-29: "The decoder accepts rows with 1-2 members (non-empty payload)
    although the packer never emits them; the model's decoder MUST accept
    them; the checker notes them." """

    def finding(rejected: Rejected) -> LineFinding | None:
        if newline:
            return LineFinding(line=number, rejected=rejected)
        if first_record:
            # A torn first line leaves no header: the file load refuses ("empty or header-less session log").
            return LineFinding(line=number, rejected=Rejected(rule="FMT-1", reason=f"truncated last line (a crash mid-write?): {rejected.reason}", kind=rejected.kind))
        # QF-15: a crash mid-write leaves the last line cut short and without its newline; the file load
        # ignores such a line (scanLog), so the log is what the writer committed before it.
        reason = f"torn last line (a crash mid-write), ignored by the file load: {rejected.reason}"
        quirks.append(LineFinding(line=number, rejected=Rejected(rule="QF-15", reason=reason, kind=rejected.kind)))
        return None

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return finding(Rejected(rule="FMT-1", reason=f"invalid UTF-8 at byte {error.start}"))
    if too_deep(raw):
        return finding(Rejected(rule="FMT-1", reason=f"JSON nested deeper than {MAX_DEPTH} levels (checker limit)", kind=FailureKind.LIMIT))
    value = parse_decoded(raw, text)  # = model.codec.parse_value(text), checked in tests/fast/test_fast_parse.py
    if isinstance(value, Rejected):
        return finding(value)
    if first_record and isinstance(value, JsonObject) and get(value, "type") == "session":
        header = parse_session_header(value)
        return header if isinstance(header, SessionHeader) else LineFinding(line=number, rejected=header)
    if isinstance(value, JsonObject) and get(value, "type") == "session":
        # No event is lost: later findings do not follow from this one.
        return LineFinding(line=number, rejected=Rejected(rule="FMT-1", reason="session header line after the first line"), damages=False)
    decoded = decode_record(value)
    if isinstance(decoded, Rejected):
        return LineFinding(line=number, rejected=decoded)
    if len(decoded) < MIN_RUN and isinstance(value, JsonObject) and get(value, "type") in ROW_TAGS:
        quirk = Rejected(rule="Q-29", seq=decoded[0].seq, reason=f"{get(value, 'type')} row with {len(decoded)} member(s); the packer writes rows of at least {MIN_RUN}")
        quirks.append(LineFinding(line=number, rejected=quirk))
    for event in decoded:
        events.append(event)
        lines.append(number)
    return None


def _unreadable(name: str, reason: str) -> LogFile:
    return LogFile(name=name, header=None, events=(), lines=(), findings=(), unreadable=reason)


def read_path(path: str, max_events: int = MAX_EVENTS) -> LogFile:
    """Read a regular file (``.jsonl`` or ``.jsonl.zst``) or ``-`` (stdin); total."""
    if path == STDIN:
        return read_stream(sys.stdin.buffer, "<stdin>", max_events=max_events)
    handle = open_regular(path)
    if isinstance(handle, str):
        return _unreadable(path, handle)
    return read_handle(handle, path, Path(path), max_events)


def read_handle(handle: BinaryIO, name: str, sidecar_path: Path | None, max_events: int = MAX_EVENTS) -> LogFile:
    """Read an open binary handle (closed afterwards); a name ending ``.zst``
    is a zstandard stream."""
    with handle:
        if not name.endswith(".zst"):
            return read_stream(handle, name, sidecar_path, max_events=max_events)
        try:
            frames = ZstdFrames(handle)
        except ImportError:
            return _unreadable(name, "the zstandard package is not installed (needed for .zst files)")
        with io.BufferedReader(frames, buffer_size=256 * 1024) as stream:
            return read_stream(stream, name, sidecar_path, max_events=max_events)


def session_id(log: LogFile) -> str:
    """The session id for legacy-message ids (DIA-13); ``unknown`` without a header."""
    if log.header is not None:
        value = log.header.id
        if isinstance(value, str):
            return value
    return "unknown"

