"""The shapes of the log-only events the loop's plugins write, decided event by event: ``session/title`` (LOG-10),
D08's ``request/context`` (DIA-9) and the compaction bracket's records (CMP-1; D08's summary, DIA-4).

Other plugin types are opaque (LOG-10: accepted as log-only events).  The compaction records are written by
:func:`sessionspec.model.compaction.brackets.summary_record` and its D08 overlay; the bracket's events and their
order are the compaction transaction's.  ``sessionspec check`` runs these on every live event of these types
(through :func:`sessionspec.model.event_shape.check_type_shape`); ``tests/model/test_event_shape.py`` holds them
against the loop simulator's logs, both ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.record_keys import Keys, key_flaw
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

# LOG-10 gives the shape of session/title; DIA-9 that of request/context (D08).
PLUGIN_KEYS: Final[dict[str, tuple[str, Keys]]] = {
    "session/title": ("LOG-10", (("title", True), ("messageSeqs", True), ("source", True))),
    "request/context": ("DIA-9", (("provider", True), ("model", True), ("contextWindow", False))),
}
PLUGIN_TYPES: Final = frozenset(PLUGIN_KEYS)

CMP1_KEYS: Final[dict[str, Keys]] = {
    "compact/start": (("turn", True),),
    "compact/summary": (("summary", True), ("shadowedRange", True), ("shadowedSeqs", True), ("shadowedTokenCount", True),
                        ("provider", True), ("model", True), ("maxTokens", False)),
    "compact/end": (("turn", True), ("error", False)),
}
DIA4_KEYS: Final[dict[str, Keys]] = {
    "compaction/summary": (
        ("compactionId", True), ("sourceCommandId", False), ("summary", True), ("rawOutput", False), ("llmStreamCall", False),
        ("shadowedRange", True), ("shadowedSeqs", True), ("shadowedTokenCount", True), ("provider", True), ("model", True),
        ("maxTokens", False), ("usage", False),
    ),
}
# The types check_compaction_shape reads (it finds nothing on any other).
COMPACTION_TYPES: Final = frozenset({*CMP1_KEYS, *DIA4_KEYS})
RANGE_KEYS: Final[Keys] = (("start", True), ("end", True))


def compaction_records(dialect: Dialect) -> tuple[str, Mapping[str, Keys]]:
    """The one place the compaction records' shapes are selected by dialect: CMP-1's bracket (A55), or DIA-4's
    summary (D08; its other bracket records are DIA-2's)."""
    match dialect:
        case Dialect.A55:
            return "CMP-1", CMP1_KEYS
        case Dialect.D08:
            return "DIA-4", DIA4_KEYS


@decides("CMP-1", "DIA-4")
def check_compaction_shape(event: Event, dialect: Dialect) -> Rejected | None:
    """CMP-1's records (its definition, with the quote, is :func:`sessionspec.model.compaction.brackets.event_type`;
    the writer is :func:`sessionspec.model.compaction.brackets.summary_record`): ``compact/start {turn}``,
    ``compact/summary {summary, shadowedRange:{start,end}, shadowedSeqs, shadowedTokenCount, provider, model,
    maxTokens?}`` and ``compact/end {turn, error?}``, keys in this order, a summary naming a non-empty provider
    and model.  D08 (DIA-4, :func:`sessionspec.model.compaction.d08.summary_record`): ``compaction/summary`` in
    its own order.  Another dialect's record is not judged here."""
    rule, records = compaction_records(dialect)
    keys = records.get(event.type)
    if keys is None:
        return None
    data = event.data
    flaw = key_flaw(data, keys)
    if flaw is None and event.type.endswith("/summary"):
        if key_flaw(get(data, "shadowedRange"), RANGE_KEYS) is not None:
            flaw = "has a shadowedRange that is not {start, end}"
        elif not all(isinstance(get(data, k), str) and get(data, k) for k in ("provider", "model")):
            flaw = "has an empty provider or model"
    if flaw is None:
        return None
    return Rejected(rule=rule, seq=event.seq, reason=f"{event.type} data {flaw}")


@decides("LOG-10", "DIA-9")
def check_plugin_shape(event: Event) -> Rejected | None:
    """LOG-10's ``session/title {title, messageSeqs, source}`` (its definition, with the quote, is
    :func:`sessionspec.model.log.make_event`), a string title and a list of seqs; DIA-9's ``request/context
    {provider, model, contextWindow?}`` (its definition is :func:`sessionspec.model.header.header_eq`), strings
    and a positive window.  Other plugin types are opaque."""
    if event.type not in PLUGIN_KEYS:
        return None
    rule, keys = PLUGIN_KEYS[event.type]
    data = event.data
    flaw = key_flaw(data, keys)
    if flaw is None and event.type == "request/context":
        window = get(data, "contextWindow")
        if not (isinstance(get(data, "provider"), str) and isinstance(get(data, "model"), str)):
            flaw = "has a provider or model that is not a string"
        elif window is not ABSENT and not (isinstance(window, int) and not isinstance(window, bool) and window > 0):
            flaw = "has a contextWindow that is not a positive integer"
    elif flaw is None and not (isinstance(get(data, "title"), str) and isinstance(get(data, "messageSeqs"), tuple)):
        flaw = "has a title or messageSeqs of the wrong type"
    return None if flaw is None else Rejected(rule=rule, seq=event.seq, reason=f"{event.type} data {flaw}")

