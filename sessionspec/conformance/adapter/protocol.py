"""The adapter protocol's names shared by both sides: its version, the response shape, and the two
failures (a malformed operation; an adapter that failed to answer).
"""

from __future__ import annotations

from typing import Final

from sessionspec.conformance.vectors.format import PlainJson

PROTOCOL_V1: Final = "sessionspec-adapter/1"
# /2: a rejection may name no rule ("rejects, rule unknown"); the model speaks /2.
PROTOCOL: Final = "sessionspec-adapter/2"
READABLE: Final = (PROTOCOL_V1, PROTOCOL)

Response = dict[str, PlainJson]


class OperationError(Exception):
    """A malformed operation (a protocol failure, not a rejection)."""


class AdapterError(Exception):
    """The adapter failed to answer as the protocol says (no answer in time, an answer too large, not UTF-8
    or JSON, another id, died); the message names the operation and what went wrong."""


class OperationRefused(AdapterError):
    """The adapter answered ``{"error": ...}``: it did not understand or does not support the operation
    (it stays in sync, so a vector run goes on with the next vector).  ``error`` is the adapter's own text;
    ``unsupported`` says it declined an operation it does not implement (capabilities.py): a skip, not a
    failure."""

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.error = error

    @property
    def unsupported(self) -> bool:
        return is_unsupported(self.error)


def is_unsupported(error: str) -> bool:
    """Whether an ``error`` answer says the operation is not supported (docs/conformance.md section 1):
    ``unsupported``, optionally followed by ``:`` or a space and an explanation."""
    text = error.strip()
    return text == "unsupported" or text.startswith(("unsupported:", "unsupported "))
