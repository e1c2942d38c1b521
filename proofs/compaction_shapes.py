"""Log-skeleton contracts that drive compaction and prune (issue 29: CrossHair reaches CMP and PRN).

A :class:`CompactionShape` is a :class:`~proofs.skeletons.Skeleton` (long steps give a compaction something to
shrink and a prune something to cut) plus a trigger and whether the run prunes first.  :func:`open_log` cuts
the built log just before its last ``step/end``: compaction runs inside a step, after its results (CMP-6), and
needs the open turn as its bracket owner (CMP-14).

- :func:`compaction_keeps_one_range`: ``model.compaction.compact_if_needed`` on that log; every checkpoint
  replaces one surface range, cites exactly it, and leaves a tail with no call split from its result; no
  header is written (``model.compaction.contracts.run_holds``).  Under CrossHair the postconditions of
  ``compact_if_needed``, ``compact_region`` and ``prune_pass`` are checked as callee contracts too.
- :func:`prune_keeps_surface`: ``model.prune.prune_pass`` replaces only tool results of the surface (never one
  a prune already replaced), and a second pass prunes nothing (PRN-4, PRN-5).
"""

from __future__ import annotations

from dataclasses import dataclass

from proofs.skeletons import Skeleton, build
from sessionspec import model
from sessionspec.model.compaction.contracts import run_holds
from sessionspec.model.compaction.records import CompactionRun, SummarizerOutput, SummaryCall, Trigger
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.prune import PruneConfig, PruneOutcome, only_surface_results, prune_again_is_empty
from sessionspec.model.rejected import Rejected

# A prune threshold the long steps exceed and the short ones do not (PRN-1 shape, smaller numbers).
PRUNE = PruneConfig(threshold_chars=1000, head_chars=100, tail_chars=100)
# Context window for the pressure trigger: a long step puts the log over its threshold.
CONTEXT_WINDOW = 2000


@dataclass(frozen=True, slots=True)
class CompactionShape:
    skeleton: Skeleton
    trigger: Trigger
    prune: bool


def summarize(call: SummaryCall) -> SummarizerOutput:
    """A summarizer with a short answer (so the CMP-21 shrink gate passes on long ranges)."""
    return SummarizerOutput(summary=(JsonObject((("type", "text"), ("text", "summary"))),),
                            provider=call.provider, model=call.model)


def open_log(sk: Skeleton) -> tuple[Event, ...]:
    """The skeleton's log up to (not including) its last ``step/end``: inside a step, after its results."""
    log = build(sk).log
    ends = [e.seq for e in log if e.type == "step/end"]
    return log[: ends[-1]] if ends else log


def run_compaction(shape: CompactionShape) -> tuple[tuple[Event, ...], CompactionRun | Rejected]:
    events = open_log(shape.skeleton)
    run = model.compaction.compact_if_needed(events, summarize, trigger=shape.trigger,
                                             context_window=CONTEXT_WINDOW, prune=PRUNE if shape.prune else None)
    return events, run


def compaction_holds(shape: CompactionShape) -> str | None:
    events, run = run_compaction(shape)
    if isinstance(run, Rejected):
        return None  # a configuration or log the run refuses; its contract covers only what it writes
    return run_holds(events, run, Dialect.A55)


def run_prune(sk: Skeleton) -> tuple[tuple[Event, ...], PruneOutcome | Rejected]:
    events = build(sk).log
    return events, model.prune.prune_pass(events, PRUNE)


def prune_holds(sk: Skeleton) -> str | None:
    events, outcome = run_prune(sk)
    if isinstance(outcome, Rejected):
        return f"prune_pass rejects a valid log: {outcome}"
    bad = only_surface_results(events, outcome, Dialect.A55)
    if bad is not None:
        return bad
    return None if prune_again_is_empty(events, outcome, PRUNE, Dialect.A55) else "PRN-5: a second pass prunes again"


# --------------------------------------------------------------------------- the contracts (CrossHair targets)


def compaction_keeps_one_range(shape: CompactionShape) -> str | None:
    """CMP-10/13/15/22/24: one range summarised, priced, cited and replaced; the tail unsplit; no header.

    post: __return__ is None
    """
    return compaction_holds(shape)


def prune_keeps_surface(sk: Skeleton) -> str | None:
    """PRN-4, PRN-5: only surface tool results are pruned, and pruning is idempotent.

    post: __return__ is None
    """
    return prune_holds(sk)
