"""A prune replacement as a log shows it (PRN-3, PRN-4, PRN-5, DIA-18), decided event by event.

:func:`model.prune.prune_pass` writes each prune as a single-node, content-only ``tool/result`` replace citing
``[originalSeq]`` whose content is ``pruneContent`` of the original (D08: after its ``compaction/prune`` record).
The log does not record the head and tail the pass was configured with; the marker's place shows them
(:func:`inferred_prune_config`), so the content is judged against ``pruneContent`` under those (with the
deployment's, ``check --deployment`` decides them too: :func:`model.compaction.obligation.decide_pruned_content`).

``sessionspec check`` runs these definitions over a log (``sessionspec/check/compaction_audit.py`` keeps one
:class:`PruneWatch`); the prune pass writes the replacements they accept (``tests/model/test_prune_check.py``
holds the two together both ways).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sessionspec.model.jsonval import Json, JsonObject, get, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, tool_result_content
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

Findings = tuple[Rejected, ...]
NONE: Final[Findings] = ()


@dataclass(slots=True)
class PruneWatch:
    """The latest ``compaction/prune`` record not yet followed by a replacement (DIA-18).  Mutable, one per log,
    owned by whoever folds it."""

    dialect: Dialect
    record: Event | None = None


def is_prune_replacement(event: Event) -> bool:
    """A ``tool/result`` replace: only a prune writes one (PRN-4; SURF-7's content-only rewrite)."""
    return event.type == "tool/result" and isinstance(event.surface_op, JsonObject)


def take_prune_record(watch: PruneWatch, event: Event) -> None:
    """A D08 ``compaction/prune`` record: the next replacement's (DIA-18)."""
    watch.record = event


def inferred_prune_config(content: Json) -> PruneConfig | None:
    """The head/tail a pruned content was cut with: code points before and after the marker (PRN-3)."""
    if not isinstance(content, tuple):
        return None
    text = "".join(str(get(b, "text")) for b in content if get(b, "type") == "text" and isinstance(get(b, "text"), str))
    at = text.find(PRUNE_MARKER)
    if at < 0:
        return None
    head, tail = at, len(text) - at - len(PRUNE_MARKER)
    return PruneConfig(threshold_chars=content_chars(content), head_chars=head, tail_chars=tail)


@decides("PRN-4", "PRN-3", "PRN-5", "P-PRN-2")
def check_prune_replacement(watch: PruneWatch, event: Event, before: Sequence[Event]) -> Findings:
    """A prune replacement ``event`` (:func:`is_prune_replacement`) against the log ``before`` it, by seq: PRN-4,
    single-node with ``[seq]`` provenance; PRN-3, its content is ``pruneContent`` of the original under the head
    and tail its marker shows (PRN-5: a pruned node pruned again is not, its total being within the threshold);
    D08, after its record (:func:`check_prune_record`).  It takes the pending record."""
    record, watch.record = watch.record, None
    op = event.surface_op
    seq = get(op, "start")
    if not isinstance(seq, int) or get(op, "end") != seq or not 0 <= seq < len(before):
        return (Rejected(rule="PRN-4", seq=event.seq, reason="prune replace is not single-node"),)
    found = NONE
    if not json_eq(event.source_event_seqs, (seq,)):
        found += (Rejected(rule="PRN-4", seq=event.seq, reason="prune provenance is not [originalSeq]"),)
    dialect = watch.dialect
    after = tool_result_content(event, dialect)
    inferred = inferred_prune_config(after)
    expected = None if inferred is None else prune_content(tool_result_content(before[seq], dialect), inferred)
    if not isinstance(expected, tuple) or not json_eq(after, expected):
        found += (Rejected(rule="PRN-3", seq=event.seq, reason="pruned content is not pruneContent of the original"),)
    return found + check_prune_record(event, record, seq, dialect)


@decides("DIA-18")
def check_prune_record(event: Event, record: Event | None, seq: int, dialect: Dialect) -> Findings:
    """DIA-18: the D08 prune "MUST append `compaction/prune {shadowedRange:{start:seq,end:seq}, shadowedSeqs:[seq],
    shadowedTokenCount: estimateMessage(original message)}` immediately before each replacement" (its definition:
    :func:`model.prune.prune_record_d08`).  A55 writes no record (PRN-4)."""
    match dialect:
        case Dialect.A55:
            return NONE
        case Dialect.D08:
            if record is None or record.seq != event.seq - 1 or get(record.data, "shadowedSeqs") != (seq,):
                return (Rejected(rule="DIA-18", seq=event.seq, reason="prune replacement without its compaction/prune record"),)
            return NONE
