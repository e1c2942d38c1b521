"""A stream whose failures, whatever a storage backend raises, are ``OSError``: read errors, so the file
is ``unreadable``, never an exception of the checker."""

from __future__ import annotations

import contextlib
import io
from typing import BinaryIO


class OSErrorsOnly(io.RawIOBase):
    """A stream whose failures, whatever a storage backend raises, are OSError."""

    def __init__(self, inner: BinaryIO) -> None:
        super().__init__()
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(buffer))
        except Exception as error:
            raise OSError(f"{type(error).__name__}: {error}") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(Exception):  # a failing close loses nothing already read
                self._inner.close()
        super().close()
