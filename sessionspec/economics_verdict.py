"""What ``sessionspec economics`` concludes: per workload, which design wins on cost and which on staleness,
and why, read off the same columns the tables print (docs/economics.md says what each counts).

The cost winner is the design with the lowest ``cost`` (full price + the cache model's read price x cache
reads); designs within :data:`TIE` of it share the win.  The staleness winner is the cheapest design that never
sends a stale opener (``stale`` 0).  "Why" names the columns that set the winner apart from the dearest design:
the tokens it does not re-pay at resumes (``resume-drift``), in a tail slot (``after-slot``) or as extra input
(a notice, ``input``), and the ``change`` headers it never logs.  Every sentence is computed, so it follows the
numbers when the designs or the cache model change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.designs import DESIGN_TITLES, Design, DesignResult, Workload, effective_cost
from sessionspec.economics import CacheModel

TIE: Final = 0.005  # costs within 0.5% of the cheapest share the win

# One sentence per design: what it does with the opener (the session-prefix note's alternatives).
DESIGN_SENTENCES: Final = {
    Design.FROZEN_PREFIX: "composes the opener once per loop instance into a session prefix placed after the system "
                          "prompt and never recomputes it inside the instance; a resume recomposes it (the design).",
    Design.FROZEN_PREFIX_NOTICE: "is (a), plus the note's routing rule: a change mid-session is announced by one durable "
                                 "context/message appended to history, paid once.",
    Design.SLOTS: "recomputes a before slot (the current opener) and an after slot behind the history at every step.",
    Design.DURABLE_OPENER: "injects the opener into history once, at session start, and never refreshes it.",
    Design.SYSTEM_SECTION: "renders the current opener into the system prompt at every step.",
    Design.PER_TURN: "recomposes the session prefix at every turn start instead of once per instance.",
}


def _cost(r: DesignResult, model: CacheModel) -> float:
    return effective_cost(r, model)


def _names(rows: Sequence[DesignResult]) -> str:
    titles = [DESIGN_TITLES[r.design].split(" ", 1)[0] for r in rows]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _why(winner: DesignResult, dearest: DesignResult) -> str:
    """The columns that set ``winner`` apart from ``dearest``, the largest difference in tokens first."""
    other = _names([dearest])
    reasons: list[tuple[int, str]] = []
    drift = dearest.resume_drift_tokens - winner.resume_drift_tokens
    if drift > 0:
        reasons.append((drift, f"{winner.resume_drift_tokens} tokens of cache lost at resumes ({other}: {dearest.resume_drift_tokens})"
                        if winner.resume_drift_tokens else f"no cache lost at a resume ({other} loses {dearest.resume_drift_tokens} tokens)"))
    after = dearest.after_tokens - winner.after_tokens
    if after > 0:
        reasons.append((after, f"no tail slot re-paid on every request ({other}: {dearest.after_tokens} tokens)"))
    extra = dearest.input_tokens - winner.input_tokens - after
    if extra > 0:
        notice = " (it restates the opener in a notice)" if dearest.design is Design.FROZEN_PREFIX_NOTICE else ""
        reasons.append((extra, f"{extra} fewer input tokens than {other}{notice}"))
    if dearest.header_changes > winner.header_changes == 0:
        plural = "s" if dearest.header_changes != 1 else ""
        reasons.append((0, f"no envelope change inside an instance ({other}: {dearest.header_changes} change header{plural})"))
    reasons.sort(key=lambda reason: -reason[0])
    return " and ".join(text for _, text in reasons[:2]) or "the same tokens sent"


def conclusion(workload: Workload, results: Sequence[DesignResult], model: CacheModel) -> str:
    """One sentence (two clauses) for a workload: the cost winner and why, and the staleness winner."""
    rows = sorted((r for r in results if r.workload is workload), key=lambda r: (_cost(r, model), r.design.value))
    cheapest = _cost(rows[0], model)
    winners = [r for r in rows if _cost(r, model) <= cheapest * (1 + TIE)]
    dearest = rows[-1]
    verb = "wins" if len(winners) == 1 else "win"
    if len(winners) == len(rows):  # no dearer design to set them apart from
        said = f"Opener {workload.value}: on cost no design wins: {_names(winners)} cost the same ({cheapest:.0f})"
    else:
        said = (f"Opener {workload.value}: on cost {_names(winners)} {verb} ({cheapest:.0f}, against {_cost(dearest, model):.0f} "
                f"for {_names([dearest])}): {_why(winners[0], dearest)}")
    fresh = [r for r in rows if r.stale_requests == 0]
    if len(fresh) == len(rows):
        return said + "; on staleness no design sends a stale opener."
    late = sorted((r for r in rows if r.stale_requests), key=lambda r: -r.stale_requests)
    counts = [f"{_names([r])} sends an outdated opener on {r.stale_requests} request{'s' if r.stale_requests != 1 else ''}" if i == 0
              else f"{_names([r])} on {r.stale_requests}" for i, r in enumerate(late)]
    stale = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    if not fresh:
        return said + f"; on staleness none wins: every design sends a stale opener ({stale})."
    best = [r for r in fresh if _cost(r, model) <= _cost(fresh[0], model) * (1 + TIE)]
    return (said + f"; on staleness {_names(best)} {'wins' if len(best) == 1 else 'win'}, the cheapest of the designs that never "
            f"send a stale opener ({_cost(best[0], model):.0f}), while {stale}.")


def conclusions(results: Sequence[DesignResult], model: CacheModel) -> list[tuple[Workload, str]]:
    """A sentence for each workload the results hold."""
    return [(w, conclusion(w, results, model)) for w in Workload if any(r.workload is w for r in results)]


def design_sentence(design: Design) -> str:
    return f"{DESIGN_TITLES[design]} {DESIGN_SENTENCES[design]}"
