"""Which steps the session API wrote (FMT-7 Writers), judged at each step's end (issue 26).

A step the loop did not write -- at least one ``assistant/message`` append, no
``assistant/chunk`` and no message carrying ``sourceEventSeqs`` (the loop always writes
them, LOOP-11) -- is the session API's or tooling's: the loop's own rules (LOOP-10..LOOP-12,
SURF-13, MTR-9, INV-7) do not bind it.  That is known only when the step ends (a chunk or a
cited message may still come), so a fold that needs it from the step's ``step/start`` on
holds the step's events until the step is decided, then takes them in order with the
judgement (:class:`ApiStepJudge`).  A step is decided early, at its first chunk or cited
message (the loop's steps: their first chunk follows ``step/start`` within a few events), so
what is held is the head of one open step; a session-API step is held until its end.

This is the one place that decides it: the loop audit, the provenance audit and the writer
attribution each step their own judge (one per fold, the same judgement).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.model.log import Event

# What ends a step (as the loop writes it, a step/end; a turn boundary closes an unended step).
STEP_CLOSERS: Final = frozenset({"step/end", "turn/end", "turn/start"})


class ApiStepJudge:
    """FMT-7 Writers, per step: was it written by the session API?  ``take`` each event in
    order; it answers the events released now, in order (none while a step is undecided).
    The ``step/start`` among released events is judged :attr:`api`; :attr:`built` holds the
    ``step/start`` seqs of every session-API step so far.  A fold calls ``take`` only while
    :attr:`pending` is set or for a ``step/start`` (every other event is released as it
    comes), and ``finish`` after the last event."""

    __slots__ = ("pending", "messaged", "api", "built")

    def __init__(self) -> None:
        # The open step's events from its step/start, while it is undecided.
        self.pending: list[Event] | None = None
        # The open step has an assistant/message append (without sourceEventSeqs).
        self.messaged = False
        # The judgement of the step whose events were released last.
        self.api = False
        self.built: set[int] = set()

    def take(self, event: Event) -> Sequence[Event]:
        pending = self.pending
        kind = event.type
        if kind == "step/start":
            # A step/start inside an unended step: the unended one is not judged the API's.
            self.pending, self.messaged, self.api = [event], False, False
            return () if pending is None else pending
        if pending is None:
            return (event,)
        if kind == "assistant/chunk":
            self.api = False
        elif kind == "assistant/message" and event.surface_op == "append":
            if event.source_event_seqs is ABSENT:
                self.messaged = True
                pending.append(event)
                return ()
            self.api = False
        elif kind in STEP_CLOSERS:
            self._judge(pending[0])
        else:
            pending.append(event)
            return ()
        self.pending = None
        pending.append(event)
        return pending

    def finish(self) -> Sequence[Event]:
        """The events of a step left open at the end of the log, judged as if it ended there."""
        pending, self.pending = self.pending, None
        if pending is None:
            return ()
        self._judge(pending[0])
        return pending

    def _judge(self, start: Event) -> None:
        self.api = self.messaged
        if self.api:
            self.built.add(start.seq)


def api_built_steps(events: Sequence[Event]) -> frozenset[int]:
    """The ``step/start`` seqs of the steps the session API wrote (the judge run over ``events``)."""
    judge = ApiStepJudge()
    for event in events:
        if judge.pending is not None or event.type == "step/start":
            judge.take(event)
    judge.finish()
    return frozenset(judge.built)
