"""The surface plan and the dialect markers of an event, for the checker's one pass (issue 26).

The definitions are ``model.surface.plan_surface_event`` (SURF-9), ``model.surface.splice``
(SURF-8) and ``model.migrate.with_markers`` (FMT-10).  The check asks them of nearly every event,
and most answers are the plain ones: an append whose provenance is well formed, the append of a
node, an event of a type that carries no dialect marker.  Those are answered here (natively, in
the compiled wheel); anything else goes to the definition, so a rejection, a replace and every
marker are the model's own.  ``tests/fast/test_fast_surface.py`` ties them to the definitions on
generated, real and mutated events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Final, TypeVar

from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.fast.slots import new_instance, plain_fields, slot_setter
from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.log import Dialect, Event, surface_types
from sessionspec.model.migrate import A55_ONLY_TYPES, D08_ONLY_TYPES, DialectEvidence
from sessionspec.model.migrate import with_markers as markers_by_definition
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import APPEND, SurfacePlan
from sessionspec.model.surface import plan_surface_event as plan_by_definition
from sessionspec.model.surface import splice as splice_by_definition

T = TypeVar("T")

# By dialect, chosen with ``is`` (an enum's hash is a Python-level method).
_ELIGIBLE_A55: Final = surface_types(Dialect.A55)
_ELIGIBLE_D08: Final = surface_types(Dialect.D08)


def plan_surface_event(nodes: Sequence[int], event: Event, events: Sequence[Event], dialect: Dialect) -> SurfacePlan | None | Rejected:
    """``model.surface.plan_surface_event``: SURF-9's checks in order, of which an append passes
    LOG-1 (its seq is the next), SURF-2 and SURF-3 (an eligible type marked ``"append"``) and
    SURF-4 (no ``sourceEventSeqs``, or a dense array of unique earlier non-negative safe integers,
    non-empty but on ``assistant/message``): its plan is the append."""
    op, seq = event.surface_op, event.seq
    if type(op) is str and op == "append" and seq == len(events) and event.type in (_ELIGIBLE_A55 if dialect is A55 else _ELIGIBLE_D08):
        sources = event.source_event_seqs
        if sources is ABSENT or _earlier_unique_seqs(sources, seq, event.type == "assistant/message"):
            return _append_plan(seq)
    return plan_by_definition(nodes, event, events, dialect)


# An append's plan, ``SurfacePlan(seq=seq, op=APPEND)``, built through its slots (:mod:`sessionspec.fast.slots`:
# the keyword call into the dataclass's interpreted ``__init__`` cost a sixth of the surface fold).
_PLAN_FIELDS: Final = ("seq", "op", "start_idx", "end_idx")
assert plain_fields(SurfacePlan, _PLAN_FIELDS)
_PLAN_DEFAULTS: Final = {f.name: f.default for f in fields(SurfacePlan)}
_START_IDX: Final = _PLAN_DEFAULTS["start_idx"]
_END_IDX: Final = _PLAN_DEFAULTS["end_idx"]
_set_plan_seq: Final = slot_setter(SurfacePlan, "seq")
_set_plan_op: Final = slot_setter(SurfacePlan, "op")
_set_plan_start_idx: Final = slot_setter(SurfacePlan, "start_idx")
_set_plan_end_idx: Final = slot_setter(SurfacePlan, "end_idx")


def _append_plan(seq: int) -> SurfacePlan:
    plan: SurfacePlan = new_instance(SurfacePlan)
    _set_plan_seq(plan, seq)
    _set_plan_op(plan, APPEND)
    _set_plan_start_idx(plan, _START_IDX)
    _set_plan_end_idx(plan, _END_IDX)
    return plan


def splice(nodes: list[T], plan: SurfacePlan, node: T) -> list[T]:
    """``model.surface.splice`` (SURF-8: "An accepted append MUST push `seq` onto `nodes`"): an
    append pushes ``node`` and removes nothing; a replace is the definition's."""
    if plan.op is APPEND:
        nodes.append(node)
        return []
    return splice_by_definition(nodes, plan, node)


def _earlier_unique_seqs(sources: Json, seq: int, may_be_empty: bool) -> bool:
    if type(sources) is not tuple or not (sources or may_be_empty):
        return False
    for entry in sources:
        if type(entry) is not int or not 0 <= entry < seq:
            return False
    return len(set(sources)) == len(sources)


# FMT-10's markers are on these types only (``_d08_marker``, ``_a55_marker``: a type prefix, an only-type,
# or a shape of one of four types); an event of any other type leaves the evidence as it is.
_MARKER_PREFIXES: Final = ("compaction/", "compact/")
_MARKED_SHAPES: Final = frozenset({"assistant/message", "tool/result", "user/message", "request/header"})
_MAY_MARK: Final = D08_ONLY_TYPES | A55_ONLY_TYPES | _MARKED_SHAPES


def with_markers(evidence: DialectEvidence, event: Event) -> DialectEvidence:
    """``model.migrate.with_markers``: the evidence of the events before, and this event's markers
    where a dialect has none yet; an event of a type that carries none, or evidence that has both,
    is passed by."""
    kind = event.type  # first: most events are of a type that carries no marker
    if not may_carry_marker(kind):
        return evidence
    d08_open, a55_open = evidence.d08_seq is None, evidence.a55_seq is None
    if not d08_open and not a55_open:
        return evidence
    if kind in _MARKED_SHAPES:
        data = event.data
        if not (d08_open and _d08_shaped(kind, data)) and not (a55_open and _a55_shaped(kind, data)):
            return evidence  # a shape type (no marker by its type) without the shape of the dialect still open
    return markers_by_definition(evidence, event)


def may_carry_marker(kind: str) -> bool:
    """Whether an event of type ``kind`` may carry an FMT-10 marker (by its type or its shape): ``with_markers``
    passes the others by."""
    return kind in _MAY_MARK or kind.startswith(_MARKER_PREFIXES)


# The shape markers of ``model.migrate``'s ``_d08_marker`` and ``_a55_marker``: on these four types, the only
# markers there are (neither a marker type nor a marker prefix is one of them).
assert not _MARKED_SHAPES & (D08_ONLY_TYPES | A55_ONLY_TYPES) and not any(t.startswith(_MARKER_PREFIXES) for t in _MARKED_SHAPES)


def _d08_shaped(kind: str, data: Json) -> bool:
    """``message``-shaped assistant data and results, a user message with ``role`` and ``id``, a header
    with ``adapterDefaults`` (FMT-10's D08 shapes)."""
    if kind == "assistant/message" or kind == "tool/result":
        return isinstance(get(data, "message"), JsonObject)
    if kind == "user/message":
        return get(data, "role") == "user" and get(data, "id") is not ABSENT
    return kind == "request/header" and get(get(data, "header"), "adapterDefaults") is not ABSENT


def _a55_shaped(kind: str, data: Json) -> bool:
    """``provenance``-shaped assistant data, a header whose ``messagePrefix`` is a non-empty array (FMT-10's A55 shapes)."""
    if kind == "assistant/message":
        return get(data, "provenance") is not ABSENT
    if kind == "request/header":
        prefix = get(get(data, "header"), "messagePrefix")
        return isinstance(prefix, tuple) and len(prefix) > 0
    return False
