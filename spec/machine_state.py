"""The loop machine's state and its turn driver (``spec/machines.py``).

:class:`MachineSession` is what the machine remembers of one session log: the log, the loop instance and
every instance's requests and compositions, the summarizer calls, and how far each invariant has checked.
:class:`MachineState` is the base of the machine: it holds the session, the agent and its contributors,
runs one turn of ``model.loop.run_turn`` (``_turn``) with compact-basic mounted or not, and
absorbs the outcome.  The rules (``spec/machine_rules.py``) and the invariants
(``spec/machine_invariants.py``) build on it; what a run checks is :attr:`MachineState.under_test` and
:attr:`MachineState.checks`, set by ``spec.machines.loop_machine``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import RuleBasedStateMachine

from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    CompactionPlugin,
    Hooks,
    LoopInstance,
    PostStepHook,
    PostStepResult,
    SentRequest,
    StepContext,
    TurnOutcome,
    TurnScript,
    manual_listener,
    new_instance,
    overflow_listener,
    pressure_listener,
    run_turn,
)
from sessionspec.model.meter import measure_state, meter_state
from sessionspec.model.prefix import Contributor
from sessionspec.model.rejected import Rejected
from sessionspec.spec.groundtruth_agent import ECHO_TOOL, PERSONA
from sessionspec.spec.loop_order_properties import listener_keys_win
from sessionspec.spec.loop_properties import interrupted_composition_discarded, steps_closed_before_turn_end
from sessionspec.spec.machine_checks import ALL_CHECKS, MODEL_ALONE, Check, UnderTest
from sessionspec.spec.machine_scripts import ContributorSource
from sessionspec.spec.probes import HeldObjects


@dataclass(slots=True, kw_only=True)
class MachineSession:
    """What the machine remembers of one session log."""

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


class MachineState(RuleBasedStateMachine):
    """The machine's state and turn driver; the rules and invariants are its subclasses' (no rules here)."""

    under_test: ClassVar[UnderTest] = MODEL_ALONE
    checks: ClassVar[frozenset[Check]] = ALL_CHECKS

    def __init__(self) -> None:
        super().__init__()
        self.session = MachineSession()
        self.held = HeldObjects()
        self.agent = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
        self.sources: list[ContributorSource] = []
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
                s.pressure = self.under_test.pressure(self.plugin)
            hooks = Hooks(post_step=manual_listener(self.plugin) if manual else s.pressure,
                          request_error=overflow_listener(self.plugin), after_composition=self.held.remember)
        changes = self.agent.request_config
        with self.under_test.around_turn():
            outcome = run_turn(s.log, s.instance, self._agent(extra), script, hooks=hooks)
        self.held.edit()  # contributors that keep their objects edit them after the turn (PFX-6)
        assert not isinstance(outcome, Rejected), f"the loop model rejected its own turn: {outcome}"
        self._absorb(outcome, before)
        if Check.LISTENER in self.checks:
            problem = listener_keys_win(s.log, outcome.requests, dict(changes))
            assert problem is None, problem

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
        if Check.DISCARD in self.checks:
            problem = interrupted_composition_discarded(outcome, before)
            assert problem is None, problem
        if Check.HEADERS in self.checks:
            problem = steps_closed_before_turn_end(outcome, before)
            assert problem is None, problem

    def _dry_run(self, script: TurnScript, post_step: PostStepHook) -> None:
        """Play ``script`` on the current session with ``post_step`` mounted, keeping nothing (the model is pure)."""
        s = self.session
        instance = new_instance() if s.instance.disposed else s.instance
        run_turn(s.log, instance, self._agent(), script, hooks=Hooks(post_step=post_step))

    def _post_step_total(self, script: TurnScript) -> int | None:
        """The total (MTR-10) that the first post-step of ``script``'s turn measures, or None (none reached)."""
        seen: list[int] = []

        def spy(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
            state = meter_state(events)
            if not seen and not isinstance(state, Rejected):
                seen.append(measure_state(state).total_tokens)
            return PostStepResult()

        self._dry_run(script, spy)
        return seen[0] if seen else None

    def _post_step_appends(self, script: TurnScript, plugin: CompactionPlugin) -> bool:
        """Whether compact-basic's pressure listener (``plugin``) appends anything at the turn's first post-step."""
        appended: list[bool] = []
        listener = pressure_listener(plugin)

        def first(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
            result = listener(events, ctx)
            if not appended:
                appended.append(bool(result.drafts))
            return result

        self._dry_run(script, first)
        return bool(appended and appended[0])

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
