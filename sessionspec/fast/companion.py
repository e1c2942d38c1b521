"""The two definitions of the compaction companion and the prune check that compare JSON values, for the checker's
one pass: :func:`sessionspec.model.compaction.companion.check_checkpoint` and
:func:`sessionspec.model.prune_check.check_prune_replacement`, the same findings with JSONEQ asked of
:func:`sessionspec.fast.json_eq.same_json` (its twin, tied in ``tests/fast``).

The model's ``json_eq`` is JSONEQ's definition, the JS text of both values: a pruned tool result or a checkpoint
is thousands of characters, and stringifying each twice cost the interpreted check 2 % of its instructions on the
10k bench log (cachegrind), for some twenty events.  Everything else is the model's own (the bracket watch, the
framing, the shrink gate, ``pruneContent``, the D08 overlay), but for the three the fold asks at every turn and
user message: :func:`on_turn_start`, :func:`on_turn_end` (A55's companion answered here, D08's overlay asked) and
:func:`is_logged_checkpoint`, where a call into the interpreted model would cost the compiled fold more than the
answer.  ``tests/fast/test_fast_companion.py`` holds these
equal to the definitions, finding for finding, over the logs the loop simulator writes and every change the model
refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get
from sessionspec.model.compaction.companion import A55_COMPANION, BracketWatch
from sessionspec.model.compaction.companion import on_turn_end as turn_end_by_definition
from sessionspec.model.compaction.companion import on_turn_start as turn_start_by_definition
from sessionspec.model.compaction.summary import check_summary_smaller, frame_summary
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Event
from sessionspec.model.prune import prune_content, tool_result_content
from sessionspec.model.prune_check import PruneWatch, check_prune_record, inferred_prune_config
from sessionspec.model.rejected import Rejected

Findings = tuple[Rejected, ...]
NONE: Final[Findings] = ()
_A55: Final = A55_COMPANION
_OBJECT: Final = JsonObject


def on_turn_start(watch: BracketWatch, event: Event) -> Findings:
    """:func:`sessionspec.model.compaction.companion.on_turn_start` (A55's ``take_turn_start`` here)."""
    if watch.rules is not _A55:
        return turn_start_by_definition(watch, event)
    watch.open_turn = get(event.data, "turn")
    return NONE


def on_turn_end(watch: BracketWatch, event: Event) -> Findings:
    """:func:`sessionspec.model.compaction.companion.on_turn_end` (A55's ``take_turn_end`` here)."""
    if watch.rules is not _A55:
        return turn_end_by_definition(watch, event)
    watch.open_turn = None
    watch.bracket = None
    return NONE


def is_logged_checkpoint(event: Event) -> bool:
    """:func:`sessionspec.model.compaction.companion.is_logged_checkpoint` (CMP-2's source, a replace)."""
    if event.type != "user/message" or type(event.surface_op) is not _OBJECT:
        return False
    data = event.data
    source = data.get("source", ABSENT) if type(data) is _OBJECT else ABSENT
    return type(source) is _OBJECT and source.get("kind", ABSENT) == "plugin" and source.get("plugin", ABSENT) == "compact"


def check_checkpoint(watch: BracketWatch, event: Event) -> Findings:
    """:func:`sessionspec.model.compaction.companion.check_checkpoint` (CMP-20, CMP-21, CMP-22, D08's overlay)."""
    bracket = watch.bracket
    if bracket is None:
        return NONE
    summary = bracket.summary
    bracket.checkpoint = event
    if summary is None:
        return (Rejected(rule="CMP-22", seq=event.seq, reason="checkpoint replace inside a bracket before its summary"),)
    found = NONE
    op, rng = event.surface_op, get(summary.data, "shadowedRange")
    if get(op, "start") != get(rng, "start") or get(op, "end") != get(rng, "end"):
        found += (Rejected(rule="CMP-22", seq=event.seq, reason="checkpoint replace range differs from shadowedRange"),)
    if not same_json(event.source_event_seqs, (bracket.start.seq, summary.seq, *bracket.shadowed)):
        found += (Rejected(rule="CMP-22", seq=event.seq, reason="checkpoint provenance is not [start, summary] ++ shadowed"),)
    content, raw = get(event.data, "content"), get(summary.data, "summary")
    if not isinstance(raw, tuple) or not same_json(content, frame_summary(raw)):
        found += (Rejected(rule="CMP-20", seq=event.seq, reason="checkpoint content is not the framed summary"),)
    count = get(summary.data, "shadowedTokenCount")
    if isinstance(count, int) and isinstance(content, tuple) and not isinstance(check_summary_smaller(content, count), int):
        found += (Rejected(rule="CMP-21", seq=event.seq, reason="framed summary is not smaller than the shadowed content"),)
    return found + watch.rules.checkpoint_placed(event, bracket, summary)


def check_prune_replacement(watch: PruneWatch, event: Event, before: Sequence[Event]) -> Findings:
    """:func:`sessionspec.model.prune_check.check_prune_replacement` (PRN-3, PRN-4, PRN-5, DIA-18)."""
    record, watch.record = watch.record, None
    op = event.surface_op
    seq = get(op, "start")
    if not isinstance(seq, int) or get(op, "end") != seq or not 0 <= seq < len(before):
        return (Rejected(rule="PRN-4", seq=event.seq, reason="prune replace is not single-node"),)
    found = NONE
    if not same_json(event.source_event_seqs, (seq,)):
        found += (Rejected(rule="PRN-4", seq=event.seq, reason="prune provenance is not [originalSeq]"),)
    dialect = watch.dialect
    after = tool_result_content(event, dialect)
    inferred = inferred_prune_config(after)
    expected = None if inferred is None else prune_content(tool_result_content(before[seq], dialect), inferred)
    if not isinstance(expected, tuple) or not same_json(after, expected):
        found += (Rejected(rule="PRN-3", seq=event.seq, reason="pruned content is not pruneContent of the original"),)
    return found + check_prune_record(event, record, seq, dialect)
