"""Scenario-shape contracts: the three properties the model exists for, through the REAL loop.

CrossHair builds the inputs natively: :class:`Scenario` is a frozen dataclass of
Enums, bools and optional slots (never a length precondition: a fixed number of
optional slots), which :func:`play` materialises into real model inputs
(contributors, agent, turn scripts) and runs through ``model.loop.run_turn``
two turns long.  The postconditions are the property predicates of
``spec/loop_properties.py``; the symbolic search is over scenarios, the code
under test is not abstracted.  Texts are concrete (JSON serialisation of
symbolic strings costs 10-25 s a path and finds nothing more here).

- :func:`reconstructability`: P-INV-1/P-INV-2 (every request = prefix ++
  derivation before its ``step/start``, scalars from the header in force), both
  against ``rebuild_request_at`` and against the checker's ``request_points``.
- :func:`freeze`: P-PFX-1 (one composition per instance, the prefix never
  changes within an instance) and P-PFX-4 (no other agent's scoped listener).
- :func:`discard`: P-PFX-6 (an interrupted composition is never cached and
  reaches no model) and "the next turn of that instance recomposes".

Planted loop faults for these contracts live in ``proofs/planted/``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

import sessionspec.model.loop as loop
from proofs.scenario_choices import LISTENED, ListenerChoice, ToolsChoice, tools_of
from sessionspec import model
from sessionspec.fast.request_points import request_points
from sessionspec.model.header import EpochHeader, canonical
from sessionspec.model.jsonval import ABSENT, Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    Interrupt,
    InterruptKind,
    Prompt,
    Reply,
    ReplyKind,
    SentRequest,
    Steering,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    Window,
    text_content,
)
from sessionspec.model.prefix import Composition, Contributor, Idiom, prefix_message
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import Request
from sessionspec.spec.loop_order_properties import listener_keys_win, steering_in_queue_order
from sessionspec.spec.loop_properties import (
    checker_finds_the_sent_requests,
    interrupted_composition_discarded,
    other_agents_never_contribute,
    prefix_frozen_per_instance,
    requests_rebuild_from_log,
)
from sessionspec.spec.probes import HeldObjects

AGENT_ID = "agent"


class Text(Enum):
    """The concrete texts a contributor can contribute."""

    ALPHA = "alpha"
    BETA = "beta"


class Scope(Enum):
    """PFX-4: a global listener, this agent's scoped listener, or another agent's."""

    GLOBAL = "global"
    OWN = "own"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class ContributorShape:
    idiom: Idiom
    text: Text
    inject: bool
    mutate_after: bool
    throws: bool
    scope: Scope
    # What the contributor contributes on a later loop instance (a resumed process composes anew;
    # None: the same as before).  Makes "recomposed on resume" observable (issue 29).
    resumed: Text | None = None


class Size(Enum):
    NONE = 0
    ONE = 1
    TWO = 2


class ReplyChoice(Enum):
    TEXT = "text"
    TOOL_CALL = "tool call"  # the loop runs the tool and takes another step
    ERROR_RETRY = "request error, retried"
    ERROR_FAIL = "request error, turn fails"
    EMPTY = "empty"


@dataclass(frozen=True, slots=True)
class ReplyShape:
    kind: ReplyChoice
    request_inject: bool  # an inject() during agent/request: joins the NEXT request (LOOP-6)
    system_after: bool  # the assembled system prompt changes while the tools run (a change header)


@dataclass(frozen=True, slots=True)
class TurnShape:
    first: ReplyShape
    second: ReplyShape | None
    interrupt: Window | None
    interrupt_kind: InterruptKind
    interrupt_in_step_2: bool
    new_instance: bool  # the turn runs on a new loop instance (a resume)
    steering: Size = Size.NONE  # steering items queued for the turn (issue 43), drained first-in first-out


@dataclass(frozen=True, slots=True)
class Scenario:
    c1: ContributorShape | None
    c2: ContributorShape | None
    t1: TurnShape
    t2: TurnShape
    listener: ListenerChoice = ListenerChoice.NONE
    tools: ToolsChoice = ToolsChoice.NONE


@dataclass(frozen=True, slots=True)
class Played:
    """What two turns of the loop produced; ``instances[i]`` numbers the instance of turn ``i``."""

    log: tuple[Event, ...]
    outcomes: tuple[TurnOutcome, ...]
    befores: tuple[int, ...]
    instances: tuple[int, ...]
    foreign: tuple[Json, ...]
    rejected: Rejected | None


def contributor(shape: ContributorShape, index: int, instance: int = 0) -> Contributor:
    """The contributor of ``shape`` as loop instance ``instance`` sees it (its ``resumed`` text after the first)."""
    text = shape.text if instance == 0 or shape.resumed is None else shape.resumed
    scope = {Scope.GLOBAL: None, Scope.OWN: AGENT_ID, Scope.OTHER: "other-agent"}[shape.scope]
    inject = None
    if shape.inject:
        inject = JsonObject((("content", text_content(f"inject {index}")), ("source", JsonObject((("kind", "user"),)))))
    return Contributor(
        idiom=shape.idiom,
        content=(prefix_message(f"{text.value} {index}"),),
        throws=f"contributor {index} failed" if shape.throws else None,
        inject=inject,
        mutate_after=shape.mutate_after,
        scope=scope,
    )


def reply(shape: ReplyShape, turn: int, step: int) -> Reply:
    inject = None
    if shape.request_inject:
        inject = JsonObject((("content", text_content(f"late context {turn}.{step}")),
                             ("source", JsonObject((("kind", "user"),)))))
    system_after = f"system after {turn}.{step}" if shape.system_after else None
    match shape.kind:
        case ReplyChoice.TEXT:
            return Reply(text=f"answer {turn}.{step}", text_chunks=(f"answer {turn}.{step}",),
                         request_inject=inject, system_after=system_after)
        case ReplyChoice.TOOL_CALL:
            call = ToolCallSpec(call_id=f"call-{turn}-{step}", name="echo", arguments="{}", result=f"result {turn}.{step}")
            return Reply(kind=ReplyKind.TOOL_CALLS, text="", tool_calls=(call,), request_inject=inject,
                         system_after=system_after)
        case ReplyChoice.ERROR_RETRY:
            return Reply(kind=ReplyKind.ERROR_THROWN, retry=True, request_inject=inject, system_after=system_after)
        case ReplyChoice.ERROR_FAIL:
            return Reply(kind=ReplyKind.ERROR_THROWN, request_inject=inject, system_after=system_after)
        case ReplyChoice.EMPTY:
            return Reply(kind=ReplyKind.EMPTY, request_inject=inject, system_after=system_after)


def script(shape: TurnShape, turn: int) -> TurnScript:
    replies = (reply(shape.first, turn, 1),) + (() if shape.second is None else (reply(shape.second, turn, 2),))
    interrupt = None
    if shape.interrupt is not None:
        interrupt = Interrupt(window=shape.interrupt, kind=shape.interrupt_kind, step=2 if shape.interrupt_in_step_2 else 1)
    steering = tuple(Steering(content=text_content(f"steer {turn}.{i}")) for i in range(shape.steering.value))
    return TurnScript(prompt=Prompt(content=text_content(f"prompt {turn}")), replies=replies, interrupt=interrupt,
                      steering=steering)


def play(s: Scenario) -> Played:
    """Materialise the scenario and run it through the real loop (``model.loop.run_turn``), two turns."""
    shapes = [c for c in (s.c1, s.c2) if c is not None]
    contributors = tuple(contributor(c, i) for i, c in enumerate(shapes, 1))
    # Another agent's contributions, on the first instance and on any later one.
    foreign = tuple(m for i, shape in enumerate(shapes, 1) if shape.scope is Scope.OTHER
                    for n in (0, 1) for m in contributor(shape, i, n).content)
    agent = AgentConfig(system="system", tools=tools_of(s.tools, 1), contributors=contributors, agent_id=AGENT_ID,
                        request_config=LISTENED[s.listener])
    log: tuple[Event, ...] = ()
    instance = loop.new_instance()
    number = 0
    outcomes: list[TurnOutcome] = []
    befores: list[int] = []
    instances: list[int] = []
    # Contributors that keep their objects edit them as soon as the composition is cached (PFX-6): an
    # aliasing cache (proofs.planted.faults NO_CLONE re-reads the live objects when run_turn returns)
    # then shows the edit in the next turn's requests, within the scenario's two turns.
    held = HeldObjects()

    def edit_after_composition(comp: Composition) -> None:
        held.remember(comp)
        held.edit()

    for turn, shape in enumerate((s.t1, s.t2), 1):
        if turn > 1 and (shape.new_instance or instance.disposed):
            instance, number = loop.new_instance(), number + 1
            agent = replace(agent, contributors=tuple(contributor(c, i, number) for i, c in enumerate(shapes, 1)))
        agent = replace(agent, tools=tools_of(s.tools, turn))
        outcome = loop.run_turn(log, instance, agent, script(shape, turn), hooks=loop.Hooks(after_composition=edit_after_composition))
        if isinstance(outcome, Rejected):
            return Played(log=log, outcomes=tuple(outcomes), befores=tuple(befores), instances=tuple(instances),
                          foreign=foreign, rejected=outcome)
        befores.append(len(log))
        instances.append(number)
        outcomes.append(outcome)
        log, instance, agent = outcome.log, outcome.instance, outcome.agent
    return Played(log=log, outcomes=tuple(outcomes), befores=tuple(befores), instances=tuple(instances),
                  foreign=foreign, rejected=None)


def requests(p: Played) -> tuple[SentRequest, ...]:
    return tuple(r for o in p.outcomes for r in o.requests)


def by_instance(p: Played) -> tuple[tuple[tuple[SentRequest, ...], ...], tuple[int, ...]]:
    """Requests and successful compositions grouped by loop instance."""
    count = max(p.instances, default=-1) + 1
    grouped = tuple(tuple(r for o, i in zip(p.outcomes, p.instances) if i == n for r in o.requests) for n in range(count))
    compositions = tuple(sum(o.compositions for o, i in zip(p.outcomes, p.instances) if i == n) for n in range(count))
    return grouped, compositions


def inv_1(p: Played) -> str | None:
    """P-INV-1/P-INV-2 against the rebuild and against the checker; a rejected turn is a failure too."""
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    return requests_rebuild_from_log(p.log, requests(p)) or checker_finds_the_sent_requests(p.log, requests(p), find=request_points)


def pfx_1(p: Played) -> str | None:
    """P-PFX-1 (freeze) and P-PFX-4 (scope) over the played instances."""
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    grouped, compositions = by_instance(p)
    return prefix_frozen_per_instance(p.log, grouped, compositions) or other_agents_never_contribute(requests(p), p.foreign)


def discard_holds(p: Played) -> str | None:
    """P-PFX-6 for every turn, and the next turn of the same instance recomposes (PFX-5)."""
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    for outcome, before in zip(p.outcomes, p.befores):
        failed = interrupted_composition_discarded(outcome, before)
        if failed is not None:
            return failed
    for (a, b), (ia, ib) in zip(zip(p.outcomes, p.outcomes[1:]), zip(p.instances, p.instances[1:])):
        if a.interrupted_composition and ia == ib and b.requests and b.compositions != 1:
            return "PFX-5: the turn after an interrupted composition did not recompose"
    return None


# --------------------------------------------------------------------------- the contracts (CrossHair targets)


def reconstructability(s: Scenario) -> Played:
    """P-INV-1/P-INV-2 (INV-3, INV-5): every request the loop sent is rebuilt from the log.

    post: inv_1(__return__) is None
    """
    return play(s)


def freeze(s: Scenario) -> Played:
    """P-PFX-1 (PFX-6/7/15) and P-PFX-4: the prefix is composed once per instance and never changes.

    post: pfx_1(__return__) is None
    """
    return play(s)


def discard(s: Scenario) -> Played:
    """P-PFX-6 (PFX-5): an interrupted composition is never cached; the next turn recomposes.

    post: discard_holds(__return__) is None
    """
    return play(s)



def order_holds(p: Played, s: Scenario) -> str | None:
    """LOOP-13 (steering first-in first-out) and LOOP-7/8 (the listener's keys win over the seed's)."""
    if p.rejected is not None:
        return f"the loop rejected a turn: {p.rejected}"
    return steering_in_queue_order(p.log) or listener_keys_win(p.log, requests(p), dict(LISTENED[s.listener]))


def orders(s: Scenario) -> Played:
    """Issue 43: steering drains in queue order and the request listener's keys win, with the seed's own keys.

    post: order_holds(__return__, s) is None
    """
    return play(s)


# --------------------------------------------------------------------------- smaller shape contracts


def contributors_of(shapes: tuple[ContributorShape | None, ...]) -> tuple[Contributor, ...]:
    return tuple(contributor(c, i) for i, c in enumerate((c for c in shapes if c is not None), 1))


def composition(c1: ContributorShape | None, c2: ContributorShape | None, c3: ContributorShape | None) -> Composition:
    """PFX-3/4/12 on contributor shapes: ``model.prefix.compose``'s own contract, over scenario-built contributors.

    post: __return__.failure is None or __return__.held == []
    post: __return__.failure is not None or len(__return__.held) == sum(1 for c in contributors_of((c1, c2, c3)) if c.scope in (None, AGENT_ID))
    post: __return__.failure is not None or [m["content"][0]["text"] for m in __return__.held] == expected_texts((c1, c2, c3))
    """
    return model.prefix.compose(contributors_of((c1, c2, c3)), AGENT_ID)


def expected_texts(shapes: tuple[ContributorShape | None, ...]) -> list[str]:
    """PFX-4 innermost-first, independently of compose: prepends in registration order, then appends reversed."""
    own = [(i, c) for i, c in enumerate((c for c in shapes if c is not None), 1) if c.scope is not Scope.OTHER]
    first = [f"{c.text.value} {i}" for i, c in own if c.idiom is Idiom.PREPEND]
    last = [f"{c.text.value} {i}" for i, c in reversed(own) if c.idiom is Idiom.APPEND]
    return first + last


def header_of_shape(prefix: Size, system: bool, tools: bool, temperature: bool) -> EpochHeader:
    config = JsonObject((("provider", "mock"), ("model", "mock-1"), *((("temperature", 0.5),) if temperature else ())))
    messages = tuple(prefix_message(f"prefix {i}") for i in range(prefix.value))
    return canonical(EpochHeader(config=config, system="system" if system else ABSENT,
                                 tools=(JsonObject((("name", "echo"),)),) if tools else ABSENT,
                                 message_prefix=messages if messages else ABSENT))


def request_of_shape(prefix: Size, history: Size, system: bool, tools: bool, temperature: bool) -> Request:
    """WIRE-1/2, PFX-11 on header and history shapes: ``model.wire.build_request``'s contract, over built values.

    post: __return__.messages == prefix_of(prefix) + history_of(history)
    post: __return__.system == ("system" if system else ABSENT) and (__return__.tools is ABSENT) == (not tools)
    post: __return__.provider == "mock" and __return__.temperature == (0.5 if temperature else ABSENT)
    """
    return model.wire.build_request(header_of_shape(prefix, system, tools, temperature), history_of(history))


def prefix_of(prefix: Size) -> tuple[Json, ...]:
    """The prefix messages a header of this shape carries (PFX-10: none when empty)."""
    return tuple(prefix_message(f"prefix {i}") for i in range(prefix.value))


def history_of(history: Size) -> tuple[Json, ...]:
    return tuple(JsonObject((("role", "user"), ("content", text_content(f"message {i}")))) for i in range(history.value))
