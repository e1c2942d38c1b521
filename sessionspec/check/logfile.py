"""Reading one session-log file into events with their line numbers (FMT-1, FMT-2, FMT-5).

Total and bounded: every problem of the bytes becomes a :class:`LineFinding`
(naming the rule and the line) or, when the file cannot be read at all, an
``unreadable`` reason; nothing raises to the caller.  A line longer than
:data:`MAX_LINE_BYTES` or nested deeper than :data:`MAX_DEPTH` is a
``FailureKind.LIMIT`` finding (the checker's limit, not the log's fault).  A
last line without its newline is what a crash mid-write leaves, and the file
load never reads it (QF-15): when it does not parse it is a quirk note, not a
finding, and the rest of the file is still checked.

Reading streams line by line (plain, stdin or zstandard-compressed): :class:`LineReader`
yields each event as it is read, so a checker that streams keeps none of them
(:func:`stream_handle`); :func:`read_stream` keeps them all (one file's events).

Reads are typed and bounded (issue 15, ``byte_source``): only regular files and ``-`` (stdin)
are read; a FIFO, socket or device is ``unreadable`` without being opened, so
nothing can block.  A zstandard stream must end at a frame boundary with every
frame complete, else it is ``unreadable`` naming the byte offset.  A log with
more than ``max_events`` events stops being read there (a ``limit`` finding),
so memory stays bounded whatever a small compressed file expands to.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final, final, get_args

from sessionspec.check.byte_source import ZstdFrames, open_regular
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.line_table import LineTable
from sessionspec.check.sidecar import sidecar_header
from sessionspec.fast.jsonget import get
from sessionspec.fast.parse import MAX_DEPTH, TooDeep, parse_event, row_events
from sessionspec.model.codec import MIN_RUN, ROW_TAGS, SessionHeader, decode_record
from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.log_file import check_not_empty, header_line, not_utf8, unreadable_line
from sessionspec.model.rejected import FailureKind, Rejected

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
# Events per file (--max-events).  A file read into memory (fsspec) holds
# about 1 KB per event; the reference machine has 24 GiB and 2 cores (--jobs <= 2),
# so two such files at the limit peak near half the memory.  A streamed file's
# memory follows its surface (docs/performance.md).
MAX_EVENTS: Final = 5_000_000
STDIN: Final = "-"


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
    line_table: LineTable = field(default_factory=LineTable)
    # §17 quirks of the storage lines (Q-29, QF-15), notes unless --strict-quirks.
    quirks: tuple[LineFinding, ...] = ()
    # The last line when it has no newline: the JSONL file load ignores it (QF-15).
    torn_line: int | None = None

    def line_of(self, seq: int | None) -> int | None:
        """The line of the first event with this seq."""
        if not self.line_table:
            for event, line in zip(self.events, self.lines, strict=True):
                self.line_table.add(event.seq, line)
        return self.line_table.line_of(seq)


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


@final
class LineReader:
    """One pass over a log's bytes (FMT-1: header line, then records), yielding each event with
    its line as it is read (:meth:`events`), so a caller that streams keeps none of them.  What
    is not an event is kept here as the lines go by: the header, the line findings and quirks,
    the first damaged line (:attr:`first_damage`: the events from it on are not audited), the
    torn last line, the event count; :meth:`log_file` is what :func:`read_stream` returns."""

    def __init__(self, name: str, sidecar_path: Path | None = None, max_events: int = MAX_EVENTS) -> None:
        self.name = name
        self.sidecar_path = sidecar_path
        self.max_events = max_events
        self.header: SessionHeader | None = None
        self.findings: list[LineFinding] = []
        self.quirks: list[LineFinding] = []
        self.first_damage: int | None = None
        self.torn_line: int | None = None
        self.count = 0
        self.number = 0
        self.unreadable: str | None = None
        self.seed_length = 0
        self.parent_session: str | None = None

    def events(self, stream: BinaryIO, read_errors: tuple[type[Exception], ...] = ()) -> Iterator[tuple[Event, int]]:
        """Each event of ``stream`` with its line (:meth:`records`, a packed row's chunks one by one)."""
        for record, line in self.records(stream, read_errors):
            if isinstance(record, ChunkRun):
                for event in record.members:
                    yield event, line
            else:
                yield record, line

    def records(self, stream: BinaryIO, read_errors: tuple[type[Exception], ...] = ()) -> Iterator[tuple[Event | ChunkRun, int]]:
        """Each event of ``stream`` with its line, a packed row's chunks as one :class:`ChunkRun`.  Stops at the first non-blank line after
        ``max_events`` events (a ``limit`` finding), so memory is bounded by the limit; a read
        error ends it with :attr:`unreadable` set."""
        first_record = True
        try:
            for number, (raw, newline, cut) in enumerate(_lines(stream), start=1):
                self.number = number
                if cut:
                    self.finding(LineFinding(line=number, rejected=Rejected(
                        rule="FMT-1", reason=f"line longer than {MAX_LINE_BYTES} bytes (checker limit)", kind=FailureKind.LIMIT)))
                    if first_record:
                        first_record = False
                        self.seed()
                    continue
                if not raw.strip():
                    continue  # FMT-1: blank lines are ignored
                if not newline and not first_record:
                    self.torn_line = number  # a torn first line leaves no header, which the file load refuses
                if self.count >= self.max_events:
                    reason = f"more than {self.max_events} events: reading stopped at this line (--max-events {self.max_events}, checker limit)"
                    self.finding(LineFinding(line=number, rejected=Rejected(rule="FMT-1", reason=reason, kind=FailureKind.LIMIT)))
                    break
                read = _read_line(raw, newline, number, first_record, self.quirks)
                if first_record:
                    first_record = False
                    if isinstance(read, SessionHeader):
                        self.header = read
                    self.seed()
                if type(read) in _EVENT_CLASSES:  # most lines: one event, tested first
                    self.count += 1
                    yield read, number  # type: ignore[misc]  # its class is an Event's (interpreted, cast() is a call per line)
                elif isinstance(read, LineFinding):
                    self.finding(read)
                elif isinstance(read, ChunkRun):
                    self.count += read.count
                    yield read, number
                elif isinstance(read, tuple):
                    self.count += len(read)
                    for event in read:
                        yield event, number
        except (OSError, EOFError, ValueError) + read_errors as error:
            # zstandard reports a corrupt frame as ZstdError (a ValueError subclass in
            # recent versions) or OSError; either way the file cannot be read.
            self.unreadable = f"read error at line {self.number + 1}: {error}"
            return
        empty = check_not_empty(self.number, bool(self.count or self.header is not None or self.findings))
        if empty is not None:
            self.findings.append(LineFinding(line=None, rejected=empty))
        if first_record:
            self.seed()

    def finding(self, finding: LineFinding) -> None:
        self.findings.append(finding)
        if finding.damages and finding.line is not None and self.first_damage is None:
            self.first_damage = finding.line

    def seed(self) -> None:
        """The seed length and parent session: the header line's, else the sidecar's (known
        once the first record is read)."""
        header = self.header
        parent: object = get(header.value, "parentSession") if header is not None else None
        self.seed_length = header.seed_length if header is not None else 0
        if header is None and self.sidecar_path is not None:
            recorded = sidecar_header(self.sidecar_path)
            value = recorded.get("seedLength")
            self.seed_length = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
            parent = recorded.get("parentSession")
        self.parent_session = parent if isinstance(parent, str) else None

    def log_file(self, events: tuple[Event, ...], lines: tuple[int, ...]) -> LogFile:
        """The read file, with the events the caller kept."""
        if self.unreadable is not None:
            return LogFile(name=self.name, header=self.header, events=events, lines=lines, findings=tuple(self.findings), unreadable=self.unreadable)
        return LogFile(name=self.name, header=self.header, events=events, lines=lines, findings=tuple(self.findings), seed_length=self.seed_length,
                       parent_session=self.parent_session, quirks=tuple(self.quirks), torn_line=self.torn_line)


def read_stream(
    stream: BinaryIO,
    name: str,
    sidecar_path: Path | None = None,
    read_errors: tuple[type[Exception], ...] = (),
    max_events: int = MAX_EVENTS,
) -> LogFile:
    """Read one log from a binary stream (FMT-1: header line, then records), its events kept
    (:class:`LineReader`)."""
    reader = LineReader(name, sidecar_path, max_events)
    events: list[Event] = []
    lines: list[int] = []
    for event, line in reader.events(stream, read_errors):
        events.append(event)
        lines.append(line)
    return reader.log_file(tuple(events), tuple(lines))


def _read_line(
    raw: bytes, newline: bool, number: int, first_record: bool, quirks: list[LineFinding]
) -> LineFinding | SessionHeader | ChunkRun | Event | tuple[Event, ...] | None:
    """One non-blank line: the header (first line only), an event, events (a packed row's as a run), or a finding.

    Q-29: "The decoder accepts rows with 1-2 members (non-empty payload)
    although the packer never emits them; the model's decoder MUST accept
    them; the checker notes them." """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return _line_finding(not_utf8(error.start), newline, number, first_record, quirks)
    # = model.codec.parse_value(text), and for a plain event line decode_record's event (tests/fast/test_fast_parse.py)
    parsed = parse_event(raw, text)
    if type(parsed) in _EVENT_CLASSES:  # (isinstance on the Event union tests its classes one by one)
        return parsed  # type: ignore[return-value]  # its class is an Event's (no cast(): a call per line)
    value: Json | Rejected | TooDeep = parsed  # type: ignore[assignment]  # an Event's class is one of the union's
    if isinstance(value, TooDeep):
        rejected = Rejected(rule="FMT-1", reason=f"JSON nested deeper than {MAX_DEPTH} levels (checker limit)", kind=FailureKind.LIMIT)
        return _line_finding(rejected, newline, number, first_record, quirks)
    if isinstance(value, Rejected):
        return _line_finding(value, newline, number, first_record, quirks)
    if isinstance(value, JsonObject) and get(value, "type") in ROW_TAGS:
        # decode_record of a row: expand_row's events, built fast by row_events (tests/fast/test_fast_parse.py)
        members = row_events(value)
        if isinstance(members, Rejected):
            return LineFinding(line=number, rejected=members)
        if len(members) < MIN_RUN:
            quirk = Rejected(rule="Q-29", seq=members[0].seq, reason=f"{get(value, 'type')} row with {len(members)} member(s); the packer writes rows of at least {MIN_RUN}")
            quirks.append(LineFinding(line=number, rejected=quirk))
        return ChunkRun(members)
    header = header_line(value, first_record)
    if isinstance(header, SessionHeader):
        return header
    if header is not None:
        # A header after the first line loses no event: later findings do not follow from it.
        return LineFinding(line=number, rejected=header, damages=first_record)
    decoded = decode_record(value)
    if isinstance(decoded, Rejected):
        return LineFinding(line=number, rejected=decoded)
    return decoded


# The classes of the Event union (LOG-9, LOG-10): a set lookup of the type is cheaper than isinstance on the union.
_EVENT_CLASSES: Final = frozenset(get_args(Event))


def _line_finding(rejected: Rejected, newline: bool, number: int, first_record: bool, quirks: list[LineFinding]) -> LineFinding | None:
    """What a line that could not be read gives (:func:`sessionspec.model.log_file.unreadable_line`): a finding,
    or (a torn last line, QF-15) a quirk."""
    read = unreadable_line(rejected, newline, first_record)
    if read.rule != "QF-15":
        return LineFinding(line=number, rejected=read)
    quirks.append(LineFinding(line=number, rejected=read))
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
    events: list[Event] = []
    lines: list[int] = []

    def keep(reader: LineReader, record: Event | ChunkRun, line: int) -> None:
        taken = record.members if isinstance(record, ChunkRun) else (record,)
        events.extend(taken)
        lines.extend(line for _ in taken)

    return stream_handle(handle, name, sidecar_path, keep, max_events).log_file(tuple(events), tuple(lines))


def stream_handle(handle: BinaryIO, name: str, sidecar_path: Path | None, take: Callable[[LineReader, Event | ChunkRun, int], None],
                  max_events: int = MAX_EVENTS) -> LineReader:
    """:func:`read_handle`, handing each event (a packed row's chunks as one :class:`ChunkRun`) to ``take``
    (with the reader, as it stands at that line) instead of keeping it: a caller that streams keeps
    memory bounded."""
    reader = LineReader(name, sidecar_path, max_events)
    with handle:
        if not name.endswith(".zst"):
            for record, line in reader.records(handle):
                take(reader, record, line)
            return reader
        try:
            frames = ZstdFrames(handle)
        except ImportError:
            reader.unreadable = "the zstandard package is not installed (needed for .zst files)"
            return reader
        with io.BufferedReader(frames, buffer_size=256 * 1024) as stream:
            for record, line in reader.records(stream):
                take(reader, record, line)
    return reader


def session_id(log: LogFile) -> str:
    """The session id for legacy-message ids (DIA-13); ``unknown`` without a header."""
    return session_id_of(log.header)


def session_id_of(header: SessionHeader | None) -> str:
    """:func:`session_id` of a header line (None: none)."""
    if header is not None and isinstance(header.id, str):
        return header.id
    return "unknown"
