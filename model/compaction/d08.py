"""The D08 dialect (``611615650f``) of compaction, as overrides of the A55 definitions.

Written as consensus-specs writes a later fork: each function here is a
*Modified* A55 function of the same name and signature, and its docstring
names the function it modifies and the difference.  Everything not listed
here is the A55 definition unchanged; :data:`model.compaction.dialect.D08`
is the one place that selects these.
"""

from __future__ import annotations

from collections.abc import Sequence

import sessionspec.model.compaction.brackets as brackets
import sessionspec.model.compaction.summary as summary
from sessionspec.model.compaction.lock import step_is_open
from sessionspec.model.compaction.records import (
    D08_INSTRUCTION_SOURCE,
    CompactionRun,
    Ids,
    Owner,
    Range,
    SummarizationInput,
    SummarizerOutput,
)
from sessionspec.model.derive import derive_nodes
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


@implements("DIA-1")
def event_type(part: str) -> str:
    """DIA-1: "Compaction events MUST be `compaction/start`, `compaction/summary`, `compaction/end`, plus
    `compaction/prune` (overrides CMP-1); all log-only; all are known types written without `ignorable`, so
    a reader that does not know a non-ignorable type MUST refuse the log."

    Modified :func:`model.compaction.brackets.event_type` (DIA-1): the events
    are ``compaction/{start,summary,end}`` (plus ``compaction/prune``, PRN)."""
    return f"compaction/{part}"


def checkpoint_source(ids: Ids) -> JsonObject:
    """Modified :func:`model.compaction.brackets.checkpoint_source` (DIA-2): the
    source also names the bracket, ``{kind, plugin, compactionId, sourceCommandId?}``."""
    return JsonObject((*brackets.checkpoint_source(ids).items(), *_id_pairs(ids)))


def _id_pairs(ids: Ids) -> tuple[tuple[str, Json], ...]:
    """``compactionId`` then ``sourceCommandId`` when a manual call passed one (DIA-2)."""
    if ids.source_command_id is None:
        return (("compactionId", ids.compaction_id),)
    return (("compactionId", ids.compaction_id), ("sourceCommandId", ids.source_command_id))


@implements("DIA-2")
def bracket_record(ids: Ids, pairs: Sequence[tuple[str, Json]]) -> JsonObject:
    """DIA-2: "`compactionId` (a random UUID, non-empty string) MUST appear on start, summary and end and in
    the checkpoint source `{kind:"plugin", plugin:"compact", compactionId, sourceCommandId?}` (key order as
    listed); `sourceCommandId` appears only for a manual call that passed one, identically on all four."

    Modified :func:`model.compaction.brackets.bracket_record` (DIA-2): every
    bracket event starts with ``compactionId, sourceCommandId?``, identical on
    start, summary and end (and in the checkpoint source, :func:`checkpoint_source`)."""
    return JsonObject((*_id_pairs(ids), *pairs))


@implements("DIA-4")
def summary_record(
    output: SummarizerOutput, summary: tuple[Json, ...], shadowed: Range, seqs: tuple[int, ...], tokens: int
) -> list[tuple[str, Json]]:
    """DIA-4: "`compaction/summary` MUST be `{compactionId, sourceCommandId?, summary, rawOutput?,
    llmStreamCall?, shadowedRange, shadowedSeqs, shadowedTokenCount, provider, model, maxTokens?, usage?}`,
    where the default summarizer writes `rawOutput` (all output blocks, incl."

    Modified :func:`model.compaction.brackets.summary_record` (DIA-4): the
    summarizer's ``rawOutput?`` and ``llmStreamCall?`` follow ``summary``, and
    ``usage?`` comes last."""
    pairs = brackets.summary_record(output, summary, shadowed, seqs, tokens)
    extras: list[tuple[str, Json]] = []
    if output.raw_output is not None:
        extras.append(("rawOutput", output.raw_output))
    if output.llm_stream_call is not None:
        extras.append(("llmStreamCall", output.llm_stream_call))
    if output.usage is not ABSENT:
        pairs.append(("usage", output.usage))
    return [pairs[0], *extras, *pairs[1:]]


def checkpoint_message(framed: tuple[Json, ...], ids: Ids) -> JsonObject:
    """Modified :func:`model.compaction.brackets.checkpoint_message` (DIA-2,
    DIA-10): the D08 user message is ``{content, source, role:"user", id}``
    with the bracket-naming source."""
    return JsonObject(
        (("content", framed), ("source", checkpoint_source(ids)), ("role", "user"), ("id", ids.message_id))
    )


@implements("DIA-3", "DIA-5")
def bracket_owner(events: Sequence[Event], manual: bool = False) -> Owner | Rejected:
    """DIA-3: "The bracket owner MUST be `turn: number | null`."
    DIA-5: "The Session constructor MUST append `session/end-seed {}` after a seed unless the seed already
    ends with one (empty seed: not pinned by our digests); readers use the **last** one as `firstLiveSeq`."

    Modified :func:`model.compaction.lock.bracket_owner`: DIA-5, three
    independent scans (open turn; an unmatched ``compaction/start`` not
    followed by ``session/end-seed``), busy rejects; DIA-3, a manual bracket
    (owner ``turn: null``) needs an idle agent, an automatic one an open turn.
    The open turn is the latest ``turn/start``'s ``turn`` as logged (Q-31): a
    ``null`` one reads as no open turn, an absent one makes the append fail (LOG-4)."""
    last: dict[str, int] = {}
    for event in events:
        if event.type in ("turn/start", "turn/end", "compaction/start", "compaction/end", "session/end-seed"):
            last[event.type] = event.seq
    turn: Json | Absent = None
    if last.get("turn/start", -1) > last.get("turn/end", -1):
        data = events[last["turn/start"]].data
        if data is None:
            return Rejected(rule="DIA-3", reason="Cannot read properties of null (reading 'turn')")
        turn = get(data, "turn")
    start, end, seed = last.get("compaction/start", -1), last.get("compaction/end", -1), last.get("session/end-seed", -1)
    if start > end and start > seed:
        return Rejected(rule="DIA-5", reason="busy: compaction already in progress")
    return turn_owner(turn, manual)


def turn_owner(turn: Json | Absent, manual: bool) -> Owner | Rejected:
    """Modified :func:`model.compaction.lock.turn_owner` (DIA-3): a manual bracket (owner ``turn: null``) needs
    an idle agent, an automatic one the open turn, whose ``turn`` it copies.  ``turn``: the open ``turn/start``'s
    ``turn`` as logged, ``None`` when no turn is open (the real invariant's ``openTurn``).  The lock
    (:func:`bracket_owner`) and the companion's judgement of a logged ``compaction/start``
    (:func:`model.compaction.companion_d08.check_owner`) both ask this one definition."""
    if manual:
        if turn is not None:
            return Rejected(rule="DIA-3", reason="busy: manual compaction needs an idle agent")
        return Owner(turn=None)
    if turn is None:
        return Rejected(rule="DIA-3", reason="compactRegion: no open turn")
    if isinstance(turn, Absent):
        return Rejected(rule="LOG-4", reason='session event "compaction/start" carries non-JSON-serializable data')
    return Owner(turn=turn)


@implements("DIA-6")
def pressure_gate(events: Sequence[Event]) -> CompactionRun | Rejected | None:
    """DIA-6: "Pressure compaction MUST run in the `agent/pre-step` waterfall (after the previous `step/end`,
    or after `turn/start` and the inbox claim; **before `step/start`**), on every step, before calling the
    next listener; it re-checks the lock after its only pre-lock await and before pruning."

    Modified :func:`model.compaction.lock.pressure_gate` (DIA-6): the trigger
    runs in ``agent/pre-step``, outside any step (before ``step/start``); a
    busy lock (DIA-5) skips it with the busy error as the run's error, never fatal."""
    if step_is_open(events):
        return Rejected(rule="DIA-6", reason="pressure compaction runs before step/start")
    owner = bracket_owner(events)
    if isinstance(owner, Rejected) and owner.rule == "DIA-5":
        return CompactionRun(events=(), error=owner)
    return None


@implements("DIA-17")
def summary_input(events: Sequence[Event], shadowed: Sequence[int], header: EpochHeader | Absent) -> SummarizationInput | Rejected:
    """DIA-17: "Summarization input MUST be `{system?, tools?, messages: shadowed derived messages}` (no
    prefix); the instruction message is a full user message with source `{kind:"plugin",
    plugin:"dsh-compaction-basic"}`; image output → `UNSUPPORTED_CONTENT`."

    Modified :func:`model.compaction.summary.summary_input` (DIA-17): the
    messages are the derived shadowed messages only (D08 derivation, no prefix).

    pre: all(0 <= seq < len(events) for seq in shadowed)
    """
    derived = derive_nodes(shadowed, events, Dialect.D08)
    if isinstance(derived, Rejected):
        return derived
    return summary.input_with_envelope(header, derived)


def instruction_message(instruction: str) -> JsonObject:
    """Modified :func:`model.compaction.summary.instruction_message` (DIA-17):
    a full user message with source ``{kind:"plugin", plugin:"dsh-compaction-basic"}``."""
    return JsonObject((*summary.instruction_message(instruction).items(), ("source", D08_INSTRUCTION_SOURCE)))
