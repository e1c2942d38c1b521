"""Compaction (CMP, DIA-1..7, DIA-16..20): pressure policy, the retention walk
and the region transaction, as pure functions returning the events to append.

One concept per module, read in this order:

- :mod:`~model.compaction.policy`: configuration, the target's budget (CMP-3..5);
- :mod:`~model.compaction.retention`: tool pairing and the retention walk (CMP-10..12);
- :mod:`~model.compaction.zero_retention`: the range a ``retainTokens = 0`` bracket takes, decided in a log (CMP-9, DIA-20);
- :mod:`~model.compaction.lock`: the lock, the owner and the pressure trigger's place (CMP-6, CMP-14);
- :mod:`~model.compaction.summary`: the summarizer's input and request, framing, the shrink gate (CMP-16..21);
- :mod:`~model.compaction.brackets`: the bracket events' names and records (CMP-1, CMP-2, CMP-22);
- :mod:`~model.compaction.region`: the region transaction (CMP-13..25);
- :mod:`~model.compaction.cancellation`: where an aborted turn signal stops a run (CMP-26);
- :mod:`~model.compaction.run`: ``compactIfNeeded`` and its triggers (CMP-6..9);
- :mod:`~model.compaction.readback`: the summarizer requests a log implies (replay);
- :mod:`~model.compaction.trigger_place` and :mod:`~model.compaction.bracket_contents`: where a log's brackets and
  prunes lie and what a bracket holds, decided event by event (CMP-2, CMP-5..7, CMP-12, CMP-19, CMP-22, CMP-23, PRN-6);
- :mod:`~model.compaction.d08`: the D08 dialect as "Modified ``f``" overrides, selected once in
  :mod:`~model.compaction.dialect`; :mod:`~model.compaction.records` holds the data types.

The summary text comes from a summarizer function passed in (CMP-18:
``summarize()`` is the only override hook), so the whole transaction is
deterministic.  A log's brackets are judged by :mod:`~model.compaction.companion` (the dev companion's
vetoes and the bracket's records, CMP-25, DIA-19; D08 by :mod:`~model.compaction.companion_dialect`), which
``sessionspec check`` runs (``sessionspec.check.compaction_audit``).
"""

from sessionspec.model.compaction.brackets import checkpoint_source, is_checkpoint_source
from sessionspec.model.compaction.dialect import (
    CompactionRules,
    compaction_owner,
    compaction_type,
    rules_of,
    summarization_input,
    summarizer_request,
)
from sessionspec.model.compaction.lock import step_is_open
from sessionspec.model.compaction.policy import (
    DEFAULT_RETAIN_RATIO,
    CompactConfig,
    CompactSpec,
    ModelPolicy,
    Target,
    check_compact_config,
    compact_spec,
    routed_target,
    target_policy,
)
from sessionspec.model.compaction.readback import summary_requests
from sessionspec.model.compaction.records import (
    CHECKPOINT_PREAMBLE,
    CONTEXT_WINDOW_EXCEEDED,
    D08_INSTRUCTION_SOURCE,
    SUMMARY_CLOSE,
    SUMMARY_OPEN,
    CompactionRun,
    Ids,
    OverflowDecision,
    Owner,
    Range,
    RegionOutcome,
    RegionResult,
    SummarizationInput,
    Summarizer,
    SummarizerOutput,
    SummaryCall,
    Trigger,
)
from sessionspec.model.compaction.region import compact_region
from sessionspec.model.compaction.retention import balanced_cuts, retention_cut, select_range, tool_call_delta
from sessionspec.model.compaction.run import compact_if_needed, pressure_compaction, recover_overflow
from sessionspec.model.compaction.summary import check_summary_smaller, frame_summary, summary_text_blocks

__all__ = [
    "CHECKPOINT_PREAMBLE",
    "CONTEXT_WINDOW_EXCEEDED",
    "D08_INSTRUCTION_SOURCE",
    "DEFAULT_RETAIN_RATIO",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "CompactConfig",
    "CompactSpec",
    "CompactionRules",
    "CompactionRun",
    "Ids",
    "ModelPolicy",
    "OverflowDecision",
    "Owner",
    "Range",
    "RegionOutcome",
    "RegionResult",
    "SummarizationInput",
    "Summarizer",
    "SummarizerOutput",
    "SummaryCall",
    "Target",
    "Trigger",
    "balanced_cuts",
    "check_compact_config",
    "check_summary_smaller",
    "checkpoint_source",
    "compact_if_needed",
    "compact_region",
    "compact_spec",
    "compaction_owner",
    "compaction_type",
    "frame_summary",
    "is_checkpoint_source",
    "pressure_compaction",
    "recover_overflow",
    "retention_cut",
    "routed_target",
    "rules_of",
    "select_range",
    "step_is_open",
    "summarization_input",
    "summarizer_request",
    "summary_requests",
    "summary_text_blocks",
    "target_policy",
    "tool_call_delta",
]
