"""One surface fold for the whole audit (issue 26, first step of the one-pass checker).

The surface transition of every event (SURF-9's plan: append, splice, or None for an
event that leaves the surface as it is) is computed once and handed to the audits
that fold the surface themselves: the request points' incremental derivation (DER-7)
and the compaction audit's priced surface (MTR-7).  Since step 2 the checker computes
it inside its one loop (:func:`sessionspec.check.fold_loop.run_folds`, one event at a time);
:func:`surface_transitions` is the same fold over a whole log, kept for
tests/check/test_one_pass.py (which ties both to the definition) and ``bench/check_passes``.

The fold is :func:`model.surface.fold_surface`'s own loop (the definition, SURF-1 and
SURF-10: ``plan_surface_event`` on the nodes so far, then the one ``splice``), keeping the
plans instead of the replacement history; tests/check/test_one_pass.py holds its nodes and its
rejection equal to ``fold_surface``'s on generated and mutated logs.  A plan's indices
name positions in the node list as it was before the event; every consumer keeps its
per-node lists in the same order (the one splice), so the plan fits each of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

from sessionspec.fast.constants import A55
from sessionspec.fast.surface import splice
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, plan_surface_event


@final
@dataclass(frozen=True, slots=True)
class SurfaceTransitions:
    """``plans[i]`` is the surface transition of ``events[i]`` (None: the surface is
    unchanged); ``nodes`` is the surface after the last event (SURF-1)."""

    plans: tuple[SurfacePlan | None, ...]
    nodes: tuple[int, ...]


def surface_transitions(events: Sequence[Event], dialect: Dialect = A55) -> SurfaceTransitions | Rejected:
    """SURF-10's fold of ``events``, each event's plan kept: the first rejection
    (SURF-9's order, as ``fold_surface`` returns it) ends the fold."""
    nodes: list[int] = []
    plans: list[SurfacePlan | None] = []
    for index, event in enumerate(events):
        plan = plan_surface_event(nodes, event, log_view(events, index), dialect)
        if isinstance(plan, Rejected):
            return plan
        plans.append(plan)
        if plan is not None:
            splice(nodes, plan, plan.seq)
    return SurfaceTransitions(plans=tuple(plans), nodes=tuple(nodes))
