"""Opening a log's bytes safely (issue 15): only regular files are opened, and a zstandard stream is read
frame by frame so that a cut or corrupt frame is an error naming its byte offset.

``logfile`` reads lines from what this module opens; nothing here knows about events.
"""

from __future__ import annotations

import io
import os
import stat
from typing import BinaryIO, Final

# Compressed bytes handed to the zstd decoder at a time: a frame expands at
# most about 32768-fold (an RLE block), so one step yields at most ~64 MiB.
ZSTD_STEP: Final = 2048


class ZstdStreamError(ValueError):
    """A zstandard stream that is corrupt or ends inside a frame."""


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of a zstandard stream, frame by frame.

    Unlike ``stream_reader(read_across_frames=True)``, a stream cut inside a
    frame (the first or any later one) is an error naming the frame and its
    byte offset, never a silent end of data: a cut frame is lost data."""

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard  # the persistence format's optional zstd frames (FMT-1)

        super().__init__()
        self._zstd = zstandard
        self._raw = raw
        self._new_frame = zstandard.ZstdDecompressor().decompressobj
        self._frame = self._new_frame()
        self._frame_number = 1
        self._frame_start = 0  # compressed offset of the current frame
        self._fed = 0  # compressed bytes consumed so far
        self._in_frame = False  # bytes of the current frame have been fed
        self._pending = b""  # compressed bytes not yet fed
        self._out = b""
        self._out_pos = 0

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._out_pos >= len(self._out):
            if not self._step():
                return 0
        n = min(len(buffer), len(self._out) - self._out_pos)
        buffer[:n] = self._out[self._out_pos : self._out_pos + n]
        self._out_pos += n
        return n

    def _step(self) -> bool:
        """Decompress the next few compressed bytes; False at a clean end."""
        if not self._pending:
            self._pending = self._raw.read(ZSTD_STEP)
            if not self._pending:
                if self._in_frame:
                    raise ZstdStreamError(
                        f"zstd stream ends at byte {self._fed} inside frame {self._frame_number} "
                        f"(which starts at byte {self._frame_start}): the frame is incomplete"
                    )
                return False
        chunk, self._pending = self._pending[:ZSTD_STEP], self._pending[ZSTD_STEP:]
        self._in_frame = True
        try:
            self._out = self._frame.decompress(chunk)
        except self._zstd.ZstdError as error:
            raise ZstdStreamError(f"corrupt zstd frame {self._frame_number} (starts at byte {self._frame_start}): {error}") from None
        self._out_pos = 0
        self._fed += len(chunk)
        if self._frame.eof:
            rest = self._frame.unused_data
            self._fed -= len(rest)
            self._pending = rest + self._pending
            self._frame = self._new_frame()
            self._frame_number += 1
            self._frame_start = self._fed
            self._in_frame = False
        return True


_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    kind = next((text for test, text in _KINDS if test(mode)), "not a regular file")
    return f"{kind}: only regular files and - (stdin) are read"


def open_regular(path: str) -> BinaryIO | str:
    """Open a regular file for reading, or say why not.  The type is checked
    before opening (a FIFO is never opened, so it cannot block) and again on
    the open descriptor (a path swapped in between is caught too)."""
    try:
        why = not_regular(os.stat(path).st_mode)
        if why is not None:
            return why
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        return f"cannot open: {error.strerror or error}"
    try:
        why = not_regular(os.fstat(fd).st_mode)
    except OSError as error:
        why = f"cannot open: {error.strerror or error}"
    if why is not None:
        os.close(fd)
        return why
    return os.fdopen(fd, "rb")
