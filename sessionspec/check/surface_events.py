"""The log before the current event, as the one loop's folds read it (:class:`SurfaceEvents`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final, overload

from sessionspec.model.log import Event
from sessionspec.model.surface import SurfacePlan


@final
class SurfaceEvents(Sequence[Event]):
    """The log before the current event, as the folds and the surface fold read it: its length
    is the number of events taken, and an event is found by its seq (LOG-1: ``seq`` is its
    index) while it is on the surface.  What reads the log before an event (SURF-7's rewrite
    check, a summary's and a prune's checks) reads only surface nodes, so an event is dropped
    once it leaves the surface (a replace shadows it) and a log-only event is never kept:
    memory is bounded by the surface, not the log (issue 26)."""

    __slots__ = ("by_seq", "taken")

    def __init__(self) -> None:
        self.by_seq: dict[int, Event] = {}
        self.taken = 0

    def __len__(self) -> int:
        return self.taken

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            raise TypeError("the log before an event is read one surface event at a time")
        if not 0 <= index < self.taken:
            raise IndexError(index)
        return self.by_seq[index]

    def commit(self, event: Event, plan: SurfacePlan | None, removed: Sequence[int]) -> None:
        """After ``event`` was folded: keep it if it joined the surface, drop what it shadowed."""
        for seq in removed:
            del self.by_seq[seq]
        if plan is not None:
            self.by_seq[event.seq] = event
        self.taken += 1
