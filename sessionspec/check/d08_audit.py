"""The D08 shapes a log shows: turn ends (DIA-14), message identity (DIA-10) and retry attempts
inside one step (DIA-7)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import WalkFold
from sessionspec.check.nesting_audit import is_replace
from sessionspec.fast.constants import D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

# --------------------------------------------------------------------------- DIA-10 / DIA-14 (D08 shapes)


DIA14_ABORT_REASONS: Final = frozenset({"user", "parent", "hook", "disposed", "legacy"})


@audits("DIA-14")
def check_d08_turn_end(event: Event) -> Rejected | None:
    """DIA-14: "``turn/end`` aborted MUST be ``{kind:"aborted",
    reason:{kind:"user"|"parent"|"hook"|"disposed"}}``; disposal is aborted
    with reason ``disposed``; coarse legacy records read as
    ``reason:{kind:"legacy"}``" (the migration, run before this, writes
    ``legacy``).  Other kinds are not constrained by DIA-14."""
    reason = get(event.data, "reason")
    if get(reason, "kind") != "aborted":
        return None
    why = get(reason, "reason")
    inner = get(why, "kind")
    if isinstance(inner, str) and inner in DIA14_ABORT_REASONS:
        return None
    shown = js_stringify(None if isinstance(why, Absent) else why)
    return Rejected(rule="DIA-14", seq=event.seq, reason=f"aborted turn/end reason {shown[:60]} is not user, parent, hook or disposed")


def _nonempty_str(v: Json | Absent) -> bool:
    return isinstance(v, str) and bool(v)


def _user_message_flaws(data: Json) -> list[str]:
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
    """DIA-10's ``message:{id, role}`` of an assistant message or a tool result: the message
    object (None when missing) and what is wrong with its identity."""
    message = get(data, "message")
    if not isinstance(message, JsonObject):
        return None, ["no message object"]
    flaws: list[str] = []
    if not _nonempty_str(get(message, "id")):
        flaws.append("no message.id")
    if get(message, "role") != role:
        flaws.append(f'message.role is not "{role}"')
    return message, flaws


def _assistant_message_flaws(data: Json) -> list[str]:
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


def _tool_result_flaws(data: Json) -> list[str]:
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


class D08MessageShapeAudit(WalkFold):
    """DIA-10: "Message shapes MUST carry identity: ``user/message.data`` =
    ``{content, source, role:"user", id}``; ``assistant/message.data`` =
    ``{turn, step, message:{id, role:"assistant", content,
    source:{kind:"model", provider, model, …}}, usage?, interrupted?}``;
    ``tool/result.data`` = ``{turn, step, message:{id, role:"user",
    content:[tool-result block], source:{kind:"tool", callId}}, error?,
    meta?}``."  Run on the migrated events (DIA-13 gives legacy shapes their
    identity first), seed included (LOG-8 validates the whole list)."""

    EVENT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

    DIALECTS = frozenset({D08})

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        found: list[Rejected] = []
        while (event := (yield)) is not None:
            match event.type:
                case "user/message":
                    flaws = _user_message_flaws(event.data)
                case "assistant/message":
                    flaws = _assistant_message_flaws(event.data)
                case "tool/result":
                    flaws = _tool_result_flaws(event.data)
                case _:
                    flaws = []
            if flaws:
                found.append(Rejected(rule="DIA-10", seq=event.seq, reason=f"{event.type} lacks its D08 identity shape: {', '.join(flaws)}"))
        return found


audits("DIA-10")(D08MessageShapeAudit)


def check_d08_message_shapes(events: Sequence[Event]) -> list[Rejected]:
    """:class:`D08MessageShapeAudit` run alone."""
    return run_alone(D08MessageShapeAudit, events, D08)


# --------------------------------------------------------------------------- DIA-7 (D08 retries)


def _finish_kind(event: Event) -> Json | Absent | None:
    """The finish reason kind of a ``finish`` chunk; None for any other chunk."""
    chunk = get(event.data, "chunk")
    if get(chunk, "type") != "finish":
        return None
    return get(get(chunk, "reason"), "kind")


class RetryAttemptAudit(WalkFold):
    """DIA-7: "Overflow recovery MUST retry inside the same step: failed
    attempt's chunks (error finish) stay, no ``assistant/message``, [...] the
    retry streams again and its ``assistant/message`` cites only the retry's
    chunks."  An attempt is the chunks since ``step/start`` or the previous
    ``finish``; an attempt whose finish is ``error`` has failed.  Vetoed: an
    ``assistant/message`` right after a failed attempt (before any chunk of
    the next one), and any ``assistant/message`` citing a failed attempt's
    chunk.  The transient LLM-layer retry (``llm/retry``) follows the same
    shape in the real logs.  An ``interrupted`` message (DIA-15, a cancelled
    stream) is governed by DIA-15, not here."""

    EVENT_TYPES = frozenset({"step/start", "assistant/chunk", "assistant/message"})

    DIALECTS = frozenset({D08})

    def walk(self) -> Generator[None, Event | None, list[Rejected]]:
        found: list[Rejected] = []
        failed: set[int] = set()
        attempt: list[int] = []
        failed_finish: int | None = None
        while (event := (yield)) is not None:
            match event.type:
                case "step/start":
                    failed.clear()
                    attempt.clear()
                    failed_finish = None
                case "assistant/chunk":
                    attempt.append(event.seq)
                    failed_finish = None
                    kind = _finish_kind(event)
                    if kind == "error":
                        failed.update(attempt)
                        failed_finish = event.seq
                    if kind is not None:
                        attempt.clear()
                case "assistant/message" if get(event.data, "interrupted") is not True and not is_replace(event):
                    if failed_finish is not None:
                        found.append(Rejected(rule="DIA-7", seq=event.seq, reason=f"assistant/message for the failed attempt ending at seq {failed_finish} (a failed attempt writes none)"))
                    cited = event.source_event_seqs
                    stale = sorted(s for s in cited if isinstance(s, int) and s in failed) if isinstance(cited, tuple) else []
                    if stale:
                        found.append(Rejected(rule="DIA-7", seq=event.seq, reason=f"assistant/message cites chunks {stale[:5]} of a failed attempt (it cites only the retry's chunks)"))
                case _:
                    pass
        return found


audits("DIA-7")(RetryAttemptAudit)


def check_retry_attempts(events: Sequence[Event]) -> list[Rejected]:
    """:class:`RetryAttemptAudit` run alone."""
    return run_alone(RetryAttemptAudit, events, D08)
