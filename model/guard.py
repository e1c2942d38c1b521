"""The writer's own invariant guard, as a log shows it (issue 44, item 4).

The harness runs package-owned invariant checks in development (``@deepseek-ai/dsh-invariants``,
``packages/support/invariants/src/index.ts`` at ``a55f148516``): a violated check throws ``InvariantError``
with ``code = 'INVARIANT'`` and the message ``invariant violated by "<package>": <contract>``.  In a turn the
loop records a thrown error once, as the turn's end: it is no adapter failure (``llmFailureOf`` answers
undefined), so ``failTurn`` writes ``{kind: "error", step, message, code}`` (``loop.ts`` ``errorData``); D08
writes ``{kind: "error", error: {message, code}}``, its LLM layer rethrowing an ``INVARIANT`` error rather than
classifying it as a provider failure (``llm/src/index.ts`` at ``611615650f``).  Such a turn end
is not a provider's error: it is the writer catching itself breaking a rule.  Which rule is the package's:
the request-reconstruction invariant of ``@deepseek-ai/dsh-agent-loop`` (INV-2's checks, INV-3's messages,
INV-4's scalars; ``agent-loop/src/invariant.ts``) or the session companion of ``@deepseek-ai/dsh-session``
(LOG-13; ``session/src/invariant.ts``); a guard of another package names no rule of the book, so the turn's
error is LOOP-16's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.jsonval import Absent, Json, get
from sessionspec.model.log import Dialect
from sessionspec.model.rules import decides

INVARIANT_CODE: Final = "INVARIANT"
_MESSAGE: Final = re.compile(r'invariant violated by "([^"]+)": ')
AGENT_LOOP: Final = "@deepseek-ai/dsh-agent-loop"
SESSION: Final = "@deepseek-ai/dsh-session"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GuardTrip:
    """An error turn end written because the writer's own guard fired: the package, the rule its check
    enforces, and the guard's message."""

    package: str
    rule: str
    message: str


def _rule_of(package: str, message: str) -> str:
    if package == AGENT_LOOP:
        # agent-loop/src/invariant.ts: "diverges from the boundary derivation" is INV-3's message check,
        # "diverges from the folded request header" INV-4's scalars; its other failures are INV-2's steps.
        if "diverges from the boundary derivation" in message:
            return "INV-3"
        if "diverges from the folded request header" in message:
            return "INV-4"
        return "INV-2"
    if package == SESSION:
        return "LOG-13"
    return "LOOP-16"


@decides("INV-2", "INV-3", "INV-4", "LOG-13", "LOOP-16")
def guard_trip(reason: Json | Absent, dialect: Dialect) -> GuardTrip | None:
    """Whether a ``turn/end`` ``reason`` is the writer's guard catching itself: an error end whose error
    carries the code ``INVARIANT`` (A55: the reason's ``code``, or its ``failure``'s; D08: its ``error``'s).
    The package is read from the guard's message; None for any other end."""
    if get(reason, "kind") != "error":
        return None
    # LOG-11 (A55): the code on the reason or its failure; DIA-14 (D08): on its error.
    carriers = (reason, get(reason, "failure")) if dialect is Dialect.A55 else (get(reason, "error"), reason)
    for carrier in carriers:
        if get(carrier, "code") == INVARIANT_CODE:
            message = get(carrier, "message")
            text = message if isinstance(message, str) else ""
            found = _MESSAGE.search(text)
            package = found.group(1) if found else "(package not named)"
            return GuardTrip(package=package, rule=_rule_of(package, text), message=text)
    return None
