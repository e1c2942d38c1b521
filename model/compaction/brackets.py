"""The bracket's events as A55 writes them (CMP-1, CMP-2, CMP-22): names and records.

Each function here is the A55 definition; :mod:`model.compaction.d08` holds the
D08 overrides ("Modified ``f``") and :mod:`model.compaction.dialect` selects.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.records import Ids, Range, SummarizerOutput
from sessionspec.model.jsonval import Absent, Json, JsonObject, get
from sessionspec.model.rules import implements


@implements("CMP-1")
def event_type(part: str) -> str:
    """CMP-1: "Compaction MUST write only these log-only events (no surface metadata): `compact/start {turn}`,
    `compact/summary {summary, shadowedRange:{start,end}, shadowedSeqs, shadowedTokenCount, provider, model,
    maxTokens?}` (keys in this order), `compact/end {turn, error?}`, plus exactly one surface event per
    success — the checkpoint (CMP-22)."

    CMP-1: the bracket events are ``compact/start``, ``compact/summary`` and ``compact/end``.
    """
    return f"compact/{part}"


@implements("CMP-2")
def is_checkpoint_source(source: Json | Absent) -> bool:
    """CMP-2: "The checkpoint source MUST be exactly `{kind:"plugin", plugin:"compact"}`; a source is a
    checkpoint source iff `kind == "plugin" and plugin == "compact"` (extra keys ignored)."

    D08's extra ``compactionId`` is such a key, so one predicate serves both dialects."""
    return get(source, "kind") == "plugin" and get(source, "plugin") == "compact"


def checkpoint_source(ids: Ids) -> JsonObject:
    """CMP-2: the checkpoint's source is ``{kind:"plugin", plugin:"compact"}`` (A55 carries no ids)."""
    return JsonObject((("kind", "plugin"), ("plugin", "compact")))


def bracket_record(ids: Ids, pairs: Sequence[tuple[str, Json]]) -> JsonObject:
    """CMP-22: a bracket event's data is the record itself (A55 has no compaction id)."""
    return JsonObject(pairs)


def summary_record(
    output: SummarizerOutput, summary: tuple[Json, ...], shadowed: Range, seqs: tuple[int, ...], tokens: int
) -> list[tuple[str, Json]]:
    """CMP-22: ``compact/summary`` is ``{summary, shadowedRange, shadowedSeqs,
    shadowedTokenCount, provider, model, maxTokens?}`` in that key order."""
    pairs: list[tuple[str, Json]] = [
        ("summary", summary),
        ("shadowedRange", JsonObject((("start", shadowed.start), ("end", shadowed.end)))),
        ("shadowedSeqs", seqs),
        ("shadowedTokenCount", tokens),
        ("provider", output.provider),
        ("model", output.model),
    ]
    if output.max_tokens is not None:
        pairs.append(("maxTokens", output.max_tokens))
    return pairs


def checkpoint_message(framed: tuple[Json, ...], ids: Ids) -> JsonObject:
    """CMP-22: the checkpoint ``user/message`` data is ``{content: framed, source}`` (CMP-2 source)."""
    return JsonObject((("content", framed), ("source", checkpoint_source(ids))))
