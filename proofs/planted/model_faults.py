"""Planted copies of model functions: the real contract, a deliberately broken body."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

import proofs.scenarios as scenarios

# Names the contracts' post: lines use (CrossHair evaluates them in this module's globals).
from proofs.scenarios import (  # noqa: F401
    AGENT_ID,
    ContributorShape,
    Size,
    contributors_of,
    expected_texts,
    header_of_shape,
    history_of,
    prefix_of,
)
from sessionspec import model
from sessionspec.model.header import EpochHeader, config_eq, hdr4_clauses, prefix_messages  # noqa: F401 - used by the contracts
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, get, json_eq, thaw  # noqa: F401 - ABSENT: used by the contracts
from sessionspec.model.log import Dialect
from sessionspec.model.prefix import Composition, Contributor, ContributorFailure, Idiom
from sessionspec.model.wire import Request


def compose(contributors: Sequence[Contributor], agent_id: str | None = None) -> Composition:
    """``model.prefix.compose`` keeping the part composed before a contributor threw (PFX-12 broken).

    post: __return__.failure is None or __return__.held == []
    post: __return__.failure is not None or len(__return__.held) == sum(len(c.content) for c in contributors if c.scope is None or c.scope == agent_id)
    post: len(__return__.injects) <= sum(1 for c in contributors if c.inject is not None)
    """
    contributors = [c for c in contributors if c.scope is None or c.scope == agent_id]
    injects: list[JsonObject] = []
    partial: list[object] = []

    def run(index: int) -> list[object]:
        if index == len(contributors):
            return []
        c = contributors[index]
        if c.inject is not None:
            injects.append(c.inject)
        if c.throws is not None:
            raise _Thrown(c.throws)
        mine = [thaw(m) for m in c.content]
        partial.extend(mine)
        rest = run(index + 1)
        return mine + rest if c.idiom is Idiom.PREPEND else rest + mine

    try:
        held = run(0)
    except _Thrown as thrown:
        # BUG: what the contributors before the throw returned survives it.
        return Composition(held=partial, injects=tuple(injects), failure=ContributorFailure(message=thrown.message))
    return Composition(held=held, injects=tuple(injects), failure=None)


class _Thrown(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def build_request(header: EpochHeader, boundary: Sequence[Json]) -> Request:
    """``model.wire.build_request`` dropping the prefix when the history is empty (WIRE-1 broken).

    post: __return__.messages == prefix_messages(header) + tuple(boundary)
    post: __return__.system is header.system and __return__.tools is header.tools
    post: __return__.provider == get(header.config, "provider") and __return__.model == get(header.config, "model")
    """
    config = header.config
    prefix = prefix_messages(header) if boundary else ()  # BUG: the prefix goes with the history
    return Request(provider=get(config, "provider"), model=get(config, "model"),
                   reasoning_effort=get(config, "reasoningEffort"), messages=prefix + tuple(boundary),
                   system=header.system, tools=header.tools, temperature=get(config, "temperature"),
                   max_tokens=get(config, "maxTokens"), stop=get(config, "stop"))


# --------------------------------------------------------------------------- the shape contracts on the planted copies


@contextmanager
def _swap(module: ModuleType, name: str, value: object) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def composition(c1: ContributorShape | None, c2: ContributorShape | None, c3: ContributorShape | None) -> Composition:
    """``proofs.scenarios.composition`` with the planted :func:`compose` installed.

    post: __return__.failure is None or __return__.held == []
    post: __return__.failure is not None or len(__return__.held) == sum(1 for c in contributors_of((c1, c2, c3)) if c.scope in (None, AGENT_ID))
    post: __return__.failure is not None or [m["content"][0]["text"] for m in __return__.held] == expected_texts((c1, c2, c3))
    """
    with _swap(model.prefix, "compose", compose):
        return scenarios.composition(c1, c2, c3)


def request_of_shape(prefix: Size, history: Size, system: bool, tools: bool, temperature: bool) -> Request:
    """``proofs.scenarios.request_of_shape`` with the planted :func:`build_request` installed.

    post: __return__.messages == prefix_of(prefix) + history_of(history)
    post: __return__.system == ("system" if system else ABSENT) and (__return__.tools is ABSENT) == (not tools)
    post: __return__.provider == "mock" and __return__.temperature == (0.5 if temperature else ABSENT)
    """
    with _swap(model.wire, "build_request", build_request):
        return scenarios.request_of_shape(prefix, history, system, tools, temperature)


def header_eq(a: EpochHeader, b: EpochHeader, dialect: Dialect = Dialect.A55) -> bool:
    """``model.header.header_eq`` comparing the whole config by JSONEQ: strictly stronger than HDR-3/HDR-4 (a
    config key HDR-3 ignores makes two headers unequal, so the loop would log a needless ``change`` header).
    Symmetric and implying ``configEq``: the contract of issue 18 could not see it.

    post: __return__ == header_eq(b, a, dialect)
    post: not __return__ or config_eq(a.config, b.config)
    post: __return__ == all(hdr4_clauses(a, b, dialect))
    """
    return model.header.header_eq(a, b, dialect) and json_eq(a.config, b.config)
