"""The ``agent/session-prefix`` waterfall (PFX), contributors as data.

A contributor is a value, not a callback: its idiom (prepend or append), the
messages it contributes, whether it throws, an optional history message it
``inject()``s while composing, and whether it mutates the object it still holds
after composition.  :func:`compose` evaluates the chain exactly like the real
waterfall: contributor *i* is invoked with ``(seed, next)``, and ``next`` runs
contributor *i+1*, so the chain unwinds innermost-first (PFX-4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, final

from sessionspec.model.jsonval import Json, JsonObject, freeze, thaw
from sessionspec.model.rules import implements


class Idiom(Enum):
    """PFX-4: ``[mine, ...await next()]`` (PREPEND) or ``[...await next(), mine]`` (APPEND)."""

    PREPEND = "prepend"
    APPEND = "append"


class NotComposed(Enum):
    """PFX-1: the per-instance cache before a successful composition."""

    NOT_COMPOSED = "NOT_COMPOSED"


NOT_COMPOSED: Final = NotComposed.NOT_COMPOSED

# PFX-3: the frozen empty seed; the fallback of the waterfall returns it.
EMPTY_SEED: Final[tuple[Json, ...]] = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Contributor:
    """One ``agent/session-prefix`` listener as data.

    ``inject`` is the ``data`` of a ``user/message`` the listener appends via
    ``agent.inject()`` while composing (PFX-8); ``mutate_after`` models a
    listener that edits the object it returned after composition (PFX-6).
    """

    idiom: Idiom
    content: tuple[Json, ...]
    throws: str | None = None
    inject: JsonObject | None = None
    mutate_after: bool = False
    # Q-3 / PFX-13: the messages it returns hold a clonable non-JSON value
    # (``undefined``, a Date, ``-0``); composition does not validate it.  With no
    # message there is nothing to hold it (QF-10).
    lossy: bool = False
    # PFX-4: None for a global listener, else the id of the agent whose scoped listener it is.
    scope: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ContributorFailure:
    """A contributor threw (PFX-12): the turn fails with this message."""

    message: str


@final
@dataclass(slots=True, kw_only=True)
class Composition:
    """The outcome of one waterfall run.

    ``held`` is the live (mutable) list the waterfall returned, i.e. what the
    contributors still reference; ``injects`` are the history appends made while
    composing, in invocation (registration) order.
    """

    held: list[object]
    injects: tuple[JsonObject, ...]
    failure: ContributorFailure | None
    # The objects each mutating contributor still references after returning.
    mutators_own: tuple[list[object], ...] = ()


@implements("PFX-3", "PFX-4", "PFX-13")
def compose(contributors: Sequence[Contributor], agent_id: str | None = None) -> Composition:
    """PFX-3: "The waterfall MUST start from a frozen empty list, and its fallback MUST return that same empty
    seed."
    PFX-4: "Contributors MUST run in registration order as a waterfall."
    PFX-13: "Composition MUST NOT validate prefix content."

    PFX-3/PFX-4: run the waterfall over the frozen empty seed in registration
    order.  "Dispatch goes to global listeners and to the composing agent's own
    scoped listeners, never to other agents' scoped listeners": a contributor
    scoped to another agent than ``agent_id`` is not invoked at all.  "Contributors MUST *return* their contribution" and "the model MUST
    represent a contributor as a function ``(seed, next) → list`` and evaluate
    the chain innermost-first."  A contributor that throws fails the whole
    waterfall (PFX-12); injects made before the throw stay durable.  Content is
    not validated (PFX-13).

    post: __return__.failure is None or __return__.held == []
    post: __return__.failure is not None or len(__return__.held) == sum(len(c.content) for c in contributors if c.scope is None or c.scope == agent_id)
    post: len(__return__.injects) <= sum(1 for c in contributors if c.inject is not None)
    """
    contributors = [c for c in contributors if c.scope is None or c.scope == agent_id]
    injects: list[JsonObject] = []
    owned: list[list[object]] = []

    def run(index: int) -> list[object]:
        if index == len(contributors):
            # The fallback returns the seed itself (a fresh list of nothing).
            return list(EMPTY_SEED)
        c = contributors[index]
        # A listener injects when invoked, before it awaits next().
        if c.inject is not None:
            injects.append(c.inject)
        if c.throws is not None:
            raise _Thrown(c.throws)
        # The contributor returns the objects it holds, not copies: a later
        # mutation by the contributor reaches whatever aliases them (PFX-6).
        mine = [thaw(m) for m in c.content]
        if c.mutate_after:
            owned.append(mine)
        rest = run(index + 1)
        match c.idiom:
            case Idiom.PREPEND:
                return mine + rest
            case Idiom.APPEND:
                return rest + mine

    try:
        held = run(0)
    except _Thrown as thrown:
        return Composition(held=[], injects=tuple(injects), failure=ContributorFailure(message=thrown.message))
    return Composition(held=held, injects=tuple(injects), failure=None, mutators_own=tuple(owned))


class _Thrown(Exception):
    """Internal only: the JS throw inside the waterfall; never escapes :func:`compose`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def frozen_copy(held: Sequence[object]) -> tuple[Json, ...]:
    """PFX-6: "The cached value MUST be a deep, frozen copy of the waterfall's
    result"; objects a contributor still holds cannot affect it."""
    return tuple(freeze(m) for m in held)


def prefix_message(text: str, role: str = "user") -> JsonObject:
    """A prefix message ``{role, content:[{type:"text", text}]}``."""
    block = JsonObject((("type", "text"), ("text", text)))
    return JsonObject((("role", role), ("content", (block,))))
