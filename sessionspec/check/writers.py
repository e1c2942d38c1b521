"""Which writer wrote each part of a log (issue 25), and the cross-dialect events no writer writes.

A writer rule binds only the events that writer wrote (rule book §15, FMT-7 "Writers").
The harness has six writers of a session log:

* the **A55 loop** (``loop.ts``) and the **D08 loop** (``agent-loop/src/agent.ts`` at
  ``611615650f``): every step they run streams, so each ``assistant/message`` they append carries
  ``sourceEventSeqs`` (LOOP-11: "explicitly ``[]`` for an empty stream"; D08 ``agent.ts`` lines
  358-367 and 401-408);
* **seed / replay**: the events before ``firstLiveSeq`` were copied (a fork, a resume) and were
  judged where they were written (LOG-8, FMT-11);
* the **out-of-band append** (LOG-16): ``turn/start``, one log-only event, ``turn/end completed``;
* **crash repair** (LOG-14): the closers after the last event of an open turn;
* the **session API and tooling** (tests, importers, semantic-checkpoint snapshots): events
  appended directly, with no stream: a step whose ``assistant/message`` has no chunk in its step
  and no ``sourceEventSeqs``.  The loop cannot write it (LOOP-11), so the loop's own rules
  (LOOP-10..LOOP-12 for that step, its provenance SURF-13/MTR-9/INV-7) are not applied there; the
  loader's rules and the invariant companion's (LOG-13) still are: they bind every append.

Attribution is per turn (per step for API-built steps), decided from the events alone, and is
reported as a note.  The one writer-impossible pattern it exposes itself is a turn that mixes the
two dialects' shapes (FMT-7 Writers): each loop writes only its own shapes, and the D08 reader's migration
(DIA-13, LEG-9) rewrites whole legacy events, it does not make a mixed turn writable.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, final

from sessionspec.check.audits import audits
from sessionspec.check.pickling import reduce_by_fields
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

# The loops' own types only: plugins (compaction) and the session (end-seed) are other writers,
# whose dialect the file's markers decide (FMT-10).
A55_ONLY_TYPES: Final = frozenset({"steering/message", "prompt/blocked"})
D08_ONLY_TYPES: Final = frozenset({"agent/inbox/spliced"})


def _turn_end_dialect(reason: object) -> Dialect | None:
    """A55 ends (LOG-11) and D08 ends (``TurnEndReasonMap``, ``session/src/types.ts`` lines 155-174)
    that only one writer writes; ``completed``, ``max-tokens`` and ``interrupted`` are shared."""
    kind = get(reason, "kind") if isinstance(reason, JsonObject) else ABSENT
    if kind in ("rejected", "disposed"):
        return A55
    if kind == "blocked":
        return D08
    if kind == "aborted" and isinstance(reason, JsonObject):
        return D08 if "reason" in reason else A55
    if kind == "error" and isinstance(reason, JsonObject):
        return D08 if "error" in reason else A55
    return None


# The types :func:`shape_dialect` may mark (its cases): for any other type it answers None.
SHAPED_TYPES: Final = A55_ONLY_TYPES | D08_ONLY_TYPES | {"turn/start", "turn/end", "user/message", "assistant/message", "tool/result"}


def shape_dialect(event: Event) -> Dialect | None:
    """The only dialect whose writer writes ``event`` as logged (before any migration); None when
    both do (or neither: shapes are judged elsewhere)."""
    data = event.data
    if event.type in A55_ONLY_TYPES:
        return A55
    if event.type in D08_ONLY_TYPES:
        return D08
    if not isinstance(data, JsonObject):
        return None
    match event.type:
        case "turn/start":
            return A55 if "trigger" in data else D08
        case "turn/end":
            return _turn_end_dialect(get(data, "reason"))
        case "user/message":
            return D08 if "role" in data or "id" in data else A55
        case "assistant/message":
            return D08 if "message" in data else (A55 if "provenance" in data else None)
        case "tool/result":
            return D08 if "message" in data else (A55 if "callId" in data else None)
        case _:
            return None


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


@dataclass(slots=True)
class OpenTurn:
    """What a turn's writer is judged from, kept while the turn is open (``turn/start`` to its
    ``turn/end``, or to the next ``turn/start``, or to the end of the log): its first and last
    events, how many events it holds between them (the closing ``turn/end`` not counted), the
    first of those, its ``step/start`` seqs, and its dialect-marked events (FMT-7 Writers)."""

    start: Event
    last: Event
    inner: int = 0
    first_inner: Event | None = None
    steps: list[int] = field(default_factory=list)
    marked: list[tuple[Event, Dialect]] = field(default_factory=list)


def _turn_writer(t: OpenTurn, dialect: Dialect, first_live_seq: int, built: Sequence[int]) -> tuple[str, str]:
    """FMT-7 Writers for one turn: the writer's kind (WRITER_KINDS) and its description."""
    first, last = t.start, t.last
    if first.seq < first_live_seq:
        return "seed", "seed (copied; judged where it was written)"
    reason = get(get(last.data, "reason"), "kind") if last.type == "turn/end" else ABSENT
    if (last.type == "turn/end" and reason == "completed" and t.inner == 1 and t.first_inner is not None
            and t.first_inner.surface_op is ABSENT and dialect is A55):
        return "out-of-band", "out-of-band append (LOG-16)"
    kind, loop = ("a55-loop", "A55 loop") if shape_dialect(first) is A55 else ("d08-loop", "D08 loop")
    if dialect is D08 and kind == "a55-loop":
        kind, loop = "a55-loop-legacy", "A55 loop (legacy turn, migrated on load, DIA-13)"
    if built and len(built) == len(t.steps):
        kind, loop = "session-api", "session API or tooling (no streamed chunks, no sourceEventSeqs)"
    elif built:
        loop += f" and session API or tooling (steps at seq {', '.join(map(str, built))})"
    if reason == "interrupted":
        loop += ", closed by crash repair (LOG-14)"
    elif last.type != "turn/end":
        loop += ", still open at the end of the log"
    return kind, loop


# The writers a turn is attributed to (docs/check.md, "Writers"; JSON ``writers[].kind``).
WRITER_KINDS: Final = ("a55-loop", "d08-loop", "a55-loop-legacy", "seed", "out-of-band", "session-api")


def turn_writer(t: OpenTurn, dialect: Dialect, first_live_seq: int, api: Collection[int]) -> TurnWriter:
    """The writer of the closed turn ``t``; ``api`` holds the session-API steps judged so far (every
    step of ``t`` has ended when ``t`` closes)."""
    number = get(t.start.data, "turn")
    built = [s for s in t.steps if s in api]
    kind, text = _turn_writer(t, dialect, first_live_seq, built)
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


def _rule_for(event: Event, turn_dialect: Dialect) -> str:
    """The rule a cross-dialect event breaks: the turn writer's shape rule."""
    if turn_dialect is A55:
        return "LOG-12" if event.type == "user/message" else ("LOG-11" if event.type == "turn/end" else "LOG-9")
    # DIA-10 is also a load check; the reader migrates a legacy event (DIA-13) and loads it, so the
    # finding names the migration rule, whose loader answer is "accepts".
    return "DIA-14" if event.type == "turn/end" else "DIA-13"


@audits("FMT-7", "DIA-13", "DIA-14", "LOG-9", "LOG-11", "LOG-12")
def check_turn_dialects(t: OpenTurn, first_live_seq: int) -> list[Rejected]:
    """FMT-7 Writers: every live turn is written by one loop, so its events carry one dialect's shapes.
    The turn's writer is the dialect most of its dialect-marked events show (the ``turn/start``
    breaks a tie); each event of the other dialect is reported under the writer's shape rule
    (A55: LOG-9, LOG-11, LOG-12; D08: DIA-13, DIA-14).  Judged on the events
    as logged, before the D08 reader's migration, which would hide them (LEG-9)."""
    if t.start.seq < first_live_seq or not t.marked:
        return []
    a55 = sum(1 for _, d in t.marked if d is A55)
    d08 = len(t.marked) - a55
    if a55 == 0 or d08 == 0:
        return []
    tie = shape_dialect(t.start) or A55
    writer = tie if a55 == d08 else (A55 if a55 > d08 else D08)
    return [Rejected(rule=_rule_for(event, writer), seq=event.seq,
                     reason=f"{event.type} has the {dialect.name} shape inside a turn the {writer.name} loop wrote "
                            f"(turn/start at seq {t.start.seq}); no writer mixes the dialects in one turn")
            for event, dialect in t.marked if dialect is not writer]
