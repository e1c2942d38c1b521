"""Structural edits of real and ground-truth logs, each labelled possible or impossible (issue 25).

Five edit families, at every position of every log: ``delete`` an event, ``duplicate`` it (the
copy right after it), ``swap`` it with the next one, ``move`` it three places later, ``renumber``
it (its seq one higher, nothing else moved).  Seqs are renumbered by position and every seq
reference (``sourceEventSeqs``, replace ranges, compaction summaries' and prune records' shadowed
seqs) follows its event; a reference to a deleted event is dropped (an emptied ``sourceEventSeqs``
with it), as the conformance kit's ``drop_type`` does.

:func:`decide` labels each edited log from the rule book alone, quoting the rule; it never runs the
checker.  Where the book cannot decide from the edit's kind and the event types involved (a
chunk's content, which no rule ties to its neighbours), the decision is ``None`` with the reason,
and the log is not counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Final

from sessionspec.check.line_table import LineTable
from sessionspec.check.logfile import LogFile, read_path
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, get
from sessionspec.model.log import Event


class Kind(Enum):
    DELETE = "delete"
    DUPLICATE = "duplicate"
    SWAP = "swap"
    MOVE = "move"
    RENUMBER = "renumber"


MOVE_BY: Final = 3


@dataclass(frozen=True, slots=True)
class Edit:
    kind: Kind
    at: int


@dataclass(frozen=True, slots=True)
class Decision:
    possible: bool
    rule: str
    why: str


def _remap(value: Json, new_seq: dict[int, int]) -> Json:
    return new_seq.get(value, value) if isinstance(value, int) and not isinstance(value, bool) else value


def _remap_refs(event: Event, new_seq: dict[int, int], gone: set[int]) -> Event:
    """``event`` with its seq references following their events (dropped when the target is gone)."""
    changes: dict[str, object] = {}
    cited = event.source_event_seqs
    if isinstance(cited, tuple):
        kept = tuple(_remap(s, new_seq) for s in cited if s not in gone)
        changes["source_event_seqs"] = kept if kept or not any(s in gone for s in cited) else ABSENT
    op = event.surface_op
    if isinstance(op, JsonObject):
        changes["surface_op"] = JsonObject((k, _remap(v, new_seq) if k in ("start", "end") else v) for k, v in op.items())
    data = event.data
    if event.type.endswith("/summary") or event.type == "compaction/prune":
        if isinstance(data, JsonObject):
            rng = get(data, "shadowedRange")
            seqs = get(data, "shadowedSeqs")
            pairs: list[tuple[str, Json]] = []
            for k, v in data.items():
                if k == "shadowedRange" and isinstance(rng, JsonObject):
                    v = JsonObject((rk, _remap(rv, new_seq)) for rk, rv in rng.items())
                elif k == "shadowedSeqs" and isinstance(seqs, tuple):
                    v = tuple(_remap(s, new_seq) for s in seqs if s not in gone)
                pairs.append((k, v))
            changes["data"] = JsonObject(pairs)
    return dataclasses.replace(event, **changes) if changes else event  # type: ignore[arg-type]


def _arrange(events: Sequence[Event], order: Sequence[int], copies: Sequence[int] = ()) -> tuple[Event, ...]:
    """The events at the indices ``order`` (an index in ``copies`` marks its second occurrence as a
    copy whose references stay on the originals), seqs renumbered by position."""
    new_seq: dict[int, int] = {}
    for position, index in enumerate(order):
        new_seq.setdefault(events[index].seq, position)
    gone = {e.seq for i, e in enumerate(events) if i not in set(order)}
    out: list[Event] = []
    for position, index in enumerate(order):
        moved = _remap_refs(events[index], new_seq, gone)
        out.append(dataclasses.replace(moved, seq=position))
    return tuple(out)


def apply(events: Sequence[Event], edit: Edit) -> tuple[Event, ...] | None:
    """The edited events, or None when the edit does not apply at that position."""
    n, i = len(events), edit.at
    order = list(range(n))
    match edit.kind:
        case Kind.DELETE:
            return _arrange(events, order[:i] + order[i + 1:])
        case Kind.DUPLICATE:
            return _arrange(events, order[: i + 1] + [i] + order[i + 1:])
        case Kind.SWAP if i + 1 < n:
            order[i], order[i + 1] = order[i + 1], order[i]
            return _arrange(events, order)
        case Kind.MOVE if i + MOVE_BY < n:
            order.pop(i)
            order.insert(i + MOVE_BY, i)
            return _arrange(events, order)
        case Kind.RENUMBER:
            return tuple(dataclasses.replace(e, seq=e.seq + 1) if j == i else e for j, e in enumerate(events))
        case _:
            return None


def edits(events: Sequence[Event]) -> Iterator[Edit]:
    for at in range(len(events)):
        for kind in Kind:
            yield Edit(kind, at)


def edited_log(log: LogFile, events: tuple[Event, ...]) -> LogFile:
    return dataclasses.replace(log, events=events, lines=tuple(range(2, 2 + len(events))), findings=(), line_table=LineTable(), quirks=())


def load(path: Path) -> LogFile:
    return read_path(str(path))
