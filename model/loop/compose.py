"""LOOP-5 stage 6: compose the session prefix once per instance (PFX-2, PFX-5,
PFX-6, PFX-8, PFX-9, PFX-12, PFX-13)."""

from __future__ import annotations

from dataclasses import replace

from model.jsonval import Json
from model.loop.events import Draft
from model.loop.script import Window, obj
from model.loop.state import APPEND, Interrupted, Turn, TurnFailed
from model.prefix import Composition, NotComposed, compose, frozen_copy
from model.rules import implements


@implements("PFX-2", "PFX-5", "PFX-8", "PFX-12")
def compose_if_needed(t: Turn) -> None:
    """PFX-2: compose "only while the cache is ``NOT_COMPOSED``".  PFX-8: a
    contributor's ``inject()`` joins the history at once (the current boundary).
    PFX-5: the interruption checkpoint sits between the waterfall and the cache
    write, so an interrupted composition is discarded (the next turn recomposes).
    PFX-12: a contributor that throws fails the turn with its message; the
    waterfall never reached its innermost point, where the in-composition
    interruption fires, so that interruption does not fire (docs/conformance.md)."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    comp = compose(t.agent.contributors, t.agent.agent_id)
    for inject in comp.injects:
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))
    if comp.failure is not None:
        # The throw ended the waterfall before its innermost point: the
        # in-composition window is never passed, so its interruption does not fire.
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))
    t.signal(Window.IN_COMPOSITION)
    if t.aborted is not None:
        t.interrupted_composition = True
        raise Interrupted(t.aborted)
    write_cache(t, comp)


@implements("PFX-6")
def write_cache(t: Turn, comp: Composition) -> None:
    """PFX-6: "The cached value MUST be a deep, frozen copy of the waterfall's
    result"; PFX-9: the prefix never enters the log.  PFX-13 / Q-3: the content
    is not validated, so a clonable non-JSON value the dispatched contributors
    returned is cached too (every later header append of the instance fails).
    QF-6: only dispatched contributors return anything: a lossy listener scoped
    to another agent is never called (PFX-4), so it cannot make the header fail.
    QF-10: the non-JSON value sits in a message the contributor returns; one that
    returns no message puts nothing of it into the prefix the header carries."""
    dispatched = [c for c in t.agent.contributors if c.scope is None or c.scope == t.agent.agent_id]
    t.compositions += 1
    t.instance = replace(t.instance, prefix=frozen_copy(comp.held), contributor_refs=comp.mutators_own,
                         prefix_lossy=any(c.lossy and c.content for c in dispatched))


def cached_prefix(t: Turn) -> tuple[Json, ...]:
    """The instance's cached prefix (empty while not composed)."""
    prefix = t.instance.prefix
    return () if isinstance(prefix, NotComposed) else prefix
