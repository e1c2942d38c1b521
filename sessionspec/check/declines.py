"""The rules ``check`` could not decide in one log, and why (issue 44), said where a fold declines.

The run's list (sessionspec/check/undecided.py) says what no log of the run could decide: the rules needing the
deployment when none was given, the request-only rules.  This is each file's: the rules a fold met the events of
and declined to judge, each with its reason (:data:`WHY_TEXT`), where it first declined and how often.  A fold
records at its declining point (:class:`Declines`, one dictionary entry per rule and reason), so the events it
judges pay nothing.  Without ``--deployment`` the places the deployment's decisions would judge are listed by
:mod:`sessionspec.check.deployment_points`; with it, :mod:`sessionspec.check.deployment_fold` lists the points it
could not judge (a placeholder, an interrupted turn, a fact the deployment does not state); CMP-15's count over a
scrubbed header or node is listed by :mod:`sessionspec.check.compaction_audit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, final

from sessionspec.check.paths import escape_text
from sessionspec.check.pickling import reduce_by_fields

# Why a decision of one log was not made: each is said where a fold declines (sessionspec/check/deployment_fold.py,
# sessionspec/check/deployment_points.py, sessionspec/check/compaction_audit.py), never from a list of rules.
NO_DEPLOYMENT: Final = "deployment"
NOT_STATED: Final = "not-stated"
PLACEHOLDER: Final = "placeholder"
INTERRUPTED: Final = "interrupted"
WHY_TEXT: Final = {
    NO_DEPLOYMENT: "needs the deployment's facts (check --deployment FILE)",
    NOT_STATED: "the deployment does not state what the decision needs (the compaction or prune configuration, "
                "the target's context window, the order of D08's request-error listeners before an llm/retry), or the log "
                "routes no target",
    PLACEHOLDER: "a scrubbed header or node (FMT-6 placeholder): its price is unknown and no finding may depend on it",
    INTERRUPTED: "its turn ended interrupted: no compaction runs once the signal is aborted, and where the abort "
                 "landed is not logged (CMP-6)",
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FileNotDecided:
    """A rule one log's check did not decide at ``count`` places (``what``: the events it would judge), the first
    at ``seq``, and why (a key of :data:`WHY_TEXT`)."""

    rule: str
    why: str
    what: str
    seq: int
    count: int

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "why": self.why, "what": self.what, "seq": self.seq, "count": self.count,
                "reason": WHY_TEXT[self.why]}

    def text(self) -> str:
        """``CMP-6: post-step point, seq 21 and 7 more: needs the deployment's facts (...)``."""
        more = f" and {self.count - 1} more" if self.count > 1 else ""
        return f"{self.rule}: {self.what}, seq {self.seq}{more}: {WHY_TEXT[self.why]}"

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def _order(item: FileNotDecided) -> tuple[int, str, str, str]:
    return item.seq, item.rule, item.why, item.what


def in_log_order(items: Sequence[FileNotDecided]) -> tuple[FileNotDecided, ...]:
    """The items of several folds in one order: by the first seq, then rule, reason and place."""
    return tuple(sorted(items, key=_order))


@final
class Declines:
    """Where a fold declined to decide a rule, deduplicated by rule and reason: the first seq and a count.  Called
    only at the declining point (rare next to the events), so the per-event path pays nothing."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str, str], list[int]] = {}

    def add(self, rule: str, why: str, what: str, seq: int) -> None:
        entry = self.seen.get((rule, why, what))
        if entry is None:
            self.seen[(rule, why, what)] = [seq, 1]
        else:
            entry[1] += 1

    def items(self) -> tuple[FileNotDecided, ...]:
        return tuple(sorted((FileNotDecided(rule=rule, why=why, what=what, seq=first, count=count)
                            for (rule, why, what), (first, count) in self.seen.items()), key=_order))


def file_not_decided_text(path: str, items: Sequence[FileNotDecided]) -> str:
    """The text lines of one file's list (``-v``), under its verdict."""
    return "".join(f"{escape_text(path)}: not decided: {item.text()}\n" for item in items)
