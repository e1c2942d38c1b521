"""Property predicates of RULES §16.3 over what the loop model writes when it compacts and prunes.

Each predicate is a pure, total function named after what it protects, carries ``@implements`` with its
property ID, and returns ``None`` when the property holds for its input, else the violation in words
(starting with the P-ID).  Docstrings name the P-ID and the rules checked.
They take the loop's A55 log, its requests and the summarizer calls; the state machines
(``spec/machines.py``) and ``tests/model/test_loop_compaction.py`` assert on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final, final

from sessionspec.model.compaction import Range, is_checkpoint_source
from sessionspec.model.derive import derive, derive_nodes, project
from sessionspec.model.header import latest_header, prefix_messages
from sessionspec.model.jsonval import Json, JsonObject, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import SentRequest
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface
from sessionspec.spec.compaction_properties import range_balanced


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Bracket:
    """Indexes of one ``compact/*`` bracket in the log (None: not written)."""

    start: int
    summary: int | None = None
    checkpoint: int | None = None
    end: int | None = None


def brackets(log: Sequence[Event]) -> tuple[Bracket, ...]:
    """Every A55 bracket in log order (CMP-1, CMP-22)."""
    found: list[Bracket] = []
    for index, event in enumerate(log):
        if event.type == "compact/start":
            found.append(Bracket(start=index))
        elif not found or found[-1].end is not None:
            continue
        elif event.type == "compact/summary":
            found[-1] = replace(found[-1], summary=index)
        elif event.type == "user/message" and is_checkpoint_source(get(event.data, "source")):
            found[-1] = replace(found[-1], checkpoint=index)
        elif event.type == "compact/end":
            found[-1] = replace(found[-1], end=index)
    return tuple(found)


def is_compaction_event(event: Event) -> bool:
    """A ``compact/*`` event or a replace (checkpoint or prune): only compaction rewrites the surface."""
    return event.type.startswith("compact/") or isinstance(event.surface_op, JsonObject)


def _shadowed(log: Sequence[Event], b: Bracket) -> tuple[int, ...]:
    seqs = get(log[b.summary].data, "shadowedSeqs") if b.summary is not None else ()
    return tuple(s for s in seqs if isinstance(s, int)) if isinstance(seqs, tuple) else ()


def _js(value: Json | Rejected) -> str:
    return repr(value) if isinstance(value, Rejected) else js_stringify(value)


def _prefix(log: Sequence[Event]) -> tuple[Json, ...]:
    """``messagePrefix or []`` of the latest header of ``log``."""
    header = latest_header(log)
    return () if isinstance(header, Rejected) else prefix_messages(header)


@implements("P-CMP-5")
def compaction_leaves_envelope(log: Sequence[Event], requests: Sequence[SentRequest] = (), since: int = 0) -> str | None:
    """P-CMP-5 (CMP-16, CMP-24, PFX-9): compaction never touches prefix, system,
    tools or config — no header event inside a bracket; the history right after a
    committed bracket is ``[checkpoint, retained…]`` (the shadowed head replaced
    by the one checkpoint, the retained tail unchanged); and every later request
    is ``prefix ++ [checkpoint, …]``: the logged prefix first, the checkpoint right after it.
    Brackets starting before ``since`` are taken as already checked."""
    committed: list[Bracket] = []
    for b in brackets(log):
        if b.start < since:
            if b.checkpoint is not None:
                committed.append(b)
            continue
        stop = len(log) if b.end is None else b.end + 1
        if any(e.type == "request/header" for e in log[b.start:stop]):
            return f"P-CMP-5: a request/header inside the compaction bracket at seq {b.start}"
        if b.checkpoint is None:
            continue
        committed.append(b)
        before, after = derive(log[: b.start]), derive(log[: b.checkpoint + 1])
        gone = derive_nodes(_shadowed(log, b), log)
        checkpoint = project(log[b.checkpoint])
        if isinstance(before, Rejected) or isinstance(after, Rejected) or isinstance(gone, Rejected) or \
                not isinstance(checkpoint, JsonObject):
            return f"P-CMP-5: the log around the bracket at seq {b.start} does not derive"
        if _js(after) != _js((checkpoint, *before[len(gone):])):
            return f"P-CMP-5: the history after the bracket at seq {b.start} is not [checkpoint, retained...]"
    for sent in requests:
        prefix = _prefix(log[: sent.dispatch_len])
        messages = sent.request.messages
        if _js(tuple(messages[: len(prefix)])) != _js(prefix):
            return f"P-CMP-5: request of turn {sent.turn} step {sent.step} does not start with its prefix"
        if not any(b.end is not None and b.end < sent.step_start_seq for b in committed):
            continue
        fold = fold_surface(log[: sent.step_start_seq])
        if isinstance(fold, Rejected) or not fold.state.nodes:
            return f"P-CMP-5: no surface before the request of turn {sent.turn} step {sent.step}"
        head = log[fold.state.nodes[0]]
        checkpoint = project(head)
        if not is_checkpoint_source(get(head.data, "source")) or len(messages) <= len(prefix) or \
                isinstance(checkpoint, Rejected) or _js(messages[len(prefix)]) != _js(checkpoint):
            return f"P-CMP-5: request of turn {sent.turn} step {sent.step} is not prefix ++ [checkpoint, ...]"
    return None


@implements("P-CMP-3")
def compactions_keep_tool_pairs(log: Sequence[Event], since: int = 0) -> str | None:
    """P-CMP-3 (CMP-10, CMP-11, CMP-13) on the loop's log: every compacted range
    (of a bracket starting at or after ``since``) is balanced on both edges at
    the time it was summarised — no tool call is ever compacted away from its result."""
    for b in brackets(log):
        if b.summary is None or b.start < since:
            continue
        rng = get(log[b.summary].data, "shadowedRange")
        start, end = get(rng, "start"), get(rng, "end")
        if not isinstance(start, int) or not isinstance(end, int):
            return f"P-CMP-3: malformed shadowedRange at seq {b.summary}"
        nodes = fold_surface(log[: b.summary])
        if isinstance(nodes, Rejected) or start not in nodes.state.nodes or end not in nodes.state.nodes:
            return f"P-CMP-3: the range at seq {b.summary} is not on the surface"
        if range_balanced(log[: b.summary], Range(start=start, end=end)) is not None:
            return f"P-CMP-3: the compaction at seq {b.start} splits a tool call from its result"
    return None


@implements("P-CMP-4")
def compactions_resummarize_head(log: Sequence[Event], summarizer_requests: Sequence[tuple[int, JsonObject]] = (),
                                 since: int = 0) -> str | None:
    """P-CMP-4 (CMP-11, CMP-12, CMP-16) on the loop's log: every range is the
    head of the surface, so a re-compaction re-summarises the previous checkpoint
    (it is the first shadowed node); each summarizer request (``(dispatch length,
    request)``) is ``prefix ++ derive(shadowed) ++ [instruction]``.  Brackets
    starting before ``since`` are taken as already checked."""
    sent = dict(summarizer_requests)
    previous: int | None = None
    for b in brackets(log):
        shadowed = _shadowed(log, b)
        if b.summary is not None and b.start >= since:
            fold = fold_surface(log[: b.start])
            if isinstance(fold, Rejected) or fold.state.nodes[: len(shadowed)] != shadowed:
                return f"P-CMP-4: the range at seq {b.start} is not the head of the surface"
            if previous is not None and previous in fold.state.nodes and shadowed[:1] != (previous,):
                return f"P-CMP-4: the compaction at seq {b.start} does not re-summarise the checkpoint {previous}"
            request = sent.get(b.start + 1)
            if request is not None:
                expected = (*_prefix(log[: b.start]), *_ok(derive_nodes(shadowed, log)))
                messages = get(request, "messages")
                if not isinstance(messages, tuple) or _js(messages[:-1]) != _js(expected):
                    return f"P-CMP-4: the summarizer request at seq {b.start} is not prefix ++ the shadowed messages"
        if b.checkpoint is not None:
            previous = b.checkpoint
    return None


def _ok(messages: tuple[JsonObject, ...] | Rejected) -> tuple[JsonObject, ...]:
    return () if isinstance(messages, Rejected) else messages


def _step_of(log: Sequence[Event], end_index: int) -> tuple[int, bool]:
    """The ``step/start`` index of the step closed at ``end_index`` and whether it succeeded."""
    for index in range(end_index - 1, -1, -1):
        if log[index].type == "step/start":
            return index, any(e.type == "assistant/message" for e in log[index:end_index])
    return -1, False


@implements("P-CMP-10")
def overflow_retry_iff_compacted(log: Sequence[Event]) -> str | None:
    """P-CMP-10 (CMP-7, LOOP-14): compaction outside a step happens only between a
    failed step's ``step/end`` and the next ``step/start``/``turn/end``; with the
    default decision ``fail``, the turn retries (a new ``step/start``) iff that
    recovery advanced the replace generation (a replace landed)."""
    index = 0
    while index < len(log):
        if log[index].type != "step/end":
            index += 1
            continue
        after = index + 1
        while after < len(log) and is_compaction_event(log[after]):
            after += 1
        window = log[index + 1: after]
        if window:
            _, succeeded = _step_of(log, index)
            if succeeded:
                return f"P-CMP-10: compaction after the successful step closed at seq {index}"
            retried = after < len(log) and log[after].type == "step/start"
            advanced = any(isinstance(e.surface_op, JsonObject) for e in window)
            if retried != advanced:
                return f"P-CMP-10: after the overflow at seq {index} retry={retried} but replace generation advanced={advanced}"
        index = after
    open_step = False
    for event in log:
        if event.type in ("step/start", "step/end"):
            open_step = event.type == "step/start"
        elif is_compaction_event(event) and not open_step and not _in_overflow_window(log, event.seq):
            return f"P-CMP-10: compaction at seq {event.seq} outside any step and not after a failed step"
    return None


def _in_overflow_window(log: Sequence[Event], seq: int) -> bool:
    index = seq - 1
    while index >= 0 and is_compaction_event(log[index]):
        index -= 1
    return index >= 0 and log[index].type == "step/end" and not _step_of(log, index)[1]


@implements("P-CMP-11")
def pressure_compaction_closes_step(log: Sequence[Event]) -> str | None:
    """P-CMP-11 (CMP-6, LOOP-13): a compaction inside a step (pressure, or a
    manual post-step request) lies after the step's assistant message and its
    tool results and before its ``step/end``: nothing of the step follows it."""
    in_step = False
    compacted = False
    answered = False
    for event in log:
        if event.type == "step/start":
            in_step, compacted, answered = True, False, False
        elif event.type == "step/end":
            in_step = False
        elif in_step and is_compaction_event(event):
            if not answered:
                return f"P-CMP-11: compaction at seq {event.seq} before the step's assistant message"
            compacted = True
        elif in_step:
            answered = answered or event.type == "assistant/message"
            if compacted:
                return f"P-CMP-11: {event.type} at seq {event.seq} follows a compaction inside its step"
    return None


@implements("P-PRN-3")
def prunes_only_under_pressure(log: Sequence[Event], since: int = 0) -> str | None:
    """P-PRN-3 (PRN-6) on the loop's log: prunes (content-only ``tool/result``
    replaces) happen only inside an open turn, at a step's post-step (pressure)
    or after a failed step (overflow); and a prune changes only the pruned
    content: ``derive`` before and after differ in that one message's ``content``.
    Prunes before ``since`` are taken as already checked."""
    open_turn = False
    for index, event in enumerate(log):
        if event.type in ("turn/start", "turn/end"):
            open_turn = event.type == "turn/start"
        if event.type != "tool/result" or not isinstance(event.surface_op, JsonObject) or index < since:
            continue
        if not open_turn:
            return f"P-PRN-3: prune at seq {event.seq} outside an open turn"
        before, after = derive(log[:index]), derive(log[: index + 1])
        if isinstance(before, Rejected) or isinstance(after, Rejected) or len(before) != len(after):
            return f"P-PRN-3: the prune at seq {event.seq} changes the shape of the history"
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if _js(a) != _js(b)]
        if len(changed) != 1:
            return f"P-PRN-3: the prune at seq {event.seq} changes {len(changed)} messages"
        a, b = before[changed[0]], after[changed[0]]
        if _js(JsonObject((k, v) for k, v in a.items() if k != "content")) != \
                _js(JsonObject((k, v) for k, v in b.items() if k != "content")):
            return f"P-PRN-3: the prune at seq {event.seq} changes more than the content"
    return None


PROPERTY_PREDICATES: Final[dict[str, Callable[..., str | None]]] = {
    "P-CMP-5": compaction_leaves_envelope,
    "P-CMP-10": overflow_retry_iff_compacted,
    "P-CMP-11": pressure_compaction_closes_step,
    "P-PRN-3": prunes_only_under_pressure,
}
