"""``compactIfNeeded`` and its triggers (CMP-6..CMP-9, PRN-6, DIA-6, DIA-7, DIA-20)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import assert_never

from sessionspec.model.compaction.cancellation import AbortPoint, stops_when_aborted
from sessionspec.model.compaction.contracts import run_holds  # noqa: F401 - the post: line reads it
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.policy import (
    DEFAULT_COMPACT_CONFIG,
    CompactConfig,
    Target,
    check_compact_config,
    compact_spec,
    routed_target,
    target_policy,
)
from sessionspec.model.compaction.records import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactionRun,
    Ids,
    OverflowDecision,
    RegionOutcome,
    RegionResult,
    Summarizer,
    Trigger,
)
from sessionspec.model.compaction.region import run_region
from sessionspec.model.compaction.retention import select_range
from sessionspec.model.jsonval import ABSENT, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import MeterState, fold_meter_event, measure_state, meter_state
from sessionspec.model.prune import PruneConfig, prune_pass
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


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
) -> CompactionRun | Rejected:
    """``compactIfNeeded(trigger)``, an orchestrator: the configuration checked (CMP-3), no routed
    header means no compaction (CMP-5, :func:`routed_target`), then the trigger's own steps: pressure
    (:func:`compact_under_pressure`, CMP-8), context overflow (:func:`compact_after_overflow`, CMP-9)
    or manual (:func:`compact_manually`, DIA-20).  Configuration errors are returned as Rejected.

    post: isinstance(__return__, Rejected) or run_holds(events, __return__, dialect) is None
    """
    checked = check_compact_config(config)
    if isinstance(checked, Rejected):
        return checked
    target = routed_target(events, dialect)
    if target is None:
        return CompactionRun(events=())
    policy = target_policy(config, target.provider, target.model)
    run = _Run(events, summarizer, dialect, policy, prune, ids, time, manual=trigger is Trigger.MANUAL)
    match trigger:
        case Trigger.PRESSURE:
            return compact_under_pressure(run, target, context_window)
        case Trigger.CONTEXT_OVERFLOW:
            return compact_after_overflow(run)
        case Trigger.MANUAL:
            return compact_manually(run)
        case unreachable:
            assert_never(unreachable)


@implements("CMP-8")
def compact_under_pressure(run: _Run, target: Target, context_window: int | None) -> CompactionRun | Rejected:
    """CMP-8: "`compactIfNeeded(pressure)` MUST: resolve the routed target (CMP-5) and policy; measure
    (MTR-10); resolve the model's context window (missing → `TargetPressureConfigError` "no context capacity
    for p/m"); compute the spec (CMP-4); if `total < threshold` return none; if a prune service exists,
    prune (PRN-5) and re-measure; if `total < threshold` return none (the prune stays); then for `attempt in
    0..compactionRetries`: select a range with `spec.retainTokens` (CMP-11); if none → return none when
    nothing was compacted yet, else stop looping; run one region transaction (CMP-13..23); re-measure; if
    `total < threshold` return its result."

    After the loop, still above the threshold: an error; committed compactions stay."""
    spec = compact_spec(run.policy, context_window, f"{target.provider}/{target.model}")
    if isinstance(spec, Rejected):
        return spec
    now = run.total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return run.done(now if isinstance(now, Rejected) else None)
    bad = prune_step(run)
    if bad is not None:
        return run.done(bad)
    now = run.total()
    if isinstance(now, Rejected) or now < spec.threshold_tokens:
        return run.done(now if isinstance(now, Rejected) else None)
    attempts = 0
    for attempt in range(run.policy.compaction_retries + 1):
        outcome = run.transaction(spec.retain_tokens, attempt)
        if isinstance(outcome, Rejected):
            return run.done(outcome)
        if outcome is None:
            if not run.results:
                return run.done()
            break
        if outcome.error is not None:
            return run.done(outcome.error)
        attempts += 1
        now = run.total()
        if isinstance(now, Rejected):
            return run.done(now)
        if now < spec.threshold_tokens:
            return run.done()
    now = run.total()
    return run.done(
        Rejected(
            rule="CMP-8",
            reason=f"compaction still above threshold after {attempts} compaction attempts ({now} estimated tokens >= threshold {spec.threshold_tokens})",
        )
    )


@implements("CMP-9")
def compact_after_overflow(run: _Run) -> CompactionRun:
    """CMP-9: "``compactIfNeeded(context-overflow)`` MUST: prune and re-measure if a prune service
    exists; select a range with ``retainTokens = 0``; none → return none; else run exactly one region
    transaction.  No context window or threshold is needed." """
    bad = prune_step(run)
    if bad is not None:
        return run.done(bad)
    return one_transaction(run)


@implements("DIA-20")
def compact_manually(run: _Run) -> CompactionRun:
    """DIA-20: "Manual compaction MUST select with `retainTokens = 0`, run under `runMaintenance` (idle only),
    flush after closing, and classify failures as `busy | cancelled | changed | summary | commit |
    persistence` (`ManualCompactionError`)."

    One transaction, no prune, no threshold."""
    return one_transaction(run)


def one_transaction(run: _Run) -> CompactionRun:
    outcome = run.transaction(0, 0)
    if isinstance(outcome, Rejected):
        return run.done(outcome)
    return run.done(None if outcome is None else outcome.error)


@implements("PRN-6")
def prune_step(run: _Run) -> Rejected | None:
    """PRN-6: "A prune MUST run only from `compactIfNeeded` (pressure after the threshold qualifies, or
    overflow), hence inside an open turn; each replacement increments `replaceGeneration` and stays durable
    even if later summarization fails (it authorizes an overflow retry, CMP-7)."

    The service is optional.  Its events join the run's log."""
    if run.prune is None:
        return None
    meter = run.meter
    nodes = None if isinstance(meter, Rejected) else tuple(meter.surface.seqs)
    pruned = prune_pass(run.log, run.prune, dialect=run.dialect, time=run.time, nodes=nodes)
    if isinstance(pruned, Rejected):
        return pruned
    run.extend(pruned.events)
    return pruned.error


class _Run:
    """The working record of one ``compactIfNeeded`` call (it never leaves it): the log as it grows,
    what the run appended and committed, and one running meter over the log (MTR-5: every measure
    reads it, folded to the tail), so each event is folded once."""

    def __init__(self, events: Sequence[Event], summarizer: Summarizer, dialect: Dialect, policy: CompactConfig,
                 prune: PruneConfig | None, ids: Callable[[int], Ids], time: int, *, manual: bool) -> None:
        self.log: list[Event] = list(events)
        self.summarizer, self.dialect, self.policy, self.prune = summarizer, dialect, policy, prune
        self.ids, self.time, self.manual = ids, time, manual
        self.appended: list[Event] = []
        self.results: list[RegionResult] = []
        self.meter: MeterState | Rejected = meter_state(events, dialect)

    def extend(self, new: Sequence[Event]) -> None:
        for event in new:
            if not isinstance(self.meter, Rejected):
                bad = fold_meter_event(self.meter, event, self.log)
                self.meter = self.meter if bad is None else bad
            self.log.append(event)
        self.appended.extend(new)

    def total(self) -> int | Rejected:
        return self.meter if isinstance(self.meter, Rejected) else measure_state(self.meter).total_tokens

    def transaction(self, retain: int, attempt: int) -> RegionOutcome | None | Rejected:
        """Select a range keeping ``retain`` tokens (CMP-11) and run one region transaction on it."""
        if isinstance(self.meter, Rejected):
            return self.meter
        priced = self.meter.surface
        chosen = select_range([(n.seq, n.tokens) for n in priced.nodes], priced.seqs, self.log, retain, self.dialect)
        if chosen is None or isinstance(chosen, Rejected):
            return chosen
        policy = self.policy
        summarization_target = (Target(provider=policy.summarization_provider, model=policy.summarization_model)
                                if policy.summarization_provider and policy.summarization_model else None)
        outcome = run_region(self.log, tuple(self.meter.surface.seqs), measure_state(self.meter), chosen.start, chosen.end,
                             self.summarizer, dialect=self.dialect, max_tokens=policy.max_tokens,
                             summarization_target=summarization_target, ids=self.ids(attempt), manual=self.manual,
                             time=self.time, aborted=False)
        if isinstance(outcome, Rejected):
            return outcome
        self.extend(outcome.events)
        if outcome.result is not None:
            self.results.append(outcome.result)
        return outcome

    def done(self, error: Rejected | None = None) -> CompactionRun:
        return CompactionRun(events=tuple(self.appended), results=tuple(self.results), error=error)


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
) -> CompactionRun | Rejected:
    """CMP-6: "(pressure trigger, when `auto`) On every `agent/post-step` — inside the step, after the
    assistant message, tool results, deferred context and the post-stream steering drain, **before
    `step/end`** — the model MUST run `compactIfNeeded(pressure)` unless the signal is already aborted."

    The automatic pressure trigger.  CMP-6 (A55): on ``agent/post-step``,
    inside the step (after its results, before ``step/end``); DIA-6 (D08): in
    ``agent/pre-step``, outside any step (before ``step/start``), skipping when
    the lock is busy.  Skips when not ``auto`` or already aborted.  A call at
    the wrong place is rejected (a loop bug).  The run's error never fails the
    turn: the caller logs/warns it and goes on (committed events stay)."""
    gate = rules_of(dialect).pressure_gate(events)
    if gate is not None:
        return gate
    if not config.auto or (aborted and stops_when_aborted(AbortPoint.PRESSURE_TRIGGER)):
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
) -> OverflowDecision:
    """CMP-7: "(overflow trigger, when `auto`) In `agent/request-error` — after the failed step's `step/end`,
    inside the turn, outside any step — the model MUST attempt recovery only if `failure.code ==
    "CONTEXT_WINDOW_EXCEEDED"`, the signal is not aborted, a routed target exists, and the number of earlier
    `CONTEXT_WINDOW_EXCEEDED` failures in `priorFailures` (LOOP-14) is `< maxOverflowRetries` (`0`
    disables)."

    CMP-7: only for ``CONTEXT_WINDOW_EXCEEDED``, not aborted, with a routed
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
        or (aborted and stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY))
        or routed_target(events, dialect) is None
        or prior_overflow_failures >= config.max_overflow_retries
    ):
        return OverflowDecision(events=(), retry=False)
    run = compact_if_needed(
        events, summarizer, dialect=dialect, trigger=Trigger.CONTEXT_OVERFLOW, config=config, prune=prune, ids=ids,
        time=time,
    )
    if isinstance(run, Rejected):
        return OverflowDecision(events=(), retry=False, error=run)
    advanced = any(e.surface_op is not ABSENT and isinstance(e.surface_op, JsonObject) for e in run.events)
    return OverflowDecision(events=run.events, retry=advanced and not (aborted and stops_when_aborted(AbortPoint.OVERFLOW_RECOVERY)),
                          error=run.error)

