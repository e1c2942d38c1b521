"""``compactIfNeeded`` and its triggers (CMP-6..CMP-9, PRN-6, DIA-6, DIA-7, DIA-20)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from model.compaction.contracts import run_holds  # noqa: F401 - the post: line reads it
from model.compaction.dialect import rules_of
from model.compaction.policy import (
    DEFAULT_COMPACT_CONFIG,
    CompactConfig,
    Target,
    check_compact_config,
    compact_spec,
    routed_target,
    target_policy,
)
from model.compaction.records import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactionRun,
    Ids,
    OverflowDecision,
    RegionOutcome,
    RegionResult,
    Summarizer,
    Trigger,
)
from model.compaction.region import compact_region
from model.compaction.retention import select_range
from model.jsonval import ABSENT, JsonObject
from model.log import Dialect, Event
from model.meter import MeterState, fold_meter_event, measure_state, meter_state
from model.prune import PruneConfig, prune_pass
from model.rejected import Rejected
from model.rules import implements


@implements("CMP-8", "CMP-9", "PRN-6", "DIA-20")
def compact_if_needed(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    dialect: Dialect = Dialect.A55,
    trigger: Trigger = Trigger.PRESSURE,
    config: CompactConfig = DEFAULT_COMPACT_CONFIG,
    context_window: int | None = None,
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
    meter: MeterState | None = None,
) -> CompactionRun | Rejected:
    """CMP-8 (pressure): target, policy, measure, spec; below threshold -> none;
    prune and re-measure; then up to ``compactionRetries + 1`` transactions,
    each followed by a re-measure; still above threshold -> error (committed
    compactions stay).  CMP-9 (overflow) and DIA-20 (manual): prune (overflow
    only), select with ``retainTokens = 0``, one transaction.  PRN-6: the prune
    runs only here.  Configuration errors are returned as Rejected.

    Every measure reads one running meter (MTR-5: a replay fold advanced to the
    tail on every read), started from ``meter_state(events)`` -- or from
    ``meter``, a caller's fold over exactly ``events`` (copied, never changed).

    pre: meter is None or (meter.consumed == len(events) and meter.dialect is dialect)
    post: isinstance(__return__, Rejected) or run_holds(events, __return__, dialect) is None
    """
    checked = check_compact_config(config)
    if isinstance(checked, Rejected):
        return checked
    target = routed_target(events, dialect)
    if target is None:
        return CompactionRun(events=())
    policy = target_policy(config, target.provider, target.model)
    summ_target = (
        Target(provider=policy.summarization_provider, model=policy.summarization_model)
        if policy.summarization_provider and policy.summarization_model
        else None
    )
    log: list[Event] = list(events)
    appended: list[Event] = []
    results: list[RegionResult] = []
    state: MeterState | Rejected = meter_state(events, dialect) if meter is None else meter.copy()

    def extend(new: Sequence[Event]) -> None:
        nonlocal state
        for event in new:
            if not isinstance(state, Rejected):
                bad = fold_meter_event(state, event, log)
                state = state if bad is None else bad
            log.append(event)
        appended.extend(new)

    def total() -> int | Rejected:
        return state if isinstance(state, Rejected) else measure_state(state).total_tokens

    def run_prune() -> Rejected | None:
        if prune is None:
            return None
        nodes = None if isinstance(state, Rejected) else tuple(state.surface.seqs)
        pruned = prune_pass(log, prune, dialect=dialect, time=time, nodes=nodes)
        if isinstance(pruned, Rejected):
            return pruned
        extend(pruned.events)
        return None

    def transaction(retain: int, attempt: int) -> RegionOutcome | None | Rejected:
        if isinstance(state, Rejected):
            return state
        priced = state.surface
        chosen = select_range([(n.seq, n.tokens) for n in priced.nodes], priced.seqs, log, retain, dialect)
        if chosen is None or isinstance(chosen, Rejected):
            return chosen
        outcome = compact_region(
            log,
            chosen.start,
            chosen.end,
            summarizer,
            dialect=dialect,
            max_tokens=policy.max_tokens,
            summarization_target=summ_target,
            ids=ids(attempt),
            manual=trigger is Trigger.MANUAL,
            time=time,
            meter=state,
        )
        if isinstance(outcome, Rejected):
            return outcome
        extend(outcome.events)
        if outcome.result is not None:
            results.append(outcome.result)
        return outcome

    def done(error: Rejected | None = None) -> CompactionRun:
        return CompactionRun(events=tuple(appended), results=tuple(results), error=error)

    if trigger is not Trigger.PRESSURE:
        if trigger is Trigger.CONTEXT_OVERFLOW:
            bad = run_prune()
            if bad is not None:
                return done(bad)
        outcome = transaction(0, 0)
        if isinstance(outcome, Rejected):
            return done(outcome)
        return done(None if outcome is None else outcome.error)

    spec = compact_spec(policy, context_window, f"{target.provider}/{target.model}")
    if isinstance(spec, Rejected):
        return spec
    now = total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return done(now if isinstance(now, Rejected) else None)
    bad = run_prune()
    if bad is not None:
        return done(bad)
    now = total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return done(now if isinstance(now, Rejected) else None)
    attempts = 0
    for attempt in range(policy.compaction_retries + 1):
        outcome = transaction(spec.retain_tokens, attempt)
        if isinstance(outcome, Rejected):
            return done(outcome)
        if outcome is None:
            if not results:
                return done()
            break
        if outcome.error is not None:
            return done(outcome.error)
        attempts += 1
        now = total()
        if isinstance(now, Rejected):
            return done(now)
        if now < spec.threshold_tokens:
            return done()
    now = total()
    return done(
        Rejected(
            rule="CMP-8",
            reason=f"compaction still above threshold after {attempts} compaction attempts ({now} estimated tokens >= threshold {spec.threshold_tokens})",
        )
    )


@implements("CMP-6")
def pressure_compaction(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    aborted: bool = False,
    dialect: Dialect = Dialect.A55,
    config: CompactConfig = DEFAULT_COMPACT_CONFIG,
    context_window: int | None = None,
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
    meter: MeterState | None = None,
) -> CompactionRun | Rejected:
    """The automatic pressure trigger.  CMP-6 (A55): on ``agent/post-step``,
    inside the step (after its results, before ``step/end``); DIA-6 (D08): in
    ``agent/pre-step``, outside any step (before ``step/start``), skipping when
    the lock is busy.  Skips when not ``auto`` or already aborted.  A call at
    the wrong place is rejected (a loop bug).  The run's error never fails the
    turn: the caller logs/warns it and goes on (committed events stay)."""
    gate = rules_of(dialect).pressure_gate(events)
    if gate is not None:
        return gate
    if not config.auto or aborted:
        return CompactionRun(events=())
    return compact_if_needed(
        events,
        summarizer,
        dialect=dialect,
        trigger=Trigger.PRESSURE,
        config=config,
        context_window=context_window,
        prune=prune,
        ids=ids,
        time=time,
        meter=meter,
    )



@implements("CMP-7", "DIA-7")
def recover_overflow(
    events: Sequence[Event],
    summarizer: Summarizer,
    *,
    failure_code: str,
    prior_overflow_failures: int,
    aborted: bool = False,
    dialect: Dialect = Dialect.A55,
    config: CompactConfig = DEFAULT_COMPACT_CONFIG,
    prune: PruneConfig | None = None,
    ids: Callable[[int], Ids] = lambda attempt: Ids(),
    time: int = 0,
    meter: MeterState | None = None,
) -> OverflowDecision:
    """CMP-7: only for ``CONTEXT_WINDOW_EXCEEDED``, not aborted, with a routed
    target and fewer than ``maxOverflowRetries`` earlier overflows; run
    ``compactIfNeeded(context-overflow)`` and retry iff ``replaceGeneration``
    advanced (also when recovery failed after a prune landed).
    DIA-7: "Overflow recovery MUST retry **inside the same step**: failed attempt's chunks (error finish)
    stay, no `assistant/message`, the bracket lies between `step/start` and `step/end` of that step, the retry
    streams again and its `assistant/message` cites only the retry's chunks."
    """
    if (
        not config.auto
        or failure_code != CONTEXT_WINDOW_EXCEEDED
        or aborted
        or routed_target(events, dialect) is None
        or prior_overflow_failures >= config.max_overflow_retries
    ):
        return OverflowDecision(events=(), retry=False)
    run = compact_if_needed(
        events, summarizer, dialect=dialect, trigger=Trigger.CONTEXT_OVERFLOW, config=config, prune=prune, ids=ids,
        time=time, meter=meter,
    )
    if isinstance(run, Rejected):
        return OverflowDecision(events=(), retry=False, error=run)
    advanced = any(e.surface_op is not ABSENT and isinstance(e.surface_op, JsonObject) for e in run.events)
    return OverflowDecision(events=run.events, retry=advanced and not aborted, error=run.error)

