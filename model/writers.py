"""Which writer wrote each turn of a log, and the events no writer writes there: a turn that mixes the two
dialects' shapes (FMT-7 Writers, rule book §15; decided for the checker, issue 25).

A writer's rule binds only the events that writer wrote.  The harness has six writers of a session log: the
**A55 loop** (``loop.ts``) and the **D08 loop** (``agent-loop/src/agent.ts`` at ``611615650f``), which record
``sourceEventSeqs`` on every ``assistant/message`` they append (LOOP-11; D08 ``agent.ts`` lines 358-367 and
401-408); **seed / replay** (the events before ``firstLiveSeq``, judged where they were written: LOG-8, FMT-11);
the **out-of-band append** (LOG-16: ``turn/start``, one log-only event, ``turn/end completed``); **crash repair**
(LOG-14's closers); and the **session API and tooling**, whose steps hold an ``assistant/message`` with no chunk
and no ``sourceEventSeqs`` (which steps those are is the checker's ``ApiStepJudge``).

Each loop writes only its own shapes, so a turn's events carry one dialect's (:func:`shape_dialect`); the D08
reader's migration (DIA-13, LEG-9) rewrites whole legacy events, it does not make a mixed turn writable.  The
folder (``sessionspec/check/writers_audit.py``) keeps an :class:`OpenTurn` per turn, judged on the events as
logged (before the migration, which would hide a legacy event's shape) when the turn closes.
``tests/model/test_writers.py`` holds these definitions against the loop simulator's logs, both ways.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

# The loops' own types only: plugins (compaction) and the session (end-seed) are other writers,
# whose dialect the file's markers decide (FMT-10).
A55_LOOP_TYPES: Final = frozenset({"steering/message", "prompt/blocked"})
D08_LOOP_TYPES: Final = frozenset({"agent/inbox/spliced"})
# The types :func:`shape_dialect` may mark (its cases): for any other type it answers None.
SHAPED_TYPES: Final = A55_LOOP_TYPES | D08_LOOP_TYPES | {"turn/start", "turn/end", "user/message", "assistant/message", "tool/result"}
# The writers a turn is attributed to (docs/check.md, "Writers"; JSON ``writers[].kind``).
WRITER_KINDS: Final = ("a55-loop", "d08-loop", "a55-loop-legacy", "seed", "out-of-band", "session-api")
# The members read once: reading an Enum member from its class costs about a microsecond (a class __getattr__
# in 3.11), and shape_dialect runs on every event of SHAPED_TYPES.
_A55: Final = Dialect.A55
_D08: Final = Dialect.D08


def _turn_end_dialect(reason: Json | Absent) -> Dialect | None:
    """A55 ends (LOG-11) and D08 ends (``TurnEndReasonMap``, ``session/src/types.ts`` lines 155-174)
    that only one writer writes; ``completed``, ``max-tokens`` and ``interrupted`` are shared."""
    kind = get(reason, "kind")
    if kind in ("rejected", "disposed"):
        return _A55
    if kind == "blocked":
        return _D08
    if kind == "aborted" and isinstance(reason, JsonObject):
        return _D08 if "reason" in reason else _A55
    if kind == "error" and isinstance(reason, JsonObject):
        return _D08 if "error" in reason else _A55
    return None


def shape_dialect(event: Event) -> Dialect | None:
    """The only dialect whose writer writes ``event`` as logged (before any migration); None when
    both do (or neither: shapes are judged elsewhere)."""
    data = event.data
    if event.type in A55_LOOP_TYPES:
        return _A55
    if event.type in D08_LOOP_TYPES:
        return _D08
    if not isinstance(data, JsonObject):
        return None
    match event.type:
        case "turn/start":
            return _A55 if "trigger" in data else _D08
        case "turn/end":
            return _turn_end_dialect(get(data, "reason"))
        case "user/message":
            return _D08 if "role" in data or "id" in data else _A55
        case "assistant/message":
            return _D08 if "message" in data else (_A55 if "provenance" in data else None)
        case "tool/result":
            return _D08 if "message" in data else (_A55 if "callId" in data else None)
        case _:
            return None


@dataclass(slots=True)
class OpenTurn:
    """What a turn's writer is judged from, kept while the turn is open (``turn/start`` to its
    ``turn/end``, or to the next ``turn/start``, or to the end of the log): its first and last
    events, how many events it holds between them (the closing ``turn/end`` not counted), the
    first of those, its ``step/start`` seqs, and its dialect-marked events.  Mutable, owned by
    whoever folds the log."""

    start: Event
    last: Event
    inner: int = 0
    first_inner: Event | None = None
    steps: list[int] = field(default_factory=list)
    marked: list[tuple[Event, Dialect]] = field(default_factory=list)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DialectWriters:
    """What a dialect changes in the writers of its log's turns (:func:`dialect_writers`)."""

    # Does the session append out of band (LOG-16, ``appendOutOfBand``)?
    out_of_band: bool
    # The writer of an A55-shaped turn: the A55 loop, or (D08) the A55 loop of a legacy turn the reader migrates.
    a55_turn: tuple[str, str]
    # The rule a legacy-shaped event (A55 reader: a D08-shaped one) breaks inside a turn of this dialect's loop.
    other_dialects_rule: Mapping[str, str]
    other_rule: str


A55_WRITERS: Final = DialectWriters(
    out_of_band=True, a55_turn=("a55-loop", "A55 loop"),
    other_dialects_rule={"user/message": "LOG-12", "turn/end": "LOG-11"}, other_rule="LOG-9",
)
D08_WRITERS: Final = DialectWriters(
    out_of_band=False, a55_turn=("a55-loop-legacy", "A55 loop (legacy turn, migrated on load, DIA-13)"),
    # DIA-10 is also a load check; the reader migrates a legacy event (DIA-13) and loads it, so the
    # finding names the migration rule, whose loader answer is "accepts"; a turn/end is DIA-14's.
    other_dialects_rule={"turn/end": "DIA-14"}, other_rule="DIA-13",
)


def dialect_writers(dialect: Dialect) -> DialectWriters:
    """The one place a log's writers are selected by dialect: the D08 reader migrates a legacy turn (DIA-13)
    and names an A55 event in a D08 turn by DIA-13 (DIA-14 for a ``turn/end``); A55 appends out of band (LOG-16)
    and names a D08 event in an A55 turn by its shape rule (LOG-9, LOG-11, LOG-12)."""
    match dialect:
        case Dialect.A55:
            return A55_WRITERS
        case Dialect.D08:
            return D08_WRITERS


@decides("FMT-7")
def turn_writer_kind(t: OpenTurn, writers: DialectWriters, first_live_seq: int, built: Sequence[int]) -> tuple[str, str]:
    """FMT-7 Writers (rule book §15; decided for the checker, issue 25) for one closed turn:
    the writer's kind (:data:`WRITER_KINDS`) and its description.  ``built`` are the turn's steps the session API
    or tooling wrote (no streamed chunk, no ``sourceEventSeqs``); ``writers`` are the log's dialect's
    (:func:`dialect_writers`, chosen once per log)."""
    first, last = t.start, t.last
    if first.seq < first_live_seq:
        return "seed", "seed (copied; judged where it was written)"
    reason = get(get(last.data, "reason"), "kind") if last.type == "turn/end" else ABSENT
    if (writers.out_of_band and last.type == "turn/end" and reason == "completed" and t.inner == 1
            and t.first_inner is not None and t.first_inner.surface_op is ABSENT):
        return "out-of-band", "out-of-band append (LOG-16)"
    kind, loop = writers.a55_turn if shape_dialect(first) is _A55 else ("d08-loop", "D08 loop")
    if built and len(built) == len(t.steps):
        kind, loop = "session-api", "session API or tooling (no streamed chunks, no sourceEventSeqs)"
    elif built:
        loop += f" and session API or tooling (steps at seq {', '.join(map(str, built))})"
    if reason == "interrupted":
        loop += ", closed by crash repair (LOG-14)"
    elif last.type != "turn/end":
        loop += ", still open at the end of the log"
    return kind, loop


@decides("FMT-7", "DIA-13", "DIA-14", "LOG-9", "LOG-11", "LOG-12")
def check_turn_dialects(t: OpenTurn, first_live_seq: int) -> list[Rejected]:
    """FMT-7 Writers: every live turn is written by one loop, so its events carry one dialect's shapes.
    The turn's writer is the dialect most of its dialect-marked events show (the ``turn/start``
    breaks a tie); each event of the other dialect is reported under the writer's shape rule
    (:func:`dialect_writers`: A55's LOG-9, LOG-11, LOG-12; D08's DIA-13, DIA-14).  Judged on the events
    as logged, before the D08 reader's migration, which would hide them (LEG-9)."""
    if t.start.seq < first_live_seq or not t.marked:
        return []
    a55 = sum(1 for _, d in t.marked if d is _A55)
    d08 = len(t.marked) - a55
    if a55 == 0 or d08 == 0:
        return []
    tie = shape_dialect(t.start) or Dialect.A55
    writer = tie if a55 == d08 else (Dialect.A55 if a55 > d08 else Dialect.D08)
    writers = dialect_writers(writer)
    return [Rejected(rule=writers.other_dialects_rule.get(event.type, writers.other_rule), seq=event.seq,
                     reason=f"{event.type} has the {dialect.name} shape inside a turn the {writer.name} loop wrote "
                            f"(turn/start at seq {t.start.seq}); no writer mixes the dialects in one turn")
            for event, dialect in t.marked if dialect is not writer]
