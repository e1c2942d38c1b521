"""Broken loop variants, installed by patching (never by parameters of model functions).

:func:`installed` patches, for the duration of a ``with`` block, the names the
loop looks up at call time: ``model.loop.run_turn`` (wrappers that break the
instance state between turns), and the ``build_request`` / ``compose`` /
``IncrementalDerivation`` each loop module imported (``model.loop`` and, once it
is a package, every ``model.loop.*`` submodule that binds the name).  The
original bindings are restored on exit, also when the block raises.

Each fault breaks exactly one rule; the property that must catch it is named
in :data:`CATCHES`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from types import ModuleType
from typing import Any

import sessionspec.fast.request_points
import sessionspec.model.derive
import sessionspec.model.loop
import sessionspec.model.prefix
import sessionspec.model.reconstruct
import sessionspec.model.wire
from sessionspec import model
from sessionspec.model.header import EpochHeader, prefix_messages
from sessionspec.model.jsonval import Json, JsonObject, get
from sessionspec.model.prefix import NOT_COMPOSED, frozen_copy
from sessionspec.model.wire import Request
from sessionspec.planted.loop import Planted, planted

# Replay only (proofs/planted/hunt.py): planted callees check their own
# postconditions, as CrossHair's strict callee contracts do during the search.
CHECK_CALLEE_POSTS = False


class CalleePostconditionFailed(AssertionError):
    """A planted callee broke its own postcondition (replay of a strict-callee counterexample)."""


def _checking(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` evaluating its own ``post:`` lines after every call."""
    import inspect

    texts = [line.split(":", 1)[1].strip() for line in (inspect.getdoc(fn) or "").splitlines()
             if line.strip().startswith("post:")]

    def checked(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        bound = inspect.signature(fn).bind(*args, **kwargs)
        scope = {**fn.__globals__, **bound.arguments, "__return__": result}
        for text in texts:
            if not eval(text, scope):  # noqa: S307 - our own contract text
                raise CalleePostconditionFailed(f"{fn.__name__}: post: {text}")
        return result

    return checked


class LoopFault(Enum):
    CACHE_INTERRUPTED = "cache an interrupted composition"
    RECOMPOSE_EVERY_TURN = "recompose every turn"
    NO_CLONE = "prefix not cloned (the cache aliases the contributors' objects)"
    PREFIX_AFTER_HISTORY = "prefix after history"
    SNAPSHOT_AFTER_REQUEST = "boundary taken after agent/request"
    IGNORE_SCOPE = "dispatch the waterfall to other agents' scoped listeners"
    SWAP_SYSTEM_TOOLS = "build_request swaps system and tools (shared by the loop and the rebuild)"
    # Issue 43: two of the held-out faults the scenario shapes now reach (steering, a request listener).
    STEERING_LIFO = "steering drained last-in first-out"
    SEED_KEYS_WIN = "an agent/request listener cannot override a key the seed set"


# fault -> the scenario contract (proofs.scenarios) whose postcondition must fail.
CATCHES: dict[LoopFault, str] = {
    LoopFault.CACHE_INTERRUPTED: "discard",
    LoopFault.RECOMPOSE_EVERY_TURN: "freeze",
    LoopFault.NO_CLONE: "freeze",
    LoopFault.PREFIX_AFTER_HISTORY: "reconstructability",
    LoopFault.SNAPSHOT_AFTER_REQUEST: "reconstructability",
    LoopFault.IGNORE_SCOPE: "freeze",
    LoopFault.SWAP_SYSTEM_TOOLS: "reconstructability",
    LoopFault.STEERING_LIFO: "orders",
    LoopFault.SEED_KEYS_WIN: "orders",
}


def loop_modules() -> list[ModuleType]:
    """``model.loop`` and its submodules (the loop may be a package)."""
    return [m for name, m in sorted(sys.modules.items())
            if (name == "sessionspec.model.loop" or name.startswith("sessionspec.model.loop.")) and isinstance(m, ModuleType)]


def _bindings(modules: Sequence[ModuleType], name: str, original: object) -> list[tuple[ModuleType, str]]:
    return [(m, name) for m in modules if getattr(m, name, None) is original]


@contextmanager
def _patched(patches: Sequence[tuple[ModuleType, str, object]]) -> Iterator[None]:
    saved = [(m, n, getattr(m, n)) for m, n, _ in patches]
    try:
        for m, n, v in patches:
            setattr(m, n, v)
        yield
    finally:
        for m, n, v in reversed(saved):
            setattr(m, n, v)


def _in_loop(name: str, original: object, replacement: object) -> list[tuple[ModuleType, str, object]]:
    found = _bindings(loop_modules(), name, original)
    if not found:
        raise RuntimeError(f"no loop module binds {name}: the planted fault cannot be installed")
    return [(m, n, replacement) for m, n in found]


# --------------------------------------------------------------------------- the variants


def _cache_interrupted(real: Callable[..., Any]) -> Callable[..., Any]:
    """PFX-5 broken: an interrupted composition's result is written to the cache."""
    def run_turn(log: Any, instance: Any, agent: Any, script: Any, **kw: Any) -> Any:
        outcome = real(log, instance, agent, script, **kw)
        if hasattr(outcome, "interrupted_composition") and outcome.interrupted_composition and not outcome.instance.disposed:
            held = model.prefix.compose(outcome.agent.contributors, outcome.agent.agent_id).held
            outcome = replace(outcome, instance=replace(outcome.instance, prefix=frozen_copy(held)))
        return outcome
    return run_turn


def _recompose_every_turn(real: Callable[..., Any]) -> Callable[..., Any]:
    """PFX-2 broken: the cache is cleared before every turn."""
    def run_turn(log: Any, instance: Any, agent: Any, script: Any, **kw: Any) -> Any:
        return real(log, replace(instance, prefix=NOT_COMPOSED), agent, script, **kw)
    return run_turn


def _no_clone(real_run: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """PFX-6 broken: the cache is the waterfall's live result, so a contributor's
    later edit of the objects it returned reaches the cached prefix.  Modelled as:
    after each turn the cache is re-read from the live objects."""
    live: dict[int, tuple[object, list[object]]] = {}  # id(cached prefix) -> (prefix, live objects)
    last: list[list[object]] = []
    real_compose = model.prefix.compose

    def compose(contributors: Any, agent_id: Any = None) -> Any:
        comp = real_compose(contributors, agent_id)
        last.append(comp.held)
        return comp

    def run_turn(log: Any, instance: Any, agent: Any, script: Any, **kw: Any) -> Any:
        del last[:]
        outcome = real_run(log, instance, agent, script, **kw)
        if not hasattr(outcome, "instance") or not isinstance(outcome.instance.prefix, tuple):
            return outcome
        prefix = outcome.instance.prefix
        held = last[-1] if outcome.compositions else live.get(id(prefix), (None, None))[1]
        if held is None:
            return outcome
        aliased = frozen_copy(held)  # what the aliasing cache shows now (after the contributors' edits)
        live[id(aliased)] = (aliased, held)
        return replace(outcome, instance=replace(outcome.instance, prefix=aliased))

    return run_turn, compose


def _prefix_after_history(real: Callable[..., Request]) -> Callable[..., Request]:
    """PFX-11 broken: the loop sends ``boundary ++ prefix``."""
    def build_request(header: EpochHeader, boundary: Sequence[Json]) -> Request:
        request = real(header, boundary)
        return replace(request, messages=tuple(boundary) + prefix_messages(header))
    return build_request


def swapped_build_request(header: EpochHeader, boundary: Sequence[Json]) -> Request:
    """WIRE-1 broken in the shared function: ``system`` and ``tools`` crossed.

    post: __return__.system is header.system and __return__.tools is header.tools
    """
    config = header.config
    return Request(provider=get(config, "provider"), model=get(config, "model"),
                   reasoning_effort=get(config, "reasoningEffort"),
                   messages=prefix_messages(header) + tuple(boundary),
                   system=header.tools, tools=header.system,  # BUG: crossed
                   temperature=get(config, "temperature"), max_tokens=get(config, "maxTokens"), stop=get(config, "stop"))


def _ignore_scope(real: Callable[..., Any]) -> Callable[..., Any]:
    """PFX-4 broken: every agent's scoped listeners run."""
    def compose(contributors: Any, agent_id: Any = None) -> Any:
        return real(tuple(replace(c, scope=None) for c in contributors), agent_id)
    return compose


def _drain_lifo(t: Any, pending: list[Any]) -> None:
    """LOOP-13 broken: the newest steering item is drained first."""
    while pending:
        item = pending.pop()
        t.append(model.loop.Draft(type_name="steering/message", surface_op=model.loop.APPEND,
                                  data=JsonObject((("turn", t.number), ("content", item.content), ("source", item.source)))))


def _seed_keys_win(seed: JsonObject, changes: JsonObject) -> JsonObject:
    """LOOP-7 broken: ``{...changes, ...seed}``: the listener cannot override a key of the seed."""
    merged = dict(changes)
    merged.update(seed)
    return JsonObject(merged.items())


@contextmanager
def installed(fault: LoopFault) -> Iterator[None]:
    """Install ``fault`` for the duration of the block."""
    run = model.loop.run_turn
    patches: list[tuple[ModuleType, str, object]]
    match fault:
        case LoopFault.CACHE_INTERRUPTED:
            patches = [(model.loop, "run_turn", _cache_interrupted(run))]
        case LoopFault.RECOMPOSE_EVERY_TURN:
            patches = [(model.loop, "run_turn", _recompose_every_turn(run))]
        case LoopFault.NO_CLONE:
            wrapped, compose = _no_clone(run)
            patches = [(model.loop, "run_turn", wrapped), *_in_loop("compose", model.prefix.compose, compose)]
        case LoopFault.PREFIX_AFTER_HISTORY:
            patches = _in_loop("build_request", model.wire.build_request, _prefix_after_history(model.wire.build_request))
        case LoopFault.SNAPSHOT_AFTER_REQUEST:
            # LOOP-6 broken: the boundary taken after agent/request.  The loop's stage
            # functions are the loop's to plant (one copy of the variant, shared with the
            # machines and the mutant adapters: sessionspec.planted.loop).
            with planted(Planted.SNAPSHOT_AFTER_REQUEST):
                yield
            return
        case LoopFault.IGNORE_SCOPE:
            patches = _in_loop("compose", model.prefix.compose, _ignore_scope(model.prefix.compose))
        case LoopFault.SWAP_SYSTEM_TOOLS:
            # Every module that bound build_request: the loop AND the rebuild share the bug.
            modules = [*loop_modules(), model.reconstruct, model.wire, sessionspec.fast.request_points]
            callee = _checking(swapped_build_request) if CHECK_CALLEE_POSTS else swapped_build_request
            patches = [(m, n, callee) for m, n in _bindings(modules, "build_request", model.wire.build_request)]
        case LoopFault.STEERING_LIFO:
            patches = _in_loop("drain_steering", model.loop.drain_steering, _drain_lifo)
        case LoopFault.SEED_KEYS_WIN:
            patches = _in_loop("apply_request_listener", model.loop.apply_request_listener, _seed_keys_win)
    with _patched(patches):
        yield
