"""A log's seed as the log shows it: where the live events start (LOG-8, D08's ``session/end-seed``: DIA-5), the
end-seed marker after a D08 seed (DIA-5) and a fork child's seed against its parent (FMT-11, LOG-15).

The seed is copied (a fork, a resume): its events were judged where they were written, so ``sessionspec check``
judges the live events only, from :func:`first_live_seq`.  The model writes a fork child's seed with
:func:`sessionspec.model.loop.instance.fork_seed` (LOG-15's definition); :func:`check_fork_child` runs it on the
parent's events.  ``tests/model/test_seed_log.py`` holds these against the loop simulator's logs, both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.model.codec import serialize_event
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides

END_SEED: Final = "session/end-seed"


@decides("LOG-8", "DIA-5")
def first_live_seq(dialect: Dialect, seed_length: int, last_end_seed: int) -> int:
    """LOG-8: "``firstLiveSeq`` is the length of the seed"; DIA-5 (D08): readers use the **last**
    ``session/end-seed`` (its seq ``last_end_seed``, -1 when none) as ``firstLiveSeq``: the live events start
    after it, or after the seed when it lies inside the seed."""
    match dialect:
        case Dialect.A55:
            return seed_length
        case Dialect.D08:
            return max(seed_length, last_end_seed + 1) if last_end_seed >= 0 else seed_length


def end_seed(seed: Sequence[Event], time: int) -> tuple[Event, ...]:
    """DIA-5's constructor (the rule, with its quote, is defined by
    :func:`sessionspec.model.compaction.d08.bracket_owner`): a D08 session created with ``seed`` appends
    ``session/end-seed {}`` unless the seed already ends with one (``session/src/index.ts`` lines 545-547 at
    ``611615650f``); an empty seed is one too (``seed !== undefined``).  The events the session begins with."""
    if seed and seed[-1].type == END_SEED:
        return tuple(seed)
    return (*seed, make_event(END_SEED, seq=len(seed), time=time, data=JsonObject()))


def _end_seed_refusal(events: Sequence[Event], seed_length: int) -> list[Rejected]:
    if seed_length <= 0 or seed_length > len(events):
        return []  # no seed, or a seed not all read (FMT-11 says which)
    if events[seed_length - 1].type == END_SEED:
        return []
    if seed_length < len(events) and events[seed_length].type == END_SEED:
        return []
    after = f"{events[seed_length].type} at seq {events[seed_length].seq}" if seed_length < len(events) else "the end of the log"
    return [Rejected(rule="DIA-5", seq=events[seed_length - 1].seq,
                     reason=f"the {seed_length}-event seed is followed by {after}, not session/end-seed")]


@decides("DIA-5")
def check_end_seed(events: Sequence[Event], seed_length: int, dialect: Dialect) -> list[Rejected]:
    """DIA-5 (D08; the writer is :func:`end_seed`): a seed of ``seed_length`` events is followed by, or ends with,
    a ``session/end-seed`` (the rule's compaction-lock half is :func:`sessionspec.model.compaction.d08.bracket_owner`'s,
    in-process: no log shows it).  A55 writes no end-seed.  A seed longer than ``events`` is FMT-11's."""
    match dialect:
        case Dialect.A55:
            return []
        case Dialect.D08:
            return _end_seed_refusal(events, seed_length)


@decides("FMT-11")
def check_seed_within(seed_length: int, count: int) -> list[Rejected]:
    """FMT-11's ``seedLength`` (the header's, or its sidecar's) names the first events of the log: no more than the
    ``count`` it holds."""
    if seed_length > count:
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the log's {count} events")]
    return []


@decides("FMT-11", "LOG-15", "P-LOG-7")
def check_fork_child(child: Sequence[Event], parent: Sequence[Event], seed_length: int) -> list[Rejected]:
    """FMT-11: "a fork child's first ``seedLength`` events MUST equal the parent's first ``seedLength`` events"
    (byte-equal as logged, time included: the seed is a copy); LOG-15 (P-LOG-7): the seed is
    :func:`sessionspec.model.loop.instance.fork_seed` of the parent's events to the boundary, so it ends at a
    ``turn/end`` of the source."""
    if seed_length <= 0:
        return []
    if seed_length > len(parent):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the parent's {len(parent)} events")]
    if seed_length > len(child):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the child's {len(child)} events")]
    for index in range(seed_length):
        if serialize_event(child[index]) != serialize_event(parent[index]):
            return [Rejected(rule="FMT-11", seq=child[index].seq, reason=f"seed event {index} differs from the parent's event {index}")]
    # Imported here: the loop model (the package) is not otherwise loaded by ``check``, and only a fork needs it.
    from sessionspec.model.loop.instance import fork_seed

    if len(fork_seed(parent[:seed_length])) != seed_length:
        return [Rejected(rule="LOG-15", seq=seed_length - 1, reason=f"the fork boundary is a {parent[seed_length - 1].type}, not a turn/end")]
    return []
