"""Stateful Hypothesis machines over the loop model (RULES §16.2).

:func:`loop_machine` builds a ``RuleBasedStateMachine`` that drives
:func:`model.loop.run_turn` through turns, contributor edits, system/tool
changes, cancel/dispose at every window, throwing contributors, tool rounds,
request errors with retry, resumes (new instances) and forks, and checks after
every step the invariants of ``spec/loop_properties.py``:

- RECONSTRUCT  P-INV-1/2: every request equals its rebuild from the log;
- FREEZE       P-PFX-1: one composition per instance, identical prefix, no
               prefix-only change header, contributor mutation never leaks;
- DISCARD      P-PFX-6: an interrupted composition leaves nothing behind;
- CACHE        P-INV-4: requests of an instance append-extend each other;
- HISTORY      P-PFX-8: the prefix is never history;
- HEADERS      P-LOOP-1 and P-LOOP-4/P-LOOP-7 shape checks.

``fault`` selects a deliberately broken model (``tests/test_machine_mutants.py``
proves each invariant catches one).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Final

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from model.jsonval import Json, JsonObject, freeze, js_stringify
from model.log import Event
from model.loop import (
    ECHO_TOOL,
    PERSONA,
    AgentConfig,
    Fault,
    Interrupt,
    InterruptKind,
    LoopInstance,
    Prompt,
    Reply,
    ReplyKind,
    SentRequest,
    Steering,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    Window,
    fork_seed,
    new_instance,
    run_turn,
    text_content,
)
from model.prefix import Contributor, Idiom, prefix_message
from model.rejected import Rejected
from spec.loop_properties import p_inv_1, p_inv_4, p_inv_checker_agrees, p_loop_1, p_loop_4, p_loop_7, p_pfx_1, p_pfx_6, p_pfx_8


class Check(Enum):
    RECONSTRUCT = "P-INV-1"
    FREEZE = "P-PFX-1"
    DISCARD = "P-PFX-6"
    CACHE = "P-INV-4"
    HISTORY = "P-PFX-8"
    HEADERS = "P-LOOP-1"


ALL_CHECKS: Final = frozenset(Check)

SHOUT_TOOL: Final = freeze({"name": "shout", "description": "a second tool",
                            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})


@dataclass(slots=True, kw_only=True)
class _Source:
    """A contributor as the machine manages it: content drifts by version."""

    ident: int
    idiom: Idiom
    version: int = 0
    inject: bool = False
    mutate_after: bool = False
    lossy: bool = False

    def contributor(self) -> Contributor:
        inject = None
        if self.inject:
            inject = JsonObject((("content", text_content(f"injected by c{self.ident}")),
                                 ("source", JsonObject((("kind", "plugin"), ("plugin", f"c{self.ident}"))))))
        return Contributor(idiom=self.idiom, content=(prefix_message(f"<pfx c{self.ident} v{self.version}>"),),
                           inject=inject, mutate_after=self.mutate_after, lossy=self.lossy)


@dataclass(slots=True, kw_only=True)
class _Session:
    log: tuple[Event, ...] = ()
    first_live_seq: int = 0
    instance: LoopInstance = field(default_factory=new_instance)
    instance_starts: list[int] = field(default_factory=lambda: [0])
    requests: list[list[SentRequest]] = field(default_factory=lambda: [[]])
    compositions: list[int] = field(default_factory=lambda: [0])
    checked: int = 0


REPLY_KINDS: Final = st.sampled_from(["text", "reasoning", "empty", "tools", "continue", "inject"])
WINDOWS: Final = st.sampled_from(list(Window))
KINDS: Final = st.sampled_from(list(InterruptKind))


def _replies(kind: str, turn: int) -> tuple[Reply, ...]:
    match kind:
        case "reasoning":
            return (Reply(text=f"answer {turn}", reasoning="thinking"),)
        case "empty":
            return (Reply(kind=ReplyKind.EMPTY),)
        case "tools":
            call = ToolCallSpec(call_id=f"call-{turn}", name="echo", arguments='{"text":"ping"}', result="echo:ping")
            return (Reply(kind=ReplyKind.TOOL_CALLS, text="let me echo", tool_calls=(call,)), Reply(text="done"))
        case "continue":
            return (Reply(text="first", continue_with="keep going"), Reply(text="second"))
        case "inject":
            inject = JsonObject((("content", text_content(f"request inject {turn}")),
                                 ("source", JsonObject((("kind", "plugin"), ("plugin", "req"))))))
            return (Reply(text="one", request_inject=inject, continue_with="again"), Reply(text="two"))
        case _:
            return (Reply(text=f"answer {turn}"),)


def loop_machine(fault: Fault = Fault.NONE, checks: frozenset[Check] = ALL_CHECKS) -> type[RuleBasedStateMachine]:
    """The loop machine class for a model variant and a set of invariants."""

    class LoopMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = _Session()
            self.agent = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
            self.sources: list[_Source] = []
            self.next_ident = 0
            self.turns_sent = 0
            self.contributed: set[Json] = set()

        # ------------------------------------------------------------ helpers

        def _agent(self, extra: tuple[Contributor, ...] = ()) -> AgentConfig:
            contributors = tuple(s.contributor() for s in self.sources) + extra
            for c in contributors:
                self.contributed.update(c.content)
            return replace(self.agent, contributors=contributors)

        def _new_instance(self) -> None:
            s = self.session
            s.instance = new_instance()
            s.instance_starts.append(len(s.log))
            s.requests.append([])
            s.compositions.append(0)

        def _turn(self, script: TurnScript, extra: tuple[Contributor, ...] = ()) -> None:
            s = self.session
            if s.instance.disposed:
                # Disposal ended the instance: the next send is a new instance.
                self._new_instance()
            before = len(s.log)
            outcome = run_turn(s.log, s.instance, self._agent(extra), script, fault=fault)
            assert not isinstance(outcome, Rejected), f"the loop model rejected its own turn: {outcome}"
            self._absorb(outcome, before)

        def _absorb(self, outcome: TurnOutcome, before: int) -> None:
            s = self.session
            s.log, s.instance = outcome.log, outcome.instance
            self.agent = replace(outcome.agent, contributors=())
            s.requests[-1].extend(outcome.requests)
            s.compositions[-1] += outcome.compositions
            self.turns_sent += 1
            if Check.DISCARD in checks:
                problem = p_pfx_6(outcome, before)
                assert problem is None, problem
            if Check.HEADERS in checks:
                problem = p_loop_4(outcome, before)
                assert problem is None, problem

        def teardown(self) -> None:
            # Steer generation towards long instances and many instances (deep states);
            # target() may be called once per label per run, hence here.
            s = self.session
            if not currently_in_test_context():
                # A hand-driven machine (regression tests) has nothing to steer.
                super().teardown()
                return
            target(float(max(len(r) for r in s.requests)), label="requests in one instance")
            target(float(len(s.instance_starts)), label="instances")
            super().teardown()

        # ------------------------------------------------------------ rules

        @rule(kind=REPLY_KINDS)
        def send_turn(self, kind: str) -> None:
            n = self.turns_sent
            steering = (Steering(content=text_content(f"steer {n}")),) if kind == "continue" else ()
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=_replies(kind, n),
                                  steering=steering))

        @rule(idiom=st.sampled_from(list(Idiom)), inject=st.booleans(), mutate_after=st.booleans())
        def add_contributor(self, idiom: Idiom, inject: bool, mutate_after: bool) -> None:
            self.sources.append(_Source(ident=self.next_ident, idiom=idiom, inject=inject, mutate_after=mutate_after))
            self.next_ident += 1

        @rule()
        def add_lossy_contributor(self) -> None:
            """Q-3 (rare, own rule): a contribution holding a non-JSON value."""
            self.sources.append(_Source(ident=self.next_ident, idiom=Idiom.PREPEND, lossy=True))
            self.next_ident += 1

        @precondition(lambda self: bool(self.sources))
        @rule(data=st.data())
        def remove_contributor(self, data: st.DataObject) -> None:
            self.sources.pop(data.draw(st.integers(0, len(self.sources) - 1)))

        @precondition(lambda self: len(self.sources) > 1)
        @rule()
        def reorder_contributors(self) -> None:
            self.sources.reverse()

        @precondition(lambda self: bool(self.sources))
        @rule()
        def drift_contributors(self) -> None:
            for source in self.sources:
                source.version += 1

        @rule(n=st.integers(0, 3))
        def change_system_prompt(self, n: int) -> None:
            self.agent = replace(self.agent, system=PERSONA if n == 0 else f"{PERSONA}\n\nsection {n}")

        @rule(which=st.sampled_from(["none", "echo", "both", "reversed"]))
        def change_tools(self, which: str) -> None:
            tools = {"none": (), "echo": (ECHO_TOOL,), "both": (ECHO_TOOL, SHOUT_TOOL),
                     "reversed": (SHOUT_TOOL, ECHO_TOOL)}[which]
            self.agent = replace(self.agent, tools=tools)

        @rule(temperature=st.sampled_from([None, 0.5, 1]))
        def change_request_listener(self, temperature: float | None) -> None:
            config = JsonObject(()) if temperature is None else JsonObject((("temperature", temperature),))
            self.agent = replace(self.agent, request_config=config)

        @rule(window=WINDOWS, kind=KINDS, step=st.integers(1, 2), chunk=st.integers(0, 3), reply=REPLY_KINDS)
        def interrupted_turn(self, window: Window, kind: InterruptKind, step: int, chunk: int, reply: str) -> None:
            n = self.turns_sent
            interrupt = Interrupt(window=window, kind=kind, step=step, chunk=chunk)
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=_replies(reply, n),
                                  interrupt=interrupt))

        @rule(kind=KINDS)
        def interrupt_in_composition(self, kind: InterruptKind) -> None:
            n = self.turns_sent
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")),
                                  interrupt=Interrupt(window=Window.IN_COMPOSITION, kind=kind)))

        @rule()
        def throwing_contributor_turn(self) -> None:
            n = self.turns_sent
            thrower = Contributor(idiom=Idiom.PREPEND, content=(), throws="contributor exploded")
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}"))), extra=(thrower,))

        @rule(in_band=st.booleans(), retries=st.integers(0, 2), then_fail=st.booleans())
        def request_error_turn(self, in_band: bool, retries: int, then_fail: bool) -> None:
            n = self.turns_sent
            kind = ReplyKind.ERROR_IN_BAND if in_band else ReplyKind.ERROR_THROWN
            replies = tuple(Reply(kind=kind, retry=True, error_code="OVERLOADED") for _ in range(retries))
            final = Reply(kind=kind, retry=False) if then_fail else Reply(text="recovered")
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=replies + (final,)))

        @rule()
        def blocked_prompt(self) -> None:
            n = self.turns_sent
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"forbidden {n}"), block_reason="policy")))

        @rule()
        def resume(self) -> None:
            self._new_instance()

        @precondition(lambda self: any(e.type == "turn/end" for e in self.session.log))
        @rule()
        def fork(self) -> None:
            seed = fork_seed(self.session.log)
            self.session = _Session(log=seed, first_live_seq=len(seed), instance_starts=[len(seed)])

        # ------------------------------------------------------------ invariants

        @invariant()
        def reconstructable(self) -> None:
            if Check.RECONSTRUCT not in checks:
                return
            s = self.session
            flat = [r for rs in s.requests for r in rs]
            problem = p_inv_1(s.log, flat[s.checked:]) or p_inv_checker_agrees(s.log, flat, s.first_live_seq)
            s.checked = len(flat)
            assert problem is None, problem

        @invariant()
        def frozen_prefix(self) -> None:
            if Check.FREEZE in checks:
                s = self.session
                problem = p_pfx_1(s.log, s.requests, s.compositions)
                assert problem is None, problem

        @invariant()
        def cache_stable(self) -> None:
            if Check.CACHE in checks:
                problem = p_inv_4(self.session.log, self.session.requests)
                assert problem is None, problem

        @invariant()
        def prefix_not_history(self) -> None:
            if Check.HISTORY in checks:
                problem = p_pfx_8(self.session.log, sorted(self.contributed, key=js_stringify))
                assert problem is None, problem

        @invariant()
        def header_reasons(self) -> None:
            if Check.HEADERS in checks:
                s = self.session
                problem = p_loop_1(s.log, s.instance_starts, s.first_live_seq) or p_loop_7(s.log, s.first_live_seq)
                assert problem is None, problem

    LoopMachine.__name__ = f"LoopMachine_{fault.name}"
    LoopMachine.__qualname__ = LoopMachine.__name__
    return LoopMachine


LoopMachine: Final = loop_machine()
