"""The adapter protocol's names shared by both sides: its version, the response shape, and the two
failures (a malformed operation; an adapter that failed to answer).
"""

from __future__ import annotations

from typing import Final

from sessionspec.conformance.vector_format import PlainJson

PROTOCOL: Final = "sessionspec-adapter/1"

Response = dict[str, PlainJson]


class OperationError(Exception):
    """A malformed operation (a protocol failure, not a rejection)."""


class AdapterError(Exception):
    """The adapter process failed to answer (died, wrote no JSON, answered another id)."""
