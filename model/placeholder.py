"""Fixture placeholders (FMT-6, LEG-8): the opaque tokens of scrubbed snapshot logs.

The harness's snapshot normalisers replace real values by tokens such as
``{{system}}``, ``{{tools}}`` (whole fields), ``{{messagePrefix}}`` (per prefix
entry) and ``{{cwd}}`` (also inside content strings).  One token definition,
:data:`TOKEN`; every reader asks these functions, never its own test.
"""

from __future__ import annotations

import re
from typing import Final

from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.rules import implements

TOKEN: Final = re.compile(r"\{\{[^{}]*\}\}")


@implements("FMT-6")
def is_placeholder(value: Json | Absent) -> bool:
    """FMT-6: "Placeholders MUST be treated as opaque tokens: `{{system}}`, `{{tools}}` (whole-field strings
    replacing the real value), `{{messagePrefix}}` (per prefix entry), `{{sessionId}}`, `{{cwd}}` (also
    inside content strings), `{{rpcId}}`, `{{parent}}`, `{{child-N}}`, `{{messageId}}`, `{{workflow-run}}`."

    FMT-6: a whole-field placeholder, a string that is one token such as ``{{tools}}``.
    """
    return isinstance(value, str) and TOKEN.fullmatch(value) is not None


def holds_placeholder(value: Json | Absent) -> bool:
    """A header field that is a placeholder, or a list with a placeholder
    entry (LEG-8: ``messagePrefix`` entries scrubbed one by one)."""
    if isinstance(value, tuple):
        return any(is_placeholder(entry) for entry in value)
    return is_placeholder(value)


def mentions_placeholder(value: Json | Absent) -> bool:
    """FMT-6: a placeholder token anywhere in a JSON value, keys and strings
    at any depth (``{{cwd}}`` inside a content string): the real text, and so
    any price of it, is unknown."""
    if isinstance(value, str):
        return TOKEN.search(value) is not None
    if isinstance(value, tuple):
        return any(mentions_placeholder(entry) for entry in value)
    if isinstance(value, JsonObject):
        return any(mentions_placeholder(k) or mentions_placeholder(v) for k, v in value.items())
    return False


def is_opaque_field(field: str, value: Json | Absent) -> bool:
    """FMT-6 (with LEG-8's scrubbed prefixes): a header field value that a snapshot scrubber wrote instead of the
    real one, so no finding may depend on it: a placeholder, a prefix with ``{{messagePrefix}}`` entries, or (for
    ``tools``) a non-empty list of plain tool names, never a real ``ToolSchema`` list (HDR-1: schemas are
    objects)."""
    if isinstance(value, str):
        return is_placeholder(value)
    if not isinstance(value, tuple):
        return False
    if field == "tools":
        return bool(value) and all(isinstance(x, str) for x in value)
    return any(is_placeholder(x) for x in value)
