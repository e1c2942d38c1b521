"""The value every total function returns instead of raising (RULES §0.5).

Three failure kinds, as in the WebAssembly reference interpreter: the input is
invalid under a rule, a resource limit of the checker was reached, or the model
itself is wrong (a bug: an internal invariant broke, never the input's fault).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import final


class FailureKind(Enum):
    INVALID = "invalid"
    LIMIT = "limit"
    BUG = "bug"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Rejected:
    """A rejection naming the rule that refuses the input.

    ``rule`` is a rule ID of the rule book (e.g. ``SURF-5``); ``seq`` the event
    seq it concerns, when there is one; ``reason`` one line for humans.  Two
    rejections are compared by ``rule`` (and kind), never by ``reason``.
    """

    rule: str
    reason: str
    seq: int | None = None
    kind: FailureKind = FailureKind.INVALID

    def same_kind(self, other: Rejected) -> bool:
        return self.rule == other.rule and self.kind == other.kind

    def __str__(self) -> str:
        at = f" seq {self.seq}" if self.seq is not None else ""
        return f"{self.rule}{at}: {self.reason}"

    def __post_init__(self) -> None:
        # A report's finding says why (its one line for humans): a rejection without a reason is a bug where it is made.
        assert isinstance(self.reason, str) and self.reason, f"{self.rule}: a rejection without a reason"
