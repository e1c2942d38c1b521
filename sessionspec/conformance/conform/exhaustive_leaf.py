"""The letters of the exhaustive search's alphabet and the maximal traces it runs: values the search builds and its
workers consume, in their own module so that neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

from sessionspec.conformance.adapter.protocol import Response

Op = dict[str, Any]


@final
@dataclass(frozen=True, slots=True)
class Symbol:
    """One letter of the alphabet: a name (as printed) and the operation it sends."""

    name: str
    op: Op
    interrupted: bool = False

    @property
    def sends(self) -> bool:
        return bool(self.op["op"] == "send")


@final
@dataclass(frozen=True, slots=True)
class Leaf:
    """A maximal trace with the model's answer to each of its operations (``init`` ... ``log``)."""

    index: int
    agent: str
    initial: Op
    symbols: tuple[Symbol, ...]
    answers: tuple[Response, ...]

    @property
    def trace(self) -> tuple[Op, ...]:
        return tuple(s.op for s in self.symbols)
