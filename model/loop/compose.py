"""LOOP-5 stage 6: compose the session prefix once per instance (PFX-2), one function per step
of it: injects (PFX-8), a throw (PFX-12), the interruption check (PFX-5), the cache write
(PFX-6, PFX-9, PFX-13)."""

from __future__ import annotations

from dataclasses import replace

from sessionspec.model.jsonval import Json
from sessionspec.model.loop.events import Draft
from sessionspec.model.loop.script import Window, obj
from sessionspec.model.loop.state import APPEND, Interrupted, Turn, TurnFailed
from sessionspec.model.prefix import Composition, NotComposed, compose, frozen_copy
from sessionspec.model.rules import implements


@implements("PFX-2")
def compose_if_needed(t: Turn) -> None:
    """PFX-2: "Composition MUST run only while the cache is `NOT_COMPOSED`, at this point of a step:"

    LOOP-5 stage 6.  The waterfall, then its injects (PFX-8), a throw (PFX-12), the interruption
    check (PFX-5) and the cache write (PFX-6), in that order."""
    if not isinstance(t.instance.prefix, NotComposed):
        return
    comp = compose(t.agent.contributors, t.agent.agent_id)
    append_injects(t, comp)
    fail_if_thrown(t, comp)
    discard_if_interrupted(t)
    write_cache(t, comp)
    if t.hooks.after_composition is not None:
        t.hooks.after_composition(comp)  # the contributors' own later edits (PFX-6's probe)


@implements("PFX-8")
def append_injects(t: Turn, comp: Composition) -> None:
    """PFX-8: "Session appends made while composition runs (for example a contributor calling
    ``agent.inject()``) MUST become part of the **current** step's boundary snapshot, because
    composition comes before the snapshot."  They are appended at once, also when the
    composition then throws or is interrupted."""
    for inject in comp.injects:
        t.append(Draft(type_name="user/message", data=inject, surface_op=APPEND))


@implements("PFX-12")
def fail_if_thrown(t: Turn, comp: Composition) -> None:
    """PFX-12: "A contributor that throws (not an interruption) MUST fail the turn.  The turn ends
    with ``turn/end {kind:"error", step: <pending step number>, message, code?}``. ... The cache
    stays ``NOT_COMPOSED``, and the next turn recomposes."  The throw ended the waterfall before
    its innermost point, so the in-composition interruption window is never passed
    (docs/conformance.md)."""
    if comp.failure is not None:
        raise TurnFailed(obj(("kind", "error"), ("step", t.step), ("message", comp.failure.message)))


@implements("PFX-5")
def discard_if_interrupted(t: Turn) -> None:
    """PFX-5: "If the turn signal is aborted (cancel or dispose) at any point before the cache is
    written, the composition MUST be discarded.  The interruption check sits between the end of
    the waterfall and the cache write." """
    t.signal(Window.IN_COMPOSITION)
    if t.aborted is not None:
        t.interrupted_composition = True
        raise Interrupted(t.aborted)


@implements("PFX-6")
def write_cache(t: Turn, comp: Composition) -> None:
    """PFX-6: "The cached value MUST be a deep, frozen copy of the waterfall's result, made with
    structured-clone semantics."

    PFX-9: the prefix never enters the log.  PFX-13 / Q-3: the content
    is not validated, so a clonable non-JSON value the dispatched contributors
    returned is cached too (every later header append of the instance fails).
    QF-6: only dispatched contributors return anything: a lossy listener scoped
    to another agent is never called (PFX-4), so it cannot make the header fail.
    QF-10: the non-JSON value sits in a message the contributor returns; one that
    returns no message puts nothing of it into the prefix the header carries."""
    dispatched = [c for c in t.agent.contributors if c.scope is None or c.scope == t.agent.agent_id]
    t.compositions += 1
    t.instance = replace(t.instance, prefix=frozen_copy(comp.held),
                         prefix_lossy=any(c.lossy and c.content for c in dispatched))


def cached_prefix(t: Turn) -> tuple[Json, ...]:
    """The instance's cached prefix (empty while not composed)."""
    prefix = t.instance.prefix
    return () if isinstance(prefix, NotComposed) else prefix
