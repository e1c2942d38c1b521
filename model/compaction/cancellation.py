"""Where an aborted turn signal stops compaction (CMP-26), one definition for the triggers that read it."""

from __future__ import annotations

from enum import Enum
from typing import assert_never

from sessionspec.model.rules import implements


class AbortPoint(Enum):
    """The places of a compaction run that read the turn signal."""

    PRESSURE_TRIGGER = "the post-step pressure trigger (A55 agent/post-step, D08 agent/pre-step)"
    OVERFLOW_RECOVERY = "the overflow path (agent/request-error): its run and its retry"
    COMMIT = "the commit after the summarizer returned"


@implements("CMP-26")
def stops_when_aborted(point: AbortPoint) -> bool:
    """CMP-26: "Cancellation MUST behave as follows: the post-step trigger skips when already aborted; the
    summarizer receives the turn signal; a summarizer that completes despite a later abort still commits (no
    abort check before commit, Q-2); the overflow path never retries when aborted."

    The signal reaches the summarizer as the summarizer's own affair (an aborted summarizer answers with
    finish ``aborted``, CMP-18), so the model's summarizer call takes none.  The region transaction asks
    whether to stop before committing and is told no (Q-2).

    post: __return__ == (point is not AbortPoint.COMMIT)
    """
    match point:
        case AbortPoint.PRESSURE_TRIGGER | AbortPoint.OVERFLOW_RECOVERY:
            return True
        case AbortPoint.COMMIT:
            return False
        case _:
            assert_never(point)
