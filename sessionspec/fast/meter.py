"""compact-basic's pressure listener behind an incremental token meter.

Below the threshold ``compactIfNeeded`` appends nothing (CMP-8: "if total <
threshold return none"), so the full :func:`model.loop.pressure_listener`
(which re-measures the whole log) only needs to run at or above it.  The
answer is the same; ``tests/fast/test_fast.py`` asserts it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.fast.jsonget import get
from sessionspec.model.compaction import compact_spec, target_policy
from sessionspec.model.log import Event, log_view
from sessionspec.model.loop import CompactionPlugin, PostStepHook, PostStepResult, StepContext, pressure_listener
from sessionspec.model.meter import MeterState, fold_meter_event, measure_state
from sessionspec.model.rejected import Rejected


def metered_pressure_listener(plugin: CompactionPlugin) -> PostStepHook:
    """:func:`pressure_listener` behind an incremental meter, for ONE append-only
    log (a live log, or a driver's session): below the threshold
    ``compactIfNeeded`` appends nothing (CMP-8: "if total < threshold return
    none"), so the full run (which re-measures the whole log) is only needed at
    or above it; the answer is the same.  The meter (MTR-5) folds each event once."""
    full = pressure_listener(plugin)
    state = MeterState()
    folded = 0
    exact = True

    def post_step(events: Sequence[Event], ctx: StepContext) -> PostStepResult:
        nonlocal folded, exact
        while exact and folded < len(events):
            exact = fold_meter_event(state, events[folded], log_view(events, folded)) is None
            folded += 1
        provider, model = get(ctx.header.config, "provider"), get(ctx.header.config, "model")
        if exact and isinstance(provider, str) and isinstance(model, str):
            spec = compact_spec(target_policy(plugin.config, provider, model), plugin.context_window, model)
            if not isinstance(spec, Rejected) and measure_state(state).total_tokens < spec.threshold_tokens:
                return PostStepResult()
        return full(events, ctx)

    return post_step
