"""Which structural edits (``structural_edits``) a writer of the harness could make, from the book.

:func:`decide` never runs the checker: it reads the edit's kind and the types (and a few fields)
of the events involved in the *unedited* log, and quotes the rule that decides.  ``None`` means the
book does not decide it from that (a plugin's timing, a chunk's content), with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.model.compaction import is_checkpoint_source
from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event
from tests.structural_edits import MOVE_BY, Decision, Edit, Kind

STRUCT: Final = frozenset({"turn/start", "turn/end", "step/start", "step/end"})
LOOP_WRITTEN: Final = STRUCT | {"assistant/message", "tool/call", "tool/result", "prompt/blocked", "request/header", "assistant/chunk",
                                "user/message", "steering/message"}
COMPACTION_PREFIXES: Final = ("compact/", "compaction/")
# Log-only plugin records whose timing the book leaves to the plugin (LOG-10: "accepted as log-only").
FREE_PLUGINS: Final = frozenset({"session/title", "session/title-llm-request", "hook/invoked", "hook/result", "approval/asked",
                                 "approval/policy", "goal/change", "permission/preset", "sandbox/mode", "subagent/descriptor",
                                 "tool/code-dispatch", "tool/code-dispatch-start", "tool-workflow/agent-start",
                                 "tool-workflow/run-end", "llm/retry", "llm/retry-started"})

IMPOSSIBLE_LOG_1: Final = Decision(False, "LOG-1", "seq MUST equal the event's position (a renumbered event repeats a seq)")
PREFIX: Final = Decision(True, "LOG-14", "a crash keeps the flushed prefix; the repair closes the open turn on the next load")
NESTING: Final = Decision(False, "LOG-13", "turn and step events open and close in order, numbered 1.. (the companion vetoes any other)")


def _cites(events: Sequence[Event], seq: int) -> bool:
    return any(isinstance(e.source_event_seqs, tuple) and seq in e.source_event_seqs for e in events)


def _chunk_kind(event: Event) -> object:
    return get(get(event.data, "chunk"), "type")


def _is_compaction(event: Event) -> bool:
    return event.type.startswith(COMPACTION_PREFIXES) or (event.type == "user/message" and is_checkpoint_source(get(event.data, "source")))


def _in_bracket(events: Sequence[Event], i: int) -> bool:
    """Is event ``i`` inside an open compaction bracket (a start with no end before it)?"""
    open_ = False
    for e in events[:i]:
        if e.type in ("compact/start", "compaction/start"):
            open_ = True
        elif e.type in ("compact/end", "compaction/end"):
            open_ = False
    return open_


def _api_step_message(events: Sequence[Event], i: int) -> bool:
    """Is event ``i`` an assistant/message of a step with no chunk and no sourceEventSeqs (FMT-7 Writers)?"""
    if events[i].type != "assistant/message" or events[i].source_event_seqs is not ABSENT:
        return False
    start = max((j for j in range(i) if events[j].type == "step/start"), default=None)
    end = next((j for j in range(i, len(events)) if events[j].type in ("step/end", "turn/end")), len(events))
    return start is not None and not any(e.type == "assistant/chunk" for e in events[start:end])


API_WRITER: Final = Decision(True, "FMT-7", "a step the session API wrote (no stream, no sourceEventSeqs): the loop's LOOP-11 does not bind it")


def _chunk_follows_in_step(events: Sequence[Event], i: int) -> bool:
    for e in events[i + 1:]:
        if e.type == "assistant/chunk":
            return True
        if e.type in ("step/end", "turn/end"):
            return False
    return False


def _only_prompt_of_a_stepped_a55_turn(events: Sequence[Event], i: int) -> bool:
    """Event ``i`` is the one user/message between an A55 message-triggered turn/start and its first step/start."""
    start = max((j for j in range(i) if events[j].type == "turn/start"), default=None)
    if start is None or get(get(events[start].data, "trigger"), "kind") != "message" or events[i].surface_op != "append":
        return False
    if any(e.type in ("step/start", "turn/end") for e in events[start:i]):
        return False
    rest = events[i + 1:]
    first_step = next((j for j, e in enumerate(rest) if e.type in ("step/start", "turn/end")), None)
    if first_step is None or rest[first_step].type != "step/start":
        return False
    return not any(e.type in ("user/message", "steering/message") for e in events[start + 1:i] + tuple(rest[:first_step]))


def _decide_delete(events: Sequence[Event], i: int) -> Decision | None:
    e = events[i]
    if not any(later.type in LOOP_WRITTEN for later in events[i + 1:]):
        return PREFIX  # a crash after this event, or log-only plugin records appended in the turn left open
    if _api_step_message(events, i):
        return API_WRITER
    if e.type == "session/end-seed":
        return None  # one per load of a seeded session (DIA-5): how many loads wrote them is not in the log
    if e.type == "user/message" and is_checkpoint_source(get(e.data, "source")) and not _in_bracket(events, i):
        return None  # a checkpoint outside a bracket is a fixture's (QF-1): whether it was written is the fixture's
    if e.type in STRUCT:
        return NESTING
    if _is_compaction(e) or e.type == "session/end-seed":
        return Decision(False, "CMP-22", "a compaction's start, summary, checkpoint and end are written together (DIA-16, DIA-5)")
    match e.type:
        case "assistant/message" if get(e.data, "interrupted") is True:
            return Decision(False, "DIA-15", "a cancelled stream with visible text/reasoning MUST append assistant/message {interrupted: true}")
        case "assistant/message":
            return Decision(False, "LOOP-11", "a successful stream MUST append assistant/message (a failed one ends the step without chunks after it)")
        case "tool/result" if e.surface_op != "append":
            return None  # a prune replacement: whether pressure qualified needs the context window (PRN-1)
        case "tool/call" | "tool/result":
            return Decision(False, "LOOP-12", "for each tool-call block the loop MUST append tool/call, then tool/result")
        case "prompt/blocked":
            return Decision(False, "LOOP-3", "block: append prompt/blocked and end the turn rejected")
        case "assistant/chunk" if _chunk_kind(e) == "usage":
            return Decision(False, "LOOP-11", "usage is the last usage chunk") if _cites(events, e.seq) else None
        case "assistant/chunk":
            return None  # no rule ties a chunk's content to its neighbours (LOOP-10 appends each as streamed)
        case "request/header" if get(e.data, "reason") == "initial" and _chunk_follows_in_step(events, i):
            # (a resume may be dropped: the previous instance, had it gone on, would write no header for an unchanged one)
            return Decision(False, "FMT-9", "reason initial iff no earlier header; every request has a header in force")
        case "user/message" if _only_prompt_of_a_stepped_a55_turn(events, i):
            return Decision(False, "LOOP-3", "allow: append user/message, then run the step; a message-triggered turn's step follows its prompt")
        case _:
            return None  # other prompts, headers and plugin records: whether one was written depends on content the book does not fix


def _decide_duplicate(events: Sequence[Event], i: int) -> Decision | None:
    e = events[i]
    if _api_step_message(events, i):
        return API_WRITER
    if e.type == "session/end-seed":
        return None  # DIA-5: each load of a seed not ending with one appends one
    if e.type in STRUCT:
        return NESTING
    if _is_compaction(e) or e.type == "session/end-seed":
        return Decision(False, "CMP-22", "one bracket per compaction, its events written once (DIA-16)")
    match e.type:
        case "assistant/message":
            return Decision(False, "LOOP-11", "one assistant/message per step (FMT-8: one attempt per step)")
        case "tool/call":
            return Decision(False, "LOOP-12", "one tool/call per tool-call block")
        case "tool/result":
            return Decision(False, "LOG-13", "a tool/result answers a pending call once")
        case "prompt/blocked":
            return Decision(False, "LOOP-3", "a blocked prompt ends its turn")
        case "request/header":
            return Decision(False, "FMT-9", "at most one request/header per step")
        case "assistant/chunk" if _cites(events, e.seq):
            return Decision(False, "LOOP-11", "sourceEventSeqs: all chunk seqs of this step (the copy is not cited)")
        case "assistant/chunk" if _chunk_kind(e) == "finish":
            return None  # a second finish is a second attempt: a D08 retry (DIA-7) or, in A55, no writer (FMT-8)
        case "assistant/chunk":
            return Decision(True, "LOOP-10", "every streamed chunk is appended as it comes (a model may stream a delta twice)")
        case name if name in FREE_PLUGINS:
            return Decision(True, "LOG-10", "plugin records are log-only; a plugin may write one twice")
        case _:
            return None


def _plain_prompt(event: Event) -> bool:
    return event.type == "user/message" and event.surface_op == "append" and not is_checkpoint_source(get(event.data, "source"))


def _decide_order(events: Sequence[Event], i: int, j: int, dialect: Dialect) -> Decision | None:
    """Event ``i`` moved to just after event ``j`` (``j > i``): the events between keep their order."""
    moved, passed = events[i], events[i + 1: j + 1]
    pair = [moved, *passed]
    if any(e.type == "user/message" and is_checkpoint_source(get(e.data, "source")) and not _in_bracket(events, events.index(e)) for e in pair):
        return None  # a checkpoint outside a bracket is a fixture's (QF-1), written when the fixture chose
    types = {e.type for e in pair}
    if types == {"request/context", "assistant/chunk"} and moved.type == "request/context" and dialect is Dialect.D08 and not any(
            _chunk_kind(p) == "finish" and get(get(get(p.data, "chunk"), "reason"), "kind") in ("error", "aborted") for p in passed):
        return Decision(False, "DIA-12", "header / request/context if changed, then dispatch: not inside a streaming attempt")
    if types == {"step/start", "user/message"} and all(_plain_prompt(e) or e.type == "step/start" for e in pair):
        if dialect is Dialect.D08:
            return Decision(False, "DIA-12", "step/start, then the entering user/messages, then the header, then dispatch")
        return None  # A55 agent.inject() appends at once (LOOP-3 contexts; c-inject-during-composition): either side of step/start
    if any(_plain_prompt(e) for e in pair) and types & STRUCT:
        return None  # a prompt or context crossing a turn or step boundary may be the neighbour's (content decides)
    if "steering/message" in types and types & STRUCT <= {"step/start", "step/end"}:
        return None  # LOOP-13: the drain runs before assembly and after the stream and tools: either side of a step boundary
    if all(p.type in FREE_PLUGINS for p in passed) and moved.type in FREE_PLUGINS:
        return Decision(True, "LOG-10", "plugin records are log-only; their order is the plugins' timing")
    if moved.type in STRUCT and any(p.type in LOOP_WRITTEN for p in passed):
        return NESTING
    if any(p.type in STRUCT for p in passed) and moved.type in LOOP_WRITTEN:
        return NESTING
    if moved.type == "assistant/chunk" and _cites(events, moved.seq) and any(p.type == "assistant/chunk" for p in passed):
        return Decision(False, "SURF-13", "assistant/message cites the chunk seqs of its own stream, in order")
    if moved.type == "assistant/chunk" and any(p.type == "assistant/message" and _cites([p], moved.seq) for p in passed):
        return Decision(False, "MTR-9", "every cited seq is an earlier assistant/chunk")
    if moved.type == "request/header" and any(p.type == "assistant/chunk" for p in passed):
        return Decision(False, "FMT-9", "a request/header lies before its step's first chunk")
    if moved.type == "assistant/message" and any(p.type in ("tool/call", "tool/result") for p in passed):
        return Decision(False, "LOOP-12", "tool/call and tool/result follow their assistant/message")
    if moved.type == "tool/call" and any(p.type == "tool/result" and get(p.data, "callId") == get(moved.data, "callId") and get(p.data, "callId") is not ABSENT for p in passed):
        return Decision(False, "LOG-13", "a tool/result answers a pending call")
    return None


FORK_SEED: Final = Decision(False, "FMT-11", "a fork child's first seedLength events equal the parent's (the seed is a copy)")


def decide(events: Sequence[Event], edit: Edit, seed_length: int = 0, forked: bool = False, dialect: Dialect = Dialect.A55) -> Decision | None:
    """The label of ``edit`` (module docstring); ``forked``: the log is a fork child whose parent is
    found beside it, so an edit inside its seed (``seed_length``) changes the copy."""
    touched = edit.at + (MOVE_BY if edit.kind is Kind.MOVE else 1 if edit.kind is Kind.SWAP else 0)
    if forked and edit.kind is not Kind.RENUMBER and min(edit.at, touched) < seed_length:
        return FORK_SEED
    decision = _decide(events, edit, dialect)
    if decision is not None and min(edit.at, touched) < seed_length and decision.rule not in LOAD_RULES:
        return None  # a seed is judged where it was written: only the load's and the companion's rules bind it here
    return decision


LOAD_RULES: Final = frozenset({"LOG-1", "LOG-13", "LOG-14", "FMT-11"})


def _decide(events: Sequence[Event], edit: Edit, dialect: Dialect) -> Decision | None:
    match edit.kind:
        case Kind.RENUMBER:
            return IMPOSSIBLE_LOG_1
        case Kind.DELETE:
            return _decide_delete(events, edit.at)
        case Kind.DUPLICATE:
            return _decide_duplicate(events, edit.at)
        case Kind.SWAP:
            return _decide_order(events, edit.at, edit.at + 1, dialect)
        case Kind.MOVE:
            return _decide_order(events, edit.at, edit.at + MOVE_BY, dialect)
