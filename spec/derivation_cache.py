"""What the properties ask of a caching implementation of the derivation (DER-7).

P-LOG-2, P-SURF-5 and P-DER-1 are stated against a cache passed in (the checker's
``sessionspec.fast.derivation`` is one), so spec/ needs no implementation; :func:`messages_eq` is the
JSONEQ of two message lists they compare with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from sessionspec.model.jsonval import Json, JsonObject, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


class DerivationCache(Protocol):
    """What P-LOG-2, P-SURF-5 and P-DER-1 ask of a caching implementation of
    the derivation (DER-7 constrains such implementations; the property is
    stated here and the implementation under test is passed in, so spec/ needs
    no implementation)."""

    @property
    def events(self) -> Sequence[Event]: ...

    @property
    def nodes(self) -> tuple[int, ...]: ...

    @property
    def replace_generation(self) -> int: ...

    def append(self, event: Event) -> Rejected | None: ...

    def messages(self) -> tuple[JsonObject, ...]: ...


# A fresh, empty cache for a dialect (the checker's ``sessionspec.fast.derivation`` is one).
CacheFactory = Callable[[Dialect], DerivationCache]


def messages_eq(a: Sequence[Json], b: Sequence[Json]) -> bool:
    """Two message lists are equal message by message under JSONEQ."""
    return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
