"""The D08 shapes a log shows (DIA-10, DIA-7): the folds that run the model's definitions.

The definitions are :mod:`sessionspec.model.d08_shapes`'s: each message's identity (DIA-10), and a
:class:`~sessionspec.model.d08_shapes.RetryAttempts` per step against which each message is judged (DIA-7).
These folds only hand them the events (DIA-14's aborted reasons are judged with the load shapes,
``load_shape_audit``).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.fast.constants import D08
from sessionspec.model.d08_shapes import RetryAttempts, check_message_identity, take_retry_event
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected


class D08MessageShapeAudit(WalkFold):
    """DIA-10 (:func:`sessionspec.model.d08_shapes.check_message_identity`), run on the migrated events (DIA-13
    gives legacy shapes their identity first), seed included (LOG-8 validates the whole list)."""

    EVENT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

    DIALECTS = frozenset({D08})

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        found: list[Rejected] = []
        while (event := (yield)) is not None:
            bad = check_message_identity(event)
            if bad is not None:
                found.append(bad)
        return found


def check_d08_message_shapes(events: Sequence[Event]) -> list[Rejected]:
    """:class:`D08MessageShapeAudit` run alone."""
    return run_alone(D08MessageShapeAudit, events, D08)


class RetryAttemptAudit(WalkFold):
    """DIA-7 (:func:`sessionspec.model.d08_shapes.check_retry_message`): the attempts of each step, and every
    message judged against them."""

    EVENT_TYPES = frozenset({"step/start", "assistant/chunk", "assistant/message"})

    DIALECTS = frozenset({D08})

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        found: list[Rejected] = []
        attempts = RetryAttempts()
        while (event := (yield)) is not None:
            attempts, bad = take_retry_event(attempts, event)
            found += bad
        return found


def check_retry_attempts(events: Sequence[Event]) -> list[Rejected]:
    """:class:`RetryAttemptAudit` run alone."""
    return run_alone(RetryAttemptAudit, events, D08)
