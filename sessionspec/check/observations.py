"""What a log shows besides findings (LEG-7, LEG-8, Q-4, Q-17): the folds that run the model's definitions
(:mod:`sessionspec.model.diagnostics`), as folds of the checker's one loop (issue 26).  They only keep what the
definitions are asked with: the first seq of each design or scrubbed field, the steps of the open turn, the
previous event's time, and which events are live."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.folds import AuditFold
from sessionspec.fast.constants import A55
from sessionspec.fast.header import opaque_header_fields
from sessionspec.fast.jsonget import get
from sessionspec.fast.jsonget import json_int as _int
from sessionspec.model.diagnostics import (
    earlier_than_previous,
    error_step_never_started,
    outside_the_model,
    placeholder_note,
    pre_a55_design,
)
from sessionspec.model.guard import INVARIANT_CODE, guard_trip
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class PreA55DesignAudit(AuditFold):
    """LEG-7 (:func:`sessionspec.model.diagnostics.pre_a55_design`): the checker's verdict is ``unknown`` with
    the designs as the reason (unless a rule makes the log invalid)."""

    EVENT_TYPES = frozenset({"agent/request-advice", "request/header"})

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.designs: dict[str, int] = {}

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        design = pre_a55_design(event)
        if design is not None:
            self.designs.setdefault(design, event.seq)

    def finish(self) -> list[Rejected]:
        return []

    def outside(self) -> list[str]:
        why = outside_the_model(self.designs)
        return [] if why is None else [why]


def pre_a55_designs(events: Sequence[Event]) -> list[str]:
    """:class:`PreA55DesignAudit` run alone: why the log is outside the model, if it is."""
    return run_folds(events, A55, 0, [PreA55DesignAudit]).outside


class PlaceholderNoteAudit(AuditFold):
    """LEG-8 (:func:`sessionspec.model.diagnostics.opaque_header_fields`, through its compiled twin in
    ``sessionspec/fast/header.py``, tied by ``tests/fast/test_fast_header.py``): a note, not a failure."""

    EVENT_TYPES = frozenset({"request/header"})

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.fields: dict[str, int] = {}

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        for key in opaque_header_fields(event):
            self.fields.setdefault(key, event.seq)

    def finish(self) -> list[Rejected]:
        return []

    def notes(self) -> list[str]:
        note = placeholder_note(self.fields)
        return [] if note is None else [note]


def placeholder_notes(events: Sequence[Event]) -> list[str]:
    """:class:`PlaceholderNoteAudit` run alone: its note, if any."""
    return run_folds(events, A55, 0, [PlaceholderNoteAudit]).notes


class QuirkAudit(AuditFold):
    """The §17 quirks a log alone shows, for live events (:func:`sessionspec.model.diagnostics.error_step_never_started`,
    Q-4; :func:`sessionspec.model.diagnostics.earlier_than_previous`, Q-17).
    Beside them, a turn ended by the writer's own invariant guard (:func:`sessionspec.model.guard.guard_trip`),
    named by the rule the guard enforces: like a quirk, a note unless ``--strict-quirks``."""

    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.found: list[Rejected] = []
        self.started: set[int] = set()
        self.previous_time: int | None = None

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        # only an event earlier than the previous one reaches the definition (a call per event would
        # cost the checker 0.2 % of its instructions).
        previous_time, time = self.previous_time, event.time
        if previous_time is not None and time < previous_time and event.seq >= self.first_live_seq:
            self._time_quirk(event, previous_time)
        self.previous_time = time
        match event.type:
            case "turn/start":
                self.started.clear()
            case "step/start":
                step = _int(get(event.data, "step"))
                if step is not None:
                    self.started.add(step)
            case "turn/end" if event.seq >= self.first_live_seq:
                reason = get(event.data, "reason")
                # Both definitions read only an error end (a call per turn would cost the compiled checker
                # more than the answer; tests/fast/test_error_end_gate.py holds them to None for any other).
                if get(reason, "kind") != "error":
                    return
                quirk = error_step_never_started(event, self.started)
                if quirk is not None:
                    self.found.append(quirk)
                trip = guard_trip(reason, self.dialect)
                if trip is not None:
                    self.found.append(Rejected(rule=trip.rule, seq=event.seq,
                                               reason=f"turn/end error {INVARIANT_CODE} ({trip.package}): {trip.message}"))
            case _:
                pass

    def step_run(self, run: ChunkRun) -> None:
        """``step`` of each member of a packed row: a chunk is none of the types Q-4 reads, so only
        Q-17 reads the members, each its own time (CHK-6: ``time0 + Σ dt``, in any order)."""
        for event in run.members:
            previous_time, time = self.previous_time, event.time
            if previous_time is not None and time < previous_time and event.seq >= self.first_live_seq:
                self._time_quirk(event, previous_time)
            self.previous_time = time

    def _time_quirk(self, event: Event, previous_time: int) -> None:
        quirk = earlier_than_previous(event, previous_time)
        if quirk is not None:
            self.found.append(quirk)

    def finish(self) -> list[Rejected]:
        return []

    def quirks(self) -> list[Rejected]:
        return self.found


def quirk_observations(events: Sequence[Event], first_live_seq: int = 0) -> list[Rejected]:
    """:class:`QuirkAudit` run alone: the quirks the log shows."""
    return run_folds(events, A55, first_live_seq, [QuirkAudit]).quirks
