"""The values compaction reads and writes (CMP-16..18, CMP-22, CMP-23): data only, no rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

CHECKPOINT_PREAMBLE: Final = (
    "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up "
    "context. Treat the captured context as established background and build on it without restating it. "
    "Continue the task directly from the messages that follow, without acknowledging this checkpoint."
)
SUMMARY_OPEN: Final = "<compacted-summary>"
SUMMARY_CLOSE: Final = "</compacted-summary>"
CONTEXT_WINDOW_EXCEEDED: Final = "CONTEXT_WINDOW_EXCEEDED"
D08_INSTRUCTION_SOURCE: Final = JsonObject((("kind", "plugin"), ("plugin", "dsh-compaction-basic")))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Range:
    """A surface range by its end seqs (CMP-11, CMP-22 ``shadowedRange``)."""

    start: int
    end: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Ids:
    """D08 identities (random UUIDs in the harness, DIA-2): passed in so the model stays pure."""

    compaction_id: str = ""
    message_id: str = ""
    source_command_id: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Owner:
    """The bracket owner: the open ``turn/start``'s ``turn`` as logged (CMP-14, a number in a log
    LOG-13 accepts), or None (D08 manual, DIA-3)."""

    turn: Json


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizationInput:
    """CMP-16: ``{system?, tools?, messages}``."""

    system: Json | Absent
    tools: Json | Absent
    messages: tuple[Json, ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryCall:
    """What a summarizer receives: the input, the target and the token cap (CMP-17)."""

    input: SummarizationInput
    provider: str
    model: str
    max_tokens: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizerOutput:
    """CMP-18: ``{summary, provider, model, maxTokens?}`` (D08 adds rawOutput,
    llmStreamCall, usage, DIA-4).  ``summary`` is the raw model output; only its
    text blocks are kept."""

    summary: tuple[Json, ...]
    provider: str
    model: str
    max_tokens: int | None = None
    raw_output: tuple[Json, ...] | None = None
    llm_stream_call: bool | None = None
    usage: Json | Absent = ABSENT


Summarizer = Callable[[SummaryCall], SummarizerOutput | Rejected]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegionResult:
    """CMP-22: ``{startSeq, summarySeq, endSeq, summary, shadowedRange, shadowedSeqs, shadowedTokenCount}``."""

    start_seq: int
    summary_seq: int
    checkpoint_seq: int
    end_seq: int
    summary: tuple[Json, ...]
    shadowed_range: Range
    shadowed_seqs: tuple[int, ...]
    shadowed_token_count: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegionOutcome:
    """The events a transaction appends, and its result or error.

    A validation failure appends nothing (CMP-13); a failure after the start
    appends ``start … end{error}`` (CMP-23) and carries the error."""

    events: tuple[Event, ...]
    result: RegionResult | None
    error: Rejected | None


class Trigger(Enum):
    PRESSURE = "pressure"
    CONTEXT_OVERFLOW = "context-overflow"
    MANUAL = "manual"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRun:
    """What ``compactIfNeeded`` appends: prune replacements, transactions, and
    the error (if any) that ended the run; committed events stay on error."""

    events: tuple[Event, ...]
    results: tuple[RegionResult, ...] = ()
    error: Rejected | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OverflowDecision:
    events: tuple[Event, ...]
    retry: bool
    error: Rejected | None = None


NO_IDS: Final = Ids()
