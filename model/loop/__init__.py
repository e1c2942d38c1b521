"""The A55 agent-loop instance as pure transitions over (session log, instance state).

``run_turn(log, instance, agent, script)`` plays one message-triggered turn
exactly as ``packages/core/agent-loop/src/loop.ts`` runs it (LOOP-3..LOOP-17)
and returns the new log, the new instance state and the requests the loop
handed to the model.  Everything the real loop gets from the outside world
(the model's replies, listeners, cancel/dispose) is *data* in the
:class:`TurnScript`; the clock is the seq, so the function is deterministic.

Read in this order: ``script`` (the data), ``instance`` (LOOP-1/2/8/9),
``turn`` (prologue, the LOOP-5 stages, the epilogue), ``compose`` (PFX),
``step`` (LOOP-6/7), ``streaming`` (LOOP-10/11/12), ``errors`` (LOOP-14/15),
``listeners`` (compact-basic on the loop).
"""

from sessionspec.model.loop.compose import cached_prefix, compose_if_needed, write_cache
from sessionspec.model.loop.errors import interruption_reason, request_error
from sessionspec.model.loop.events import (
    Draft,
    ErrorAction,
    ErrorDecision,
    Hooks,
    PostStepHook,
    PostStepResult,
    RequestErrorContext,
    RequestErrorHook,
    SentRequest,
    SideCall,
    StepContext,
    TurnOutcome,
)
from sessionspec.model.loop.instance import (
    LOSSY_HEADER_MESSAGE,
    LoopInstance,
    apply_request_listener,
    fork_seed,
    header_record,
    new_instance,
    next_turn_number,
    seed_config,
)
from sessionspec.model.loop.listeners import (
    CompactionPlugin,
    compaction_hooks,
    manual_listener,
    overflow_listener,
    pressure_listener,
)
from sessionspec.model.loop.script import (
    GOAL_SOURCE,
    USER_SOURCE,
    AgentConfig,
    Interrupt,
    InterruptKind,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    Window,
    text_content,
)
from sessionspec.model.loop.state import APPEND, LogWriter, SessionLog, log_writer
from sessionspec.model.loop.step import dispatch_request, open_step, take_boundary
from sessionspec.model.loop.streaming import record_assistant, run_tools, stream
from sessionspec.model.loop.turn import after_step, drain_steering, play_turn, prompt_message_data, run_step_stages, run_turn
from sessionspec.model.loop_records import REQUEST_DELIMITER

__all__ = [
    "APPEND", "GOAL_SOURCE", "LOSSY_HEADER_MESSAGE", "REQUEST_DELIMITER", "USER_SOURCE",
    "AgentConfig", "CompactionPlugin", "Draft", "ErrorAction", "ErrorDecision", "Hooks", "Interrupt",
    "InterruptKind", "LogWriter", "LoopInstance", "Placement", "PostStepHook", "PostStepResult", "Prompt",
    "PromptContext", "Reply", "ReplyKind", "RequestErrorContext", "RequestErrorHook", "SentRequest", "SessionLog",
    "SideCall", "StepContext", "Steering", "ToolCallSpec", "TurnOutcome", "TurnScript", "Window",
    "after_step", "apply_request_listener", "cached_prefix", "compaction_hooks", "compose_if_needed",
    "dispatch_request", "drain_steering", "fork_seed", "header_record", "interruption_reason", "log_writer",
    "manual_listener", "new_instance", "next_turn_number", "open_step", "overflow_listener", "play_turn",
    "pressure_listener", "prompt_message_data", "record_assistant", "request_error", "run_step_stages", "run_tools",
    "run_turn", "seed_config", "stream", "take_boundary", "text_content", "write_cache",
]
