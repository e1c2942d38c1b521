"""Scrubbed header values are opaque (FMT-6, LEG-8).

The harness's snapshot normalisers replace header fields with placeholders:
a whole-field string such as ``"{{system}}"`` or ``"{{tools}}"``, prefix
entries ``"{{messagePrefix}}"``, or ``tools`` reduced to the list of the tool
names.  Such a value says nothing about the real one, so no finding may
depend on it: the checker skips it in type checks and never decides an
equality through it; the file gets a note naming what was opaque.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.jsonget import is_placeholder
from sessionspec.model.jsonval import Absent, Json

HEADER_FIELDS: Final = ("system", "tools", "messagePrefix")


def is_opaque(field: str, v: Json | Absent) -> bool:
    """A header field value that a snapshot scrubber wrote instead of the real
    one: a placeholder, a prefix with ``{{messagePrefix}}`` entries, or (for
    ``tools``) a non-empty list of plain tool names, never a real
    ``ToolSchema`` list (HDR-1: schemas are objects)."""
    if is_placeholder(v):
        return True
    if not isinstance(v, tuple):
        return False
    if field == "tools":
        return bool(v) and all(isinstance(x, str) for x in v)
    return any(is_placeholder(x) for x in v)
