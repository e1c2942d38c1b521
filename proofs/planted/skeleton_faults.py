"""The log-skeleton contracts of :mod:`proofs.skeletons` on broken variants of the checker's functions.

Each variant is installed by patching the module attribute the contract looks
up (``sessionspec.fast.request_points.request_points``, ``model.reconstruct.derive``,
``model.surface.fold_surface``) for the duration of one call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from types import ModuleType
from typing import Any

import sessionspec.fast.request_points
import sessionspec.model.reconstruct
import sessionspec.model.surface
from proofs.skeletons import Skeleton, agree, build, folds
from sessionspec import model
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfaceFold

_REAL_POINTS = sessionspec.fast.request_points.request_points
_REAL_DERIVE = model.reconstruct.derive  # type: ignore[attr-defined]  # the name the rebuild looks up
_REAL_FOLD = model.surface.fold_surface


@contextmanager
def _swap(module: ModuleType, name: str, value: Callable[..., Any]) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def points_ignoring_first_live(events: Sequence[Event], dialect: Dialect = Dialect.A55, first_live_seq: int = 0) -> Any:
    """INV-7 broken: the seed's steps are counted as live requests."""
    return _REAL_POINTS(events, dialect, 0)


def points_ignoring_change_headers(events: Sequence[Event], dialect: Dialect = Dialect.A55, first_live_seq: int = 0) -> Any:
    """HDR-9 broken: every request keeps the first header it saw (a ``change`` header is ignored)."""
    points = _REAL_POINTS(events, dialect, first_live_seq)
    if isinstance(points, Rejected) or not points:
        return points
    return tuple(replace(p, header=points[0].header) for p in points)


def derive_duplicating_replacements(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> Any:
    """DER broken (in the rebuild's derivation): a message produced by a replace is derived twice."""
    messages = _REAL_DERIVE(events, dialect)
    if isinstance(messages, Rejected) or not any(isinstance(e.surface_op, JsonObject) for e in events):
        return messages
    return (*messages, messages[-1]) if messages else messages


def fold_not_counting_prunes(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> SurfaceFold | Rejected:
    """SURF-10 broken: a single-node replace (a prune) does not count in ``replaceGeneration``.

    post: isinstance(__return__, Rejected) or __return__.state.replace_generation == len(__return__.replacements)
    post: isinstance(__return__, Rejected) or len(set(__return__.state.nodes)) == len(__return__.state.nodes)
    post: isinstance(__return__, Rejected) or all(0 <= seq < len(events) for seq in __return__.state.nodes)
    """
    fold = _REAL_FOLD(events, dialect)
    if isinstance(fold, Rejected):
        return fold
    prunes = sum(1 for r in fold.replacements if len(r.shadowed) == 1)
    return replace(fold, state=replace(fold.state, replace_generation=fold.state.replace_generation - prunes))


def seed_counted(sk: Skeleton) -> str | None:
    """request_points_agree with :func:`points_ignoring_first_live`.

    post: __return__ is None
    """
    with _swap(sessionspec.fast.request_points, "request_points", points_ignoring_first_live):
        return agree(build(sk))


def change_header_ignored(sk: Skeleton) -> str | None:
    """request_points_agree with :func:`points_ignoring_change_headers`.

    post: __return__ is None
    """
    with _swap(sessionspec.fast.request_points, "request_points", points_ignoring_change_headers):
        return agree(build(sk))


def replacement_duplicated(sk: Skeleton) -> str | None:
    """request_points_agree with :func:`derive_duplicating_replacements` in the rebuild.

    post: __return__ is None
    """
    with _swap(model.reconstruct, "derive", derive_duplicating_replacements):
        return agree(build(sk))


def prune_uncounted(sk: Skeleton) -> str | None:
    """surface_folds with :func:`fold_not_counting_prunes`.

    post: __return__ is None
    """
    with _swap(model.surface, "fold_surface", fold_not_counting_prunes):
        return folds(build(sk))
