"""The D08 shapes a log shows, decided event by event: message identity (DIA-10), aborted turn ends (DIA-14) and
retry attempts inside one step (DIA-7).

D08's writers (the loop, the session API, the reader's migration of A55 shapes, :func:`sessionspec.model.migrate.
migrate_legacy`) give every message an identity and every abort a reason; an overflow recovery retries inside the
step.  ``sessionspec check`` runs these definitions over a D08 log (``sessionspec/check/d08_audit.py`` feeds them;
a :class:`RetryAttempts` per step); ``tests/model/test_d08_shapes.py`` holds them against the migration both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from sessionspec.model.jsonval import Absent, Json, JsonObject, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

# DIA-14's abort reasons, and the migration's ``legacy`` (a coarse A55 abort read by the D08 reader).
ABORT_REASONS: Final = frozenset({"user", "parent", "hook", "disposed", "legacy"})


@decides("DIA-14")
def check_aborted_turn_end(event: Event) -> Rejected | None:
    """DIA-14's ``aborted`` shape (its definition, with the quote, is the D08 reader's
    :func:`sessionspec.model.migrate.migrate_turn_end_reason`, which runs before this and writes ``legacy`` for a
    coarse record): an aborted ``turn/end`` carries ``reason:{kind}`` of user, parent, hook or disposed.  Other
    kinds are not DIA-14's."""
    reason = get(event.data, "reason")
    if get(reason, "kind") != "aborted":
        return None
    why = get(reason, "reason")
    inner = get(why, "kind")
    if isinstance(inner, str) and inner in ABORT_REASONS:
        return None
    shown = js_stringify(None if isinstance(why, Absent) else why)
    return Rejected(rule="DIA-14", seq=event.seq, reason=f"aborted turn/end reason {shown[:60]} is not user, parent, hook or disposed")


def _nonempty_str(v: Json | Absent) -> bool:
    return isinstance(v, str) and bool(v)


def user_message_flaws(data: Json) -> list[str]:
    """What ``user/message.data`` lacks of ``{content, source, role:"user", id}``."""
    flaws: list[str] = []
    if not isinstance(get(data, "content"), tuple):
        flaws.append("no content list")
    if not isinstance(get(data, "source"), JsonObject):
        flaws.append("no source")
    if get(data, "role") != "user":
        flaws.append('role is not "user"')
    if not _nonempty_str(get(data, "id")):
        flaws.append("no id")
    return flaws


def _message_identity_flaws(data: Json, role: str) -> tuple[JsonObject | None, list[str]]:
    """The ``message:{id, role}`` of an assistant message or a tool result: the message object (None when missing)
    and what is wrong with its identity."""
    message = get(data, "message")
    if not isinstance(message, JsonObject):
        return None, ["no message object"]
    flaws: list[str] = []
    if not _nonempty_str(get(message, "id")):
        flaws.append("no message.id")
    if get(message, "role") != role:
        flaws.append(f'message.role is not "{role}"')
    return message, flaws


def assistant_message_flaws(data: Json) -> list[str]:
    """What ``assistant/message.data`` lacks of ``message:{id, role:"assistant", content, source:{kind:"model",
    provider, model, …}}``."""
    message, flaws = _message_identity_flaws(data, "assistant")
    if message is None:
        return flaws
    if not isinstance(get(message, "content"), tuple):
        flaws.append("no message.content list")
    source = get(message, "source")
    if not isinstance(source, JsonObject):
        flaws.append("no message.source")
    elif get(source, "kind") != "model" or not (_nonempty_str(get(source, "provider")) and _nonempty_str(get(source, "model"))):
        flaws.append('message.source is not {kind:"model", provider, model}')
    return flaws


def tool_result_flaws(data: Json) -> list[str]:
    """What ``tool/result.data`` lacks of ``message:{id, role:"user", content:[tool-result block],
    source:{kind:"tool", callId}}``."""
    message, flaws = _message_identity_flaws(data, "user")
    if message is None:
        return flaws
    content = get(message, "content")
    if not (isinstance(content, tuple) and content and get(content[0], "type") == "tool-result"):
        flaws.append("message.content is not [tool-result block]")
    source = get(message, "source")
    if get(source, "kind") != "tool" or not isinstance(get(source, "callId"), str):
        flaws.append('message.source is not {kind:"tool", callId}')
    return flaws


@decides("DIA-10")
@implements("DIA-10")
def check_message_identity(event: Event) -> Rejected | None:
    """DIA-10: "Message shapes MUST carry identity: `user/message.data` = `{content, source, role:"user", id}`;
    `assistant/message.data` = `{turn, step, message:{id, role:"assistant", content, source:{kind:"model", provider,
    model, …}}, usage?, interrupted?}`; `tool/result.data` = `{turn, step, message:{id, role:"user",
    content:[tool-result block], source:{kind:"tool", callId}}, error?, meta?}`."

    Judged on the events as the D08 reader gives them (DIA-13 gives legacy shapes their identity first); the
    derivation part of DIA-10 is :func:`sessionspec.model.derive.derive`'s."""
    match event.type:
        case "user/message":
            flaws = user_message_flaws(event.data)
        case "assistant/message":
            flaws = assistant_message_flaws(event.data)
        case "tool/result":
            flaws = tool_result_flaws(event.data)
        case _:
            return None
    if not flaws:
        return None
    return Rejected(rule="DIA-10", seq=event.seq, reason=f"{event.type} lacks its D08 identity shape: {', '.join(flaws)}")


@dataclass(slots=True)
class RetryAttempts:
    """DIA-7's attempts of one step so far: an attempt is the chunks since ``step/start`` or the previous
    ``finish``; one whose finish is ``error`` has failed.  Kept: the failed attempts' chunk seqs, the open
    attempt's, and the seq of the failed finish when no chunk has come since.  Mutable, one per step, owned by
    whoever folds the log."""

    failed: set[int] = field(default_factory=set)
    attempt: list[int] = field(default_factory=list)
    failed_finish: int | None = None


def take_attempt_chunk(attempts: RetryAttempts, chunk: Event) -> None:
    """An ``assistant/chunk`` of the step: its attempt's next, and a ``finish`` ends the attempt (failed on an
    ``error`` reason)."""
    attempts.attempt.append(chunk.seq)
    attempts.failed_finish = None
    delta = get(chunk.data, "chunk")
    if get(delta, "type") != "finish":
        return
    if get(get(delta, "reason"), "kind") == "error":
        attempts.failed.update(attempts.attempt)
        attempts.failed_finish = chunk.seq
    attempts.attempt.clear()


@decides("DIA-7")
def check_retry_message(message: Event, attempts: RetryAttempts) -> list[Rejected]:
    """DIA-7's attempts (its definition, with the quote, is the overflow recovery,
    :func:`sessionspec.model.compaction.run.recover_overflow`): a failed attempt writes no ``assistant/message``
    (none right after its error finish, before a chunk of the retry), and the retry's message cites only the
    retry's chunks (none of a failed attempt).  An ``interrupted`` message (a cancelled stream) is DIA-15's, and a
    replace is compaction's."""
    if get(message.data, "interrupted") is True or get(message.surface_op, "op") == "replace":
        return []
    found: list[Rejected] = []
    if attempts.failed_finish is not None:
        found.append(Rejected(rule="DIA-7", seq=message.seq, reason=f"assistant/message for the failed attempt ending at seq {attempts.failed_finish} (a failed attempt writes none)"))
    cited = message.source_event_seqs
    stale = sorted(s for s in cited if isinstance(s, int) and s in attempts.failed) if isinstance(cited, tuple) else []
    if stale:
        found.append(Rejected(rule="DIA-7", seq=message.seq, reason=f"assistant/message cites chunks {stale[:5]} of a failed attempt (it cites only the retry's chunks)"))
    return found


def take_retry_event(attempts: RetryAttempts, event: Event) -> tuple[RetryAttempts, Sequence[Rejected]]:
    """DIA-7's walk over a log, one event at a time: a ``step/start`` opens the step's attempts afresh, a chunk
    joins the current attempt (:func:`take_attempt_chunk`), a message is held to them (:func:`check_retry_message`)."""
    match event.type:
        case "step/start":
            return RetryAttempts(), ()
        case "assistant/chunk":
            take_attempt_chunk(attempts, event)
            return attempts, ()
        case "assistant/message":
            return attempts, check_retry_message(event, attempts)
        case _:
            return attempts, ()
