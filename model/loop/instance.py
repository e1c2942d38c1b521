"""The loop instance (LOOP-1, PFX-1) and the per-request decisions that read it:
the turn number (LOOP-2), the config seed (LOOP-8), the header record (LOOP-9)
and a fork child's seed (LOG-15)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.header import EpochHeader, HeaderReason, header_eq
from sessionspec.model.jsonval import Absent, Json, JsonObject, get
from sessionspec.model.log import Event
from sessionspec.model.loop.script import AgentConfig
from sessionspec.model.prefix import NOT_COMPOSED, NotComposed
from sessionspec.model.rules import implements

# the message of the header append's rejection of a non-JSON prefix.
LOSSY_HEADER_MESSAGE: Final = "request/header data is not lossless JSON"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoopInstance:
    """LOOP-1 / PFX-1: ``{loggedHeader, prefix}`` (``disposed`` only ends the
    instance's life; nothing conversational lives here)."""

    logged_header: bool = False
    prefix: NotComposed | tuple[Json, ...] = NOT_COMPOSED
    disposed: bool = False
    # the cached prefix holds a clonable value that is not lossless JSON
    # (the JSON part is in ``prefix``); every later header append fails.
    prefix_lossy: bool = False


@implements("LOOP-1", "PFX-1")
def new_instance() -> LoopInstance:
    """LOOP-1: "The model MUST keep per-instance state ``{loggedHeader: bool =
    False, prefix = NOT_COMPOSED}`` and nothing else."  A process start,
    ``agents.resume()``, a fork child or a new agent over a log.
    PFX-1: "Each loop instance MUST own exactly one prefix cache, which starts as `NOT_COMPOSED`."
    """
    return LoopInstance()


@implements("LOOP-2")
def next_turn_number(log: Sequence[Event]) -> int:
    """LOOP-2: "The turn number MUST be `turn/start.data.turn` of the **last** `turn/start` in the log, by
    position, plus 1."

    If the log has no ``turn/start``, it is 1."""
    for event in reversed(log):
        if event.type == "turn/start":
            turn = get(event.data, "turn")
            if isinstance(turn, int) and not isinstance(turn, bool):
                return turn + 1
    return 1



@implements("LOOP-8")
def seed_config(instance: LoopInstance, agent: AgentConfig, logged: EpochHeader | Absent) -> JsonObject:
    """LOOP-8: "The first request of an instance (`loggedHeader == False`) MUST seed its config from the agent
    options as `{provider: options.provider or "", model: options.model or ""}`."

    LOOP-8: the first request of an instance seeds ``{provider, model}`` from
    the agent options, adding ``reasoningEffort`` from the logged header only when
    the logged provider and model equal the options; temperature, maxTokens and
    stop are not inherited (Q-10).  Later requests seed from ``requestHeader().config``."""
    if instance.logged_header and isinstance(logged, EpochHeader) and isinstance(logged.config, JsonObject):
        return logged.config
    pairs: list[tuple[str, Json]] = [("provider", agent.provider), ("model", agent.model)]
    if isinstance(logged, EpochHeader):
        effort = get(logged.config, "reasoningEffort")
        if (
            get(logged.config, "provider") == agent.provider
            and get(logged.config, "model") == agent.model
            and not isinstance(effort, Absent)
        ):
            pairs.append(("reasoningEffort", effort))
    return JsonObject(pairs)


def apply_request_listener(seed: JsonObject, changes: JsonObject) -> JsonObject:
    """The ``agent/request`` waterfall as ``{...seed, ...changes}``; the seed itself
    is frozen, so delegation cannot mutate it (LOOP-8)."""
    merged = dict(seed)
    merged.update(changes)
    return JsonObject(merged.items())


@implements("LOOP-9", "PFX-15")
def header_record(instance: LoopInstance, logged: EpochHeader | Absent, header: EpochHeader) -> HeaderReason | None:
    """LOOP-9: "Header recording MUST follow these rules:"

    LOOP-9: the instance's first header is always written (``initial`` when the
    log has none, else ``resume``); later headers only when ``not headerEq``
    with the latest logged header (``change``).
    PFX-15: "Within one instance, every `request/header` the instance writes MUST carry the same
    `messagePrefix` (or none)."
    """
    if not instance.logged_header:
        return HeaderReason.INITIAL if isinstance(logged, Absent) else HeaderReason.RESUME
    if isinstance(logged, Absent) or not header_eq(logged, header):
        return HeaderReason.CHANGE
    return None



@implements("LOG-15")
def fork_seed(log: Sequence[Event]) -> tuple[Event, ...]:
    """A fork child's seed: the source up to the end of its latest completed turn
    (through the last ``turn/end``); the child runs in a new instance (PFX-1).
    LOG-15: "A fork MUST create a child seeded with `events[0..boundary]` (inclusive) of the live source."
    """
    for index in range(len(log) - 1, -1, -1):
        if log[index].type == "turn/end":
            return tuple(log[: index + 1])
    return ()
