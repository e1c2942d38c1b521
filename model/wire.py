"""Request assembly (WIRE): the value the loop hands to the model.

``messages = (h.messagePrefix or []) ++ B`` where ``B`` is the boundary
snapshot; ``system`` is a separate slot, not a message (WIRE-1, WIRE-2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

from sessionspec.model.header import EpochHeader, prefix_messages
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.rules import implements


@implements("WIRE-3")
@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """WIRE-3: "The request MUST be deeply immutable, except for `signal`. Any attempt to mutate it (for example by a
    stream listener) raises into the step, which becomes a turn error."

    A loop request (WIRE-1), deeply immutable by construction: a frozen dataclass of tuples and ``JsonObject``
    (``tests/model/test_wire.py`` tries every way in); ``signal`` and the loop marker are not values.  The loop's
    :func:`~sessionspec.model.loop.step.mutation_attempt` is where an attempt raises into the step."""

    provider: Json | Absent
    model: Json | Absent
    messages: tuple[Json, ...]
    reasoning_effort: Json | Absent = ABSENT
    system: Json | Absent = ABSENT
    tools: Json | Absent = ABSENT
    temperature: Json | Absent = ABSENT
    max_tokens: Json | Absent = ABSENT
    stop: Json | Absent = ABSENT


@implements("WIRE-2", "PFX-11")
def request_messages(header: EpochHeader, boundary: Sequence[Json]) -> tuple[Json, ...]:
    """PFX-11: "On the wire, the prefix MUST come after the system slot and before the derived history
    (WIRE-2)."

    WIRE-2: "The message order MUST be: prefix, then derived history.  ``system`` is a separate
    slot, not a message."  PFX-11: "On the wire, the prefix MUST come after the system slot and
    before the derived history."  (Checked through ``build_request``'s contract.)"""
    return prefix_messages(header) + tuple(boundary)


@implements("WIRE-1", "WIRE-5")
def build_request(header: EpochHeader, boundary: Sequence[Json]) -> Request:
    """WIRE-1: "A loop request MUST consist of these fields, in this order, taken from the canonical header `h`
    and the boundary snapshot `B`: `provider = h.config.provider`; `model = h.config.model`;
    `reasoningEffort?` (if in `h.config`); `messages = (h.messagePrefix or []) ++ B`; `system?` and `tools?`
    (if in `h`); `temperature?`, `maxTokens?`, `stop?` (if in `h.config`); `sessionId`; `signal` (live, not
    part of the model's value)."

    WIRE-1: "A loop request MUST consist of these fields, in this order, taken from the canonical
    header ``h`` and the boundary snapshot ``B``" (provider, model, reasoningEffort?, messages,
    system?, tools?, temperature?, maxTokens?, stop?); WIRE-5: "A request MUST be a pure function of
    ``(h, B, sessionId)``."

    post: __return__.messages == prefix_messages(header) + tuple(boundary)
    post: __return__.system is header.system and __return__.tools is header.tools
    post: __return__.provider == get(header.config, "provider") and __return__.model == get(header.config, "model")
    """
    config = header.config
    return Request(
        provider=get(config, "provider"),
        model=get(config, "model"),
        reasoning_effort=get(config, "reasoningEffort"),
        messages=request_messages(header, boundary),
        system=header.system,
        tools=header.tools,
        temperature=get(config, "temperature"),
        max_tokens=get(config, "maxTokens"),
        stop=get(config, "stop"),
    )


REQUEST_KEYS = (
    ("provider", "provider"),
    ("model", "model"),
    ("reasoningEffort", "reasoning_effort"),
    ("messages", "messages"),
    ("system", "system"),
    ("tools", "tools"),
    ("temperature", "temperature"),
    ("maxTokens", "max_tokens"),
    ("stop", "stop"),
)


def request_to_json(request: Request) -> JsonObject:
    """The request in the real key order
    ``provider, model, reasoningEffort?, messages, system?, tools?, temperature?, maxTokens?, stop?``;
    absent stays absent.

    post: "messages" in __return__
    post: list(__return__.keys()) == [k for k, _ in REQUEST_KEYS if k in __return__]
    post: all((getattr(request, attr) is ABSENT) == (key not in __return__) for key, attr in REQUEST_KEYS)
    """
    pairs: list[tuple[str, Json]] = []
    for key, attr in REQUEST_KEYS:
        value: Json | Absent = getattr(request, attr)
        if value is not ABSENT:
            pairs.append((key, value))
    return JsonObject(pairs)
