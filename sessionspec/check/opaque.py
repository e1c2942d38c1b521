"""Scrubbed header values are opaque (FMT-6, LEG-8).

The harness's snapshot normalisers replace header fields with placeholders:
a whole-field string such as ``"{{system}}"`` or ``"{{tools}}"``, prefix
entries ``"{{messagePrefix}}"``, or ``tools`` reduced to the list of the tool
names.  Such a value says nothing about the real one, so no finding may
depend on it: the checker skips it in type checks and never decides an
equality through it; the file gets a note naming what was opaque.  Which
values are opaque is the model's: :func:`sessionspec.model.placeholder.is_opaque_field`.
"""

from __future__ import annotations

from typing import Final

from sessionspec.model.placeholder import is_opaque_field as is_opaque

HEADER_FIELDS: Final = ("system", "tools", "messagePrefix")

__all__ = ["HEADER_FIELDS", "is_opaque"]
