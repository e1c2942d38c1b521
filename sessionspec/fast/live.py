"""A session log kept open across turns, for long generated logs.

:func:`model.loop.run_turn` rebuilds the session (surface fold, header fold)
from the whole log for every turn and takes each boundary as ``derive`` over
the fold (the definition).  :class:`LiveLog` keeps an
:class:`~model.derive.IncrementalDerivation` (DER-7) open instead, so a long
simulation stays linear.  The turn itself is the normative
:func:`model.loop.play_turn`; ``tests/fast/test_fast.py`` asserts that both produce
the same log and requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

import sessionspec.model.loop.turn as turn
from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.model.header import EpochHeader, fold_header, header_of_event
from sessionspec.model.jsonval import Absent, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop import AgentConfig, Draft, Hooks, LoopInstance, TurnOutcome, TurnScript
from sessionspec.model.loop.events import NO_HOOKS
from sessionspec.model.loop.state import AppendRejected, draft_event
from sessionspec.model.rejected import Rejected


@final
@dataclass(slots=True)
class LiveLog:
    """A :class:`~model.loop.SessionLog` whose derivation and header fold advance
    with every append.  Mutable on purpose and owned by one driver."""

    derivation: IncrementalDerivation
    header: EpochHeader | Absent

    @property
    def events(self) -> Sequence[Event]:
        return self.derivation.events

    def append(self, draft: Draft) -> int:
        seq = len(self.derivation.events)
        event = draft_event(draft, seq)
        header = self.header
        if event.type == "request/header":
            folded = header_of_event(event)
            if isinstance(folded, Rejected):
                raise AppendRejected(folded)
            header = folded
        rejected = self.derivation.append(event)
        if rejected is not None:
            raise AppendRejected(rejected)
        self.header = header
        return seq

    def boundary(self) -> tuple[JsonObject, ...]:
        return self.derivation.messages()


def open_log(log: Sequence[Event] = ()) -> LiveLog | Rejected:
    """A :class:`LiveLog` over ``log`` (validated once)."""
    derivation = IncrementalDerivation(dialect=A55)
    for event in log:
        rejected = derivation.append(event)
        if rejected is not None:
            return rejected
    header = fold_header(log, ABSENT, A55)
    if isinstance(header, Rejected):
        return header
    return LiveLog(derivation=derivation, header=header)


def run_turn_live(live: LiveLog, instance: LoopInstance, agent: AgentConfig, script: TurnScript, *,
                  hooks: Hooks = NO_HOOKS) -> TurnOutcome | Rejected:
    """:func:`model.loop.run_turn` on a :class:`LiveLog` (the live log grows in place)."""
    # Looked up on the module at call time, so a planted variant installed there applies.
    return turn.play_turn(live, instance, agent, script, hooks)
