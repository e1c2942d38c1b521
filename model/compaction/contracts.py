"""What the compaction contracts state (issue 29): one range, an unsplit tail, an untouched header.

Used only by the ``post:`` lines of :func:`~model.compaction.region.compact_region` and
:func:`~model.compaction.run.compact_if_needed` (CrossHair and the tests evaluate them); each returns
None when the property holds, else the violation in words.  The checks re-read the appended events
themselves, so they do not trust the result records the functions return.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.records import CompactionRun, RegionOutcome
from sessionspec.model.derive import project
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface


def _tool_blocks(event: Event, dialect: Dialect) -> tuple[int, int]:
    """(tool calls, tool results) in the node's derived message (DER-1); CMP-10 counts, never matches ids (Q-8)."""
    message = project(event, dialect)
    if message is None or isinstance(message, Rejected):
        return 0, 0
    if event.type == "tool/result":
        return 0, 1
    content = get(message, "content")
    if event.type != "assistant/message" or not isinstance(content, tuple):
        return 0, 0
    return sum(1 for b in content if get(b, "type") == "tool-call"), 0


def unsplit(nodes: Sequence[int], events: Sequence[Event], first: int, last: int, dialect: Dialect) -> str | None:
    """CMP-10/CMP-13: the range ``nodes[first..last]`` neither starts nor ends inside a step's tool exchange:
    the calls before it are all answered before it, and the calls in it are all answered in it."""
    calls = results = 0
    for index, seq in enumerate(nodes[: last + 1]):
        if index == first and calls != results:
            return f"CMP-10: the range starts at seq {seq}, between a tool call and its result"
        c, r = _tool_blocks(events[seq], dialect)
        calls, results = calls + c, results + r
    if calls != results:
        return f"CMP-10: the retained tail after seq {nodes[last]} holds a result of a call in the range"
    return None


def appended_in_order(events: Sequence[Event], appended: Sequence[Event]) -> str | None:
    """Appends only (seqs follow the log), and no ``request/header``: prefix, system and tools untouched (CMP-24)."""
    for offset, event in enumerate(appended):
        if event.seq != len(events) + offset:
            return f"the appended event {offset} has seq {event.seq}, not {len(events) + offset}"
        if event.type == "request/header":
            return "CMP-24: compaction wrote a request/header (the prefix, system or tools would change)"
    return None


def replace_ops(appended: Sequence[Event]) -> list[Event]:
    return [e for e in appended if isinstance(e.surface_op, JsonObject) and get(e.surface_op, "op") == "replace"]


def checkpoint_is_one_range(log: Sequence[Event], checkpoint: Event, dialect: Dialect) -> str | None:
    """CMP-22: the checkpoint replaces ``[start, end]`` of the surface it was appended to, and cites exactly
    ``[bracket start, summary, *the replaced nodes]``; the summary record names the same range."""
    fold = fold_surface(log[: checkpoint.seq], dialect)
    if isinstance(fold, Rejected):
        return f"the log before the checkpoint does not fold: {fold}"
    nodes = fold.state.nodes
    start, end = get(checkpoint.surface_op, "start"), get(checkpoint.surface_op, "end")
    if start not in nodes or end not in nodes:
        return f"the checkpoint replaces {start}..{end}, not a surface range"
    first, last = nodes.index(start), nodes.index(end)
    replaced = tuple(nodes[first : last + 1])
    cited = checkpoint.source_event_seqs
    if not isinstance(cited, tuple) or len(cited) < 2 or tuple(cited[2:]) != replaced:
        return f"the checkpoint replaces {replaced} but cites {cited}"
    summary = log[cited[1]] if isinstance(cited[1], int) and 0 <= cited[1] < len(log) else None
    summarised = _summary_range(summary)
    if summarised is not None and summarised != (start, end):
        return f"the summary names the range {summarised}, the checkpoint replaces {(start, end)}"
    return unsplit(nodes, log, first, last, dialect)


def _summary_range(summary: Event | None) -> tuple[Json | Absent, Json | Absent] | None:
    """The summary record's ``shadowedRange`` (A55 ``data``, D08 the same keys), when it has one."""
    if summary is None:
        return None
    shadowed = get(summary.data, "shadowedRange")
    if shadowed is ABSENT:
        return None
    return get(shadowed, "start"), get(shadowed, "end")


def region_holds(events: Sequence[Event], start: int, end: int, outcome: RegionOutcome, dialect: Dialect) -> str | None:
    """``compact_region``: the summarised, priced, cited and replaced ranges are one range; a failed
    transaction changes no surface (CMP-23); appends only, no header (CMP-24)."""
    appended, result = outcome.events, outcome.result
    bad = appended_in_order(events, appended)
    if bad is not None:
        return bad
    ops = replace_ops(appended)
    if result is None:
        return "CMP-23: a failed compaction replaced part of the surface" if ops else None
    if len(ops) != 1 or ops[0].seq != result.checkpoint_seq:
        return "CMP-22: a compaction must replace once, with its checkpoint"
    if (get(ops[0].surface_op, "start"), get(ops[0].surface_op, "end")) != (start, end):
        return f"CMP-22: the checkpoint does not replace the requested range {start}..{end}"
    if (result.shadowed_range.start, result.shadowed_range.end) != (start, end):
        return "CMP-22: the result's shadowedRange is not the replaced range"
    log = (*events, *appended)
    bad = checkpoint_is_one_range(log, ops[0], dialect)
    if bad is not None:
        return bad
    cited = ops[0].source_event_seqs
    if not isinstance(cited, tuple) or cited[2:] != tuple(result.shadowed_seqs):
        return "CMP-15: the priced nodes are not the replaced nodes"
    return None


def run_holds(events: Sequence[Event], run: CompactionRun, dialect: Dialect) -> str | None:
    """``compact_if_needed``: every checkpoint of the run is one range of the surface it was appended to, its
    tail unsplit; prunes replace single tool results; appends only, no header (CMP-24)."""
    appended = run.events
    bad = appended_in_order(events, appended)
    if bad is not None:
        return bad
    log = (*events, *appended)
    checkpoints = 0
    for op in replace_ops(appended):
        if op.type == "tool/result":
            if get(op.surface_op, "start") != get(op.surface_op, "end"):
                return f"PRN-4: the prune at seq {op.seq} replaces a range"
            continue
        checkpoints += 1
        bad = checkpoint_is_one_range(log, op, dialect)
        if bad is not None:
            return bad
    if checkpoints != len(run.results):
        return f"the run reports {len(run.results)} compactions and wrote {checkpoints} checkpoints"
    return None
