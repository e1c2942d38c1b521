"""CrossHair plugin: symbolic JSON values and strict callee contracts.

Loaded with ``crosshair check --extra_plugin proofs/plugin.py`` (``proofs/run``
always passes it).  CrossHair executes the plugin file before it imports the
target, so :func:`install` runs before any ``model`` module binds the ``Json``
alias.  It does three things:

1. **Symbolic JSON.**  ``model.jsonval.Json`` is a recursive ``TypeAlias``
   (``tuple["Json", ...]``) that CrossHair 0.0.113 cannot expand.  The plugin
   rebinds ``model.jsonval.Json`` to the marker class :class:`JsonValue` (never
   instantiated) before the other model modules import it, and registers a
   factory for it: a bounded-depth JSON value (null, bool, safe int, finite
   float, str, array, object).  It registers a factory for ``JsonObject`` too:
   a real, immutable ``JsonObject`` whose keys come from :data:`KEYS` (the keys
   the model reads) and whose values are symbolic JSON.  Depth, array/object
   sizes and whether strings are symbolic are configurable through the
   environment (``SESSIONSPEC_CH_JSON_DEPTH``, ``SESSIONSPEC_CH_JSON_ITEMS``,
   ``SESSIONSPEC_CH_JSON_STR=symbolic|concrete``).
2. **Copyable JsonObject.**  CrossHair deep-copies arguments (to report them
   and to check ``__old__``); the default ``dict`` reconstruction goes through
   ``__setitem__``, which ``JsonObject`` forbids.  A ``copyreg`` reducer makes
   copies through the constructor instead.
3. **Strict callee contracts.**  Stock CrossHair drops a path silently when a
   *called* function's postcondition fails (``ExceptionFilter`` treats
   ``PostconditionFailed`` like ``IgnoreAttempt``).  With the plugin a failed
   callee postcondition is reported as a refutation of the caller: a bug shared
   by two callees (the loop and the rebuild both calling ``build_request``) is
   no longer invisible.  This patches CrossHair internals; the version is
   pinned in ``pyproject.toml`` and ``tests/proofs/test_proofs.py`` tests the hook.
"""

from __future__ import annotations

import copyreg
import os
import sys
from typing import Any, Final

# The keys the model reads from JSON objects (events, messages, blocks, configs).
KEYS: Final = ("type", "text", "role", "content", "id", "callId", "name", "isError", "kind",
               "provider", "model", "temperature", "maxTokens", "stop")
MAX_SAFE_INTEGER: Final = 2**53 - 1


class JsonValue:
    """Marker type standing for the ``Json`` alias while CrossHair analyses (never instantiated)."""


def _settings() -> tuple[int, int, bool]:
    depth = int(os.environ.get("SESSIONSPEC_CH_JSON_DEPTH", "2"))
    items = int(os.environ.get("SESSIONSPEC_CH_JSON_ITEMS", "2"))
    symbolic_str = os.environ.get("SESSIONSPEC_CH_JSON_STR", "symbolic") != "concrete"
    return depth, items, symbolic_str


def _fork(factory: Any, desc: str) -> bool:
    return bool(factory.space.smt_fork(desc=factory.get_suffixed_varname(desc)))


def _count(factory: Any, limit: int, desc: str) -> int:
    """0..limit, as a chain of forks (a fixed number of optional slots, no length precondition)."""
    n = 0
    while n < limit and _fork(factory, desc):
        n += 1
    return n


def _string(factory: Any, symbolic: bool) -> str:
    if symbolic:
        return factory(str, "_s")  # type: ignore[no-any-return]
    return ("", "a", "é𝄞")[_count(factory, 2, "_str")]


def json_value(factory: Any, depth: int | None = None) -> object:
    """A bounded JSON value of the model's domain (§0.4): tuples for arrays, JsonObject for objects."""
    from crosshair.tracers import ResumedTracing
    from crosshair.util import IgnoreAttempt

    max_depth, _, symbolic = _settings()
    depth = max_depth if depth is None else depth
    if _fork(factory, "_null"):
        return None
    if _fork(factory, "_bool"):
        return factory(bool, "_b")
    if _fork(factory, "_int"):
        n = factory(int, "_i")
        with ResumedTracing():  # type: ignore[no-untyped-call]
            safe = -MAX_SAFE_INTEGER <= n <= MAX_SAFE_INTEGER
        if not safe:
            raise IgnoreAttempt("JSON integers are safe integers")  # type: ignore[no-untyped-call]
        return n
    if _fork(factory, "_float"):
        f = factory(float, "_f")
        with ResumedTracing():  # type: ignore[no-untyped-call]
            finite = -1e300 < f < 1e300  # also excludes NaN
        if not finite:
            raise IgnoreAttempt("JSON numbers are finite")  # type: ignore[no-untyped-call]
        return f
    if depth <= 0 or _fork(factory, "_str"):
        return _string(factory, symbolic)
    if _fork(factory, "_array"):
        return json_array(factory, depth)
    return json_object(factory, depth)


def json_array(factory: Any, depth: int | None = None) -> tuple[object, ...]:
    max_depth, items, _ = _settings()
    depth = max_depth if depth is None else depth
    return tuple(json_value(factory, depth - 1) for _ in range(_count(factory, items, "_len")))


def json_object(factory: Any, depth: int | None = None) -> object:
    """A real ``JsonObject`` with distinct keys drawn from :data:`KEYS`, in a symbolic order."""
    from sessionspec.model.jsonval import JsonObject

    max_depth, items, _ = _settings()
    depth = max_depth if depth is None else depth
    pairs: list[tuple[str, object]] = []
    for _ in range(_count(factory, items, "_size")):
        free = [k for k in KEYS if k not in dict(pairs)]
        key = free[-1]
        for candidate in free[:-1]:
            if _fork(factory, "_key"):
                key = candidate
                break
        pairs.append((key, json_value(factory, depth - 1) if depth > 0 else _string(factory, _settings()[2])))
    return JsonObject(pairs)  # type: ignore[arg-type]


def _reduce_json_object(o: Any) -> tuple[Any, tuple[Any, ...]]:
    return type(o), (tuple(o.items()),)


def strict_callee_contracts() -> None:
    """Report a failed callee postcondition as a refutation (see the module docstring)."""
    from crosshair import core
    from crosshair.enforce import PostconditionFailed

    original = core.ExceptionFilter.__exit__
    if getattr(original, "_sessionspec_strict", False):
        return

    def __exit__(self: Any, exc_type: Any, exc_value: Any, tb: Any) -> bool:
        if isinstance(exc_value, PostconditionFailed):
            # Re-raise it as a user-level failure: the filter records it as REFUTED
            # with the stack, and CrossHair prints it like any exception.
            try:
                raise CalleePostconditionFailed(str(exc_value)) from None
            except CalleePostconditionFailed as converted:
                return bool(original(self, CalleePostconditionFailed, converted, converted.__traceback__))
        return bool(original(self, exc_type, exc_value, tb))

    __exit__._sessionspec_strict = True  # type: ignore[attr-defined]
    core.ExceptionFilter.__exit__ = __exit__  # type: ignore[method-assign]


class CalleePostconditionFailed(Exception):
    """A function called by the analysed one broke its own postcondition."""


def install() -> None:
    """Bind the marker before the model imports the alias, register the factories, enable strict callees."""
    from crosshair import register_type

    import sessionspec.model.jsonval as jsonval

    # model.jsonval's own imports (model.rules) never read the alias.
    stale = [name for name in sys.modules if name.startswith("sessionspec.model.") and name not in ("sessionspec.model.jsonval", "sessionspec.model.rules")]
    if stale:
        raise RuntimeError(f"proofs/plugin.py must load before the model imports the Json alias; already imported: {stale}")
    jsonval.Json = JsonValue  # type: ignore[assignment]
    register_type(JsonValue, lambda factory: json_value(factory))
    register_type(jsonval.JsonObject, lambda factory: json_object(factory))
    copyreg.pickle(jsonval.JsonObject, _reduce_json_object)
    if os.environ.get("SESSIONSPEC_CH_STRICT_CALLEES", "1") != "0":
        strict_callee_contracts()
