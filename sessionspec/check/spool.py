"""Standard input, kept on disk as it is read, so the checker can read it a second time (issue 26).

The streaming checker reads a file again when its first pass guessed the dialect or the first
live seq wrong (:mod:`sessionspec.check.log_pass`).  A regular file is opened again; standard
input cannot be, so every byte read from it is copied to a temporary file, and a second pass
reads the copy.  Memory stays bounded: the copy is on disk, not in memory.
"""

from __future__ import annotations

import io
import os
import tempfile
from typing import BinaryIO, final


@final
class Spooled(io.RawIOBase):
    """A readable stream over ``source`` that copies what it reads; :meth:`again` reads the copy."""

    def __init__(self, source: BinaryIO | io.RawIOBase) -> None:
        super().__init__()
        self.source = source
        self.copy = tempfile.TemporaryFile()  # noqa: SIM115  (lives across the passes; closed by discard)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.source.read(len(buffer))
        self.copy.write(data)
        buffer[: len(data)] = data
        return len(data)

    def again(self) -> BinaryIO:
        """The bytes read so far, from the start (a handle of its own, closed by its reader)."""
        self.copy.flush()
        self.copy.seek(0)
        return os.fdopen(os.dup(self.copy.fileno()), "rb")

    def discard(self) -> None:
        """Delete the copy (the source is not closed: it is standard input)."""
        self.copy.close()
