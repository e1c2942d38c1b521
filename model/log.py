"""Session log events (LOG): one frozen class per core event type.

An event is the envelope ``{type, seq, time, data, sourceEventSeqs?, surfaceOp?}``
(LOG-3).  ``data`` stays the logged JSON value (ordered, immutable); the surface
metadata stays the logged value too, so that invalid metadata can be *rejected*
by the surface fold with its rule rather than lost at parse time.  Plugin and
later-dialect types are carried opaquely by :class:`OpaqueEvent` (LOG-10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Final, TypeAlias, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.rules import implements


class Dialect(Enum):
    """RULES §0.2: A55 is the primary target, D08 the later dialect."""

    A55 = "a55f148516"
    D08 = "611615650f"


class EventKind(Enum):
    TURN_START = "turn/start"
    TURN_END = "turn/end"
    STEP_START = "step/start"
    STEP_END = "step/end"
    USER_MESSAGE = "user/message"
    PROMPT_BLOCKED = "prompt/blocked"
    ASSISTANT_CHUNK = "assistant/chunk"
    ASSISTANT_MESSAGE = "assistant/message"
    TOOL_CALL = "tool/call"
    TOOL_RESULT = "tool/result"
    STEERING_MESSAGE = "steering/message"
    TODO_WRITE = "todo/write"
    REQUEST_HEADER = "request/header"
    OPAQUE = "opaque"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Envelope:
    seq: int
    time: int
    data: Json
    source_event_seqs: Json | Absent = ABSENT
    surface_op: Json | Absent = ABSENT
    # Crash-repair closers write surfaceOp before sourceEventSeqs (LOG-14,
    # FMT-3); kept so a line serializes back byte-exact.
    op_first: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStart(_Envelope):
    type: ClassVar[str] = "turn/start"
    kind: ClassVar[EventKind] = EventKind.TURN_START


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd(_Envelope):
    type: ClassVar[str] = "turn/end"
    kind: ClassVar[EventKind] = EventKind.TURN_END


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StepStart(_Envelope):
    type: ClassVar[str] = "step/start"
    kind: ClassVar[EventKind] = EventKind.STEP_START


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StepEnd(_Envelope):
    type: ClassVar[str] = "step/end"
    kind: ClassVar[EventKind] = EventKind.STEP_END


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(_Envelope):
    type: ClassVar[str] = "user/message"
    kind: ClassVar[EventKind] = EventKind.USER_MESSAGE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PromptBlocked(_Envelope):
    type: ClassVar[str] = "prompt/blocked"
    kind: ClassVar[EventKind] = EventKind.PROMPT_BLOCKED


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantChunk(_Envelope):
    type: ClassVar[str] = "assistant/chunk"
    kind: ClassVar[EventKind] = EventKind.ASSISTANT_CHUNK


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(_Envelope):
    type: ClassVar[str] = "assistant/message"
    kind: ClassVar[EventKind] = EventKind.ASSISTANT_MESSAGE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall(_Envelope):
    type: ClassVar[str] = "tool/call"
    kind: ClassVar[EventKind] = EventKind.TOOL_CALL


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult(_Envelope):
    type: ClassVar[str] = "tool/result"
    kind: ClassVar[EventKind] = EventKind.TOOL_RESULT


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringMessage(_Envelope):
    type: ClassVar[str] = "steering/message"
    kind: ClassVar[EventKind] = EventKind.STEERING_MESSAGE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TodoWrite(_Envelope):
    type: ClassVar[str] = "todo/write"
    kind: ClassVar[EventKind] = EventKind.TODO_WRITE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeaderEvent(_Envelope):
    type: ClassVar[str] = "request/header"
    kind: ClassVar[EventKind] = EventKind.REQUEST_HEADER


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueEvent(_Envelope):
    """A plugin or later-dialect type (``compact/*``, ``session/title``, ...)."""

    type: str
    kind: ClassVar[EventKind] = EventKind.OPAQUE


Event: TypeAlias = (
    TurnStart
    | TurnEnd
    | StepStart
    | StepEnd
    | UserMessage
    | PromptBlocked
    | AssistantChunk
    | AssistantMessage
    | ToolCall
    | ToolResult
    | SteeringMessage
    | TodoWrite
    | RequestHeaderEvent
    | OpaqueEvent
)

CoreEvent: TypeAlias = (
    TurnStart
    | TurnEnd
    | StepStart
    | StepEnd
    | UserMessage
    | PromptBlocked
    | AssistantChunk
    | AssistantMessage
    | ToolCall
    | ToolResult
    | SteeringMessage
    | TodoWrite
    | RequestHeaderEvent
)

CORE_CLASSES: Final[dict[str, type[CoreEvent]]] = {
    cls.type: cls
    for cls in (
        TurnStart,
        TurnEnd,
        StepStart,
        StepEnd,
        UserMessage,
        PromptBlocked,
        AssistantChunk,
        AssistantMessage,
        ToolCall,
        ToolResult,
        SteeringMessage,
        TodoWrite,
        RequestHeaderEvent,
    )
}


@implements("LOG-9", "LOG-10")
def make_event(
    type_name: str,
    *,
    seq: int,
    time: int,
    data: Json,
    source_event_seqs: Json | Absent = ABSENT,
    surface_op: Json | Absent = ABSENT,
    op_first: bool = False,
) -> Event:
    """The event of the given type: a core class, or opaque for plugin types.
    LOG-9: "The core A55 vocabulary MUST be exactly these 13 types."
    LOG-10: "Plugin event types (`compact/*`, `session/title {title, messageSeqs, source}`, `llm/retry`,
    `hook/*`, `tool/code-dispatch*`, …) MUST be accepted as log-only events."
    """
    cls = CORE_CLASSES.get(type_name)
    if cls is None:
        return OpaqueEvent(
            type=type_name,
            seq=seq,
            time=time,
            data=data,
            source_event_seqs=source_event_seqs,
            surface_op=surface_op,
            op_first=op_first,
        )
    return cls(
        seq=seq,
        time=time,
        data=data,
        source_event_seqs=source_event_seqs,
        surface_op=surface_op,
        op_first=op_first,
    )


def with_seq(event: Event, seq: int, time: int | None = None) -> Event:
    """The same event renumbered (used when a simulator appends)."""
    return make_event(
        event.type,
        seq=seq,
        time=event.time if time is None else time,
        data=event.data,
        source_event_seqs=event.source_event_seqs,
        surface_op=event.surface_op,
        op_first=event.op_first,
    )


A55_SURFACE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "steering/message"}
)
D08_SURFACE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})


@implements("DIA-11")
def surface_types(dialect: Dialect) -> frozenset[str]:
    """Surface-eligible types (RULES §0.3).  DIA-11: "Surface-eligible types MUST be
    ``user/message``, ``assistant/message``, ``tool/result`` (steering is a ``user/message``)."
    (Its tool-result half is in ``model.surface.check_tool_result_rewrite``.)"""
    match dialect:
        case Dialect.A55:
            return A55_SURFACE_TYPES
        case Dialect.D08:
            return D08_SURFACE_TYPES


def is_open(events: Sequence[Event], opener: str, closer: str) -> bool:
    """Whether the last ``opener``/``closer`` event of ``events`` is an ``opener``
    (``turn/start``/``turn/end``, ``step/start``/``step/end``)."""
    for event in reversed(events):
        if event.type == closer:
            return False
        if event.type == opener:
            return True
    return False


def data_field(event: Event, key: str) -> Json | Absent:
    """``event.data[key]`` or ABSENT (total)."""
    return get(event.data, key)


def json_int(v: object) -> int | None:
    """A JSON integer (a number without fraction; ``true``/``false`` are not), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def data_int(event: Event, key: str) -> int | None:
    """``event.data[key]`` when it is a JSON integer, else None."""
    return json_int(get(event.data, key))


def is_object(v: Json | Absent) -> bool:
    return isinstance(v, JsonObject)


@final
class _LogView(Sequence[Event]):
    """A read-only view of the log's first ``length`` events, ``events[:length]``,
    without copying (keeps the folds linear).  Not the session prefix (PFX)."""

    __slots__ = ("_events", "_length")

    def __init__(self, events: Sequence[Event], length: int) -> None:
        self._events = events
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Event:  # type: ignore[override]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        return self._events[index % self._length if index < 0 else index]


def log_view(events: Sequence[Event], length: int) -> Sequence[Event]:
    """``events[:length]`` as a view (no copy)."""
    return _LogView(events, length)
