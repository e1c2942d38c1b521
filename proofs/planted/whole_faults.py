"""Planted loop faults that the issue-18 scenario contracts could not see (issue 29), and their contracts.

Each fault keeps every log and request self-consistent, so reconstructability, freeze (one composition, a
stable logged prefix) and discard (of a not-disposed instance) all hold under it; only the whole-property
contracts of :mod:`proofs.whole` state what it breaks.  Installed by patching, like :mod:`proofs.planted.faults`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from typing import Any

from proofs.planted.faults import _in_loop, _patched
from proofs.scenarios import ContributorShape, Played, Scenario, TurnShape, play
from proofs.whole import discard_whole, freeze_whole, injects_whole, interrupted_in_composition  # noqa: F401
from sessionspec import model
from sessionspec.model.header import EpochHeader, fold_header
from sessionspec.model.jsonval import ABSENT

# discard_whole, freeze_whole and injects_whole are used by the contracts' post: lines.
from sessionspec.model.loop import InterruptKind
from sessionspec.model.loop.events import Draft
from sessionspec.model.loop.script import Window, obj
from sessionspec.model.loop.state import APPEND, Interrupted, Turn, TurnFailed
from sessionspec.model.prefix import NotComposed, frozen_copy


class WholeFault(Enum):
    REUSE_LOGGED_PREFIX = "a new instance reuses the logged messagePrefix instead of recomposing (PFX-1, PFX-2)"
    CACHE_DISPOSED = "a dispose-interrupted composition is cached and counted (PFX-5)"
    DEFERRED_INJECTS = "composition-time injects are appended only once the composition is kept (PFX-8, PFX-12)"


def _reuse_logged_prefix(real: Callable[..., Any]) -> Callable[..., Any]:
    """PFX-1/PFX-2 broken: a fresh instance seeds its cache from the log's latest header."""
    def run_turn(log: Any, instance: Any, agent: Any, script: Any, **kw: Any) -> Any:
        logged = fold_header(list(log), ABSENT)
        if isinstance(instance.prefix, NotComposed) and isinstance(logged, EpochHeader) and logged.message_prefix is not ABSENT:
            instance = replace(instance, prefix=logged.message_prefix)
        return real(log, instance, agent, script, **kw)
    return run_turn


def _cache_disposed(real: Callable[..., Any]) -> Callable[..., Any]:
    """PFX-5 broken for dispose only: the composition is written to the (disposed) instance before the check."""
    def run_turn(log: Any, instance: Any, agent: Any, script: Any, **kw: Any) -> Any:
        outcome = real(log, instance, agent, script, **kw)
        if getattr(outcome, "interrupted_composition", False) and outcome.instance.disposed:
            held = model.prefix.compose(outcome.agent.contributors, outcome.agent.agent_id).held
            outcome = replace(outcome, instance=replace(outcome.instance, prefix=frozen_copy(held)),
                              compositions=outcome.compositions + 1)
        return outcome
    return run_turn


def deferred_injects(t: Turn) -> None:
    """PFX-8 broken: the injects are buffered and appended after the checkpoint, so a throw or an
    interruption loses them."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    comp = model.prefix.compose(t.agent.contributors, t.agent.agent_id)
    if comp.failure is not None:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))
    t.signal(Window.IN_COMPOSITION)
    if t.aborted is not None:
        t.interrupted_composition = True
        raise Interrupted(t.aborted)
    for inject in comp.injects:  # BUG: only a kept composition's injects reach the log
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))
    model.loop.compose.write_cache(t, comp)


@contextmanager
def installed(fault: WholeFault) -> Iterator[None]:
    """Install ``fault`` for the duration of the block (restored on exit)."""
    run = model.loop.run_turn
    match fault:
        case WholeFault.REUSE_LOGGED_PREFIX:
            patches: list[tuple[Any, str, object]] = [(model.loop, "run_turn", _reuse_logged_prefix(run))]
        case WholeFault.CACHE_DISPOSED:
            patches = [(model.loop, "run_turn", _cache_disposed(run))]
        case WholeFault.DEFERRED_INJECTS:
            patches = _in_loop("compose_if_needed", model.loop.compose.compose_if_needed, deferred_injects)
    with _patched(patches):
        yield


# --------------------------------------------------------------------------- the planted contracts


def reuse_logged_prefix(s: Scenario) -> Played:
    """Freeze across instances under WholeFault.REUSE_LOGGED_PREFIX.

    post: freeze_whole(s, __return__) is None
    """
    with installed(WholeFault.REUSE_LOGGED_PREFIX):
        return play(s)


def cache_disposed(c1: ContributorShape | None, c2: ContributorShape | None, kind: InterruptKind,
                   later: TurnShape) -> Played:
    """Discard of every kind under WholeFault.CACHE_DISPOSED.

    post: discard_whole(interrupted_in_composition(c1, c2, kind, later), __return__) is None
    """
    with installed(WholeFault.CACHE_DISPOSED):
        return play(interrupted_in_composition(c1, c2, kind, later))


def deferred_injects_lost(s: Scenario) -> Played:
    """Durable injects under WholeFault.DEFERRED_INJECTS.

    post: injects_whole(s, __return__) is None
    """
    with installed(WholeFault.DEFERRED_INJECTS):
        return play(s)
