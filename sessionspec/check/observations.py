"""What a log shows besides findings, as folds of the checker's one loop (issue 26): the §17
quirks of the real code (Q-4, Q-17), the opaque placeholder fields of its headers (LEG-8), and
the pre-A55 designs that put it outside the model (LEG-7)."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.folds import AuditFold
from sessionspec.check.opaque import is_opaque
from sessionspec.fast.constants import A55, ABSENT
from sessionspec.fast.jsonget import get
from sessionspec.fast.jsonget import json_int as _int
from sessionspec.model.guard import INVARIANT_CODE, guard_trip
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class PreA55DesignAudit(AuditFold):
    """LEG-7: "Pre-A55 designs MUST be recognized only for diagnostics, never
    produced: per-step ``agent/request-advice {before, after}`` and
    ``EpochHeader.messageSuffix`` [...]".  Unlike LEG-1..LEG-6 ("MUST be
    rejected") the rule rejects nothing: the real loader takes
    ``agent/request-advice`` as a plugin type (LOG-8) and canonicalization
    drops ``messageSuffix`` (HDR-2), yet both changed the request of the
    design that wrote them, so the model cannot decide such a log's
    requests.  The outcome names what was recognized; the checker's verdict
    is ``unknown`` with it as the reason (unless a rule makes the log
    invalid).  ``request/header-delta`` and ``fallback`` are rejected by
    LEG-1/LEG-2 and not repeated here."""

    EVENT_TYPES = frozenset({"agent/request-advice", "request/header"})

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.advice: int | None = None
        self.suffix: int | None = None

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        if event.type == "agent/request-advice" and self.advice is None:
            self.advice = event.seq
        elif event.type == "request/header" and self.suffix is None and get(get(event.data, "header"), "messageSuffix") is not ABSENT:
            self.suffix = event.seq

    def finish(self) -> list[Rejected]:
        return []

    def outside(self) -> list[str]:
        found: list[str] = []
        if self.advice is not None:
            found.append(f"agent/request-advice at seq {self.advice}")
        if self.suffix is not None:
            found.append(f"a request/header with messageSuffix at seq {self.suffix}")
        if not found:
            return []
        return [f"a pre-A55 design (LEG-7, recognized for diagnostics only): {' and '.join(found)}; the model does not decide its requests"]


audits("LEG-7")(PreA55DesignAudit)


def pre_a55_designs(events: Sequence[Event]) -> list[str]:
    """:class:`PreA55DesignAudit` run alone: why the log is outside the model, if it is."""
    return run_folds(events, A55, 0, [PreA55DesignAudit]).outside


class PlaceholderNoteAudit(AuditFold):
    """FMT-6/LEG-8: header fields scrubbed to placeholders are opaque; the
    requests are then known only up to those fields (a note, not a failure)."""

    EVENT_TYPES = frozenset({"request/header"})

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.fields: dict[str, int] = {}

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        if event.type != "request/header":
            return
        header = get(event.data, "header")
        for key in ("system", "tools", "messagePrefix"):
            if key not in self.fields and is_opaque(key, get(header, key)):
                self.fields[key] = event.seq

    def finish(self) -> list[Rejected]:
        return []

    def notes(self) -> list[str]:
        if not self.fields:
            return []
        listed = ", ".join(f"{key} (first at seq {seq})" for key, seq in self.fields.items())
        return [f"placeholder header fields are opaque, no finding depends on them (FMT-6, LEG-8): {listed}"]


audits("LEG-8")(PlaceholderNoteAudit)


def placeholder_notes(events: Sequence[Event]) -> list[str]:
    """:class:`PlaceholderNoteAudit` run alone: its note, if any."""
    return run_folds(events, A55, 0, [PlaceholderNoteAudit]).notes


class QuirkAudit(AuditFold):
    """§17: "the model follows the real code and the checker reports the quirk
    as a ``note``, never as ``invalid``, unless a flag (``--strict-quirks``)
    asks for the 'intended' behaviour."  The quirks a log alone shows, for
    live events, each named by its quirk ID:

    * Q-4: "A failure in composition, assembly or pre-step yields
      ``turn/end {kind:"error", step: n}`` with no ``step/start`` for ``n``;
      a prompt-submit failure yields ``step: 0``."
    * Q-17: "Refreshed snapshots reuse timestamps; never assert time order":
      an event whose ``time`` is earlier than the previous event's.

    Beside them, a turn ended by the writer's own invariant guard (:func:`model.guard.guard_trip`), named by
    the rule the guard enforces: like a quirk, a note unless ``--strict-quirks``.
    """

    TAKES_RUNS = True

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.found: list[Rejected] = []
        self.started: set[int] = set()
        self.previous_time: int | None = None

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        self._in_time_order(event)
        match event.type:
            case "turn/start":
                self.started.clear()
            case "step/start":
                step = _int(get(event.data, "step"))
                if step is not None:
                    self.started.add(step)
            case "turn/end" if event.seq >= self.first_live_seq:
                reason = get(event.data, "reason")
                step = _int(get(reason, "step"))
                if get(reason, "kind") == "error" and step is not None and step not in self.started:
                    self.found.append(Rejected(rule="Q-4", seq=event.seq, reason=f"turn/end error names step {step}, which never started"))
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
            self._in_time_order(event)

    def _in_time_order(self, event: Event) -> None:
        """Q-17: a live event whose ``time`` is earlier than the previous event's (seed or live)."""
        previous_time, time = self.previous_time, event.time
        if previous_time is not None and time < previous_time and event.seq >= self.first_live_seq:
            self.found.append(Rejected(rule="Q-17", seq=event.seq, reason=f"time {time} is earlier than the previous event's {previous_time}"))
        self.previous_time = time

    def finish(self) -> list[Rejected]:
        return []

    def quirks(self) -> list[Rejected]:
        return self.found


audits("Q-4", "Q-17")(QuirkAudit)


def quirk_observations(events: Sequence[Event], first_live_seq: int = 0) -> list[Rejected]:
    """:class:`QuirkAudit` run alone: the quirks the log shows."""
    return run_folds(events, A55, first_live_seq, [QuirkAudit]).quirks
