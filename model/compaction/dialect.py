"""The one place compaction is selected by dialect.

:data:`A55` lists the A55 definitions of every function a dialect modifies;
:data:`D08` is A55 with the overrides of :mod:`model.compaction.d08`.  Rule
bodies never branch on the dialect: the transaction and the readers call
``rules_of(dialect).f``.  The public ``dialect``-taking functions below are
the entry points other modules already use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final, final

import sessionspec.model.compaction.brackets as brackets
import sessionspec.model.compaction.d08 as d08
import sessionspec.model.compaction.lock as lock
import sessionspec.model.compaction.summary as summary
from sessionspec.model.compaction.records import (
    CompactionRun,
    Ids,
    Owner,
    Range,
    SummarizationInput,
    SummarizerOutput,
    SummaryCall,
)
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRules:
    """The functions a dialect may modify (each field names the A55 function)."""

    event_type: Callable[[str], str]
    checkpoint_message: Callable[[tuple[Json, ...], Ids], JsonObject]
    bracket_record: Callable[[Ids, Sequence[tuple[str, Json]]], JsonObject]
    summary_record: Callable[[SummarizerOutput, tuple[Json, ...], Range, tuple[int, ...], int], list[tuple[str, Json]]]
    bracket_owner: Callable[[Sequence[Event], bool], Owner | Rejected]
    pressure_gate: Callable[[Sequence[Event]], CompactionRun | Rejected | None]
    summary_input: Callable[[Sequence[Event], Sequence[int], EpochHeader | Absent], SummarizationInput | Rejected]
    instruction_message: Callable[[str], JsonObject]


A55: Final = CompactionRules(
    event_type=brackets.event_type,
    checkpoint_message=brackets.checkpoint_message,
    bracket_record=brackets.bracket_record,
    summary_record=brackets.summary_record,
    bracket_owner=lock.bracket_owner,
    pressure_gate=lock.pressure_gate,
    summary_input=summary.summary_input,
    instruction_message=summary.instruction_message,
)

D08: Final = replace(
    A55,
    event_type=d08.event_type,
    checkpoint_message=d08.checkpoint_message,
    bracket_record=d08.bracket_record,
    summary_record=d08.summary_record,
    bracket_owner=d08.bracket_owner,
    pressure_gate=d08.pressure_gate,
    summary_input=d08.summary_input,
    instruction_message=d08.instruction_message,
)


def rules_of(dialect: Dialect) -> CompactionRules:
    """The dialect's compaction functions: A55's, or D08's overlay (DIA-1..DIA-7, DIA-16..DIA-20)."""
    match dialect:
        case Dialect.A55:
            return A55
        case Dialect.D08:
            return D08


def compaction_type(dialect: Dialect, part: str) -> str:
    """The bracket event type of ``part`` (CMP-1 / DIA-1)."""
    return rules_of(dialect).event_type(part)


def compaction_owner(events: Sequence[Event], dialect: Dialect, manual: bool = False) -> Owner | Rejected:
    """The lock and the bracket owner (CMP-14 / DIA-3, DIA-5)."""
    return rules_of(dialect).bracket_owner(events, manual)


def summarization_input(
    events: Sequence[Event], shadowed: Sequence[int], header: EpochHeader | Absent, dialect: Dialect
) -> SummarizationInput | Rejected:
    """The summarizer's input (CMP-16 / DIA-17)."""
    return rules_of(dialect).summary_input(events, shadowed, header)


def summarizer_request(call: SummaryCall, instruction: str, dialect: Dialect = Dialect.A55) -> JsonObject:
    """The summarizer's model call (CMP-17) with the dialect's instruction message (DIA-17)."""
    return summary.summarizer_request_for(call, rules_of(dialect).instruction_message(instruction))
