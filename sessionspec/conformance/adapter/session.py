"""The differential adapter protocol ``sessionspec-adapter/1`` (JSON lines).

The oracle writes one operation per line to the implementation's stdin,
``{"id": N, "op": NAME, ...arguments}``, and reads one answer per line from its
stdout: ``{"id": N, "ok": RESULT}``, ``{"id": N, "reject": {"rules": [IDs],
"reason": TEXT}}`` (the implementation refuses the operation, naming the rule
IDs), or ``{"id": N, "error": TEXT}`` (the adapter did not understand the
operation: a protocol failure).  All JSON is canonical (sessionspec/conformance/vectors/format.py):
a non-integer number travels as ``{"$number": "0.7"}``.

The operations and their results are specified in docs/conformance.md.  The
protocol is split into modules of one concept each:

- this module, :class:`ModelSession`: the operations executed by the model
  itself (the reference implementation; ``sessionspec serve-model`` serves it);
- ``protocol``: the version names, the response shape and the two failures;
- ``decode``: the operation language decoded into the model's script types;
- ``stateless_ops``: the operations that act on a given log (check, replay, ...);
- ``driver``: the server loop and the clients (:class:`InProcessAdapter`, and
  :class:`ProcessAdapter`, which bounds every answer in time and size).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from sessionspec.conformance.adapter.decode import (
    CompactionSetup,
    as_object,
    decode_agent,
    decode_compaction,
    decode_script,
    log_text,
)
from sessionspec.conformance.adapter.protocol import PROTOCOL, OperationError, Response
from sessionspec.conformance.adapter.stateless_ops import (
    ScriptedSummarizer,
    append_out_of_band_op,
    check_op,
    compact_op,
    event_plain,
    measure_op,
    pack_op,
    rejection,
    repair_op,
    replay_op,
)
from sessionspec.conformance.vectors.format import to_plain
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    CompactionPlugin,
    Hooks,
    LoopInstance,
    compaction_hooks,
    fork_seed,
    new_instance,
    run_turn,
)
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import request_to_json
from sessionspec.planted.loop import Planted, planted
from sessionspec.replay import LoadError, load_log_text
from sessionspec.spec.probes import HeldObjects


@dataclass(slots=True, kw_only=True)
class ModelSession:
    """The reference implementation of the operations: one agent over one
    session log, driven by the model's pure functions.  ``planted`` selects a
    deliberately broken loop (mutants only, :mod:`sessionspec.planted.loop`); ``resume_drops_prefix``
    is the adapter-level mutant."""

    planted: Planted | None = None
    resume_drops_prefix: bool = False
    log: tuple[Event, ...] = ()
    instance: LoopInstance = field(default_factory=new_instance)
    agent: AgentConfig = field(default_factory=AgentConfig)
    compaction: CompactionSetup | None = None
    summarizer: ScriptedSummarizer = field(default_factory=lambda: ScriptedSummarizer(outputs=[]))
    held: HeldObjects = field(default_factory=HeldObjects)

    def handle(self, op: Mapping[str, object]) -> Response:
        """One operation -> its ``ok`` result or ``{"reject": ...}``; a malformed
        operation raises :class:`OperationError`."""
        name = op.get("op")
        match name:
            case "hello":
                return {"protocol": PROTOCOL, "implementation": "sessionspec model"}
            case "init":
                return self._init(op)
            case "configure":
                self.agent = decode_agent(as_object(op.get("agent", {}), "agent"), self.agent)
                if "compaction" in as_object(op.get("agent", {}), "agent"):
                    self._set_compaction(as_object(op.get("agent", {}), "agent"))
                return {}
            case "send":
                return self._send(op)
            case "resume":
                # A new instance over the same log (a process restart, agents.resume()).
                self.instance = new_instance()
                if self.resume_drops_prefix:
                    self.instance = replace(self.instance, prefix=())
                return {}
            case "dispose":
                self.instance = replace(self.instance, disposed=True)
                return {}
            case "fork":
                self.log = fork_seed(self.log)
                self.instance = new_instance()
                return {"length": len(self.log)}
            case "log":
                return {"log": [event_plain(e) for e in self.log]}
            case "check":
                return check_op(op)
            case "replay":
                return replay_op(op)
            case "pack":
                return pack_op(op)
            case "repair":
                return repair_op(op)
            case "append-out-of-band":
                return append_out_of_band_op(op)
            case "measure":
                return measure_op(op)
            case "compact":
                return compact_op(op)
            case _:
                raise OperationError(f"unknown op {name!r}")

    def _set_compaction(self, agent: Mapping[str, object]) -> None:
        spec = agent.get("compaction")
        self.compaction = None if spec is None else decode_compaction(as_object(spec, "compaction"))
        if self.compaction is None:
            self.summarizer = ScriptedSummarizer(outputs=[])
        else:
            self.summarizer = ScriptedSummarizer(outputs=list(self.compaction.summaries))

    def _init(self, op: Mapping[str, object]) -> Response:
        loaded = load_log_text(log_text(op))
        if isinstance(loaded, LoadError):
            return rejection(loaded.rejected)
        self.log = loaded.events
        self.instance = new_instance()
        agent = as_object(op.get("agent", {}), "agent")
        self.agent = decode_agent(agent)
        self._set_compaction(agent)
        return {"length": len(self.log)}

    def _hooks(self) -> Hooks:
        """compact-basic on the loop (model.loop.compaction_hooks) when the agent mounts it."""
        setup = self.compaction
        if setup is None:
            return Hooks(after_composition=self.held.remember)
        plugin = CompactionPlugin(summarizer=self.summarizer, instruction=setup.instruction, config=setup.config,
                                  context_window=setup.context_window, prune=setup.prune)
        return replace(compaction_hooks(plugin), after_composition=self.held.remember)

    def _send(self, op: Mapping[str, object]) -> Response:
        script = decode_script(op)
        before = len(self.log)
        with planted(self.planted):
            outcome = run_turn(self.log, self.instance, self.agent, script, hooks=self._hooks())
            self.held.edit()  # contributors that keep their objects edit them after the turn (PFX-6)
        if isinstance(outcome, Rejected):
            return rejection(outcome)
        self.log, self.instance, self.agent = outcome.log, outcome.instance, outcome.agent
        summaries = [call.request for call in outcome.side_calls]
        return {
            "appended": [event_plain(e) for e in self.log[before:]],
            "requests": [to_plain(request_to_json(s.request)) for s in outcome.requests],
            "summaries": [to_plain(s) for s in summaries],
        }

