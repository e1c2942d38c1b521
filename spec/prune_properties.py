"""Property predicates of RULES §16.3 for the tool-result prune (PRN): the pruned content, a pass.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules checked.
``tests/model/test_compaction_properties.py`` feeds them generated content and logs; P-PRN-3 (prunes in
the loop's logs) is in ``spec/loop_compaction_properties.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sessionspec.model.derive import derive
from sessionspec.model.jsonval import Json, JsonObject, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.prune import PRUNE_MARKER, PruneConfig, content_chars, prune_content, prune_session
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface


@implements("P-PRN-1")
def prune_content_bounds(blocks: Json, config: PruneConfig) -> str | None:
    """P-PRN-1 (PRN-2, PRN-3): CP ≤ threshold and < input, one marker, head and
    tail preserved, non-text blocks kept in order."""
    out = prune_content(blocks, config)
    if out is None:
        return None if content_chars(blocks) <= config.threshold_chars else "P-PRN-1: content above the threshold is not pruned"
    if isinstance(out, Rejected) or not isinstance(blocks, tuple):
        return f"P-PRN-1: pruneContent rejects or prunes a non-list: {out}"
    before, after = _text(blocks), _text(out)
    non_text_in = [b for b in blocks if get(b, "type") != "text"]
    non_text_out = [b for b in out if get(b, "type") != "text"]
    head, tail = before[: config.head_chars], before[len(before) - config.tail_chars :] if config.tail_chars else ""
    if content_chars(out) > config.threshold_chars or content_chars(out) >= content_chars(blocks):
        return "P-PRN-1: the pruned content is not below the threshold and the input"
    if after.count(PRUNE_MARKER) < 1 or after != head + PRUNE_MARKER + tail:
        return "P-PRN-1: the pruned text is not head ++ marker ++ tail"
    if non_text_in != non_text_out:
        return "P-PRN-1: the non-text blocks changed"
    return None


def _text(blocks: Sequence[Json]) -> str:
    return "".join(str(get(b, "text")) for b in blocks if get(b, "type") == "text" and isinstance(get(b, "text"), str))


@implements("P-PRN-2")
def prune_idempotent(events: Sequence[Event], config: PruneConfig, dialect: Dialect = Dialect.A55) -> str | None:
    """P-PRN-2 (PRN-4, PRN-5): single-node replaces citing ``[seq]``; a second
    pass is empty; replay reproduces the derivation and generation."""
    first = prune_session(events, config, dialect=dialect)
    if isinstance(first, Rejected):
        return None
    log = [*events, *first]
    for event in first:
        op = event.surface_op
        if event.type == "tool/result" and not (
            isinstance(op, JsonObject) and op["start"] == op["end"] and event.source_event_seqs == (op["start"],)
        ):
            return f"P-PRN-2: the prune at seq {event.seq} is not a single-node replace citing [seq]"
    again = prune_session(log, config, dialect=dialect)
    fold_a, fold_b = fold_surface(log, dialect), fold_surface(list(log), dialect)
    if isinstance(again, Rejected):
        return f"P-PRN-2: a second pass rejects the pruned log: {again}"
    if again != ():
        return f"P-PRN-2: a second pass prunes {len(again)} more events"
    if isinstance(fold_a, Rejected) or isinstance(fold_b, Rejected) or fold_a.state != fold_b.state:
        return "P-PRN-2: replay does not reproduce the surface"
    if derive(log, dialect) != derive(list(log), dialect):
        return "P-PRN-2: replay does not reproduce the derivation"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-PRN-1": prune_content_bounds,
    "P-PRN-2": prune_idempotent,
}
