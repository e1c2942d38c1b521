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
- HEADERS      P-LOOP-1 and P-LOOP-4/P-LOOP-7 shape checks;
- DISPATCH     P-PFX-4: another agent's scoped listeners never contribute.

With compact-basic mounted (an ``initialize`` rule draws a small context window,
with or without the prune service), pressure compaction at post-step, overflow
compaction after a request error (with retry), manual compaction and prunes
happen as the log grows, and the compaction invariants of
``spec/loop_compaction_properties.py`` hold too:

- ENVELOPE     P-CMP-5: no header in a bracket; history ``[checkpoint, retained…]``;
               every later request is ``prefix ++ [checkpoint, …]``;
- PAIRS        P-CMP-3: no compacted range splits a tool call from its result;
- RESUMMARIZE  P-CMP-4: ranges are the surface head, so re-compaction
               re-summarises the previous checkpoint; summarizer input is
               ``prefix ++ shadowed``;
- OVERFLOW     P-CMP-10: out-of-step compaction only after a failed step; retry iff a replace landed;
- PRESSURE     P-CMP-11: in-step compaction after the step's results, before ``step/end``;
- PRUNE        P-PRN-3: prunes inside a turn, content-only.

``under_test`` (an :class:`UnderTest`) names what a run checks besides the
model: a context installed around each turn (the tests install a planted
variant of ``sessionspec.planted.loop`` there, and
``tests/spec/test_machine_mutants.py`` proves each invariant catches one), the
checker's request finder (P-INV-1 via the checker) and the pressure listener
(an incremental meter in front of compact-basic).  They are passed in, so
spec/ depends on the model alone.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Final

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from model.compaction import CONTEXT_WINDOW_EXCEEDED, CompactConfig, SummarizerOutput, SummaryCall, Trigger, compact_if_needed
from model.jsonval import Json, JsonObject, freeze, js_stringify
from model.log import Event
from model.loop import (
    AgentConfig,
    CompactionPlugin,
    Hooks,
    Interrupt,
    InterruptKind,
    LoopInstance,
    PostStepHook,
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
    manual_listener,
    new_instance,
    overflow_listener,
    pressure_listener,
    run_turn,
    text_content,
)
from model.prefix import Contributor, Idiom, prefix_message
from model.prune import PruneConfig
from model.rejected import Rejected
from spec.groundtruth_agent import ECHO_TOOL, PERSONA
from spec.loop_compaction_properties import (
    compaction_leaves_envelope,
    compactions_keep_tool_pairs,
    compactions_resummarize_head,
    overflow_retry_iff_compacted,
    pressure_compaction_closes_step,
    prunes_only_under_pressure,
)
from spec.loop_properties import (
    RequestPointFinder,
    checker_finds_the_sent_requests,
    header_reasons_follow_instances,
    interrupted_composition_discarded,
    other_agents_never_contribute,
    prefix_frozen_per_instance,
    prefix_never_history,
    requests_extend_within_instance,
    requests_rebuild_from_log,
    steps_closed_before_turn_end,
    turn_numbers_continue,
)
from spec.probes import HeldObjects


class Check(Enum):
    RECONSTRUCT = "P-INV-1"
    FREEZE = "P-PFX-1"
    DISCARD = "P-PFX-6"
    CACHE = "P-INV-4"
    HISTORY = "P-PFX-8"
    HEADERS = "P-LOOP-1"
    DISPATCH = "P-PFX-4"
    ENVELOPE = "P-CMP-5"
    PAIRS = "P-CMP-3"
    RESUMMARIZE = "P-CMP-4"
    OVERFLOW = "P-CMP-10"
    PRESSURE = "P-CMP-11"
    PRUNE = "P-PRN-3"


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
    scope: str | None = None

    def contributor(self) -> Contributor:
        inject = None
        if self.inject:
            inject = JsonObject((("content", text_content(f"injected by c{self.ident}")),
                                 ("source", JsonObject((("kind", "plugin"), ("plugin", f"c{self.ident}"))))))
        return Contributor(idiom=self.idiom, content=(prefix_message(f"<pfx c{self.ident} v{self.version}>"),),
                           inject=inject, mutate_after=self.mutate_after, lossy=self.lossy, scope=self.scope)


@dataclass(slots=True, kw_only=True)
class _Session:
    log: tuple[Event, ...] = ()
    first_live_seq: int = 0
    instance: LoopInstance = field(default_factory=new_instance)
    instance_starts: list[int] = field(default_factory=lambda: [0])
    requests: list[list[SentRequest]] = field(default_factory=lambda: [[]])
    compositions: list[int] = field(default_factory=lambda: [0])
    # Summarizer requests as (dispatch length, request), CMP-17.
    summaries: list[tuple[int, JsonObject]] = field(default_factory=list)
    # Successful compositions that followed an interrupted one in the same instance.
    recompositions: int = 0
    interrupted_pending: bool = False
    # Per invariant: the log length at its last run, and how many requests it has seen.
    checked_at: dict[Check, int] = field(default_factory=dict)
    requests_checked: dict[Check, int] = field(default_factory=dict)
    # The instance (count of instances) whose requests CACHE is part-way through.
    cache_instance: int = 0
    # compact-basic's pressure listener with its running meter (one per session log).
    pressure: PostStepHook | None = None


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


# A fake summarizer (CMP-18: the summary comes from outside the model): short,
# and naming how many messages it saw, so a re-summarisation is visible.
def summarize(call: SummaryCall) -> SummarizerOutput:
    text = f"summary of {len(call.input.messages)} messages"
    return SummarizerOutput(summary=text_content(text), provider=call.provider, model=call.model,
                            max_tokens=call.max_tokens)


INSTRUCTION: Final = "Condense the conversation above into a checkpoint."
BIG_PRUNE: Final = PruneConfig(threshold_chars=400, head_chars=100, tail_chars=50)


def compaction_plugin(window: int, prune: bool) -> CompactionPlugin:
    """compact-basic with a small context window (threshold half of it) so compactions happen regularly."""
    return CompactionPlugin(summarizer=summarize, instruction=INSTRUCTION, context_window=window,
                            config=CompactConfig(threshold_ratio=0.5, retain_tokens=window // 8, max_tokens=128),
                            prune=BIG_PRUNE if prune else None)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnderTest:
    """What a machine run checks besides the model (the defaults: the model alone)."""

    name: str = "model"
    # Installed around each turn (a planted variant, in the tests).
    around_turn: Callable[[], AbstractContextManager[object]] = nullcontext
    # The checker's INV-7 pass; None skips "P-INV-1 via the checker".
    find_requests: RequestPointFinder | None = None
    # The post-step pressure listener of compact-basic (an incremental meter may stand in front of it).
    pressure: Callable[[CompactionPlugin], PostStepHook] = pressure_listener


MODEL_ALONE: Final = UnderTest()


def loop_machine(under_test: UnderTest = MODEL_ALONE, checks: frozenset[Check] = ALL_CHECKS) -> type[RuleBasedStateMachine]:
    """The loop machine class for what is under test and a set of invariants."""

    class LoopMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = _Session()
            self.held = HeldObjects()
            self.agent = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
            self.sources: list[_Source] = []
            self.next_ident = 0
            self.turns_sent = 0
            self.contributed: set[Json] = set()
            self.plugin: CompactionPlugin | None = None
            # Contributions of listeners scoped to another agent (PFX-4: never dispatched here).
            self.foreign: set[Json] = set()

        # ------------------------------------------------------------ helpers

        def _agent(self, extra: tuple[Contributor, ...] = ()) -> AgentConfig:
            contributors = tuple(s.contributor() for s in self.sources) + extra
            for c in contributors:
                self.contributed.update(c.content)
                if c.scope is not None and c.scope != self.agent.agent_id:
                    self.foreign.update(c.content)
            return replace(self.agent, contributors=contributors)

        def _new_instance(self) -> None:
            s = self.session
            s.instance = new_instance()
            s.instance_starts.append(len(s.log))
            s.interrupted_pending = False
            s.requests.append([])
            s.compositions.append(0)

        def _turn(self, script: TurnScript, extra: tuple[Contributor, ...] = (), manual: bool = False) -> None:
            s = self.session
            if s.instance.disposed:
                # Disposal ended the instance: the next send is a new instance.
                self._new_instance()
            before = len(s.log)
            hooks = Hooks(after_composition=self.held.remember)
            if self.plugin is not None:
                if s.pressure is None:
                    s.pressure = under_test.pressure(self.plugin)
                hooks = Hooks(post_step=manual_listener(self.plugin) if manual else s.pressure,
                              request_error=overflow_listener(self.plugin), after_composition=self.held.remember)
            with under_test.around_turn():
                outcome = run_turn(s.log, s.instance, self._agent(extra), script, hooks=hooks)
            self.held.edit()  # contributors that keep their objects edit them after the turn (PFX-6)
            assert not isinstance(outcome, Rejected), f"the loop model rejected its own turn: {outcome}"
            self._absorb(outcome, before)

        def _absorb(self, outcome: TurnOutcome, before: int) -> None:
            s = self.session
            s.log, s.instance = outcome.log, outcome.instance
            self.agent = replace(outcome.agent, contributors=())
            s.requests[-1].extend(outcome.requests)
            s.summaries.extend((c.dispatch_len, c.request) for c in outcome.side_calls)
            s.compositions[-1] += outcome.compositions
            if outcome.compositions and s.interrupted_pending:
                s.recompositions += 1
            s.interrupted_pending = outcome.interrupted_composition or (
                s.interrupted_pending and not outcome.compositions)
            self.turns_sent += 1
            if Check.DISCARD in checks:
                problem = interrupted_composition_discarded(outcome, before)
                assert problem is None, problem
            if Check.HEADERS in checks:
                problem = steps_closed_before_turn_end(outcome, before)
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
            target(float(len(s.summaries)), label="compactions")
            # Recompositions after an interrupted composition (PFX-5's stale-cache guard).
            target(float(s.recompositions), label="recompositions after interruption")
            target(float(len(s.log)), label="history length")
            super().teardown()

        # ------------------------------------------------------------ rules

        @initialize(window=st.sampled_from([0, 700, 1200]), prune=st.booleans())
        def mount_compaction(self, window: int, prune: bool) -> None:
            """compact-basic (and maybe the prune service) on the agent; 0: not mounted."""
            self.plugin = compaction_plugin(window, prune) if window else None

        @initialize(cancelled=st.sampled_from([False, False, False, True]))
        def first_send_cancelled_in_composition(self, cancelled: bool) -> None:
            """Sometimes the very first send is cancelled inside the waterfall, so the
            stale-cache guard (PFX-5: the next turn recomposes) is exercised early."""
            if cancelled:
                self.interrupt_in_composition(kind=InterruptKind.CANCEL)

        @initialize(kind=st.sampled_from(["none", "global", "mutating", "own", "another-agent"]))
        def register_initial_contributor(self, kind: str) -> None:
            """A contributor registered before the first send (the usual case): global,
            one that edits its object after composition (PFX-6), scoped to this
            agent, or scoped to another agent (PFX-4)."""
            match kind:
                case "global" | "mutating":
                    self.add_contributor(idiom=Idiom.PREPEND, inject=False, mutate_after=kind == "mutating")
                case "own" | "another-agent":
                    self.add_scoped_contributor(own=kind == "own")

        @rule(size=st.sampled_from([300, 900, 2000]))
        def big_tool_turn(self, size: int) -> None:
            """A tool round with a large result: pressure compaction and prunes."""
            n = self.turns_sent
            call = ToolCallSpec(call_id=f"call-big-{n}", name="echo", arguments='{"text":"dump"}',
                                result=f"dump {n}: " + "lorem ipsum " * (size // 12))
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"dump {n}")), replies=(
                Reply(kind=ReplyKind.TOOL_CALLS, text="dumping", tool_calls=(call,)), Reply(text=f"dumped {n}"))))

        @rule(twice=st.booleans())
        def overflow_turn(self, twice: bool) -> None:
            """CONTEXT_WINDOW_EXCEEDED (CMP-7): recovery compacts outside the step and retries;
            a second overflow exceeds maxOverflowRetries (1) and fails the turn."""
            n = self.turns_sent
            overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED,
                             error_message="context window exceeded")
            replies = (overflow, overflow) if twice else (overflow,)
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n} " + "long " * 40)),
                                  replies=(*replies, Reply(text=f"recovered {n}"))))

        @rule(throw=st.booleans())
        def truncated_or_throwing_step_result(self, throw: bool) -> None:
            """LOOP-11 (rare, own rule): a ``max-tokens`` finish drops the tool calls and
            runs no tools (the turn ends ``max-tokens``); or ``agent/step-result``
            throws: an empty assistant message, then a turn error."""
            n = self.turns_sent
            call = ToolCallSpec(call_id=f"call-{n}", name="echo", arguments='{"text":"x"}', result="echo:x")
            reply = Reply(kind=ReplyKind.TOOL_CALLS, text="cut", tool_calls=(call,), max_tokens=not throw,
                          step_result_error="step-result threw" if throw else None)
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=(reply,)))

        @rule()
        def request_mutating_listener_turn(self) -> None:
            """WIRE-3 (rare, own rule): a stream listener mutates the frozen request; the step fails."""
            n = self.turns_sent
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")),
                                  replies=(Reply(text="never", mutation_error="request is read-only"),)))

        @rule()
        def parallel_tools_with_deferred_context(self) -> None:
            """LOOP-12: two results in model order, then the context one tool deferred."""
            n = self.turns_sent
            deferred = JsonObject((("content", text_content(f"deferred {n}")),
                                   ("source", JsonObject((("kind", "plugin"), ("plugin", "tool"))))))
            calls = (ToolCallSpec(call_id=f"call-{n}-a", name="echo", arguments="{}", result="a", deferred=(deferred,)),
                     ToolCallSpec(call_id=f"call-{n}-b", name="echo", arguments="{}", result="b"))
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=(
                Reply(kind=ReplyKind.TOOL_CALLS, text="both", tool_calls=calls), Reply(text=f"done {n}"))))

        @rule()
        def manual_compaction_turn(self) -> None:
            """A compaction requested by hand, served at post-step (retain 0, CMP-9)."""
            n = self.turns_sent
            self._turn(TurnScript(prompt=Prompt(content=text_content(f"compact now {n}")),
                                  replies=(Reply(text=f"compacted {n}"),)), manual=True)

        @precondition(lambda self: self.plugin is not None)
        @rule()
        def manual_compaction_between_turns(self) -> None:
            """CMP-14: in A55 a compaction needs an open turn; between turns it is
            refused and writes nothing (the idle ``turn: null`` bracket is D08, DIA-3)."""
            s = self.session
            run = compact_if_needed(s.log, summarize, trigger=Trigger.MANUAL)
            assert not isinstance(run, Rejected) and run.events == (), "CMP-14: an idle A55 compaction wrote events"
            assert run.error is None or run.error.rule == "CMP-14", run.error

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

        @rule(own=st.booleans())
        def add_scoped_contributor(self, own: bool) -> None:
            """PFX-4 (rare, own rule): a listener scoped to this agent (runs) or to another agent (never runs)."""
            scope = self.agent.agent_id if own else "another-agent"
            self.sources.append(_Source(ident=self.next_ident, idiom=Idiom.PREPEND, scope=scope))
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

        def _when_grown(self, check: Check, predicate: Callable[[int], str | None]) -> None:
            """Run an enabled invariant when the log grew since its last run (nothing it
            reads changes otherwise); ``predicate`` gets the log length it last saw."""
            s = self.session
            seen = s.checked_at.get(check)
            if check not in checks or seen == len(s.log):
                return
            problem = predicate(seen or 0)
            s.checked_at[check] = len(s.log)
            assert problem is None, problem

        def _new_requests(self, check: Check) -> list[SentRequest]:
            """The requests this invariant has not seen yet (all instances, in order)."""
            s = self.session
            flat = [r for rs in s.requests for r in rs]
            done = s.requests_checked.get(check, 0)
            s.requests_checked[check] = len(flat)
            return flat[done:]

        @invariant()
        def reconstructable(self) -> None:
            s = self.session
            find = under_test.find_requests
            self._when_grown(Check.RECONSTRUCT, lambda since: requests_rebuild_from_log(s.log, self._new_requests(Check.RECONSTRUCT)) or (
                None if find is None else
                checker_finds_the_sent_requests(s.log, [r for rs in s.requests for r in rs], s.first_live_seq, since, find=find)))

        @invariant()
        def frozen_prefix(self) -> None:
            s = self.session
            self._when_grown(Check.FREEZE, lambda _: prefix_frozen_per_instance(s.log, s.requests, s.compositions))

        @invariant()
        def cache_stable(self) -> None:
            # Earlier instances were checked while they were current; the current one
            # from its last checked request on (the pair it forms with the next one).
            s = self.session

            def check(_: int) -> str | None:
                current = s.requests[-1]
                done = s.requests_checked.get(Check.CACHE, 0) if s.cache_instance == len(s.requests) else 0
                s.requests_checked[Check.CACHE], s.cache_instance = len(current), len(s.requests)
                return requests_extend_within_instance(s.log, [current[max(0, done - 1):]])

            self._when_grown(Check.CACHE, check)

        @invariant()
        def prefix_not_history(self) -> None:
            s = self.session
            self._when_grown(Check.HISTORY, lambda _: prefix_never_history(s.log, sorted(self.contributed, key=js_stringify)))

        @invariant()
        def compaction_envelope(self) -> None:
            s = self.session
            self._when_grown(Check.ENVELOPE, lambda since: compaction_leaves_envelope(s.log, self._new_requests(Check.ENVELOPE), since))

        @invariant()
        def compaction_keeps_tool_pairs(self) -> None:
            self._when_grown(Check.PAIRS, lambda since: compactions_keep_tool_pairs(self.session.log, since))

        @invariant()
        def compaction_resummarizes(self) -> None:
            s = self.session
            self._when_grown(Check.RESUMMARIZE, lambda since: compactions_resummarize_head(s.log, s.summaries, since))

        @invariant()
        def overflow_compaction_placed(self) -> None:
            self._when_grown(Check.OVERFLOW, lambda _: overflow_retry_iff_compacted(self.session.log))

        @invariant()
        def pressure_compaction_placed(self) -> None:
            self._when_grown(Check.PRESSURE, lambda _: pressure_compaction_closes_step(self.session.log))

        @invariant()
        def prune_content_only(self) -> None:
            self._when_grown(Check.PRUNE, lambda since: prunes_only_under_pressure(self.session.log, since))

        @invariant()
        def dispatch_scoped(self) -> None:
            self._when_grown(Check.DISPATCH, lambda _: other_agents_never_contribute(self._new_requests(Check.DISPATCH),
                                                               sorted(self.foreign, key=js_stringify)))

        @invariant()
        def header_reasons(self) -> None:
            s = self.session
            self._when_grown(Check.HEADERS, lambda _: header_reasons_follow_instances(s.log, s.instance_starts, s.first_live_seq) or
                             turn_numbers_continue(s.log, s.first_live_seq))

    LoopMachine.__name__ = f"LoopMachine_{under_test.name}"
    LoopMachine.__qualname__ = LoopMachine.__name__
    return LoopMachine


LoopMachine: Final = loop_machine()
