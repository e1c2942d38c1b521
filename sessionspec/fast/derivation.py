"""DER-7: the incremental derivation, a cached ``derive(log)`` advanced one
append at a time (the definition is :func:`model.derive.derive`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar, final

from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.header import canonical_header_of
from sessionspec.fast.surface import splice
from sessionspec.model.derive import project
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, plan_surface_event

A = TypeVar("A")

@final
class LastAnswer(Generic[A]):
    """``of(event, dialect)`` with the last answer kept: the checker's folds ask the same of an event
    one after the other (the compaction audit, the request points), and an event is immutable, so
    the same object gets the same answer.  The answer is kept with its question as one tuple (read
    at once: a call from another thread sees a whole question and its answer)."""

    __slots__ = ("of", "last")

    def __init__(self, of: Callable[[Event, Dialect], A]) -> None:
        self.of = of
        self.last: tuple[Event, Dialect, A] | None = None

    def __call__(self, event: Event, dialect: Dialect) -> A:
        last = self.last
        if last is not None and last[0] is event and last[1] is dialect:
            return last[2]
        answer = self.of(event, dialect)
        self.last = (event, dialect, answer)
        return answer


def project_node(event: Event, dialect: Dialect) -> JsonObject | None | Rejected:
    """:func:`model.derive.project` (DER-1, DER-2, DER-5, DER-6) of an A55 surface node whose data has
    the fields its projection reads: ``{role:"user", content}`` for a prompt, ``{role:"assistant",
    content, provenance?}`` for a non-empty assistant message (none for an empty one), one
    ``tool-result`` block for a tool result (key orders of DER-2), no message for any other type;
    any other node (a D08 one, a missing field: a DER-1 rejection) is the definition's."""
    data = event.data
    if dialect is A55 and type(data) is JsonObject:
        kind = event.type
        content = data.get("content", ABSENT)
        if content is not ABSENT:
            if kind == "user/message" or kind == "steering/message":
                return JsonObject({"role": "user", "content": content})
            if kind == "assistant/message":
                if type(content) is tuple and not content:
                    return None
                provenance = data.get("provenance", ABSENT)
                if provenance is ABSENT:
                    return JsonObject({"role": "assistant", "content": content})
                return JsonObject({"role": "assistant", "content": content, "provenance": provenance})
            if kind == "tool/result" and "callId" in data and "isError" in data:
                block = JsonObject({"type": "tool-result", "toolCallId": data["callId"], "content": content, "isError": data["isError"]})
                return JsonObject({"role": "user", "content": (block,)})
        if kind not in _PROJECTED_A55:
            return None
    return project(event, dialect)


# The A55 types DER-1 projects; any other type derives no message.
_PROJECTED_A55: Final = frozenset({"user/message", "steering/message", "assistant/message", "tool/result"})

# DER-1, :func:`model.derive.project`: the compaction audit prices a surface event (MTR-7), the
# request points check its projection (DER-7), one after the other.
projected: Final = LastAnswer(project_node)
# HDR-1, :func:`model.header.header_of_event` (:func:`sessionspec.fast.header.canonical_header_of`): the
# compaction audit (MTR-4, FMT-6) and the request points (HDR-9) fold each ``request/header``, one after the other.
header_of: Final = LastAnswer(canonical_header_of)


@final
@dataclass(slots=True)
class IncrementalDerivation:
    """DER-7: a cached derivation that must equal :func:`derive` after every append.

    Appends extend the cache; a replace forces a rebuild from the nodes (keyed
    by ``replaceGeneration``).  ``messages()`` returns a fresh tuple each time.
    This is the checker's fast path; ``derive`` stays the executable definition
    (tests/fast/test_incremental.py and tests/model/test_derive.py tie them together).
    """

    dialect: Dialect = A55
    # The events appended, which :meth:`append` plans against (a surface op reads the log before
    # it).  A caller whose every event comes planned (:meth:`append_planned`, the checker's one
    # loop) keeps none (issue 26: the log is not held twice).
    keep_events: bool = True
    events: list[Event] = field(default_factory=list)
    # The surface kept as mutable lists (SURF-1); an immutable SurfaceState would copy
    # every node on every append, which makes a long log quadratic.
    _nodes: list[int] = field(default_factory=list)
    _replace_generation: int = 0
    _messages: list[JsonObject] = field(default_factory=list)
    _cached_generation: int = 0
    # The projection of each node (None: the node derives no message), kept
    # beside ``nodes`` so a rebuild after a replace never re-projects.
    _node_messages: list[JsonObject | None] = field(default_factory=list)

    def append(self, event: Event) -> Rejected | None:
        """Validate and append one event; on rejection nothing changes (LOG-6).  Needs ``keep_events``."""
        assert self.keep_events, "an unplanned append plans against the events kept"
        plan = plan_surface_event(self._nodes, event, log_view(self.events, len(self.events)), self.dialect)
        if isinstance(plan, Rejected):
            return plan
        return self.append_planned(event, plan)

    def append_planned(self, event: Event, plan: SurfacePlan | None) -> Rejected | None:
        """Append one event whose surface transition is already planned (SURF-9) on
        these nodes after these events, as the checker's one surface fold plans it
        (:mod:`sessionspec.check.surface_pass`); the projection (DER-3) is still checked."""
        message: JsonObject | None = None
        if plan is not None:
            projection = projected(event, self.dialect)
            if isinstance(projection, Rejected):
                return projection
            message = projection
        if self.keep_events:
            self.events.append(event)
        if plan is None:
            return None
        # SURF-8 through the one splice (model.surface.splice), on both per-node lists.
        splice(self._nodes, plan, plan.seq)
        splice(self._node_messages, plan, message)
        if plan.is_replace:
            self._replace_generation += 1
        elif self._cached_generation == self._replace_generation and message is not None:
            self._messages.append(message)
        return None

    def snapshot(self) -> tuple[list[JsonObject], int]:
        """The current derivation as ``(store, length)`` without copying.

        Stable: the store is only ever appended to, and a rebuild after a
        replace makes a *new* list, so ``store[:length]`` never changes.
        """
        if self._cached_generation != self.replace_generation:
            # Equal to derive_nodes(self.nodes, ...) (DER-4): every node was
            # projected when it was appended; DER-7's property checks it.
            self._messages = [m for m in self._node_messages if m is not None]
            self._cached_generation = self.replace_generation
        return self._messages, len(self._messages)

    def messages(self) -> tuple[JsonObject, ...]:
        store, length = self.snapshot()
        return tuple(store[:length])


    @property
    def nodes(self) -> tuple[int, ...]:
        """The surface nodes (SURF-1), a copy."""
        return tuple(self._nodes)

    @property
    def surface_length(self) -> int:
        """How many nodes the surface has (without copying them)."""
        return len(self._nodes)

    @property
    def replace_generation(self) -> int:
        return self._replace_generation
