"""The writer of each turn as the report gives it (issue 25): one record per turn and the note naming
the writers of a log when not one loop wrote every turn.

Which writer wrote a turn, and the events of the other dialect in a turn one loop wrote, are the
model's (:mod:`sessionspec.model.writers`, FMT-7 Writers); the fold that drives it is
:mod:`sessionspec.check.writers_audit`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, final

from sessionspec.check.pickling import reduce_by_fields
from sessionspec.fast.jsonget import get
from sessionspec.fast.writers import turn_writer_kind
from sessionspec.model.writers import DialectWriters, OpenTurn


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnWriter:
    """One turn (or the events between turns) and the writer the log shows for it."""

    turn: int | None
    first_seq: int
    last_seq: int
    kind: str
    writer: str
    repaired: bool = False
    api_steps: tuple[int, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"turn": self.turn, "firstSeq": self.first_seq, "lastSeq": self.last_seq, "kind": self.kind,
                "repaired": self.repaired, "apiSteps": list(self.api_steps)}

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Attribution:
    turns: tuple[TurnWriter, ...]
    api_steps: frozenset[int]


def turn_writer(t: OpenTurn, writers: DialectWriters, first_live_seq: int, api: Collection[int]) -> TurnWriter:
    """The writer of the closed turn ``t`` (:func:`sessionspec.model.writers.turn_writer_kind`); ``api`` holds
    the session-API steps judged so far (every step of ``t`` has ended when ``t`` closes)."""
    number = get(t.start.data, "turn")
    built = [s for s in t.steps if s in api]
    kind, text = turn_writer_kind(t, writers, first_live_seq, built)
    last = t.last
    return TurnWriter(turn=number if isinstance(number, int) and not isinstance(number, bool) else None, first_seq=t.start.seq,
                      last_seq=last.seq, kind=kind, writer=text,
                      repaired=last.type == "turn/end" and get(get(last.data, "reason"), "kind") == "interrupted",
                      api_steps=tuple(built))


def writer_note(attribution: Attribution) -> str | None:
    """One note naming each writer and the turns it wrote; None when one loop wrote every turn."""
    by_writer: dict[str, list[TurnWriter]] = {}
    for turn in attribution.turns:
        by_writer.setdefault(turn.writer, []).append(turn)
    if len(by_writer) <= 1 and not any(w.startswith(("seed", "out-of-band")) or "repair" in w or "API" in w for w in by_writer):
        return None
    parts = []
    for writer, turns in by_writer.items():
        numbers = ", ".join(str(t.turn) for t in turns)
        parts.append(f"{writer}: turn{'s' if len(turns) > 1 else ''} {numbers}")
    live_api = any(t.api_steps for t in attribution.turns if not t.writer.startswith("seed"))
    skipped = " (the loop's own rules LOOP-10..LOOP-12, SURF-13, MTR-9, INV-7 are not applied to the steps it did not write)" if live_api else ""
    return "writers (FMT-7): " + "; ".join(parts) + skipped
