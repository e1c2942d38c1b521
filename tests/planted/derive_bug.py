"""Planted bug in ``model.derive.project``: drops tool results (DER-6 makes each its own user message)."""

from __future__ import annotations

from sessionspec.model.derive import project as real_project
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


def project(event: Event, dialect: Dialect = Dialect.A55) -> JsonObject | None | Rejected:
    """DER-1/DER-6 with tool results silently skipped.

    post: event.type != "tool/result" or __return__ is not None
    """
    if event.type == "tool/result":
        return None  # BUG: a tool/result node always projects (or is rejected)
    return real_project(event, dialect)
