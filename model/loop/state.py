"""The session as a running turn sees it, and the turn's own state.

:class:`LogWriter` is the normative session: every append is validated by the
surface fold (SURF-9) and the projection (DER-1), so the loop cannot write an
invalid log, and the boundary is the definition ``derive`` (DER-4 over the
fold's nodes).  A driver may hand the turn any :class:`SessionLog` (the fast
package keeps an incremental derivation instead); its property tests tie the
two together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, Protocol

from sessionspec.model.derive import derive_nodes, project
from sessionspec.model.header import EpochHeader, fold_header, header_of_event
from sessionspec.model.jsonval import ABSENT, Absent, JsonObject
from sessionspec.model.log import Dialect, Event, log_view, make_event
from sessionspec.model.loop.events import Draft, Hooks, SentRequest, SideCall
from sessionspec.model.loop.instance import LoopInstance
from sessionspec.model.loop.script import AgentConfig, InterruptKind, Steering, TurnScript, Window
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfaceState, fold_surface, step_surface

APPEND: Final = "append"


class StepEnd(Enum):
    """How a step ended: done (the turn goes on to its epilogue) or a request-error retry (LOOP-14)."""

    DONE = "done"
    RETRY = "retry"


class Interrupted(Exception):
    """The turn signal was observed at a checkpoint (LOOP-15); never escapes the turn."""

    def __init__(self, kind: InterruptKind) -> None:
        super().__init__(kind.value)
        self.kind = kind


class TurnFailed(Exception):
    """A turn error with its ``turn/end`` reason (LOOP-16); never escapes the turn."""

    def __init__(self, reason: JsonObject) -> None:
        super().__init__("turn failed")
        self.reason = reason


class AppendRejected(Exception):
    """The loop tried to write an invalid event (a model bug, reported as Rejected)."""

    def __init__(self, rejected: Rejected) -> None:
        super().__init__(str(rejected))
        self.rejected = rejected


class SessionLog(Protocol):
    """What a turn needs of the session: its events, validated appends, the
    header fold, and ``derive(log)`` for the boundary (LOOP-6)."""

    @property
    def events(self) -> Sequence[Event]: ...

    @property
    def header(self) -> EpochHeader | Absent: ...

    def append(self, draft: Draft) -> int: ...

    def boundary(self) -> tuple[JsonObject, ...]: ...


def draft_event(draft: Draft, seq: int) -> Event:
    """The event of a draft at ``seq`` (the clock is the seq: deterministic)."""
    return make_event(draft.type_name, seq=seq, time=seq, data=draft.data,
                      source_event_seqs=draft.source_event_seqs, surface_op=draft.surface_op)


@dataclass(slots=True)
class LogWriter:
    """The normative session: the log, its surface fold state and its header fold."""

    log: list[Event]
    surface: SurfaceState
    header: EpochHeader | Absent
    dialect: Dialect = Dialect.A55

    @property
    def events(self) -> Sequence[Event]:
        return self.log

    def append(self, draft: Draft) -> int:
        """Validate (SURF-9, DER-1, HDR) and append; a rejection is a model bug."""
        seq = len(self.log)
        event = draft_event(draft, seq)
        state = step_surface(self.surface, event, log_view(self.log, seq), self.dialect)
        if isinstance(state, Rejected):
            raise AppendRejected(state)
        if state is not self.surface:
            projected = project(event, self.dialect)
            if isinstance(projected, Rejected):
                raise AppendRejected(projected)
        header = self.header
        if event.type == "request/header":
            folded = header_of_event(event, self.dialect)
            if isinstance(folded, Rejected):
                raise AppendRejected(folded)
            header = folded
        self.log.append(event)
        self.surface, self.header = state, header
        return seq

    def boundary(self) -> tuple[JsonObject, ...]:
        """``derive(log)`` (DER-4 over the surface nodes)."""
        messages = derive_nodes(self.surface.nodes, self.log, self.dialect)
        # Every node was projected when it was appended.
        assert not isinstance(messages, Rejected), messages
        return messages


def log_writer(log: Sequence[Event], dialect: Dialect = Dialect.A55) -> LogWriter | Rejected:
    """The session over ``log`` (rejected when the log itself is invalid)."""
    fold = fold_surface(log, dialect)
    if isinstance(fold, Rejected):
        return fold
    messages = derive_nodes(fold.state.nodes, log, dialect)
    if isinstance(messages, Rejected):
        return messages
    header = fold_header(log, ABSENT, dialect)
    if isinstance(header, Rejected):
        return header
    return LogWriter(log=list(log), surface=fold.state, header=header, dialect=dialect)


@dataclass(slots=True, kw_only=True)
class Turn:
    """Mutable state of one running turn (never escapes :func:`~model.loop.turn.run_turn`)."""

    session: SessionLog
    instance: LoopInstance
    agent: AgentConfig
    script: TurnScript
    hooks: Hooks
    number: int  # the turn number (turn/start {turn})
    step: int = 0
    open_step: int | None = None
    aborted: InterruptKind | None = None
    requests: list[SentRequest] = field(default_factory=list)
    side_calls: list[SideCall] = field(default_factory=list)
    compositions: int = 0
    interrupted_composition: bool = False
    max_tokens: bool = False
    # Steering put back on the queue when the turn ended in its prologue (QF-4).
    requeued: tuple[Steering, ...] = ()
    # Scripted replies taken by this turn's requests (a re-queued turn goes on from here).
    replies_taken: int = 0

    def signal(self, window: Window, chunk: int = 0) -> None:
        """The scripted cancel/dispose fires when the loop passes ``window``."""
        i = self.script.interrupt
        prologue = window in (Window.AFTER_TURN_START, Window.AFTER_PROMPT_SUBMIT)
        if i is not None and i.window is window and (prologue or i.step == self.step) and (
            window is not Window.BEFORE_CHUNK or i.chunk == chunk
        ):
            # Disposal wins over an earlier cancel (LOOP-15).
            if self.aborted is not InterruptKind.DISPOSE:
                self.aborted = i.kind

    def checkpoint(self, window: Window, chunk: int = 0) -> None:
        """LOOP-15: an interruption checkpoint (the signal may fire right here)."""
        self.signal(window, chunk)
        if self.aborted is not None:
            raise Interrupted(self.aborted)

    def append(self, draft: Draft) -> int:
        return self.session.append(draft)
