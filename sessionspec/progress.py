"""One progress bar for every command that works for long (``check``, ``generate``): on standard error, only
on a terminal, redrawn in place and wiped before anything else is written, so it never mixes with the output.

``check`` counts files (``[#####.....] 49/136 files  36%, 2 invalid``) or, for one large file, the bytes read
(``[#####.....] 120.0/340.2 MiB  35%``); ``generate`` counts the events written.  ``-q`` and ``--no-progress``
turn it off; a pipe, a file or CI never sees it.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Final, TextIO, final

BAR_CELLS: Final = 30
INTERVAL_S: Final = 0.1


def human_bytes(count: float) -> str:
    """``340.2 MiB``: bytes in the largest binary unit under 1024 of it."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def bar_text(done: int, total: int, unit: str = "files", suffix: str = "", cells: int = BAR_CELLS) -> str:
    """``[#####.....] done/total unit  NN%`` and the suffix; ``unit`` ``bytes`` shows sizes."""
    filled = min(cells, cells * done // total) if total else cells
    percent = min(100, 100 * done // total) if total else 100
    count = f"{human_bytes(done).split()[0]}/{human_bytes(total)}" if unit == "bytes" else f"{done}/{total} {unit}"
    return f"[{'#' * filled}{'.' * (cells - filled)}] {count} {percent:3d}%{suffix}"


def on_terminal(stream: TextIO | None = None) -> bool:
    """Is ``stream`` (standard error by default) a terminal?"""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@final
@dataclass(slots=True, kw_only=True)
class ProgressBar:
    """A one-line bar redrawn in place with ``\\r`` on a terminal stream.

    Redraws at most every ``interval`` seconds (and always at the end), and
    is cleared before report lines are written so they never mix with it."""

    stream: TextIO
    total: int
    unit: str = "files"
    clock: Callable[[], float] = time.monotonic
    interval: float = INTERVAL_S
    _shown: int = 0
    _last: float | None = None

    def update(self, done: int, suffix: str = "") -> None:
        now = self.clock()
        if done < self.total and self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        text = bar_text(done, self.total, self.unit, suffix)
        self.stream.write("\r" + text + " " * max(0, self._shown - len(text)))
        self.stream.flush()
        self._shown = max(self._shown, len(text))

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0


class CountingReader(io.RawIOBase):
    """A binary file read through, its bytes counted into a :class:`ProgressBar` (``unit="bytes"``)."""

    def __init__(self, raw: BinaryIO, bar: ProgressBar, suffix: str = "") -> None:
        super().__init__()
        self._raw = raw
        self._bar = bar
        self._suffix = suffix
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._count += n
        self._bar.update(min(self._count, self._bar.total), self._suffix)
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()
