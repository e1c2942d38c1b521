"""Planted compaction and prune faults (issue 29): invisible before, since compaction had only preconditions.

Each is installed by patching the name the model looks up, for one call of the shape contract of
:mod:`proofs.compaction_shapes`, and restored on exit.

- ``cites_short``: the checkpoint replaces ``[start, end]`` but cites one node fewer (CMP-22);
- ``split_tail``: the tool-pair counter of CMP-10 is broken where both the retention walk and the region
  validation read it, so a compaction cuts between a call and its result;
- ``prune_shadowed``: the prune walks every ``tool/result`` of the log, not the surface's, and prunes a
  result that a prune already replaced (PRN-4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from types import ModuleType
from typing import Any

from proofs.compaction_shapes import CompactionShape, compaction_holds, prune_holds
from proofs.skeletons import Skeleton
from sessionspec import model
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

_REAL_REGION = model.compaction.region.run_region
_REAL_PRUNE = model.prune.prune_pass


@contextmanager
def _swapped(patches: Sequence[tuple[ModuleType, str, object]]) -> Iterator[None]:
    saved = [(m, n, getattr(m, n)) for m, n, _ in patches]
    try:
        for m, n, v in patches:
            setattr(m, n, v)
        yield
    finally:
        for m, n, v in reversed(saved):
            setattr(m, n, v)


def region_citing_short(*args: Any, **kwargs: Any) -> Any:
    """CMP-22 broken: the checkpoint cites the replaced range without its last node."""
    outcome = _REAL_REGION(*args, **kwargs)
    if isinstance(outcome, Rejected) or outcome.result is None or len(outcome.result.shadowed_seqs) < 2:
        return outcome
    events = tuple(replace(e, source_event_seqs=e.source_event_seqs[:-1])  # type: ignore[index]
                   if e.seq == outcome.result.checkpoint_seq else e for e in outcome.events)
    return replace(outcome, events=events)


def balanced_everywhere(nodes: Sequence[int], events: Sequence[Event], dialect: Dialect = Dialect.A55) -> tuple[bool, ...]:
    """CMP-10 broken: every cut counts as balanced (the tool-call counter is never read)."""
    return (True,) * (len(nodes) + 1)


def prune_every_result(events: Sequence[Event], config: Any, *, dialect: Dialect = Dialect.A55, time: int = 0,
                       nodes: Sequence[int] | None = None) -> Any:
    """PRN-4 broken: the pass walks every ``tool/result`` event of the log, not the surface's nodes."""
    every = tuple(e.seq for e in events if e.type == "tool/result")
    return _REAL_PRUNE(events, config, dialect=dialect, time=time, nodes=every)


def _bound(name: str, original: Callable[..., Any], value: object) -> list[tuple[ModuleType, str, object]]:
    modules = (model.compaction.region, model.compaction.retention, model.compaction.run, model.prune)
    return [(m, name, value) for m in modules if getattr(m, name, None) is original]


# --------------------------------------------------------------------------- the planted contracts


def cites_short(shape: CompactionShape) -> str | None:
    """compaction_keeps_one_range with :func:`region_citing_short`.

    post: __return__ is None
    """
    with _swapped(_bound("run_region", _REAL_REGION, region_citing_short)):
        return compaction_holds(shape)


def split_tail(shape: CompactionShape) -> str | None:
    """compaction_keeps_one_range with :func:`balanced_everywhere`.

    post: __return__ is None
    """
    real = model.compaction.retention.balanced_cuts
    with _swapped(_bound("balanced_cuts", real, balanced_everywhere)):
        return compaction_holds(shape)


def prune_shadowed(sk: Skeleton) -> str | None:
    """prune_keeps_surface with :func:`prune_every_result`.

    post: __return__ is None
    """
    with _swapped([(model.prune, "prune_pass", prune_every_result)]):
        return prune_holds(sk)
