"""The surface fold (SURF): the ordered visible nodes of the log.

Validation plans a change without mutating anything (SURF-9, LOG-6); applying
a plan is separate, so a rejected event leaves every state unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar, final

from sessionspec.model.jsonval import ABSENT, Json, JsonObject, deep_eq, get, is_safe_int, with_values
from sessionspec.model.log import Dialect, Event, log_view, surface_types
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

T = TypeVar("T")


class OpKind(Enum):
    APPEND = "append"
    REPLACE = "replace"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SurfaceOp:
    kind: OpKind
    start: int = 0
    end: int = 0


APPEND = SurfaceOp(kind=OpKind.APPEND)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SurfaceState:
    """SURF-1: ``{nodes, replaceGeneration}``, starting ``{[], 0}``.

    A well-formed surface never names a seq twice (SURF-8 splices a range to
    one new seq) and counts replaces from 0: stated as preconditions of
    ``apply_plan`` (proofs/notes.md says why not as a class invariant).
    """

    nodes: tuple[int, ...] = ()
    replace_generation: int = 0


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SurfacePlan:
    """A validated change: append, or splice ``nodes[start_idx..end_idx]``."""

    seq: int
    op: SurfaceOp
    start_idx: int = 0
    end_idx: int = -1

    @property
    def is_replace(self) -> bool:
        return self.op.kind is OpKind.REPLACE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Replacement:
    """SURF-10: one replace of the fold history."""

    seq: int
    start: int
    end: int
    shadowed: tuple[int, ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SurfaceFold:
    state: SurfaceState
    replacements: tuple[Replacement, ...]


@implements("SURF-11")
def is_surface_event(event: Event, dialect: Dialect = Dialect.A55) -> bool:
    """SURF-11: "The model MUST treat an event as a surface event if and only if its type is surface-eligible
    and it carries `surfaceOp`." """
    return event.type in surface_types(dialect) and event.surface_op is not ABSENT


@decides("SURF-2", "SURF-3", "P-SURF-1")
@implements("SURF-2", "SURF-3")
def surface_op_of(event: Event, dialect: Dialect = Dialect.A55) -> SurfaceOp | None | Rejected:
    """SURF-2: "An event of a non-surface type that carries `surfaceOp` or `sourceEventSeqs` MUST be rejected
    ("is not surface-eligible and cannot carry surfaceOp" / "… cannot carry sourceEventSeqs")."
    SURF-3: "`surfaceOp` MUST be either the string `"append"` or an object with exactly three own keys
    `{op:"replace", start, end}`, where `start` and `end` are non-negative safe integers."

    The event's surface operation; None for a log-only event.

    SURF-2: a non-eligible type must carry neither marker; an eligible one must
    carry ``surfaceOp``.  SURF-3: ``"append"`` or exactly
    ``{op:"replace", start, end}`` with non-negative safe integers.
    """
    eligible = event.type in surface_types(dialect)
    op = event.surface_op
    if not eligible:
        if op is not ABSENT:
            return Rejected(rule="SURF-2", seq=event.seq, reason=f"{event.type} is not surface-eligible and cannot carry surfaceOp")
        if event.source_event_seqs is not ABSENT:
            return Rejected(rule="SURF-2", seq=event.seq, reason=f"{event.type} is not surface-eligible and cannot carry sourceEventSeqs")
        return None
    if op is ABSENT:
        return Rejected(rule="SURF-2", seq=event.seq, reason=f"{event.type} is surface-eligible and requires a surfaceOp marker")
    if op == "append" and isinstance(op, str):
        return APPEND
    if not isinstance(op, JsonObject):
        return Rejected(rule="SURF-3", seq=event.seq, reason=f"{event.type} carries an invalid surfaceOp")
    start, end = get(op, "start"), get(op, "end")
    if (
        set(op.keys()) != {"op", "start", "end"}
        or op["op"] != "replace"
        or not isinstance(op["op"], str)
        or not is_safe_int(start)
        or not is_safe_int(end)
    ):
        return Rejected(rule="SURF-3", seq=event.seq, reason=f"{event.type} carries an invalid replace surfaceOp")
    assert isinstance(start, int) and isinstance(end, int)
    return SurfaceOp(kind=OpKind.REPLACE, start=start, end=end)


@decides("SURF-4")
@implements("SURF-4")
def check_provenance(event: Event) -> Rejected | None:
    """SURF-4: "When `sourceEventSeqs` is present, it MUST meet all of these, on append and on replace alike:"

    SURF-4: present sourceEventSeqs is a dense array of unique earlier seqs,
    non-empty except on assistant/message."""
    prov = event.source_event_seqs
    if prov is ABSENT:
        return None
    if not isinstance(prov, tuple):
        return Rejected(rule="SURF-4", seq=event.seq, reason="sourceEventSeqs must be an array when present")
    if not prov and event.type != "assistant/message":
        return Rejected(rule="SURF-4", seq=event.seq, reason="sourceEventSeqs must be non-empty")
    seen: set[int] = set()
    for entry in prov:
        if not is_safe_int(entry):
            return Rejected(rule="SURF-4", seq=event.seq, reason="sourceEventSeqs entries must be non-negative safe integers")
        assert isinstance(entry, int)
        if entry in seen:
            return Rejected(rule="SURF-4", seq=event.seq, reason=f"sourceEventSeqs has duplicate {entry}")
        if entry >= event.seq:
            return Rejected(rule="SURF-4", seq=event.seq, reason=f"sourceEventSeqs must reference earlier events ({entry})")
        seen.add(entry)
    return None


@decides("SURF-5")
@implements("SURF-5")
def replacement_range(nodes: Sequence[int], op: SurfaceOp, seq: int) -> tuple[int, int] | Rejected:
    """SURF-5: "A replace MUST locate its range **by position** on the current surface:"

    SURF-5: locate ``start``/``end`` by position; start position <= end position.

    The numeric order of the seqs is irrelevant: after an earlier replace the
    surface ``[2, 1]`` accepts ``{start:2, end:1}``.

    post: isinstance(__return__, Rejected) == (op.start not in nodes or op.end not in nodes or nodes.index(op.start) > nodes.index(op.end))
    post: isinstance(__return__, Rejected) or (0 <= __return__[0] <= __return__[1] < len(nodes))
    post: isinstance(__return__, Rejected) or (nodes[__return__[0]] == op.start and nodes[__return__[1]] == op.end)
    """
    try:
        start_idx = nodes.index(op.start)
    except ValueError:
        return Rejected(rule="SURF-5", seq=seq, reason=f"start seq {op.start} not found in surface")
    try:
        end_idx = nodes.index(op.end)
    except ValueError:
        return Rejected(rule="SURF-5", seq=seq, reason=f"end seq {op.end} not found in surface")
    if start_idx > end_idx:
        return Rejected(rule="SURF-5", seq=seq, reason=f"start seq {op.start} is after end seq {op.end}")
    return start_idx, end_idx


@decides("SURF-6")
@implements("SURF-6")
def check_coverage(event: Event, shadowed: Sequence[int]) -> Rejected | None:
    """SURF-6: "For a replace, `sourceEventSeqs` MUST contain every shadowed seq ("sourceEventSeqs must include
    every shadowed surface node; missing …")." """
    prov = event.source_event_seqs
    cited = set(prov) if isinstance(prov, tuple) else set()
    missing = [s for s in shadowed if s not in cited]
    if missing:
        return Rejected(
            rule="SURF-6",
            seq=event.seq,
            reason=f"sourceEventSeqs must include every shadowed surface node; missing {missing}",
        )
    return None


def _content_free(data: Json, dialect: Dialect) -> Json:
    """The data a tool/result rewrite must keep: all but the content path."""
    if not isinstance(data, JsonObject):
        return data
    match dialect:
        case Dialect.A55:
            return JsonObject((k, v) for k, v in data.items() if k != "content")
        case Dialect.D08:
            # DIA-11: only message.content[0].content may change.
            message = get(data, "message")
            if not isinstance(message, JsonObject):
                return data
            content = get(message, "content")
            if isinstance(content, tuple) and content and isinstance(content[0], JsonObject):
                first = JsonObject((k, v) for k, v in content[0].items() if k != "content")
                message = with_values(message, content=(first, *content[1:]))
            return with_values(data, message=message)


@decides("SURF-7", "P-SURF-4")
@implements("SURF-7")
def check_tool_result_rewrite(
    event: Event, shadowed: Sequence[int], events: Sequence[Event], dialect: Dialect = Dialect.A55
) -> Rejected | None:
    """SURF-7: "A replace whose event type is `tool/result` MUST:"

    SURF-7: a tool/result replace rewrites exactly one current tool/result
    and changes only its content (DEEPEQ of the rest)."""
    if event.type != "tool/result":
        return None
    if len(shadowed) != 1:
        return Rejected(rule="SURF-7", seq=event.seq, reason="tool/result replace must rewrite exactly one current node")
    target = events[shadowed[0]]
    if target.type != "tool/result":
        return Rejected(rule="SURF-7", seq=event.seq, reason="tool/result replace must target a current tool/result")
    if not deep_eq(_content_free(event.data, dialect), _content_free(target.data, dialect)):
        return Rejected(rule="SURF-7", seq=event.seq, reason="tool/result replace may change only content")
    return None


@decides("LOG-1")
@implements("LOG-1")
def check_seq(event: Event, expected: int) -> Rejected | None:
    """LOG-1: "Every event MUST satisfy ``seq == its zero-based index in the log``."  The surface
    fold rejects a gap ("seq X is not contiguous; expected Y")."""
    if event.seq != expected:
        return Rejected(rule="LOG-1", seq=event.seq, reason=f"seq {event.seq} is not contiguous; expected {expected}")
    return None


@decides("SURF-9", "CHK-8", "LEG-10", "P-LOG-1")
@implements("SURF-9", "LOG-6", "SURF-12")
def plan_surface_event(
    nodes: Sequence[int], event: Event, events: Sequence[Event], dialect: Dialect = Dialect.A55
) -> SurfacePlan | None | Rejected:
    """LOG-6: "A rejected append or seed entry MUST leave the log, the surface nodes, `replaceGeneration` and
    every cache unchanged."
    SURF-12: "The surface fold MUST NOT validate tool pairing or turn structure."
    SURF-9: "Surface validation MUST check in this order: 1. contiguous seq (LOG-1); 2.
    eligibility and the ``surfaceOp`` shape (SURF-2, SURF-3); 3. for an append: provenance (SURF-4);
    4. for a replace: range (SURF-5), then provenance plus coverage (SURF-4, SURF-6), then the
    tool/result rewrite (SURF-7)."
    """
    bad_seq = check_seq(event, len(events))
    if bad_seq is not None:
        return bad_seq
    op = surface_op_of(event, dialect)
    if op is None or isinstance(op, Rejected):
        if op is None and event.source_event_seqs is not ABSENT:
            return check_provenance(event)
        return op
    if op.kind is OpKind.APPEND:
        bad = check_provenance(event)
        return bad if bad is not None else SurfacePlan(seq=event.seq, op=op)
    found = replacement_range(nodes, op, event.seq)
    if isinstance(found, Rejected):
        return found
    start_idx, end_idx = found
    shadowed = nodes[start_idx : end_idx + 1]
    bad = check_provenance(event) or check_coverage(event, shadowed)
    if bad is None:
        bad = check_tool_result_rewrite(event, shadowed, events, dialect)
    if bad is not None:
        return bad
    return SurfacePlan(seq=event.seq, op=op, start_idx=start_idx, end_idx=end_idx)


@implements("SURF-8")
def apply_plan(state: SurfaceState, plan: SurfacePlan) -> SurfaceState:
    """SURF-8: "An accepted append MUST push `seq` onto `nodes`."

    SURF-8: append pushes the seq; replace splices the range to ``[seq]`` at
    the start position and counts one more replace.  The splice itself is
    :func:`splice`, which every fold uses on its own node list.

    pre: state.replace_generation >= 0 and len(set(state.nodes)) == len(state.nodes)
    pre: plan.seq not in state.nodes
    pre: not plan.is_replace or 0 <= plan.start_idx <= plan.end_idx < len(state.nodes)
    post: __return__.replace_generation == state.replace_generation + (1 if plan.is_replace else 0)
    post: __return__.nodes[:plan.start_idx] == state.nodes[:plan.start_idx] if plan.is_replace else __return__.nodes[:-1] == state.nodes
    post: __return__.nodes[plan.start_idx] == plan.seq if plan.is_replace else __return__.nodes[-1] == plan.seq
    post: len(__return__.nodes) == len(state.nodes) + 1 - ((plan.end_idx - plan.start_idx + 1) if plan.is_replace else 0)
    post: len(set(__return__.nodes)) == len(__return__.nodes)
    """
    nodes = list(state.nodes)
    splice(nodes, plan, plan.seq)
    return SurfaceState(nodes=tuple(nodes), replace_generation=state.replace_generation + (1 if plan.is_replace else 0))


def splice(nodes: list[T], plan: SurfacePlan, node: T) -> list[T]:
    """SURF-8's splice on any per-node list kept in surface order (seqs,
    priced nodes, messages), in place: append pushes ``node``; replace puts
    ``node`` in place of ``nodes[start_idx..end_idx]``.  Returns the removed
    entries (empty for an append).  The one implementation of the splice:
    :func:`apply_plan`, :func:`fold_surface` and every priced or derived fold
    call it.  The plan was made on this list (SURF-5: for a replace,
    ``0 <= start_idx <= end_idx < len(nodes)``)."""
    if not plan.is_replace:
        nodes.append(node)
        return []
    removed = nodes[plan.start_idx : plan.end_idx + 1]
    nodes[plan.start_idx : plan.end_idx + 1] = [node]
    return removed


def step_surface(
    state: SurfaceState, event: Event, events: Sequence[Event], dialect: Dialect = Dialect.A55
) -> SurfaceState | Rejected:
    """One event of the fold: validate, then apply (or reject, state unchanged)."""
    plan = plan_surface_event(state.nodes, event, events, dialect)
    if isinstance(plan, Rejected):
        return plan
    return state if plan is None else apply_plan(state, plan)


@decides("DIA-11", "P-SURF-2")
@implements("SURF-1", "SURF-10")
def fold_surface(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> SurfaceFold | Rejected:
    """SURF-1: "The surface state MUST be `{nodes: list[int], replaceGeneration: int}`."
    SURF-10: "`foldSurface(events)` MUST equal the incremental manager after the same appends."

    SURF-10: the surface of a whole log, with its replacement history.

    One pass with a local node list (linear for append-only logs).

    post: isinstance(__return__, Rejected) or __return__.state.replace_generation == len(__return__.replacements)
    post: isinstance(__return__, Rejected) or len(set(__return__.state.nodes)) == len(__return__.state.nodes)
    post: isinstance(__return__, Rejected) or all(0 <= seq < len(events) for seq in __return__.state.nodes)
    """
    nodes: list[int] = []
    generation = 0
    replacements: list[Replacement] = []
    for index, event in enumerate(events):
        plan = plan_surface_event(nodes, event, log_view(events, index), dialect)
        if isinstance(plan, Rejected):
            return plan
        if plan is None:
            continue
        shadowed = splice(nodes, plan, plan.seq)
        if plan.is_replace:
            generation += 1
            replacements.append(
                Replacement(seq=plan.seq, start=plan.op.start, end=plan.op.end, shadowed=tuple(shadowed))
            )
    return SurfaceFold(
        state=SurfaceState(nodes=tuple(nodes), replace_generation=generation),
        replacements=tuple(replacements),
    )


def surface_of(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> SurfaceState | Rejected:
    fold = fold_surface(events, dialect)
    return fold if isinstance(fold, Rejected) else fold.state


__all__ = [
    "APPEND",
    "OpKind",
    "Replacement",
    "SurfaceFold",
    "SurfaceOp",
    "SurfacePlan",
    "SurfaceState",
    "apply_plan",
    "check_coverage",
    "check_provenance",
    "check_tool_result_rewrite",
    "fold_surface",
    "is_surface_event",
    "plan_surface_event",
    "replacement_range",
    "splice",
    "step_surface",
    "surface_of",
    "surface_op_of",
]

