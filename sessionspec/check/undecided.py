"""The rules a run of ``check`` could not decide, and why (issue 44): listed once, with the run's summary.

Two reasons depend on nothing but the run: a rule whose decision needs the deployment's facts
(``spec/decidability.py`` DECIDED_WITH_DEPLOYMENT: the compaction and prune configuration and the context window, which
a log does not record) when no ``--deployment`` was given, and a rule only the request sent to the model shows
(``decidability`` request-only: the checker rebuilds requests by it, no log can break it).  They are the same
for every file of the run, so they are said once, after the summary, not in each file's report.  What one log's
check could not decide, where and why, is each file's own list (sessionspec/check/declines.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from sessionspec.spec.decidability import DECIDED_WITH_DEPLOYMENT, decidability
from sessionspec.spec.status import STATUS

NEEDS_DEPLOYMENT: Final = "deployment"
REQUEST_ONLY: Final = "request-only"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotDecided:
    """A rule the run did not decide (``part``: what of it, when the log alone decides the rest) and why."""

    rule: str
    why: str
    part: str = ""

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "why": self.why, **({"part": self.part} if self.part else {})}


def not_decided(deployment_given: bool) -> tuple[NotDecided, ...]:
    """The book's rules a run does not decide: those needing the deployment (unless it was given), then the
    request-only ones, each in the book's order."""
    rules = [rid for rid in STATUS if not rid.startswith("P-")]
    needs = () if deployment_given else tuple(
        NotDecided(rule=rid, why=NEEDS_DEPLOYMENT, part=DECIDED_WITH_DEPLOYMENT[rid] if decidability(rid) == "log+deployment" else "")
        for rid in rules if rid in DECIDED_WITH_DEPLOYMENT)
    return (*needs, *(NotDecided(rule=rid, why=REQUEST_ONLY) for rid in rules if decidability(rid) == REQUEST_ONLY))


def not_decided_text(items: tuple[NotDecided, ...]) -> str:
    """One line for the text output, after the summary line."""
    needs = [item.rule + (" (in part)" if item.part else "") for item in items if item.why == NEEDS_DEPLOYMENT]
    request = [item.rule for item in items if item.why == REQUEST_ONLY]
    parts = ([f"{', '.join(needs)} need --deployment FILE (the compaction and prune configuration and the "
              "context window are not in a log)"] if needs else []) + \
            ([f"{len(request)} rules only the request shows ({', '.join(request[:3])}, ...: sessionspec rules, decidable request-only)"] if request else [])
    return f"not decided: {'; '.join(parts)}"

