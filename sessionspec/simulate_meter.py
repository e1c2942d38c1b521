"""The simulator's pressure listener: compact-basic behind ONE running token meter.

:func:`model.loop.pressure_listener` runs ``compactIfNeeded(pressure)``
(CMP-6, CMP-8) on every post-step, and each run starts by folding the meter
over the whole log again (``_Run``: ``meter_state(events)``, MTR-5).
:func:`sessionspec.fast.meter.metered_pressure_listener` already skips the runs
below the threshold (CMP-8: "if total < threshold return none") with a running
meter; the runs at or above it still re-folded the log, about a quarter of
``sessionspec generate``'s CPU (issue 26, 2026-12-04).  Here the run starts from
a copy of the running meter instead: the meter is a replay fold (MTR-5), so
its state after the log's events is the one ``meter_state`` recomputes.  The
rest is the model's own code, called in the model's order (pressure gate,
CMP-3 check, routed target CMP-5, target policy CMP-4, then
:func:`model.compaction.run.compact_under_pressure`).

tests/model/test_simulate.py holds simulated logs equal with this listener and
with the model's ``pressure_listener`` (whole logs, event for event).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction import compact_spec, target_policy
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.policy import check_compact_config, routed_target
from sessionspec.model.compaction.records import CompactionRun, Ids
from sessionspec.model.compaction.run import _Run, compact_under_pressure
from sessionspec.model.header import EpochHeader, opt_header_eq
from sessionspec.model.jsonval import ABSENT, Absent, get
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.loop import CompactionPlugin, PostStepHook, PostStepResult, StepContext, pressure_listener
from sessionspec.model.loop.listeners import _as_drafts, _recording, _side_calls
from sessionspec.model.meter import MeterState, PricedSurface, estimate_header, fold_meter_event
from sessionspec.model.rejected import Rejected


def _copy(state: MeterState) -> MeterState:
    """An independent copy (the run folds its own events into it); the rest of the state is frozen values."""
    surface = state.surface
    return MeterState(dialect=state.dialect, consumed=state.consumed, header=state.header,
                      surface=PricedSurface(dialect=surface.dialect, seqs=list(surface.seqs),
                                            nodes=list(surface.nodes), tokens=surface.tokens),
                      step_start=state.step_start, anchor=state.anchor)


class _Total:
    """``measure_state(state).total_tokens`` (MTR-10) for one meter's successive
    states, its two header computations (``optHeaderEq`` of the anchor's and the
    folded header, MTR-11; ``estimateHeader``, MTR-4) remembered for the last
    header objects they were asked about: headers are frozen values and change
    only at a ``request/header`` or an anchor, while the listener measures after
    every step (``header_eq`` through ``js_stringify`` was a tenth of the CPU)."""

    def __init__(self) -> None:
        self._eq: tuple[EpochHeader | Absent, EpochHeader | Absent, bool] | None = None
        self._estimate: tuple[EpochHeader | Absent, int] | None = None

    def __call__(self, state: MeterState) -> int:
        header, anchor, surface = state.header, state.anchor, state.surface_tokens
        if anchor is not None and self._header_eq(anchor.header, header, state.dialect):
            return max(0, anchor.baseline.tokens + surface - anchor.surface_tokens)
        if header is ABSENT and surface == 0:
            return 0
        return max(0, self._estimate_header(header, state.dialect) + surface)

    def _header_eq(self, a: EpochHeader | Absent, b: EpochHeader | Absent, dialect: Dialect) -> bool:
        if self._eq is None or self._eq[0] is not a or self._eq[1] is not b:
            self._eq = (a, b, opt_header_eq(a, b, dialect))
        return self._eq[2]

    def _estimate_header(self, header: EpochHeader | Absent, dialect: Dialect) -> int:
        if self._estimate is None or self._estimate[0] is not header:
            self._estimate = (header, estimate_header(header, dialect))
        return self._estimate[1]


def _no_ids(attempt: int) -> Ids:
    return Ids()


def _pressure_run(events: Sequence[Event], plugin: CompactionPlugin, meter: MeterState) -> PostStepResult:
    """``pressure_listener(plugin)(events, ctx)`` for a signal not aborted, ``meter`` the meter after ``events``."""
    summarize, sent = _recording(plugin)
    dialect = Dialect.A55
    run: CompactionRun | Rejected | None = rules_of(dialect).pressure_gate(events)
    if run is None and not plugin.config.auto:
        run = CompactionRun(events=())
    if run is None:
        checked = check_compact_config(plugin.config)
        target = routed_target(events, dialect)
        if isinstance(checked, Rejected):
            run = checked
        elif target is None:
            run = CompactionRun(events=())
        else:
            policy = target_policy(plugin.config, target.provider, target.model)
            # The model's working record, its meter handed over instead of re-folded.
            record = _Run((), summarize, dialect, policy, plugin.prune, _no_ids, 0, manual=False)
            record.log, record.meter = list(events), meter
            run = compact_under_pressure(record, target, plugin.context_window)
    if isinstance(run, Rejected):
        return PostStepResult()
    return PostStepResult(drafts=_as_drafts(run.events), side_calls=_side_calls(sent, run.events))


def seeded_pressure_listener(plugin: CompactionPlugin) -> PostStepHook:
    """:func:`pressure_listener` for ONE append-only log, its meter folded once:
    below the threshold nothing runs (as in ``metered_pressure_listener``), at or
    above it ``compactIfNeeded`` starts from a copy of the running meter."""
    full = pressure_listener(plugin)
    state = MeterState()
    total = _Total()
    folded = 0
    exact = True

    def post_step(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
        nonlocal folded, exact
        while exact and folded < len(events):
            exact = fold_meter_event(state, events[folded], log_view(events, folded)) is None
            folded += 1
        if not exact or ctx.aborted:
            return full(events, ctx)
        provider, model = get(ctx.header.config, "provider"), get(ctx.header.config, "model")
        if isinstance(provider, str) and isinstance(model, str):
            spec = compact_spec(target_policy(plugin.config, provider, model), plugin.context_window, model)
            if not isinstance(spec, Rejected) and total(state) < spec.threshold_tokens:
                return PostStepResult()
        return _pressure_run(events, plugin, _copy(state))

    return post_step
