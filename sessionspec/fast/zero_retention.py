"""The bracket place of :mod:`sessionspec.model.compaction.zero_retention` for the checker's one pass: the same
answers, computed by a module the compiled wheel compiles (issue 44).

The fold hands the place every step and turn boundary and appended message of a log; compiled, a call per such
event into the model's interpreted ``take_bracket_event`` cost 1 % of the whole check.  So the fold runs this
twin; the rule a bracket's range answers to is still the model's ``zero_retention_rule`` (asked once per bracket),
and ``tests/fast/test_fast_zero_retention.py`` holds the twin equal to the model, event for event, on the logs the
loop simulator writes with compactions appended, in both dialects.
"""

from __future__ import annotations

from typing import final

from sessionspec.fast.jsonget import get
from sessionspec.model.compaction import zero_retention as model
from sessionspec.model.log import Dialect, Event


@final
class BracketPlace:
    """:class:`sessionspec.model.compaction.zero_retention.BracketPlace`, as a native class."""

    __slots__ = ("dialect", "step_open", "message", "failed_attempt", "rule", "start_type", "summary_type", "moved_by")

    def __init__(self, dialect: Dialect) -> None:
        defined = model.BracketPlace(dialect)
        self.dialect = dialect
        self.step_open = False
        self.message = False
        self.failed_attempt = False
        self.rule: str | None = None
        self.start_type: str = defined.start_type
        self.summary_type: str = defined.summary_type
        self.moved_by: frozenset[str] = defined.moved_by


def take_bracket_event(place: BracketPlace, event: Event) -> str | None:
    """:func:`sessionspec.model.compaction.zero_retention.take_bracket_event`."""
    kind = event.type
    if kind == "assistant/chunk":
        chunk = get(event.data, "chunk")
        if get(chunk, "type") == "finish":
            place.failed_attempt = get(get(chunk, "reason"), "kind") == "error"
        return None
    if kind == "step/start":
        place.step_open, place.message, place.failed_attempt = True, False, False
    elif kind == "step/end" or kind == "turn/end" or kind == "turn/start":
        place.step_open, place.message, place.failed_attempt = False, False, False
    elif kind == "assistant/message" and event.surface_op == "append":
        place.message = True
    if kind == place.start_type:
        defined = model.BracketPlace(place.dialect, step_open=place.step_open, message=place.message,
                                     failed_attempt=place.failed_attempt)
        place.rule = model.zero_retention_rule(defined, event)
    elif kind == place.summary_type:
        rule, place.rule = place.rule, None
        return rule
    return None
