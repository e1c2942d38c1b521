"""Broken compactions (planted faults, never in ``model/``): what compact-basic
would have written with its CMP-10 rounding removed, or with the prefix folded
away (CMP-24, PFX-9).  Each takes the log and the events the real compaction
appended, and returns the events the broken one appends instead."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sessionspec.model.compaction import balanced_cuts
from sessionspec.model.header import EpochHeader, HeaderReason, header_to_json, latest_header
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, with_values
from sessionspec.model.log import Event, make_event
from sessionspec.model.loop.script import obj
from sessionspec.model.meter import node_price
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface


def _with(data: Json | Absent, **changes: Json) -> JsonObject:
    assert isinstance(data, JsonObject)
    return with_values(data, **changes)


def split_tool_pair(events: Sequence[Event], appended: tuple[Event, ...]) -> tuple[Event, ...]:
    """The CMP-11 walk without its head-ward
    rounding — the shadowed range of a (single) bracket grows by the next
    surface node whenever that cut is unbalanced (CMP-10), i.e. it takes a tool
    call and leaves its result behind (or the reverse)."""
    summaries = [i for i, e in enumerate(appended) if e.type == "compact/summary"]
    if len(summaries) != 1 or summaries[0] + 1 >= len(appended):
        return appended
    i = summaries[0]
    summary, checkpoint = appended[i], appended[i + 1]
    base = [*events, *appended[: i - 1]]
    fold = fold_surface(base)
    seqs = get(summary.data, "shadowedSeqs")
    if isinstance(fold, Rejected) or not isinstance(seqs, tuple) or not seqs or seqs[-1] not in fold.state.nodes:
        return appended
    nodes = fold.state.nodes
    end_idx = nodes.index(seqs[-1])
    balanced = balanced_cuts(nodes, base)
    if end_idx + 2 >= len(nodes) or isinstance(balanced, Rejected) or balanced[end_idx + 2]:
        return appended
    extra = nodes[end_idx + 1]
    tokens = node_price(base[extra])
    count = get(summary.data, "shadowedTokenCount")
    if isinstance(tokens, Rejected) or not isinstance(count, int):
        return appended
    start = get(get(summary.data, "shadowedRange"), "start")
    assert not isinstance(start, Absent)
    new_summary = make_event(summary.type, seq=summary.seq, time=summary.time, data=_with(
        summary.data, shadowedRange=obj(("start", start), ("end", extra)), shadowedSeqs=(*seqs, extra),
        shadowedTokenCount=count + tokens))
    provenance = checkpoint.source_event_seqs
    assert isinstance(provenance, tuple)
    new_checkpoint = make_event(checkpoint.type, seq=checkpoint.seq, time=checkpoint.time, data=checkpoint.data,
                                source_event_seqs=(*provenance, extra),
                                surface_op=_with(checkpoint.surface_op, end=extra))
    return (*appended[:i], new_summary, new_checkpoint, *appended[i + 2:])


def drop_prefix(events: Sequence[Event], appended: tuple[Event, ...]) -> tuple[Event, ...]:
    """A compaction that treats the prefix as part of
    what it condenses and re-anchors the header without ``messagePrefix`` inside
    its bracket (CMP-24 forbids any header event; PFX-9 keeps the prefix beside history)."""
    ends = [i for i, e in enumerate(appended) if e.type == "compact/end" and get(e.data, "error") is ABSENT]
    header = latest_header(events)
    if not ends or not isinstance(header, EpochHeader) or isinstance(header.message_prefix, Absent):
        return appended
    i = ends[0]
    dropped = replace(header, message_prefix=ABSENT)
    event = make_event("request/header", seq=appended[i].seq, time=appended[i].time,
                       data=obj(("header", header_to_json(dropped)), ("reason", HeaderReason.CHANGE.value)))
    shifted = tuple(make_event(e.type, seq=e.seq + 1, time=e.time, data=e.data,
                               source_event_seqs=e.source_event_seqs, surface_op=e.surface_op) for e in appended[i:])
    return (*appended[:i], event, *shifted)

