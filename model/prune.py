"""The tool-result prune (PRN): shorten oversized tool results in place.

Sizes are code points (``CP``, Python ``len``), never UTF-16 units, so a surrogate pair is never split (PRN-2).
Each prune is a single-node, content-only ``tool/result`` replace citing ``[originalSeq]`` (PRN-4, SURF-7); D08
logs a ``compaction/prune`` record before each replacement (DIA-18).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.derive import project
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, is_safe_int, js_number, with_values
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.message_shape import message_shape, result_call_id
from sessionspec.model.meter import estimate_message
from sessionspec.model.rejected import FailureKind, Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import fold_surface

PRUNE_MARKER: Final = "\n\n[... tool result middle pruned ...]\n\n"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PruneConfig:
    """PRN-1: defaults 8192 / 4096 / 1024 code points."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024


_CONFIG_KEYS: Final = {"thresholdChars": "threshold_chars", "headChars": "head_chars", "tailChars": "tail_chars"}


@implements("PRN-1")
def resolve_prune_config(raw: Json) -> PruneConfig | Rejected:
    """PRN-1: "Configuration defaults MUST be `thresholdChars 8192`, `headChars 4096`, `tailChars 1024`; values
    are integers, threshold > 0, head/tail ≥ 0, unknown keys reject, and `headChars + CP(PRUNE_MARKER) +
    tailChars <= thresholdChars` MUST hold (`CP(PRUNE_MARKER) = 39`)."

    PRN-1: integers, threshold > 0, head/tail >= 0, unknown keys reject,
    ``headChars + CP(PRUNE_MARKER) + tailChars <= thresholdChars``."""
    if raw is None:
        raw = JsonObject()
    if not isinstance(raw, JsonObject):
        return Rejected(rule="PRN-1", reason="prune config must be an object")
    values = {"threshold_chars": 8192, "head_chars": 4096, "tail_chars": 1024}
    for key, value in raw.items():
        if key not in _CONFIG_KEYS:
            return Rejected(rule="PRN-1", reason=f"unknown prune config key {key!r}")
        if not is_safe_int(value):
            return Rejected(rule="PRN-1", reason=f"prune config {key} must be an integer")
        assert isinstance(value, int)
        values[_CONFIG_KEYS[key]] = value
    config = PruneConfig(**values)
    return check_prune_config(config)


def check_prune_config(config: PruneConfig) -> PruneConfig | Rejected:
    """PRN-1 bounds on an already-typed config.

    post: isinstance(__return__, Rejected) or __return__ is config
    post: isinstance(__return__, Rejected) or config.head_chars + len(PRUNE_MARKER) + config.tail_chars <= config.threshold_chars
    post: isinstance(__return__, Rejected) or min(config.head_chars, config.tail_chars) >= 0 < config.threshold_chars
    """
    if config.threshold_chars <= 0 or config.head_chars < 0 or config.tail_chars < 0:
        return Rejected(rule="PRN-1", reason="thresholdChars must be > 0 and head/tail >= 0")
    if config.head_chars + len(PRUNE_MARKER) + config.tail_chars > config.threshold_chars:
        return Rejected(rule="PRN-1", reason="headChars + marker + tailChars exceeds thresholdChars")
    return config


@implements("PRN-2")
def content_chars(blocks: Json) -> int:
    """PRN-2: "Sizes MUST be code points (`CP`) summed over `text` blocks only; non-text blocks count 0."

    A text block's points are what ``Array.from(block.text)`` gives (:func:`text_points`, QF-16).

    post: __return__ >= 0
    post: isinstance(blocks, tuple) or __return__ == 0
    """
    if not isinstance(blocks, tuple):
        return 0
    return sum(len(text_points(get(block, "text"))) for block in blocks if get(block, "type") == "text")


def text_points(text: Json | Absent) -> str | tuple[str, ...]:
    """The code points the harness reads from a text block's ``text``, ``Array.from(text)`` (QF-16): a number, a
    boolean or an object without ``length`` gives none, an array its elements (joined as JS strings when the block
    is rewritten); ``null``, an absent ``text`` and an array-like object are refused first (:func:`measure_throws`)."""
    match text:
        case str():
            return text  # a Python string is a sequence of code points already
        case tuple():
            return tuple(_js_to_string(item) for item in text)
        case _:
            return ()


def _joined(points: str | tuple[str, ...]) -> str:
    # ``points.slice(...).join('')``.
    return points if isinstance(points, str) else "".join(points)


def _js_to_string(value: Json) -> str:
    # Array.prototype.join's ToString of an element: null and undefined are "".
    match value:
        case None:
            return ""
        case str():
            return value
        case bool() | int() | float():
            return js_number(value)
        case tuple():
            return ",".join(_js_to_string(item) for item in value)
        case JsonObject():
            return "[object Object]"


def measure_throws(blocks: Json) -> str | None:
    """The error ``measureContent`` throws on ``blocks`` (QF-16), or None: content not iterable (a string is walked
    by character: nothing in it is text), a ``null`` block, a text block whose ``text`` is ``null`` or absent
    (``Array.from``), or an array-like object (read by its ``length``: not modelled, refused)."""
    if isinstance(blocks, str):
        return None
    if not isinstance(blocks, tuple):
        return "blocks is not iterable"
    for block in blocks:
        if block is None:
            return "Cannot read properties of null (reading 'type')"
        if get(block, "type") != "text":
            continue
        text = get(block, "text")
        if text is None or text is ABSENT:
            return "Array.from: text of a text block is null or undefined"
        if isinstance(text, JsonObject) and "length" in text:
            return "Array.from: text of a text block is an array-like object (not modelled)"
    return None


def _with_text(block: JsonObject, text: str) -> JsonObject:
    # A kept block keeps its other keys and their order.
    return with_values(block, text=text)


@implements("PRN-3")
def prune_content(blocks: Json, config: PruneConfig) -> tuple[Json, ...] | None | Rejected:
    """PRN-3: "`pruneContent(blocks)` MUST return none when `total <= thresholdChars`."

    PRN-3: none when ``total <= thresholdChars``; else remove code points
    ``[head, total - tail)`` of the concatenated text, inserting the marker in
    the first text block that overlaps the removed span; empty text blocks are
    dropped, non-text blocks stay in place.  Post-conditions (else BUG): a
    marker was inserted, ``CP(after) <= threshold`` and ``CP(after) < total``.

    post: __return__ is None or isinstance(__return__, Rejected) or content_chars(__return__) <= config.threshold_chars < content_chars(blocks)
    post: __return__ is None or isinstance(__return__, Rejected) or any(PRUNE_MARKER in str(get(b, "text")) for b in __return__)
    """
    thrown = measure_throws(blocks)
    if thrown is not None:
        return Rejected(rule="PRN-2", reason=f"tool-result prune: {thrown}")
    if not isinstance(blocks, tuple):
        return None
    total = content_chars(blocks)
    if total <= config.threshold_chars:
        return None
    cut_end = total - config.tail_chars
    out: list[Json] = []
    offset = 0
    marked = False
    for block in blocks:
        if get(block, "type") != "text" or not isinstance(block, JsonObject):
            out.append(block)
            continue
        text = text_points(get(block, "text"))
        bs, be, n = offset, offset + len(text), len(text)
        offset = be
        keep_head = min(max(config.head_chars - bs, 0), n)
        keep_from = min(max(cut_end - bs, 0), n)
        new_text = _joined(text[:keep_head])
        if not marked and bs < cut_end and be > config.head_chars:
            new_text += PRUNE_MARKER
            marked = True
        new_text += _joined(text[keep_from:])
        if new_text:
            out.append(_with_text(block, new_text))
    after = content_chars(tuple(out))
    if not marked or after > config.threshold_chars or after >= total:
        return Rejected(rule="PRN-3", reason="prune post-condition failed", kind=FailureKind.BUG)
    return tuple(out)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PrunedResult:
    """PRN-4: one entry of ``pruned``."""

    original_seq: int
    replacement_seq: int
    call_id: Json
    chars_before: int
    chars_after: int


def tool_result_content(event: Event, dialect: Dialect) -> Json:
    """The prunable content (:mod:`sessionspec.model.message_shape`: A55 ``data.content``; D08
    ``message.content[0].content``, DIA-18); a missing one reads as ``null``, which never prunes."""
    content = message_shape(dialect).result_content(event.data)
    return None if content is ABSENT else content


def _replace_content(event: Event, content: tuple[Json, ...], dialect: Dialect) -> Json:
    """The original ``data`` (same keys, same order) with only the content swapped, where
    :func:`tool_result_content` read it."""
    data = event.data
    assert isinstance(data, JsonObject)
    return message_shape(dialect).with_result_content(data, content)


def prune_record(original: Event, seq: int, time: int) -> tuple[Event, ...]:
    """PRN-4 (A55): a prune writes no record of its own, only the replacement."""
    return ()


@implements("DIA-18")
def prune_record_d08(original: Event, seq: int, time: int) -> tuple[Event, ...]:
    """DIA-18: "The prune MUST append `compaction/prune {shadowedRange:{start:seq,end:seq}, shadowedSeqs:[seq],
    shadowedTokenCount: estimateMessage(original message)}` immediately before each replacement; the content
    path is `message.content[0].content`; service key `toolResultPruner`."

    Modified :func:`prune_record` (DIA-18): D08 logs ``compaction/prune
    {shadowedRange:{start:seq,end:seq}, shadowedSeqs:[seq], shadowedTokenCount:
    estimateMessage(original)}`` (at ``seq``) immediately before the replacement."""
    message = project(original, Dialect.D08)
    tokens = 0 if message is None or isinstance(message, Rejected) else estimate_message(message)
    shadowed = original.seq
    record = JsonObject(
        (
            ("shadowedRange", JsonObject((("start", shadowed), ("end", shadowed)))),
            ("shadowedSeqs", (shadowed,)),
            ("shadowedTokenCount", tokens),
        )
    )
    return (make_event("compaction/prune", seq=seq, time=time, data=record),)


def prune_records(dialect: Dialect) -> Callable[[Event, int, int], tuple[Event, ...]]:
    """The dialect's :func:`prune_record`: A55 writes none (PRN-4), D08 ``compaction/prune`` (DIA-18)."""
    match dialect:
        case Dialect.A55:
            return prune_record
        case Dialect.D08:
            return prune_record_d08


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PruneOutcome:
    """What a prune pass appended; ``error``: the throw that stopped it after them (QF-16: they stay)."""

    events: tuple[Event, ...]
    pruned: tuple[PrunedResult, ...]
    chars_removed: int
    error: Rejected | None = None


@implements("PRN-4", "PRN-5")
def prune_pass(
    events: Sequence[Event],
    config: PruneConfig,
    *,
    dialect: Dialect = Dialect.A55,
    time: int = 0,
    nodes: Sequence[int] | None = None,
) -> PruneOutcome | Rejected:
    """PRN-4: "`pruneSession(session)` MUST snapshot the surface nodes, and for each node whose event is a
    `tool/result` with `pruneContent(data.content)` not none, append `tool/result` with the original `data`
    (same keys, same order) but `content` replaced, `surfaceOp {op:"replace", start: seq, end: seq}`,
    `sourceEventSeqs [seq]` (a SURF-7 single-node content-only rewrite)."
    PRN-5: "A prune pass MUST be idempotent: a second pass on the result prunes nothing; replay of the log
    reproduces the same derivation and `replaceGeneration`."

    PRN-4: for each tool/result node of the surface snapshot whose content
    prunes, append a content-only ``tool/result`` replace ``{start:seq,end:seq}``
    citing ``[seq]``.  D08 (DIA-18) logs ``compaction/prune`` with the range,
    ``[seq]`` and ``estimateMessage(original)`` immediately before it.  PRN-5:
    pruned content is within the threshold, so a second pass prunes nothing.
    ``nodes``: the surface of ``events`` when the caller already folded it
    (every seq of it is a seq of ``events``).

    pre: nodes is None or all(0 <= seq < len(events) for seq in nodes)
    post: isinstance(__return__, Rejected) or only_surface_results(events, __return__, dialect, nodes) is None
    post: isinstance(__return__, Rejected) or prune_again_is_empty(events, __return__, config, dialect, nodes)
    """
    if nodes is None:
        fold = fold_surface(events, dialect)
        if isinstance(fold, Rejected):
            return fold
        nodes = fold.state.nodes
    out: list[Event] = []
    pruned: list[PrunedResult] = []
    removed = 0
    for seq in nodes:
        original = events[seq]
        if original.type != "tool/result":
            continue
        content = tool_result_content(original, dialect)
        after = prune_content(content, config)
        if after is None:
            continue
        if isinstance(after, Rejected):
            error = Rejected(rule=after.rule, seq=seq, reason=after.reason, kind=after.kind)
            if not out:
                return error
            return PruneOutcome(events=tuple(out), pruned=tuple(pruned), chars_removed=removed, error=error)
        out.extend(prune_records(dialect)(original, len(events) + len(out), time))
        next_seq = len(events) + len(out)
        replacement = make_event(
            "tool/result",
            seq=next_seq,
            time=time,
            data=_replace_content(original, after, dialect),
            source_event_seqs=(seq,),
            surface_op=JsonObject((("op", "replace"), ("start", seq), ("end", seq))),
        )
        out.append(replacement)
        before_chars, after_chars = content_chars(content), content_chars(after)
        removed += before_chars - after_chars
        pruned.append(
            PrunedResult(
                original_seq=seq,
                replacement_seq=next_seq,
                call_id=result_call_id(original, dialect),
                chars_before=before_chars,
                chars_after=after_chars,
            )
        )
    return PruneOutcome(events=tuple(out), pruned=tuple(pruned), chars_removed=removed)


def _surface_as_promised(events: Sequence[Event], dialect: Dialect, nodes: Sequence[int] | None) -> tuple[int, ...] | None:
    """The surface of a valid log, when ``nodes`` (if given) is that surface; else None (the contract is vacuous:
    ``prune_pass`` promises nothing for an invalid log or a caller's wrong snapshot)."""
    fold = fold_surface(events, dialect)
    if isinstance(fold, Rejected) or (nodes is not None and tuple(nodes) != fold.state.nodes):
        return None
    return fold.state.nodes


def only_surface_results(events: Sequence[Event], outcome: PruneOutcome, dialect: Dialect,
                         nodes: Sequence[int] | None = None) -> str | None:
    """PRN-4 for :func:`prune_pass`'s contract (on a valid log and its true surface): appends only; each
    replacement replaces exactly one ``tool/result`` node of the surface, once, cites it alone and keeps its
    keys; nothing else is written but the dialect's record (D08 ``compaction/prune``, DIA-18)."""
    surface = _surface_as_promised(events, dialect, nodes)
    if surface is None:
        return None
    seen: set[Json] = set()
    for offset, event in enumerate(outcome.events):
        if event.seq != len(events) + offset:
            return f"PRN-4: appended event {offset} has seq {event.seq}"
        if event.type == "compaction/prune" and dialect is Dialect.D08:
            continue
        op = event.surface_op
        target = get(op, "start")
        if event.type != "tool/result" or not isinstance(op, JsonObject) or get(op, "end") != target:
            return f"PRN-4: the prune wrote a {event.type} that is not a one-node replace"
        if target not in surface or target in seen or events[target].type != "tool/result":  # type: ignore[index]
            return f"PRN-4: the prune replaces seq {target}, not a tool result of the surface (or twice)"
        seen.add(target)
        if event.source_event_seqs != (target,):
            return f"PRN-4: the prune of seq {target} cites {event.source_event_seqs}"
        if isinstance(event.data, JsonObject) and isinstance(events[target].data, JsonObject):  # type: ignore[index]
            if list(event.data.keys()) != list(events[target].data.keys()):  # type: ignore[index, union-attr]
                return f"PRN-4: the prune of seq {target} changes more than the content"
    return None


def prune_again_is_empty(events: Sequence[Event], outcome: PruneOutcome, config: PruneConfig, dialect: Dialect,
                         nodes: Sequence[int] | None = None) -> bool:
    """PRN-5: a second pass over the pruned log prunes nothing (idempotent), for a valid configuration
    (PRN-1) on a valid log and its true surface."""
    if isinstance(check_prune_config(config), Rejected) or _surface_as_promised(events, dialect, nodes) is None:
        return True
    again = prune_pass((*events, *outcome.events), config, dialect=dialect)
    return not isinstance(again, Rejected) and not again.events


def prune_session(
    events: Sequence[Event], config: PruneConfig, *, dialect: Dialect = Dialect.A55, time: int = 0
) -> tuple[Event, ...] | Rejected:
    """``pruneSession``: the events a prune pass appends (PRN-4)."""
    outcome = prune_pass(events, config, dialect=dialect, time=time)
    if isinstance(outcome, Rejected):
        return outcome
    return outcome.events if outcome.error is None else outcome.error
