"""Hypothesis strategies for request headers (HDR).

- :func:`configs` — ``LlmCallConfig`` objects in the logged key order;
- :func:`tool_schemas`, :func:`prefix_messages` — a header's tools and session-prefix messages;
- :func:`headers`, :func:`canonical_headers` — :class:`~model.header.EpochHeader` values (``headers`` may carry
  empty optional fields; ``canonical_headers`` never do).

``st.from_type(EpochHeader)`` gives :func:`canonical_headers` once this module is imported.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from hypothesis import strategies as st

from sessionspec.model.header import EpochHeader, canonical
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, obj
from sessionspec.model.loop import text_content
from sessionspec.spec.json_strategies import texts

PROVIDERS: Final = ("mock", "deepseek-official")
MODELS: Final = ("mock-1", "deepseek-v4-flash")


def _config(provider: str, model: str, optional: tuple[tuple[str, Json], ...]) -> JsonObject:
    return obj((("provider", provider), ("model", model), *optional))


@cache
def configs() -> st.SearchStrategy[JsonObject]:
    """An ``LlmCallConfig`` in the logged key order (HDR-1), non-empty provider/model."""
    optional: list[st.SearchStrategy[tuple[tuple[str, Json], ...]]] = [
        st.one_of(st.just(()), st.sampled_from(("low", "high")).map(lambda v: (("reasoningEffort", v),))),
        st.one_of(st.just(()), st.sampled_from((0, 0.5, 1)).map(lambda v: (("temperature", v),))),
        st.one_of(st.just(()), st.sampled_from((256, 1024)).map(lambda v: (("maxTokens", v),))),
        st.one_of(st.just(()), st.lists(st.sampled_from(("END", "\n\n")), max_size=2).map(lambda v: (("stop", tuple(v)),))),
    ]
    return st.builds(
        _config,
        st.sampled_from(PROVIDERS),
        st.sampled_from(MODELS),
        st.tuples(*optional).map(lambda parts: tuple(pair for part in parts for pair in part)),
    )


def _tool_schema(name: str, description: str) -> JsonObject:
    parameters = obj((("type", "object"), ("properties", obj())))
    return obj((("name", name), ("description", description), ("parameters", parameters)))


@cache
def tool_schemas() -> st.SearchStrategy[JsonObject]:
    """``ToolSchema {name, description, parameters}`` (HDR-1)."""
    return st.builds(
        _tool_schema,
        st.sampled_from(("read", "write", "dump")),
        st.sampled_from(("reads", "writes", "")),
    )


@cache
def prefix_messages() -> st.SearchStrategy[JsonObject]:
    return st.builds(
        lambda role, text: obj((("role", role), ("content", text_content(text)))),
        st.sampled_from(("user", "assistant")),
        texts(),
    )


@cache
def headers() -> st.SearchStrategy[EpochHeader]:
    """A raw ``EpochHeader``: optional fields may be absent, empty or populated."""
    absent: st.SearchStrategy[Absent] = st.just(ABSENT)
    return st.builds(
        lambda config, system, tools, prefix: EpochHeader(config=config, system=system, tools=tools, message_prefix=prefix),
        configs(),
        st.one_of(absent, st.just(""), st.sampled_from(("You are an agent.", "Sys 🙂"))),
        st.one_of(absent, st.lists(tool_schemas(), max_size=3).map(tuple)),
        st.one_of(absent, st.lists(prefix_messages(), max_size=2).map(tuple)),
    )


@cache
def canonical_headers() -> st.SearchStrategy[EpochHeader]:
    """Canonical A55 headers (HDR-2): empty optional fields are absent."""
    return headers().map(canonical)


st.register_type_strategy(EpochHeader, canonical_headers())
