"""What the scenario shapes of proofs/scenarios.py add for issue 43: the request listener's keys and the tools."""

from __future__ import annotations

from enum import Enum

from sessionspec.model.jsonval import Json, JsonObject


class ListenerChoice(Enum):
    """What the ``agent/request`` listener sets (issue 43): nothing, a key the seed lacks, or the seed's own keys."""

    NONE = "none"
    TEMPERATURE = "temperature"
    SEED_KEYS = "seed keys"  # provider and model overridden, reasoningEffort added


class ToolsChoice(Enum):
    """The agent's tools (issue 43): none, one, or one that grows to two before the second turn (a change header)."""

    NONE = "none"
    ECHO = "echo"
    ECHO_THEN_BOTH = "echo, then echo and shout"


LISTENED: dict[ListenerChoice, JsonObject] = {
    ListenerChoice.NONE: JsonObject(()),
    ListenerChoice.TEMPERATURE: JsonObject((("temperature", 0.5),)),
    ListenerChoice.SEED_KEYS: JsonObject((("provider", "other-provider"), ("model", "other-model"), ("reasoningEffort", "high"))),
}
ECHO_TOOL = JsonObject((("name", "echo"), ("description", "echo"), ("parameters", JsonObject((("type", "object"),)))))
SHOUT_TOOL = JsonObject((("name", "shout"), ("description", "shout"), ("parameters", JsonObject((("type", "object"),)))))


def tools_of(choice: ToolsChoice, turn: int) -> tuple[Json, ...]:
    match choice:
        case ToolsChoice.NONE:
            return ()
        case ToolsChoice.ECHO:
            return (ECHO_TOOL,)
        case ToolsChoice.ECHO_THEN_BOTH:
            return (ECHO_TOOL,) if turn == 1 else (ECHO_TOOL, SHOUT_TOOL)
