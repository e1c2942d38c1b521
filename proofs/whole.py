"""Scenario contracts that state the loop's core properties whole (issue 29).

The contracts of :mod:`proofs.scenarios` check what the log and the requests show.  Three kinds of fault
passed them: a new instance that reuses what the log recorded instead of recomposing, a dispose-interrupted
composition whose traces stay in the outcome, and composition-time appends that do not survive a throw or an
interruption.  Here each property is stated from the scenario itself (what the loop was asked to do), not from
what the loop reported about it:

- :func:`freeze_across_instances` (P-PFX-1 whole, PFX-1/2/6): every loop instance that sent a request composed
  exactly once, and every one of its requests starts with exactly the composition of *that instance's*
  contributors (a resumed instance's contributors may contribute something else, ``ContributorShape.resumed``);
- :func:`discard_every_kind` (P-PFX-6 whole, PFX-5, LOOP-15): when the scripted interruption lands inside the
  composition, whatever its kind (cancel, dispose, foreign abort), the outcome says so
  (``interrupted_composition``), counts no composition, caches nothing -- the disposed instance included --,
  sent nothing and ends the turn with the reason of that kind;
- :func:`injects_durable` (PFX-8, PFX-12): every ``inject()`` a dispatched contributor made while composing is
  in the log after the turn, on every exit path (success, a throw, an interruption).
"""

from __future__ import annotations

from collections.abc import Sequence

from proofs.scenarios import (
    ContributorShape,
    Played,
    ReplyChoice,
    ReplyShape,
    Scenario,
    Scope,
    TurnShape,
    by_instance,
    play,
)
from sessionspec.model.jsonval import get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import InterruptKind, TurnOutcome, Window
from sessionspec.model.prefix import NotComposed, prefix_message

# The end reason of a turn interrupted by each kind (LOOP-15, Q-30).
END_KIND = {InterruptKind.CANCEL: "aborted", InterruptKind.DISPOSE: "disposed", InterruptKind.FOREIGN: "error"}


def shapes_of(s: Scenario) -> list[ContributorShape]:
    return [c for c in (s.c1, s.c2) if c is not None]


def expected_prefix(s: Scenario, instance: int) -> tuple[str, ...]:
    """PFX-3/PFX-4 from the shapes, independently of ``compose``: the dispatched contributors of ``instance``
    (global or this agent's), prepends in registration order then appends in reverse, as JSON texts."""
    own = [(i, c) for i, c in enumerate(shapes_of(s), 1) if c.scope is not Scope.OTHER]

    def text(i: int, c: ContributorShape) -> str:
        chosen = c.text if instance == 0 or c.resumed is None else c.resumed
        return js_stringify(prefix_message(f"{chosen.value} {i}"))

    first = [text(i, c) for i, c in own if c.idiom.value == "prepend"]
    last = [text(i, c) for i, c in reversed(own) if c.idiom.value == "append"]
    return tuple(first + last)


def composed_before(p: Played, turn: int) -> bool:
    """Whether the instance of turn ``turn`` (0-based) had its prefix cached when the turn started."""
    if turn == 0 or p.instances[turn] != p.instances[turn - 1]:
        return False
    return not isinstance(p.outcomes[turn - 1].instance.prefix, NotComposed)


def composition_attempted(s: Scenario, shape: TurnShape, p: Played, turn: int) -> bool:
    """The turn reached LOOP-5 stage 6 with nothing cached: no interruption before it in step 1."""
    if composed_before(p, turn):
        return False
    early = (Window.AFTER_TURN_START, Window.AFTER_PROMPT_SUBMIT)
    if shape.interrupt in early or (shape.interrupt is Window.AFTER_ASSEMBLY and not shape.interrupt_in_step_2):
        return False
    return True


def any_throws(s: Scenario) -> bool:
    return any(c.throws for c in shapes_of(s) if c.scope is not Scope.OTHER)


def freeze_whole(s: Scenario, p: Played) -> str | None:
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    grouped, compositions = by_instance(p)
    for number, (requests, count) in enumerate(zip(grouped, compositions)):
        if requests and count != 1:
            return f"P-PFX-1: instance {number} sent requests after {count} compositions (a new instance composes once)"
        expected = expected_prefix(s, number)
        for sent in requests:
            head = tuple(js_stringify(m) for m in sent.request.messages[: len(expected)])
            if head != expected:
                return (f"P-PFX-1: the request of turn {sent.turn} step {sent.step} does not start with the "
                        f"composition of instance {number}'s contributors")
    return None


def discard_whole(s: Scenario, p: Played) -> str | None:
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    for turn, (shape, outcome) in enumerate(zip((s.t1, s.t2), p.outcomes)):
        expected = (shape.interrupt is Window.IN_COMPOSITION and not shape.interrupt_in_step_2
                    and composition_attempted(s, shape, p, turn) and not any_throws(s))
        if outcome.interrupted_composition != expected:
            return (f"P-PFX-6: turn {turn + 1}: interrupted_composition is {outcome.interrupted_composition}, "
                    f"the scenario interrupts the composition: {expected}")
        if expected:
            failed = discarded(outcome, shape.interrupt_kind)
            if failed is not None:
                return f"P-PFX-6: turn {turn + 1} ({shape.interrupt_kind.name}): {failed}"
    return None


def discarded(outcome: TurnOutcome, kind: InterruptKind) -> str | None:
    """What an interrupted composition of ``kind`` leaves in the outcome."""
    if outcome.compositions != 0:
        return f"counted {outcome.compositions} compositions"
    if not isinstance(outcome.instance.prefix, NotComposed):
        return "the composition was cached"
    if outcome.requests:
        return "a request was sent"
    if outcome.instance.disposed != (kind is InterruptKind.DISPOSE):
        return f"the instance is {'' if outcome.instance.disposed else 'not '}disposed"
    if get(outcome.end_reason, "kind") != END_KIND[kind]:
        return f"the turn ended {get(outcome.end_reason, 'kind')}, not {END_KIND[kind]}"
    return None


def expected_injects(s: Scenario) -> list[str]:
    """The inject texts a composition appends: dispatched contributors in registration order, up to and
    including the first that throws (it injects before it throws, PFX-12)."""
    texts: list[str] = []
    for i, c in enumerate(shapes_of(s), 1):
        if c.scope is Scope.OTHER:
            continue
        if c.inject:
            texts.append(f"inject {i}")
        if c.throws:
            break
    return texts


def user_texts(events: Sequence[Event]) -> list[str]:
    out: list[str] = []
    for event in events:
        if event.type == "user/message":
            content = get(event.data, "content")
            if isinstance(content, tuple):
                out.extend(str(get(b, "text")) for b in content)
    return out


def injects_whole(s: Scenario, p: Played) -> str | None:
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    ends = [*p.befores[1:], len(p.log)]
    for turn, (shape, before, end) in enumerate(zip((s.t1, s.t2), p.befores, ends)):
        if not composition_attempted(s, shape, p, turn):
            continue
        written = user_texts(p.log[before:end])
        for text in expected_injects(s):
            if text not in written:
                return f"PFX-8: turn {turn + 1}: the composition's inject {text!r} is not in the log"
    return None


# --------------------------------------------------------------------------- the contracts (CrossHair targets)


def freeze_across_instances(s: Scenario) -> Played:
    """P-PFX-1 whole (PFX-1, PFX-2, PFX-6): each instance composes once, from its own contributors.

    post: freeze_whole(s, __return__) is None
    """
    return play(s)


def interrupted_in_composition(c1: ContributorShape | None, c2: ContributorShape | None, kind: InterruptKind,
                               later: TurnShape) -> Scenario:
    """The scenario whose first turn is interrupted (``kind``) inside the composition; ``later`` is any turn."""
    first = TurnShape(ReplyShape(ReplyChoice.TEXT, False, False), None, Window.IN_COMPOSITION, kind, False, False)
    return Scenario(c1, c2, first, later)


def discard_every_kind(c1: ContributorShape | None, c2: ContributorShape | None, kind: InterruptKind,
                       later: TurnShape) -> Played:
    """P-PFX-6 whole (PFX-5, LOOP-15): an interrupted composition of any kind leaves nothing, visibly.
    The first turn is always interrupted inside the composition (the search goes to the kinds and to
    what follows, not to finding the window); the second is any turn.

    post: discard_whole(interrupted_in_composition(c1, c2, kind, later), __return__) is None
    """
    return play(interrupted_in_composition(c1, c2, kind, later))


def injects_durable(s: Scenario) -> Played:
    """PFX-8, PFX-12: composition-time appends stay in the log on every exit path.

    post: injects_whole(s, __return__) is None
    """
    return play(s)
