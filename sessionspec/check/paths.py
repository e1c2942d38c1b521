"""Which files ``sessionspec check`` reads, and how paths are printed.

Directories are walked recursively in sorted order for ``*.jsonl`` and
``*.jsonl.zst``.  Nothing is skipped silently: a directory that cannot be
listed is yielded as :class:`Unlistable` (its report is ``unreadable``); a
file whose name matches is yielded whatever its type, and the reader refuses
a FIFO, socket or device without opening it (``byte_source.open_regular``).

Directory symlinks are followed, because fleets of logs are often assembled
from links; each directory (by device and inode) is walked at most once per
path argument, so a symlink loop, or a second link to a directory already
walked, ends there and is named on standard error (``warn``).
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.check.logfile import STDIN

LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zst")


@final
@dataclass(frozen=True, slots=True)
class Unlistable:
    """A directory met as an argument or in a walk that could not be listed."""

    path: str
    reason: str


LogPath = str | Unlistable


def _stderr_warning(message: str) -> None:
    print(f"sessionspec check: {escape_text(message)}", file=sys.stderr)


def iter_log_paths(paths: Sequence[str], warn: Callable[[str], None] = _stderr_warning) -> Iterator[LogPath]:
    """Files as given (a missing path is yielded as is: its report is
    ``unreadable``); directories walked (module docstring)."""
    for path in paths:
        if path != STDIN and os.path.isdir(path):
            yield from _walk(path, set(), warn)
        else:
            yield path


def _walk(directory: str, seen: set[tuple[int, int]], warn: Callable[[str], None]) -> Iterator[LogPath]:
    try:
        info = os.stat(directory)
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        yield Unlistable(directory, f"cannot list directory: {error.strerror or error}")
        return
    key = (info.st_dev, info.st_ino)
    if key in seen:
        warn(f"{directory}: a directory already walked (a symlink loop or a second link to it); not walked again")
        return
    seen.add(key)
    subdirectories: list[str] = []
    for entry in entries:
        try:
            is_directory = entry.is_dir()  # follows symlinks; a FIFO is not opened
        except OSError:
            is_directory = False
        if is_directory:
            subdirectories.append(entry.path)
        elif entry.name.endswith(LOG_SUFFIXES):
            yield entry.path
    for subdirectory in subdirectories:
        yield from _walk(subdirectory, seen, warn)


_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a non-UTF-8 file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """``text`` with control characters, line and paragraph separators and
    undecodable bytes of file names written as ``\\n``, ``\\xNN`` or
    ``\\uNNNN``, so a file name can never start a new output line (or forge a
    verdict line) and output never fails to encode."""
    if text.isprintable():
        return text
    return "".join(_escape_char(c) if unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cs") else c for c in text)
