"""The reason a ``turn/end`` carries (LOG-11), decided event by event, with D08's reasons as an overlay (DIA-14).

The A55 loop writes a turn's end in ``failTurn`` and ``interruptionTurnEndReason`` (``loop.ts``), the repair
writes ``interrupted`` (LOG-14); the D08 loop ends a failed turn with an LLM failure and an aborted one with its
reason (DIA-14).  ``sessionspec check`` runs :func:`check_turn_end_reason` on every live ``turn/end`` (through
:func:`sessionspec.model.event_shape.check_type_shape`); ``tests/model/test_event_shape.py`` holds it against the
loop simulator's logs, both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.record_keys import Keys, key_flaw
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

BARE_END_KINDS: Final = frozenset({"completed", "disposed", "max-tokens", "interrupted"})
D08_END_KINDS: Final = BARE_END_KINDS | {"error", "rejected", "blocked"}
BARE: Final[Keys] = (("kind", True),)
LLM_FAILURE_KEYS: Final[Keys] = (("message", True), ("code", True), ("status", False), ("providerRetryAfterMs", False), ("requestId", False))


def _is_int(v: Json | Absent) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def a55_reason_flaw(reason: Json | Absent, kind: Json | Absent) -> str | None:
    """What is wrong with an A55 reason of ``kind``: the bare kinds are ``{kind}``, ``rejected`` carries a string
    ``reason``, ``error`` a ``failure`` (at least ``message`` and ``code``) or a ``message`` and ``code?``, and an
    integer ``step``.  An unknown kind and a reason-bearing ``aborted`` are LOG-8's load checks (LEG-4)."""
    flaw: str | None = None
    if kind in BARE_END_KINDS:
        flaw = key_flaw(reason, BARE)
    elif kind == "rejected":
        flaw = key_flaw(reason, (("kind", True), ("reason", True)))
        if flaw is None and not isinstance(get(reason, "reason"), str):
            flaw = "has a reason that is not a string"
    elif kind == "error":
        if isinstance(reason, JsonObject) and "failure" in reason:
            flaw = key_flaw(reason, (("kind", True), ("step", True), ("failure", True)))
            failure = get(reason, "failure")
            if flaw is None and not (isinstance(get(failure, "message"), str) and get(failure, "code") is not ABSENT):
                flaw = "has a failure without message and code"
        else:
            flaw = key_flaw(reason, (("kind", True), ("step", True), ("message", True), ("code", False)))
        if flaw is None and not _is_int(get(reason, "step")):
            flaw = "has a step that is not an integer"
    return flaw


def d08_error_end_flaw(reason: JsonObject) -> str | None:
    """The D08 loop ends a failed turn with ``{kind:"error", error: LlmFailure}`` (``agent-loop/src/agent.ts``
    lines 303-313 at ``611615650f``: the ``LlmError`` facts, or ``{message: errorChain, code:"UNKNOWN"}``);
    ``LlmFailure`` is ``{message, code, status?, providerRetryAfterMs?, requestId?}`` (``llm/src/types.ts`` lines
    40-51).  Its reader keeps this form as it is (``coordinator.ts`` line 415) and rewrites the A55 forms into it."""
    flaw = key_flaw(reason, (("kind", True), ("error", True)))
    if flaw is not None:
        return flaw
    failure = get(reason, "error")
    if key_flaw(failure, LLM_FAILURE_KEYS) is not None or not (isinstance(get(failure, "message"), str) and isinstance(get(failure, "code"), str)):
        return "has an error that is not an LLM failure {message, code, status?, providerRetryAfterMs?, requestId?}"
    return None


def d08_reason_flaw(reason: Json | Absent, kind: Json | Absent) -> str | None:
    """D08 keeps LOG-11 but for ``aborted`` (DIA-14: with its reason, :func:`sessionspec.model.d08_shapes.
    check_aborted_turn_end`'s) and ``disposed`` (now an aborted reason), adds a bare ``blocked`` and the
    ``error`` form of :func:`d08_error_end_flaw`; its reader knows no other kind, so an unknown kind is told here."""
    if kind == "aborted":
        return None
    if kind not in D08_END_KINDS:
        return "is not a turn/end reason kind"
    if kind == "blocked":
        return key_flaw(reason, BARE)
    if kind == "error" and isinstance(reason, JsonObject) and "error" in reason:
        return d08_error_end_flaw(reason)
    return a55_reason_flaw(reason, kind)


def reason_forms(dialect: Dialect) -> Callable[[Json | Absent, Json | Absent], str | None]:
    """The one place the ``turn/end`` reasons are selected by dialect: A55's (LOG-11), or D08's (DIA-14)."""
    match dialect:
        case Dialect.A55:
            return a55_reason_flaw
        case Dialect.D08:
            return d08_reason_flaw


@decides("LOG-11")
@implements("LOG-11")
def check_turn_end_reason(event: Event, dialect: Dialect = Dialect.A55) -> Rejected | None:
    """LOG-11: "A55 `turn/end.reason` MUST be one of: `{kind:"completed"}`; `{kind:"aborted"}` with exactly that one
    key (LEG-4); `{kind:"error", step, failure}` or `{kind:"error", step, message, code?}`; `{kind:"disposed"}`;
    `{kind:"max-tokens"}`; `{kind:"rejected", reason}`; `{kind:"interrupted"}` (written only by the repair)."

    The forms are :func:`a55_reason_flaw` (D08: :func:`d08_reason_flaw`).  That ``max-tokens`` takes precedence
    over ``completed`` is the loop's (which finish the turn's steps ended with)."""
    reason = get(event.data, "reason")
    kind = get(reason, "kind")
    flaw = reason_forms(dialect)(reason, kind)
    if flaw is None:
        return None
    return Rejected(rule="LOG-11", seq=event.seq, reason=f"turn/end reason {js_stringify(kind if kind is not ABSENT else None)} {flaw}")
