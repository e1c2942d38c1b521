"""The loop machine's rules (``spec/machines.py``): what happens to a session between two checks.

Turns of every kind (text, tools, reasoning, steering, request injections, interruptions at every
window, request errors with retry, blocked prompts, throwing contributors, truncated or throwing step
results, a request-mutating listener, parallel tools with deferred context), contributor edits, system,
tool and request-config changes, resumes (new instances) and forks, and with compact-basic mounted
pressure, overflow and manual compactions and prunes.  Issue 43: several steering items per turn (also
re-queued by a blocked prompt), a request listener that sets any key (the seed's too), a post-step total
landing exactly on the pressure threshold, one off, and between the floor and the ceiling of a fractional
budget, tool results of exactly the prune threshold and one off, and tool lists that change in place.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from sessionspec.model.compaction import CONTEXT_WINDOW_EXCEEDED, CompactConfig, Trigger, compact_if_needed
from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.loop import (
    Interrupt,
    InterruptKind,
    Prompt,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    Window,
    fork_seed,
    text_content,
)
from sessionspec.model.prefix import Contributor, Idiom
from sessionspec.model.rejected import Rejected
from sessionspec.spec.groundtruth_agent import ECHO_TOOL, PERSONA
from sessionspec.spec.machine_checks import Check
from sessionspec.spec.machine_scripts import (
    KINDS,
    LISTENER_CHANGES,
    REPLY_KINDS,
    SHOUT_TOOL,
    WINDOWS,
    ContributorSource,
    compaction_plugin,
    replies_of,
    summarize,
)
from sessionspec.spec.machine_state import MachineSession, MachineState


class LoopRules(MachineState):
    """The rules of the loop machine."""

    @initialize(window=st.sampled_from([0, 700, 1200, 701, 1203]), prune=st.booleans(), ratio=st.sampled_from([0.5, 0.7]))
    def mount_compaction(self, window: int, prune: bool, ratio: float = 0.5) -> None:
        """compact-basic (and maybe the prune service) on the agent; 0: not mounted.  An odd window makes the
        budgets fractional (CMP-4 floors ``cw x ratio``)."""
        self.plugin = compaction_plugin(window, prune, ratio) if window else None

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

    @rule(count=st.integers(2, 4), kind=REPLY_KINDS, blocked=st.sampled_from([False, False, True]))
    def steering_turn(self, count: int, kind: str, blocked: bool) -> None:
        """LOOP-13: several steering items queued for one turn, drained first-in first-out; with a blocked
        prompt they are re-queued and each runs as the next turn's prompt, in order (QF-4)."""
        n = self.turns_sent
        steering = tuple(Steering(content=text_content(f"steer {n}.{i}")) for i in range(count))
        prompt = Prompt(content=text_content(f"prompt {n}"), block_reason="policy" if blocked else None)
        self._turn(TurnScript(prompt=prompt, replies=replies_of(kind, n) + replies_of("text", n + 1), steering=steering))

    @precondition(lambda self: self.plugin is not None)
    @rule(where=st.sampled_from(["below", "at", "between", "above"]))
    def pressure_at_threshold_turn(self, where: str) -> None:
        """CMP-4/CMP-8 at the boundary: the window is chosen so that the threshold ``floor(cw x 0.5)`` is one
        above the total the first post-step measures (``below``), equal to it (``at``), equal to it with
        ``cw x 0.5`` fractional (``between``: a ceiling would be one above), or one below (``above``).  At the
        threshold compact-basic acts exactly as above it (P-CMP-9: ``total < threshold`` alone declines)."""
        n = self.turns_sent
        script = TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=(Reply(text=f"answer {n}"),))
        total = self._post_step_total(script)
        assert self.plugin is not None
        if total is None or total < 16:
            self._turn(script)
            return
        window = {"below": 2 * total + 2, "at": 2 * total, "between": 2 * total + 1, "above": 2 * total - 2}[where]
        config = CompactConfig(threshold_ratio=0.5, retain_tokens=total // 4, max_tokens=128)
        # What compact-basic does one below the threshold (the reference: the model, outside the turn's context).
        over = where != "below" and self._post_step_appends(script, replace(self.plugin, context_window=2 * total - 2, config=config))
        self.plugin = replace(self.plugin, context_window=window, config=config)
        self.session.pressure = None
        before = len(self.session.log)
        self._turn(script)
        acted = any(e.type == "compact/start" or (e.type == "tool/result" and e.surface_op != "append")
                    for e in self.session.log[before:])
        if Check.PRESSURE_GATE in self.checks:
            assert acted == over, (f"P-CMP-9: the first post-step measured {total} tokens against the threshold "
                                   f"floor({window} x 0.5): compact-basic {'acted' if acted else 'declined'}; "
                                   f"{'below the threshold it must decline' if where == 'below' else 'at it, it must act as one below it'}")

    @precondition(lambda self: self.plugin is not None and self.plugin.prune is not None)
    @rule(offset=st.sampled_from([-1, 0, 1]))
    def tool_result_at_prune_threshold(self, offset: int) -> None:
        """PRN-3 at the boundary: a tool result of ``thresholdChars`` code points, or one fewer or more."""
        assert self.plugin is not None and self.plugin.prune is not None
        n = self.turns_sent
        size = self.plugin.prune.threshold_chars + offset
        call = ToolCallSpec(call_id=f"call-edge-{n}", name="echo", arguments='{"text":"edge"}', result=(f"edge {n} " * size)[:size])
        self._turn(TurnScript(prompt=Prompt(content=text_content(f"edge {n}")), replies=(
            Reply(kind=ReplyKind.TOOL_CALLS, text="sizing", tool_calls=(call,)), Reply(text=f"sized {n}"))))

    @rule(kind=REPLY_KINDS)
    def send_turn(self, kind: str) -> None:
        n = self.turns_sent
        steering = (Steering(content=text_content(f"steer {n}")),) if kind == "continue" else ()
        self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=replies_of(kind, n),
                              steering=steering))

    @rule(idiom=st.sampled_from(list(Idiom)), inject=st.booleans(), mutate_after=st.booleans())
    def add_contributor(self, idiom: Idiom, inject: bool, mutate_after: bool) -> None:
        self.sources.append(ContributorSource(ident=self.next_ident, idiom=idiom, inject=inject, mutate_after=mutate_after))
        self.next_ident += 1

    @rule()
    def add_lossy_contributor(self) -> None:
        """Q-3 (rare, own rule): a contribution holding a non-JSON value."""
        self.sources.append(ContributorSource(ident=self.next_ident, idiom=Idiom.PREPEND, lossy=True))
        self.next_ident += 1

    @rule(own=st.booleans())
    def add_scoped_contributor(self, own: bool) -> None:
        """PFX-4 (rare, own rule): a listener scoped to this agent (runs) or to another agent (never runs)."""
        scope = self.agent.agent_id if own else "another-agent"
        self.sources.append(ContributorSource(ident=self.next_ident, idiom=Idiom.PREPEND, scope=scope))
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

    @rule(which=st.sampled_from(["none", "echo", "both", "reversed", "echo described anew"]))
    def change_tools(self, which: str) -> None:
        """The tool list changes: emptied, grown, reordered, or one tool's schema edited in place (same name)."""
        edited = freeze({"name": "echo", "description": "echo the text argument back, verbatim",
                         "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})
        tools = {"none": (), "echo": (ECHO_TOOL,), "both": (ECHO_TOOL, SHOUT_TOOL),
                 "reversed": (SHOUT_TOOL, ECHO_TOOL), "echo described anew": (edited, SHOUT_TOOL)}[which]
        self.agent = replace(self.agent, tools=tools)

    @rule(changes=LISTENER_CHANGES)
    def change_request_listener(self, changes: JsonObject) -> None:
        """An ``agent/request`` listener that sets any keys, the seed's (provider, model, reasoningEffort)
        included: its values win (LOOP-7, checked by the LISTENER invariant); an empty provider fails the turn."""
        self.agent = replace(self.agent, request_config=changes)

    @rule(window=WINDOWS, kind=KINDS, step=st.integers(1, 2), chunk=st.integers(0, 3), reply=REPLY_KINDS)
    def interrupted_turn(self, window: Window, kind: InterruptKind, step: int, chunk: int, reply: str) -> None:
        n = self.turns_sent
        interrupt = Interrupt(window=window, kind=kind, step=step, chunk=chunk)
        self._turn(TurnScript(prompt=Prompt(content=text_content(f"prompt {n}")), replies=replies_of(reply, n),
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
        self.session = MachineSession(log=seed, first_live_seq=len(seed), instance_starts=[len(seed)])
