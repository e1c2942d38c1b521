"""What compaction had to do at a trigger point, under a deployment's configuration (issue 44, item 3).

A log shows where compaction ran, not the configuration it ran under: with the deployment's facts
(:mod:`sessionspec.model.deployment`) the meter's figure at a trigger point (MTR-10, over the log's own
events: the surface it records, the usage it reports) decides what ``compactIfNeeded(pressure)`` had to
write first there, and the log is held to it.  The decisions read only what CMP-8 reads: the routed
target (CMP-5), the policy and spec (CMP-4), the measurement (MTR-10), the prune pass (PRN-4) and the
range selection (CMP-11); each is that rule's own definition, run here on the log's state.  The range a
bracket written there records is then the one selected (CMP-12, P-CMP-4: :func:`decide_selected_range`), and
after each of the point's writes CMP-8's loop decides whether another transaction follows (P-CMP-12:
:func:`retry_expectation`, :func:`decide_retry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import final

from sessionspec.model.compaction.policy import compact_spec, routed_target, target_policy
from sessionspec.model.compaction.records import Range
from sessionspec.model.compaction.retention import select_range
from sessionspec.model.compaction.trigger_points import point_rules
from sessionspec.model.deployment import Deployment
from sessionspec.model.jsonval import ABSENT, get, json_eq
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import MeterState, measure_state
from sessionspec.model.prune import PruneConfig, prune_content, prune_pass, tool_result_content
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides


class Action(Enum):
    """What ``compactIfNeeded(pressure)`` writes first at a trigger point."""

    NOTHING = "nothing"  # below the threshold, or auto off: no event
    PRUNE = "prune"  # a prune pass (PRN-4) before any summary
    COMPACTION = "compaction"  # a region transaction: a bracket (CMP-13..23)
    NO_RANGE = "no range"  # above the threshold, nothing to prune and no selectable range: no event


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Expectation:
    """The first action due at a trigger point and the figures that decide it (for the finding's words)."""

    action: Action
    total: int
    threshold: int
    target: str
    detail: str = ""
    # COMPACTION: the range the retention walk selects at the policy's retainTokens (CMP-11), and that figure.
    selected: Range | None = None
    retain_tokens: int = 0
    # A pressure point's: the policy's compactionRetries, CMP-8's bound of its transactions (P-CMP-12).
    retries: int = 0


def pressure_expectation(meter: MeterState, header_event: Event | None, surface: Sequence[Event],
                         deployment: Deployment, dialect: Dialect) -> Expectation | None:
    """CMP-8's steps up to its first write, on the log's state at a trigger point: ``meter`` folded over
    the log so far, ``header_event`` the latest ``request/header``, ``surface`` the log before the point
    (its surface nodes readable by seq).  None when the deployment does not state what the decision needs
    (the compaction configuration, the target's context window) or the log gives no routed target (CMP-5:
    no compaction, which the log-alone rules already decide)."""
    config = deployment.compaction
    target = None if header_event is None else routed_target((header_event,), dialect)
    if config is None or target is None:
        return None
    window = deployment.context_window(target.provider, target.model)
    name = f"{target.provider}/{target.model}"
    if window is None:
        return None
    policy = target_policy(config, target.provider, target.model)
    spec = compact_spec(policy, window, name)
    if isinstance(spec, Rejected):
        return None
    total = measure_state(meter).total_tokens

    def expect(action: Action, detail: str = "", selected: Range | None = None) -> Expectation:
        return Expectation(action=action, total=total, threshold=spec.threshold_tokens, target=name, detail=detail,
                           selected=selected, retain_tokens=spec.retain_tokens, retries=policy.compaction_retries)

    if not policy.auto or total < spec.threshold_tokens:
        return expect(Action.NOTHING)
    due = _first_write(meter, surface, deployment, dialect, spec.retain_tokens)
    return None if due is None else expect(*due)


@decides("CMP-6", "CMP-8", "DIA-6", "P-CMP-9")
def decide_pressure_point(expected: Expectation, acted: Action, seq: int, dialect: Dialect) -> Rejected | None:
    """Whether what the log shows at a pressure trigger point (``acted``: the first compaction event
    there, at ``seq``; NOTHING when none) is what ``compactIfNeeded(pressure)`` had to write
    (``expected``).  CMP-6 (A55; DIA-6 in D08) names a trigger point where compaction had to write
    (a prune pass or a bracket) and wrote nothing; CMP-8 one where it ran though the measurement was
    below the threshold, had no range to compact, or summarized before the prune it must run first.  The point's
    rule and name are the dialect's (:func:`sessionspec.model.compaction.trigger_points.point_rules`)."""
    places = point_rules(dialect).places
    where = places.where
    figures = f"{expected.total} estimated tokens, threshold {expected.threshold} for {expected.target}"
    match expected.action, acted:
        case (Action.NOTHING, Action.NOTHING) | (Action.NO_RANGE, Action.NOTHING | Action.PRUNE) | (Action.PRUNE, Action.PRUNE):
            return None
        case (Action.COMPACTION, Action.COMPACTION | Action.PRUNE):
            return None
        case (Action.PRUNE | Action.COMPACTION, Action.NOTHING):
            what = "a prune pass" if expected.action is Action.PRUNE else "a compaction"
            return Rejected(rule=places.rule, seq=seq, reason=f"compaction had to run at this {where} point and wrote nothing ({figures}: {what} was due, {expected.detail})")
        case (Action.NOTHING, _):
            return Rejected(rule="CMP-8", seq=seq, reason=f"compaction ran at a {where} point below its threshold ({figures})")
        case (Action.NO_RANGE, _):
            return Rejected(rule="CMP-8", seq=seq, reason=f"compaction ran at a {where} point with no selectable range ({figures})")
        case _:
            return Rejected(rule="CMP-8", seq=seq, reason=f"a summary ran before the prune pass due at this {where} point ({figures}; {expected.detail})")


def overflow_expectation(meter: MeterState, header_event: Event | None, surface: Sequence[Event], deployment: Deployment,
                         dialect: Dialect, prior_overflows: int) -> Expectation | None:
    """CMP-7's gate and CMP-9's steps up to the first write, after a failed step whose logged failure is
    ``CONTEXT_WINDOW_EXCEEDED`` (``prior_overflows``: the earlier ones in its ``priorFailures``, LOOP-14; D08,
    DIA-7: the earlier recoveries that retried, :func:`sessionspec.model.compaction.trigger_points.d08_overflow_step`).
    None when the deployment does not state the configuration or the log gives no routed target (CMP-5)."""
    config = deployment.compaction
    target = None if header_event is None else routed_target((header_event,), dialect)
    if config is None or target is None:
        return None
    name = f"{target.provider}/{target.model}"
    budget = f"overflow {prior_overflows + 1} with maxOverflowRetries {config.max_overflow_retries}"

    def expect(action: Action, detail: str) -> Expectation:
        return Expectation(action=action, total=measure_state(meter).total_tokens, threshold=0, target=name, detail=detail)

    if not config.auto or prior_overflows >= config.max_overflow_retries:
        counted = point_rules(dialect).counted
        why = "auto is off" if not config.auto else f"{prior_overflows} {counted} reach maxOverflowRetries {config.max_overflow_retries}"
        return expect(Action.NOTHING, why)
    due = _first_write(meter, surface, deployment, dialect, 0)
    if due is None:
        return None
    action, detail, _ = due
    return expect(action, f"{budget}; {detail}" if detail else budget)


def _first_write(meter: MeterState, surface: Sequence[Event], deployment: Deployment, dialect: Dialect,
                 retain_tokens: int) -> tuple[Action, str, Range | None] | None:
    """What ``compactIfNeeded`` writes first once it must act, and why: the prune pass when it prunes something
    (PRN-4, before any summary), else the range CMP-11 selects keeping ``retain_tokens`` (returned with it), else no
    range; None when the prune pass or the selection refuses the log."""
    nodes = meter.surface.seqs
    if deployment.prune is not None:
        pruned = prunable_results(surface, nodes, deployment.prune, dialect)
        if pruned is None:
            return None
        if pruned:
            return Action.PRUNE, f"tool results at seq {', '.join(map(str, pruned))} exceed thresholdChars", None
    selected = select_range([(node.seq, node.tokens) for node in meter.nodes], nodes, surface, retain_tokens, dialect)
    if isinstance(selected, Rejected):
        return None
    if selected is None:
        return Action.NO_RANGE, "", None
    return Action.COMPACTION, f"range {selected.start}..{selected.end} is selectable (retainTokens {retain_tokens})", selected


@decides("CMP-12", "P-CMP-4")
def decide_selected_range(expected: Expectation, summary: Event) -> Rejected | None:
    """P-CMP-4: "Automatic ranges are head-anchored; the retained suffix is the shortest with tokens ≥
    retainTokens, rounded head-ward to a balanced cut; never the whole surface".

    With the deployment's ``retainTokens`` the range is no longer one of many: the summary of the bracket a
    pressure point wrote first (``expected``: :func:`pressure_expectation`, COMPACTION) records exactly the
    range :func:`~sessionspec.model.compaction.retention.select_range` selected there."""
    rng = get(summary.data, "shadowedRange")
    logged = (get(rng, "start"), get(rng, "end"))
    selected = expected.selected
    if selected is None or logged == (selected.start, selected.end):
        return None
    return Rejected(rule="CMP-12", seq=summary.seq,
                    reason=f"compaction range {logged[0]}..{logged[1]} is not the one the retention walk selects with the deployment's "
                           f"retainTokens {expected.retain_tokens} for {expected.target} ({selected.start}..{selected.end})")


def retry_expectation(point: Expectation, meter: MeterState, surface: Sequence[Event], dialect: Dialect,
                      made: int, failed: bool) -> Expectation | None:
    """CMP-8's loop after a pressure point's last write, on the log's state after it: ``point`` is the point's
    :func:`pressure_expectation`, ``made`` the region transactions it ran so far (0 after its prune pass),
    ``failed`` whether the last one closed with an error.  A failed transaction ends the call (CMP-23
    re-raises); else re-measure: below the threshold the call returns; after ``compactionRetries + 1``
    transactions the loop is over; else the next attempt selects a range with ``retainTokens`` (CMP-11), and
    none stops it.  COMPACTION (with the range) when another transaction is due, NOTHING when none may follow;
    None when the selection refuses the log."""
    total = measure_state(meter).total_tokens

    def expect(action: Action, detail: str, selected: Range | None = None) -> Expectation:
        return replace(point, action=action, total=total, detail=detail, selected=selected)

    if failed:
        return expect(Action.NOTHING, "its last transaction failed, which ends the call (CMP-23)")
    if total < point.threshold:
        return expect(Action.NOTHING, "the total measured after its last write is below the threshold")
    if made > point.retries:
        return expect(Action.NOTHING, f"compactionRetries {point.retries} + 1 transactions ran")
    nodes = meter.surface.seqs
    selected = select_range([(node.seq, node.tokens) for node in meter.nodes], nodes, surface, point.retain_tokens, dialect)
    if isinstance(selected, Rejected):
        return None
    if selected is None:
        return expect(Action.NOTHING, f"no range is selectable (retainTokens {point.retain_tokens})")
    return expect(Action.COMPACTION, f"after {made} of compactionRetries {point.retries} + 1 transactions the total is still at "
                                     f"or over the threshold and range {selected.start}..{selected.end} is selectable", selected)


@decides("CMP-8", "P-CMP-12")
def decide_retry(due: Expectation, acted: Action, seq: int, dialect: Dialect) -> Rejected | None:
    """P-CMP-12: "At most `compactionRetries + 1` transactions per pressure call; committed ones persist on the
    final error".

    With the deployment's threshold and ``compactionRetries`` the number is exact: at the event after a
    pressure point's last write (at ``seq``; ``acted`` is COMPACTION when it starts another bracket) another
    transaction follows exactly when CMP-8's loop runs one (``due``: :func:`retry_expectation`).  Findings
    name CMP-8, the rule whose loop it is."""
    more = acted is Action.COMPACTION
    if more == (due.action is Action.COMPACTION):
        return None
    where = point_rules(dialect).places.where
    figures = f"{due.total} estimated tokens, threshold {due.threshold} for {due.target}"
    if more:
        return Rejected(rule="CMP-8", seq=seq, reason=f"another compaction ran at this {where} point though {due.detail} ({figures})")
    return Rejected(rule="CMP-8", seq=seq, reason=f"compaction stopped at this {where} point though another transaction was due "
                                                  f"({figures}: {due.detail})")


def transaction_failed(end: Event) -> bool:
    """CMP-23: a failed transaction closes its bracket with ``compact/end {turn, error}`` (DIA-1's
    ``compaction/end`` in D08); a committed one without ``error``."""
    return get(end.data, "error") is not ABSENT


@decides("CMP-7", "CMP-9", "DIA-7")
def decide_overflow_point(expected: Expectation, acted: Action, seq: int, dialect: Dialect) -> Rejected | None:
    """Whether what the log shows after a failed step whose failure is ``CONTEXT_WINDOW_EXCEEDED`` (D08: a failed
    attempt, DIA-7) (``acted``: its first compaction event, at ``seq``; NOTHING when none) is what the overflow
    recovery had to write (``expected``, :func:`overflow_expectation`).  A recovery the range selection declines
    (NO_RANGE) writes nothing, and the range a bracket takes is CMP-9's, decided from the log alone.  The point's
    rule and name are the dialect's (:func:`sessionspec.model.compaction.trigger_points.point_rules`)."""
    places = point_rules(dialect).places
    rule, after = places.overflow_rule, places.overflow_what
    match expected.action, acted:
        case (Action.PRUNE | Action.COMPACTION, Action.NOTHING):
            return Rejected(rule=rule, seq=seq, reason=f"overflow recovery had to run after this {after} and wrote nothing "
                                                       f"({expected.detail}; {expected.total} estimated tokens for {expected.target})")
        case (Action.NOTHING, Action.PRUNE | Action.COMPACTION):
            return Rejected(rule=rule, seq=seq, reason=f"overflow recovery ran though {expected.detail}")
        case (Action.PRUNE, Action.COMPACTION):
            return Rejected(rule="CMP-9", seq=seq, reason=f"a summary ran before the prune pass due after this {after} ({expected.detail})")
        case _:
            return None


@decides("CMP-8")
def decide_logged_window(context: Event, deployment: Deployment) -> Rejected | None:
    """CMP-8 resolves "the model's context window"; a D08 log records the one the writer resolved
    (``request/context {provider, model, contextWindow?}``, DIA-9).  When the deployment declares another
    for the same model, the writer measured pressure against a window the deployment does not have."""
    provider, model, logged = get(context.data, "provider"), get(context.data, "model"), get(context.data, "contextWindow")
    if not isinstance(provider, str) or not isinstance(model, str) or not isinstance(logged, int) or isinstance(logged, bool):
        return None
    declared = deployment.context_window(provider, model)
    if declared is None or declared == logged:
        return None
    return Rejected(rule="CMP-8", seq=context.seq,
                    reason=f"request/context records contextWindow {logged} for {provider}/{model}; the deployment declares {declared}")


def prunable_results(surface: Sequence[Event], nodes: Sequence[int], config: PruneConfig, dialect: Dialect) -> tuple[int, ...] | None:
    """The seqs a prune pass over the surface ``nodes`` prunes (PRN-4); None when the pass refuses the surface."""
    pruned = prune_pass(surface, config, dialect=dialect, nodes=nodes)
    return None if isinstance(pruned, Rejected) else tuple(p.original_seq for p in pruned.pruned)


@decides("PRN-4")
def decide_prune_pass(due: Sequence[int], pruned: Sequence[int], seq: int) -> Rejected | None:
    """PRN-4 with the configured thresholds: a prune pass replaces exactly the surface's tool results whose
    ``pruneContent`` is not none (``due``), each once (``pruned``: the seqs the pass at ``seq`` replaced)."""
    if sorted(pruned) == sorted(due):
        return None
    missing = sorted(set(due) - set(pruned))
    extra = sorted(set(pruned) - set(due))
    parts = ([f"did not prune seq {', '.join(map(str, missing))}"] if missing else []) + \
            ([f"pruned seq {', '.join(map(str, extra))}, within thresholdChars"] if extra else [])
    return Rejected(rule="PRN-4", seq=seq, reason=f"the prune pass {' and '.join(parts) or 'pruned a result twice'} under the deployment's prune configuration")


@decides("PRN-3")
def decide_pruned_content(original: Event, replacement: Event, config: PruneConfig, dialect: Dialect) -> Rejected | None:
    """PRN-3 with the configured thresholds: the replacement's content is ``pruneContent`` of the
    original's under the deployment's head and tail (the log alone only shows the marker's place)."""
    expected = prune_content(tool_result_content(original, dialect), config)
    if isinstance(expected, tuple) and json_eq(tool_result_content(replacement, dialect), expected):
        return None
    return Rejected(rule="PRN-3", seq=replacement.seq,
                    reason=f"pruned content is not pruneContent of seq {original.seq} under thresholdChars {config.threshold_chars}, "
                           f"headChars {config.head_chars}, tailChars {config.tail_chars}")
