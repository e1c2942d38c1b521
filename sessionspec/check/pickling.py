"""Reports and tasks cross process boundaries (``check --jobs``, the Dask path, a user's Spark or Ray job): they pickle.

A frozen dataclass compiled by mypyc (the compiled wheel, hatch_build.py) pickles its fields but unpickles by
assigning them one by one, which a frozen class refuses (``FrozenInstanceError`` in the worker, and a
``multiprocessing`` pool then restarts its workers for ever: ``check --jobs 2`` hung).  Each such class reduces
itself to a call of its constructor instead, the same in both builds (tests/check/test_pickling.py; tests/packaging
runs it on the compiled wheel).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def rebuild(cls: type[Any], values: dict[str, Any]) -> Any:
    """The value ``cls(**values)`` (module level, so it pickles by name)."""
    return cls(**values)


def reduce_by_fields(value: Any) -> tuple[Any, ...]:
    """``__reduce__`` of a frozen dataclass: rebuilt from its fields by its constructor."""
    return (rebuild, (type(value), {field.name: getattr(value, field.name) for field in fields(value)}))
