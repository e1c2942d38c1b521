"""Recording which decision outcomes a run of the model takes (issue 43), without changing the model.

:func:`recording` swaps, for the duration of a ``with`` block, the code of every function of model/ for
the code of its instrumented twin (spec/decision_points.py: the same function, reporting each decision's
outcome to the probe), and swaps it back afterwards.  The functions stay the same objects, so every
reference to them -- imported names, registered hooks, the ``@implements`` registry -- runs the
instrumented code; nothing is re-imported and no module of model/ is edited.  A closure made before the
block keeps its old code (its code object is fixed when it is made); one made inside the block is
instrumented.

The probe counts the outcomes per *pin*: a label naming what is running (a test, a vector, a machine
rule), set with :meth:`Probe.pinned`.  Outside a block nothing is recorded and nothing costs anything.

:meth:`Probe.flipped` inverts one decision while its block runs (a branch or condition takes the other
arm, a comparison moves its boundary (``<`` <-> ``<=``), a FIFO take becomes LIFO, a merge keeps the old
key, a floor becomes a ceiling): the fault a pin of that decision must catch (tests/spec/test_decision_flips.py).
"""

from __future__ import annotations

import importlib
import math
import operator
import types
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, Final, TypeVar

from sessionspec.spec.decision_points import PROBE, Decision, instrumented_module, module_files

T = TypeVar("T")
_OPERATORS: Final = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge}
_BOUNDARY_TWIN: Final = {"Lt": "LtE", "LtE": "Lt", "Gt": "GtE", "GtE": "Gt"}


class Probe:
    """What the instrumented code calls; ``hits[k]`` is the set of pins under which outcome ``k`` was taken."""

    def __init__(self, decisions: tuple[Decision, ...]) -> None:
        self.decisions = decisions
        self.outcomes: tuple[str, ...] = tuple(o for d in decisions for o in d.outcome_ids())
        self.hits: list[set[int]] = [set() for _ in self.outcomes]
        self.pins: list[str] = [""]
        self._pin_index: dict[str, int] = {"": 0}
        self.current = 0
        self.flip: int | None = None  # the first outcome index of the decision inverted now

    # ------------------------------------------------------------------ pins

    @contextmanager
    def pinned(self, label: str) -> Iterator[None]:
        """Attribute what runs inside the block to ``label`` (blocks nest: the innermost label wins)."""
        index = self._pin_index.setdefault(label, len(self.pins))
        if index == len(self.pins):
            self.pins.append(label)
        previous, self.current = self.current, index
        try:
            yield
        finally:
            self.current = previous

    @contextmanager
    def flipped(self, decision_id: str) -> Iterator[None]:
        """Invert the decision ``decision_id`` while the block runs."""
        first = 0
        for decision in self.decisions:
            if decision.id == decision_id:
                break
            first += len(decision.outcomes)
        else:
            raise KeyError(decision_id)
        previous, self.flip = self.flip, first
        try:
            yield
        finally:
            self.flip = previous

    def taken(self) -> dict[str, frozenset[str]]:
        """Outcome id -> the pins under which it was taken (the unnamed pin is ``""``)."""
        return {self.outcomes[k]: frozenset(self.pins[p] for p in pins) for k, pins in enumerate(self.hits) if pins}

    def reset(self) -> None:
        for pins in self.hits:
            pins.clear()


class ModuleProbe:
    """The probe as one module's instrumented code sees it: its outcome numbers are module-local."""

    def __init__(self, probe: Probe, offset: int) -> None:
        self.probe, self.offset = probe, offset

    def _take(self, k: int) -> None:
        probe = self.probe
        probe.hits[self.offset + k].add(probe.current)

    def _flipped(self, k: int) -> bool:
        return self.probe.flip == self.offset + k

    def truth(self, k: int, value: T) -> T | bool:
        if self._flipped(k):
            self._take(k + 1 if value else k)
            return not value
        self._take(k if value else k + 1)
        return value

    def compare(self, k: int, a: Any, b: Any, op: str) -> bool:
        result = bool(_OPERATORS[_BOUNDARY_TWIN[op] if self._flipped(k) else op](a, b))
        self._take(k if a < b else k + 1 if a == b else k + 2)
        return result

    def extreme(self, k: int, pick: Callable[..., T], a: Any, b: Any, *rest: Any) -> T:
        self._take(k if a < b else k + 1 if a == b else k + 2)
        if self._flipped(k):
            pick = max if pick is min else min
        return pick(a, b, *rest)

    def hit(self, k: int) -> None:
        self._take(k)

    def loop(self, k: int, iterable: Iterable[T]) -> Iterator[T]:
        some = False
        for item in iterable:
            if not some:
                some = True
                self._take(k + 1)
            yield item
        if not some:
            self._take(k)

    def pop(self, k: int, collection: Any, *index: Any) -> Any:
        """A FIFO (``pop(0)``) or LIFO (``pop()``) take; flipped, the other end."""
        self._take(k if len(collection) <= 1 else k + 1)
        if self._flipped(k):
            return collection.pop() if index else collection.pop(0)
        return collection.pop(*index)

    def items(self, k: int, collection: Any) -> Any:
        """A collection whose order the caller uses (reversed, sorted, min/max): one item or fewer, or several;
        flipped, the caller gets it in the opposite order."""
        if not hasattr(collection, "__len__") or self._flipped(k):
            collection = list(collection)
        self._take(k if len(collection) <= 1 else k + 1)
        return collection[::-1] if self._flipped(k) else collection

    def update(self, k: int, target: Any, changes: Any) -> None:
        """``target.update(changes)``: the later value wins a shared key; flipped, the earlier one does.  A set's
        update (``attempts.failed.update(...)``) has elements, not pairs: ``overlap`` is an element already there,
        and a flip changes nothing (a set keeps one copy, no value to prefer)."""
        if not hasattr(target, "keys"):
            elements = list(changes)
            self._take(k + 1 if any(element in target for element in elements) else k)
            target.update(elements)
            return
        pairs = list(changes.items()) if hasattr(changes, "items") else list(changes)
        overlap = any(key in target for key, _ in pairs)
        self._take(k + 1 if overlap else k)
        if self._flipped(k):
            pairs = [(key, value) for key, value in pairs if key not in target]
        target.update(pairs)

    def rounded(self, k: int, rounding: Callable[[Any], Any], value: Any) -> Any:
        result = rounding(value)
        self._take(k if result == value else k + 1)
        if self._flipped(k):
            # floor <-> ceil; round() goes the other way from where it went
            if rounding is math.floor or (rounding is not math.ceil and result == math.floor(value)):
                return math.ceil(value)
            return math.floor(value)
        return result

    def floordiv(self, k: int, a: Any, b: Any) -> Any:
        result = a // b
        self._take(k if a % b == 0 else k + 1)
        return -(-a // b) if self._flipped(k) else result


def _live_functions(module: types.ModuleType) -> Iterator[types.FunctionType]:
    """The functions defined in ``module``: module level (a cached one's wrapped function), in its classes
    (methods, static and class methods, property accessors), and in its module-level tables (a lambda held in a dict, tuple or list, such
    as event_shape's FIELD_TYPES: no name reaches it, but the model runs it)."""
    seen: set[int] = set()  # a lambda two tables hold is swapped once
    for value in list(vars(module).values()):
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            yield value
        elif _is_cached(value, module):
            yield value.__wrapped__  # a @cache function: its cache misses run the code swapped here
        elif isinstance(value, dict | tuple | list):
            for function in _tabled_lambdas(value, module.__name__):
                if id(function) not in seen:
                    seen.add(id(function))
                    yield function
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for member in vars(value).values():
                if isinstance(member, staticmethod | classmethod):
                    member = member.__func__
                if isinstance(member, property):
                    yield from (f for f in (member.fget, member.fset, member.fdel) if isinstance(f, types.FunctionType))
                elif isinstance(member, types.FunctionType):
                    yield member


def _cached(module: types.ModuleType) -> list[Callable[[], None]]:
    """The ``cache_clear`` of each ``@cache`` function of ``module``: a recording starts and ends with them empty,
    so what it counts does not depend on what ran before it (a warm cache never runs the body), and no answer
    computed with a decision flipped outlives the block."""
    return [value.cache_clear for value in vars(module).values() if _is_cached(value, module)]


def _is_cached(value: object, module: types.ModuleType) -> bool:
    """``value`` is a ``functools.cache`` of a function of ``module``."""
    wrapped = getattr(value, "__wrapped__", None)
    return isinstance(wrapped, types.FunctionType) and wrapped.__module__ == module.__name__ and callable(getattr(value, "cache_clear", None))


def _tabled_lambdas(table: object, module: str, depth: int = 4) -> Iterator[types.FunctionType]:
    """The lambdas of ``module`` inside a table (nested dicts, tuples and lists, ``depth`` levels down)."""
    items = table.values() if isinstance(table, dict) else table if isinstance(table, tuple | list) else ()
    for item in list(items):
        if isinstance(item, types.FunctionType) and item.__module__ == module and item.__name__ == "<lambda>":
            yield item
        elif depth > 1 and isinstance(item, dict | tuple | list):
            yield from _tabled_lambdas(item, module, depth - 1)


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


@cache
def _twins(name: str, path: str) -> dict[tuple[str, int], types.CodeType]:
    """The instrumented code objects of a module by (qualified name, first line); two sharing both (lambdas on
    one line) are left out, since either could be the other's twin."""
    _, tree = instrumented_module(name)
    codes = list(_code_objects(compile(tree, path, "exec")))
    keys = Counter((c.co_qualname, c.co_firstlineno) for c in codes)
    return {(c.co_qualname, c.co_firstlineno): c for c in codes if keys[(c.co_qualname, c.co_firstlineno)] == 1}


@contextmanager
def recording(probe: Probe | None = None) -> Iterator[Probe]:
    """Run the block with every function of model/ instrumented; yields the probe that counted."""
    from sessionspec.spec.decision_points import derive_decisions

    probe = probe or Probe(derive_decisions())
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []
    clears: list[Callable[[], None]] = []
    # A recording inside another (a test of the probe while the suite's pins are recorded) hands each module's
    # probe back on exit, so the outer recording goes on counting.
    outer: list[tuple[types.ModuleType, object]] = []  # each module's probe before the block (None: it had none)
    offset = 0
    try:
        for name, path in module_files():
            decisions, _ = instrumented_module(name)
            module = importlib.import_module(f"sessionspec.model.{name}")
            twins = _twins(name, str(path))
            outer.append((module, getattr(module, PROBE, None)))
            setattr(module, PROBE, ModuleProbe(probe, offset))
            clears.extend(_cached(module))
            for function in _live_functions(module):
                twin = twins.get((function.__code__.co_qualname, function.__code__.co_firstlineno))
                if twin is not None and twin.co_freevars == function.__code__.co_freevars:
                    swapped.append((function, function.__code__))
                    function.__code__ = twin
            offset += sum(len(d.outcomes) for d in decisions)
        for clear in clears:
            clear()
        yield probe
    finally:
        for function, code in reversed(swapped):
            function.__code__ = code
        for clear in clears:
            clear()
        for module, held in outer:
            if held is None:
                delattr(module, PROBE)
            else:
                setattr(module, PROBE, held)
