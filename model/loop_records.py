"""What the loop writes that its log rules read back: the prompt baked with its prefix contexts (LOOP-4), the
provenance a message records (LOOP-11) and the end of a turn that stops after its steps (LOG-11).

The loop (:mod:`sessionspec.model.loop`) writes with these, and ``sessionspec check`` reads a log against them
(:mod:`sessionspec.model.loop_log`): one definition for both sides, in a module light enough for the checker to
import without the loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from sessionspec.model.jsonval import Absent, Json, JsonObject, get

# LOOP-4: "the delimiter block ``{type:"text", text:"\n\n## My request:\n"}``".
REQUEST_DELIMITER: Final = JsonObject((("type", "text"), ("text", "\n\n## My request:\n")))


def prefixed_content(contexts: Iterable[tuple[Json, ...]], prompt: tuple[Json, ...]) -> tuple[Json, ...]:
    """The logged content of a prompt with ``prompt-prefix`` contexts: their content, concatenated, then the
    delimiter block, then the prompt content."""
    content: list[Json] = []
    for blocks in contexts:
        content.extend(blocks)
    content.append(REQUEST_DELIMITER)
    content.extend(prompt)
    return tuple(content)


def message_provenance(config: Json) -> JsonObject:
    """The ``provenance`` of an assistant message, from the header config it was requested with: its ``provider``
    and ``model``."""
    fields = (("provider", get(config, "provider")), ("model", get(config, "model")))
    return JsonObject((key, value) for key, value in fields if not isinstance(value, Absent))


def stop_reason(max_tokens: bool) -> JsonObject:
    """The end of a turn that stops after a step: ``max-tokens`` when a step of the turn finished ``max-tokens``,
    else ``completed`` (LOG-11's precedence)."""
    return JsonObject((("kind", "max-tokens" if max_tokens else "completed"),))
