"""Logs for the compaction companion and the prune check, and the model's own fold of them (tests/model and tests/fast).

The model writes brackets by the region transaction (``compact_region``, ``compact_if_needed``) and prunes by the
prune pass; the loop simulator writes logs holding both.  :func:`judged` folds the model's definitions
(model/compaction/companion.py, companion_d08.py through companion_dialect.py, model/prune_check.py) over a log,
over the model's own priced surface (``PricedSurface``, MTR-7) and CMP-10's ``balanced_cuts``; each ``*_edit``
is a change the rule named beside it in ``*REFUSALS`` forbids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sessionspec.generate import generate_events
from sessionspec.model.compaction import Ids, Trigger, compact_if_needed
from sessionspec.model.compaction.companion import (
    BracketWatch,
    check_checkpoint,
    check_end,
    check_start,
    check_summary,
    clear_bracket,
    is_logged_checkpoint,
    on_turn_end,
    on_turn_start,
)
from sessionspec.model.compaction.companion_dialect import bracket_watch
from sessionspec.model.compaction.retention import balanced_cuts
from sessionspec.model.header import EpochHeader, header_of_event
from sessionspec.model.jsonval import ABSENT, Absent, freeze, get
from sessionspec.model.log import Dialect, Event, log_view, make_event
from sessionspec.model.meter import PricedSurface
from sessionspec.model.prune import PruneConfig, prune_session
from sessionspec.model.prune_check import PruneWatch, check_prune_replacement, is_prune_replacement, take_prune_record
from sessionspec.model.rejected import Rejected
from tests.support import busy_log, compacted_head, d08_log, with_data

SMALL = PruneConfig(threshold_chars=100, head_chars=10, tail_chars=5)


@dataclass
class ModelSurface:
    """The priced surface before an event by the model's definitions (``PricedNodes``)."""

    priced: PricedSurface
    events: Sequence[Event]

    @property
    def seqs(self) -> list[int]:
        return self.priced.seqs

    def range_tokens(self, start_idx: int, end_idx: int) -> int:
        return sum(node.tokens for node in self.priced.nodes[start_idx : end_idx + 1])

    def splits(self, start_idx: int, end_idx: int) -> bool | Rejected:
        balanced = balanced_cuts(self.priced.seqs, self.events, self.priced.dialect)
        return balanced if isinstance(balanced, Rejected) else not (balanced[start_idx] and balanced[end_idx + 1])


def visit(watch: BracketWatch, prunes: PruneWatch, event: Event, surface: ModelSurface,
           header: EpochHeader | Absent, before: Sequence[Event]) -> tuple[Rejected, ...]:
    kind = event.type
    start, summary, end = watch.types
    if kind == "turn/start":
        return on_turn_start(watch, event)
    if kind == "turn/end":
        return on_turn_end(watch, event)
    if kind == "session/end-seed":
        return clear_bracket(watch)
    if kind == start:
        return check_start(watch, event)
    if kind == summary:
        return check_summary(watch, event, surface, header, before)
    if kind == end:
        return check_end(watch, event)
    if is_logged_checkpoint(event):
        return check_checkpoint(watch, event)
    if kind == "compaction/prune":
        take_prune_record(prunes, event)
    elif is_prune_replacement(event):
        return check_prune_replacement(prunes, event, before)
    return ()


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's companion and prune definitions folded over ``events`` (seq = position)."""
    watch, prunes = bracket_watch(dialect), PruneWatch(dialect)
    priced = PricedSurface(dialect=dialect)
    header: EpochHeader | Absent = ABSENT
    found: list[Rejected] = []
    for index, event in enumerate(events):
        before = log_view(events, index)
        found += visit(watch, prunes, event, ModelSurface(priced, before), header, before)
        bad = priced.fold(event, before)
        if bad is not None:
            return [*found, bad]
        if event.type == "request/header":
            read = header_of_event(event, dialect)
            assert not isinstance(read, Rejected)
            header = read
    return found


def rules_of(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> set[str]:
    return {f.rule for f in judged(events, dialect)}


def simulated(seed: int) -> list[Event]:
    return [event for block in generate_events(3000, seed, 50) for event in block]


def committed_bracket() -> tuple[list[Event], Event, Event, Event, Event]:
    log = busy_log()
    _, outcome = compacted_head(log, 2)
    start, summary, checkpoint, end = outcome.events
    return log.events, start, summary, checkpoint, end


def at_seq(event: Event, seq: int) -> Event:
    return replace(event, seq=seq)


def bracket_edit(name: str) -> list[Event]:
    """The committed bracket after ``busy_log`` with one change ``name``."""
    events, start, summary, checkpoint, end = committed_bracket()
    seqs = get(summary.data, "shadowedSeqs")
    assert isinstance(seqs, tuple)
    count = get(summary.data, "shadowedTokenCount")
    assert isinstance(count, int)
    n = len(events)
    turn_end = make_event("turn/end", seq=n, time=0, data=freeze({"turn": 1, "reason": {"kind": "completed"}}))
    edits: dict[str, Callable[[], list[Event]]] = {
        "nested start": lambda: [*events, start, at_seq(start, n + 1), at_seq(summary, n + 2), at_seq(checkpoint, n + 3), at_seq(end, n + 4)],
        "summary without start": lambda: [*events, at_seq(summary, n)],
        "second summary": lambda: [*events, start, summary, at_seq(summary, n + 2)],
        "end without start": lambda: [*events, at_seq(end, n)],
        "end of another turn": lambda: [*events, start, summary, checkpoint, with_data(end, turn=2)],
        "successful end without summary": lambda: [*events, start, at_seq(end, n + 1)],
        "successful end without checkpoint": lambda: [*events, start, summary, at_seq(end, n + 2)],
        "start of another turn": lambda: [*events, with_data(start, turn=2), summary, checkpoint, with_data(end, turn=2)],
        "start outside a turn": lambda: [*events, turn_end, *(at_seq(e, e.seq + 1) for e in (start, summary, checkpoint, end))],
        "shadowedSeqs not a list": lambda: [*events, start, with_data(summary, shadowedSeqs=seqs[0]), checkpoint, end],
        "range end off the surface": lambda: [*events, start, with_data(summary, shadowedSeqs=[seqs[0], 99], shadowedRange={"start": seqs[0], "end": 99}), checkpoint, end],
        "checkpoint appended": lambda: [*events, start, summary, replace(checkpoint, surface_op="append"), end],
        "empty shadowedSeqs": lambda: [*events, start, with_data(summary, shadowedSeqs=[]), checkpoint, end],
        "range start not the first seq": lambda: [*events, start, with_data(summary, shadowedRange={"start": seqs[1], "end": seqs[-1]}), checkpoint, end],
        "range end not the last seq": lambda: [*events, start, with_data(summary, shadowedRange={"start": seqs[0], "end": seqs[-2]}), checkpoint, end],
        "negative count": lambda: [*events, start, with_data(summary, shadowedTokenCount=-1), checkpoint, end],
        "count not an integer": lambda: [*events, start, with_data(summary, shadowedTokenCount=1.5), checkpoint, end],
        "range not on the surface": lambda: [*events, start, with_data(summary, shadowedSeqs=[99], shadowedRange={"start": 99, "end": 99}), checkpoint, end],
        "range reversed": lambda: [*events, start, with_data(summary, shadowedSeqs=[seqs[-1], seqs[0]], shadowedRange={"start": seqs[-1], "end": seqs[0]}), checkpoint, end],
        "seqs skip a node": lambda: [*events, start, with_data(summary, shadowedSeqs=[seqs[0], seqs[-1]]), checkpoint, end],
        "count off by one": lambda: [*events, start, with_data(summary, shadowedTokenCount=count + 1), checkpoint, end],
        "checkpoint before summary": lambda: [*events, start, at_seq(checkpoint, n + 1), at_seq(summary, n + 2), at_seq(end, n + 3)],
        "checkpoint range": lambda: [*events, start, summary, replace(checkpoint, surface_op=freeze({"op": "replace", "start": seqs[0], "end": seqs[-2]})), end],
        "checkpoint provenance": lambda: [*events, start, summary, replace(checkpoint, source_event_seqs=(start.seq, *seqs)), end],
        "checkpoint content": lambda: [*events, start, summary, with_data(checkpoint, content=[{"type": "text", "text": "S"}]), end],
        "summary not blocks": lambda: [*events, start, with_data(summary, summary="S"), checkpoint, end],
        "summary not smaller": lambda: [*events, start, with_data(summary, shadowedTokenCount=1), checkpoint, end],
    }
    return edits[name]()


REFUSALS = [
    ("nested start", "CMP-25"), ("summary without start", "CMP-25"), ("second summary", "CMP-25"),
    ("end without start", "CMP-25"), ("end of another turn", "CMP-25"), ("successful end without summary", "CMP-25"),
    ("successful end without checkpoint", "CMP-22"), ("start of another turn", "CMP-14"), ("start outside a turn", "CMP-14"),
    ("shadowedSeqs not a list", "CMP-25"), ("range end off the surface", "CMP-15"), ("checkpoint appended", "CMP-22"),
    ("empty shadowedSeqs", "CMP-25"), ("range start not the first seq", "CMP-25"), ("range end not the last seq", "CMP-25"),
    ("negative count", "CMP-25"), ("count not an integer", "CMP-25"), ("range not on the surface", "CMP-15"),
    ("range reversed", "CMP-15"), ("seqs skip a node", "CMP-15"), ("count off by one", "CMP-15"),
    ("checkpoint before summary", "CMP-22"), ("checkpoint range", "CMP-22"), ("checkpoint provenance", "CMP-22"),
    ("checkpoint content", "CMP-20"), ("summary not blocks", "CMP-20"), ("summary not smaller", "CMP-21"),
]


def manual_bracket() -> tuple[list[Event], Event, Event, Event, Event]:
    log = d08_log()
    run = compact_if_needed(log.events, short_summary, dialect=Dialect.D08, trigger=Trigger.MANUAL,
                            ids=lambda attempt: Ids(compaction_id="m", message_id="k"))
    assert not isinstance(run, Rejected) and run.error is None
    start, summary, checkpoint, end = run.events
    return log.events, start, summary, checkpoint, end


def filler(seq: int) -> Event:
    """A log-only event the companion does not read."""
    return make_event("session/title", seq=seq, time=0, data=freeze({"title": "t"}))


def short_summary(call: object) -> object:
    from tests.support import short  # noqa: PLC0415

    return short(call)  # type: ignore[arg-type]


def d08_bracket_edit(name: str) -> list[Event]:
    events, start, summary, checkpoint, end = manual_bracket()
    n = len(events)
    turn_start = make_event("turn/start", seq=n + 1, time=0, data=freeze({"turn": 1}))
    edits: dict[str, Callable[[], list[Event]]] = {
        "turn starts inside": lambda: [*events, start, turn_start],
        "turn ends inside": lambda: [*events, start, make_event("turn/end", seq=n + 1, time=0, data=freeze({"turn": 1}))],
        "manual inside a turn": lambda: [*events, at_seq(turn_start, n), *(at_seq(e, e.seq + 1) for e in (start, summary, checkpoint, end))],
        "numbered owner outside a turn": lambda: [*events, with_data(start, turn=1)],
        "empty id": lambda: [*events, with_data(start, compactionId="")],
        "summary of another id": lambda: [*events, start, with_data(summary, compactionId="other")],
        "end of another id": lambda: [*events, start, summary, checkpoint, with_data(end, compactionId="other")],
        "checkpoint of another id": lambda: [*events, start, summary, with_data(checkpoint, source={"kind": "plugin", "plugin": "compact", "compactionId": "o"}), end],
        "checkpoint not adjacent": lambda: [*events, start, summary, filler(summary.seq + 1), at_seq(checkpoint, checkpoint.seq + 1), at_seq(end, end.seq + 1)],
        "successful end without checkpoint": lambda: [*events, start, summary, at_seq(end, end.seq - 1)],
        "end not adjacent": lambda: [*events, start, summary, checkpoint, filler(end.seq), at_seq(end, end.seq + 1)],
    }
    return edits[name]()


D08_REFUSALS = [
    ("turn starts inside", "DIA-19"), ("turn ends inside", "DIA-19"), ("manual inside a turn", "DIA-19"),
    ("numbered owner outside a turn", "CMP-14"), ("empty id", "DIA-19"), ("summary of another id", "DIA-19"),
    ("end of another id", "DIA-19"), ("checkpoint of another id", "DIA-19"), ("checkpoint not adjacent", "DIA-16"),
    ("end not adjacent", "DIA-16"), ("successful end without checkpoint", "CMP-22"),
]


def pruned_result() -> tuple[list[Event], Event]:
    log = busy_log(steps=1)
    (replacement,) = prune_session(log.events, SMALL)  # type: ignore[misc]
    return log.events, replacement


PRUNE_REFUSALS: list[tuple[str, Callable[[list[Event], Event], list[Event]], str]] = [
    ("two nodes", lambda ev, r: [*ev, replace(r, surface_op=freeze({"op": "replace", "start": r.source_event_seqs[0] - 1, "end": r.source_event_seqs[0]}))], "PRN-4"),  # type: ignore[index]
    ("not a seq", lambda ev, r: [*ev, replace(r, surface_op=freeze({"op": "replace", "start": "x", "end": "x"}))], "PRN-4"),
    ("a later seq", lambda ev, r: [*ev, replace(r, surface_op=freeze({"op": "replace", "start": 999, "end": 999}))], "PRN-4"),
    ("provenance", lambda ev, r: [*ev, replace(r, source_event_seqs=(0,))], "PRN-4"),
    ("content not blocks", lambda ev, r: [*ev, with_data(r, content="short")], "PRN-3"),
    ("content", lambda ev, r: [*ev, with_data(r, content=[{"type": "text", "text": "short"}])], "PRN-3"),
    ("head altered", lambda ev, r: [*ev, with_data(r, content=[{"type": "text", "text": "Z" + text_of(r)[1:]}])], "PRN-3"),
    ("pruned again", lambda ev, r: [*ev, r, prune_again(r)], "PRN-3"),
]


def text_of(event: Event) -> str:
    content = get(event.data, "content")
    assert isinstance(content, tuple)
    return "".join(str(get(b, "text")) for b in content)


def prune_again(first: Event) -> Event:
    """PRN-5: a second prune of the pruned node (its content as it is, marker and all): its total is within the
    threshold the marker shows, so ``pruneContent`` of it is none, and no replacement is what the pass writes."""
    return replace(first, seq=first.seq + 1, surface_op=freeze({"op": "replace", "start": first.seq, "end": first.seq}),
                   source_event_seqs=(first.seq,))
