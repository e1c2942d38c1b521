"""Decision outcomes of compaction's obligations under a deployment no other test took (issue 43 item 1):
CMP-8's pressure decision at its threshold (equal compacts), CMP-7's overflow gate (auto, maxOverflowRetries),
CMP-9's prune-before-summary, CMP-8's logged window, PRN-4's prune pass and PRN-3's pruned content, CMP-8's
retry loop (P-CMP-12).

The logs are tests/support's tiny builders, measured by the model's meter (MTR-10); the expected action is
reasoned from CMP-8 ("if total < thresholdTokens: no compaction"; else prune first, PRN-4, then a range,
CMP-11) with the threshold chosen from the measured total.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionspec.model.compaction.obligation import (
    Action,
    Expectation,
    decide_logged_window,
    decide_overflow_point,
    decide_pressure_point,
    decide_prune_pass,
    decide_pruned_content,
    decide_retry,
    decide_selected_range,
    overflow_expectation,
    pressure_expectation,
    prunable_results,
    retry_expectation,
    transaction_failed,
)
from sessionspec.model.compaction.policy import CompactConfig
from sessionspec.model.deployment import Deployment, ModelCapabilities
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.meter import MeterState, measure_state, meter_state
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from tests.support import BUSY_LOG_PRUNE, Log, busy_log


def _measured(log: Log) -> tuple[MeterState, Event, int]:
    meter = meter_state(log.events)
    assert isinstance(meter, MeterState)
    header = next(e for e in reversed(log.events) if e.type == "request/header")
    return meter, header, measure_state(meter).total_tokens


def _deployment(window: int, prune: PruneConfig | None = None, **config: object) -> Deployment:
    return Deployment(compaction=CompactConfig(**config), prune=prune,  # type: ignore[arg-type]
                      models=(ModelCapabilities(provider="p", model="m", context_window=window),))


# ---------------------------------------------------------------- CMP-8: the pressure decision


def test_CMP_8_a_total_equal_to_the_threshold_compacts_one_below_does_not() -> None:
    """"if total < thresholdTokens → no compaction": at equality the range is due (thresholdRatio 1: the threshold
    is the window)."""
    log = busy_log()
    meter, header, total = _measured(log)
    at = pressure_expectation(meter, header, log.events, _deployment(total, threshold_ratio=1.0, retain_tokens=1), Dialect.A55)
    above = pressure_expectation(meter, header, log.events, _deployment(total + 1, threshold_ratio=1.0, retain_tokens=1), Dialect.A55)
    assert at is not None and above is not None
    assert (at.total, at.threshold, at.action) == (total, total, Action.COMPACTION)
    assert (above.threshold, above.action) == (total + 1, Action.NOTHING)


def test_CMP_4_a_retain_at_or_above_the_threshold_decides_nothing() -> None:
    """CMP-4: ``retain >= threshold`` is a TargetPressureConfigError: no pressure decision is made."""
    log = busy_log()
    meter, header, _ = _measured(log)
    assert pressure_expectation(meter, header, log.events, _deployment(100, threshold_ratio=0.5, retain_tokens=50), Dialect.A55) is None


def test_CMP_10_a_surface_the_range_selection_refuses_decides_nothing() -> None:
    """A tool result with no call before it is a corrupt surface to CMP-10's balance walk: no first write is known."""
    log = Log()
    log.user("hello " * 50)
    log.header()
    log.add("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": [{"type": "text", "text": "x" * 80}], "isError": False}, op="append")
    meter, header, total = _measured(log)
    assert pressure_expectation(meter, header, log.events, _deployment(total, threshold_ratio=1.0, retain_tokens=1), Dialect.A55) is None


def _expected(action: Action) -> Expectation:
    return Expectation(action=action, total=900, threshold=800, target="p/m", detail="why")


def test_CMP_8_compaction_with_no_selectable_range_is_refused() -> None:
    for acted in (Action.COMPACTION, Action.NO_RANGE):
        found = decide_pressure_point(_expected(Action.NO_RANGE), acted, 12, Dialect.A55)
        assert isinstance(found, Rejected) and found.rule == "CMP-8" and "no selectable range" in found.reason
    assert decide_pressure_point(_expected(Action.NO_RANGE), Action.NOTHING, 12, Dialect.A55) is None


# ---------------------------------------------------------------- CMP-7 and CMP-9: overflow recovery


def test_CMP_7_no_header_no_configuration_or_no_target_decides_nothing() -> None:
    log = busy_log()
    meter, header, _ = _measured(log)
    deployment = _deployment(10_000)
    assert overflow_expectation(meter, None, log.events, deployment, Dialect.A55, 0) is None
    assert overflow_expectation(meter, header, log.events, Deployment(), Dialect.A55, 0) is None
    unrouted = make_event("request/header", seq=99, time=0, data=freeze({"reason": "initial", "header": {"config": {"provider": "", "model": "m"}}}))
    assert overflow_expectation(meter, unrouted, log.events, deployment, Dialect.A55, 0) is None


def test_CMP_7_recovery_is_not_due_with_auto_off_or_the_retries_spent() -> None:
    log = busy_log()
    meter, header, _ = _measured(log)
    off = overflow_expectation(meter, header, log.events, _deployment(10_000, auto=False), Dialect.A55, 0)
    assert off is not None and (off.action, off.detail) == (Action.NOTHING, "auto is off")
    for prior in (2, 3):
        spent = overflow_expectation(meter, header, log.events, _deployment(10_000, max_overflow_retries=2), Dialect.A55, prior)
        assert spent is not None and spent.action is Action.NOTHING
        assert spent.detail == f"{prior} earlier overflow(s) reach maxOverflowRetries 2"
    due = overflow_expectation(meter, header, log.events, _deployment(10_000, max_overflow_retries=2), Dialect.A55, 1)
    assert due is not None and due.action is not Action.NOTHING


def test_CMP_9_with_no_range_and_nothing_to_prune_the_detail_is_the_budget() -> None:
    """Overflow recovery compacts with retain 0 (CMP-9); a surface of one user message has no range (CMP-11: the tail
    keeps a node), so nothing is written and the detail is the overflow budget alone."""
    log = Log()
    log.user("hello")
    log.header()
    meter, header, _ = _measured(log)
    found = overflow_expectation(meter, header, log.events, _deployment(10_000), Dialect.A55, 0)
    assert found is not None and (found.action, found.detail) == (Action.NO_RANGE, "overflow 1 with maxOverflowRetries 1")


def test_CMP_9_a_due_recovery_prunes_first_then_selects_with_retain_0_and_says_its_budget() -> None:
    """CMP-9: a due recovery runs the prune pass first (PRN-4: busy_log's four 400-character results exceed
    thresholdChars 100), else selects with retainTokens 0: CMP-11 keeps the last node (seq 21, a result), which
    would split its step's call (seq 19) from it, so the cut moves head-ward and the range is 1..16.  The
    expectation names the routed target ``p/m`` (CMP-5), the measured total, no threshold (an overflow is not a
    pressure decision), and the budget: this overflow's number (the earlier ones plus one) against
    maxOverflowRetries."""
    log = busy_log()
    meter, header, total = _measured(log)
    pruning = overflow_expectation(meter, header, log.events, _deployment(10_000, prune=BUSY_LOG_PRUNE), Dialect.A55, 0)
    assert pruning == Expectation(action=Action.PRUNE, total=total, threshold=0, target="p/m",
                                  detail="overflow 1 with maxOverflowRetries 1; tool results at seq 6, 11, 16, 21 exceed thresholdChars")
    compacting = overflow_expectation(meter, header, log.events, _deployment(10_000, max_overflow_retries=3), Dialect.A55, 1)
    assert compacting == Expectation(action=Action.COMPACTION, total=total, threshold=0, target="p/m",
                                     detail="overflow 2 with maxOverflowRetries 3; range 1..16 is selectable (retainTokens 0)")


def test_CMP_7_a_pass_the_prune_refuses_decides_nothing() -> None:
    """A prune configuration PRN-1 refuses (a marker longer than its threshold): the pass fails its post-condition."""
    log = busy_log()
    meter, header, _ = _measured(log)
    bad = PruneConfig(threshold_chars=5, head_chars=0, tail_chars=0)
    assert prunable_results(log.events, meter.surface.seqs, bad, Dialect.A55) is None
    assert overflow_expectation(meter, header, log.events, _deployment(10_000, prune=bad), Dialect.A55, 0) is None


def test_CMP_9_a_summary_before_the_due_prune_is_refused() -> None:
    found = decide_overflow_point(_expected(Action.PRUNE), Action.COMPACTION, 30, Dialect.A55)
    assert isinstance(found, Rejected) and found.rule == "CMP-9" and "before the prune pass" in found.reason
    assert decide_overflow_point(_expected(Action.PRUNE), Action.PRUNE, 30, Dialect.A55) is None


@pytest.mark.parametrize(("dialect", "rule", "after", "counted"), [
    (Dialect.A55, "CMP-7", "failed step", "earlier overflow(s)"),
    (Dialect.D08, "DIA-7", "failed attempt", "earlier recovery(ies) that retried"),
])
def test_CMP_7_and_DIA_7_name_the_dialect_s_overflow_point(dialect: Dialect, rule: str, after: str, counted: str) -> None:
    """A recovery that had to run and wrote nothing, or ran with the budget spent: CMP-7 after an A55 failed step,
    DIA-7 (which overrides CMP-7) after a D08 failed attempt, whose budget counts the recoveries that retried
    (compact-basic index.ts:188-189 at 611615650f); a summary before the due prune is CMP-9 in both."""
    log = busy_log()
    meter, header, total = _measured(log)
    spent = overflow_expectation(meter, header, log.events, _deployment(10_000, max_overflow_retries=1), dialect, 1)
    assert spent is not None and (spent.action, spent.detail) == (Action.NOTHING, f"1 {counted} reach maxOverflowRetries 1")
    assert decide_overflow_point(spent, Action.COMPACTION, 40, dialect) == Rejected(
        rule=rule, seq=40, reason=f"overflow recovery ran though 1 {counted} reach maxOverflowRetries 1")
    assert decide_overflow_point(spent, Action.NOTHING, 40, dialect) is None
    due = Expectation(action=Action.COMPACTION, total=total, threshold=0, target="p/m", detail="overflow 1 with maxOverflowRetries 1")
    assert decide_overflow_point(due, Action.NOTHING, 41, dialect) == Rejected(
        rule=rule, seq=41, reason=f"overflow recovery had to run after this {after} and wrote nothing "
                                  f"(overflow 1 with maxOverflowRetries 1; {total} estimated tokens for p/m)")
    assert decide_overflow_point(due, Action.COMPACTION, 41, dialect) is None
    before_prune = decide_overflow_point(_expected(Action.PRUNE), Action.COMPACTION, 42, dialect)
    assert before_prune == Rejected(rule="CMP-9", seq=42, reason=f"a summary ran before the prune pass due after this {after} (why)")


# ---------------------------------------------------------------- CMP-8: the logged context window


def _context(data: dict[str, object]) -> Event:
    return make_event("request/context", seq=4, time=0, data=freeze(data))


@pytest.mark.parametrize("data", [
    {"provider": 1, "model": "m", "contextWindow": 5}, {"provider": "p", "model": None, "contextWindow": 5},
    {"provider": "p", "model": "m", "contextWindow": "5"}, {"provider": "p", "model": "m", "contextWindow": True},
    {"provider": "p", "model": "m"}, {"provider": "q", "model": "m", "contextWindow": 5},
], ids=["provider", "model", "window-string", "window-bool", "no-window", "undeclared-model"])
def test_CMP_8_a_window_the_log_or_the_deployment_does_not_state_is_not_compared(data: dict[str, object]) -> None:
    assert decide_logged_window(_context(data), _deployment(10)) is None


def test_CMP_8_a_logged_window_other_than_the_declared_one_is_refused() -> None:
    found = decide_logged_window(_context({"provider": "p", "model": "m", "contextWindow": 5}), _deployment(10))
    assert isinstance(found, Rejected) and found.rule == "CMP-8" and found.seq == 4
    assert decide_logged_window(_context({"provider": "p", "model": "m", "contextWindow": 10}), _deployment(10)) is None


# ---------------------------------------------------------------- PRN-4 and PRN-3 under the configured thresholds


@pytest.mark.parametrize(("due", "pruned", "words"), [
    ((3, 5), (), "did not prune seq 3, 5 under"),
    ((), (3, 5), "pruned seq 3, 5, within thresholdChars under"),
    ((3,), (5,), "did not prune seq 3 and pruned seq 5, within thresholdChars"),
    ((3,), (3, 3), "pruned a result twice"),
], ids=["missing", "extra", "both", "twice"])
def test_PRN_4_the_pass_prunes_exactly_the_due_results_once(due: tuple[int, ...], pruned: tuple[int, ...], words: str) -> None:
    found = decide_prune_pass(due, pruned, 9)
    assert isinstance(found, Rejected) and found.rule == "PRN-4" and words in found.reason
    assert decide_prune_pass((5, 3), (3, 5), 9) is None


def test_PRN_3_a_replacement_of_content_within_the_threshold_is_no_prune() -> None:
    """pruneContent is none within thresholdChars: any replacement of such a result is not pruneContent's."""
    log = busy_log(size=50)
    original = next(e for e in log.events if e.type == "tool/result")
    found = decide_pruned_content(original, original, BUSY_LOG_PRUNE, Dialect.A55)
    assert isinstance(found, Rejected) and found.rule == "PRN-3"


# ---------------------------------------------------------------- CMP-12 (P-CMP-4): the range at the deployment's retainTokens


def test_CMP_12_the_bracket_records_the_range_selected_at_the_deployments_retain_tokens() -> None:
    """The expectation carries ``select_range`` at the policy's retainTokens; the summary's range must equal it: one
    node shorter or longer (or another start) is refused, the same range accepted, and an expectation with no range
    (no bracket due) decides nothing."""
    log = busy_log()
    meter, header, total = _measured(log)
    expected = pressure_expectation(meter, header, log.events, _deployment(total, threshold_ratio=1.0, retain_tokens=1), Dialect.A55)
    assert expected is not None and expected.action is Action.COMPACTION and expected.selected is not None
    assert expected.retain_tokens == 1
    nodes = list(meter.surface.seqs)
    start, end = expected.selected.start, expected.selected.end
    assert start == nodes[0]

    def summary(first: int, last: int) -> Event:
        return make_event("compact/summary", seq=99, time=0, data=freeze({"shadowedRange": {"start": first, "end": last}}))

    assert decide_selected_range(expected, summary(start, end)) is None
    for first, last in ((start, nodes[nodes.index(end) - 1]), (start, nodes[nodes.index(end) + 1]), (nodes[1], end)):
        bad = decide_selected_range(expected, summary(first, last))
        assert bad is not None and (bad.rule, bad.seq) == ("CMP-12", 99)
        assert bad.reason == (f"compaction range {first}..{last} is not the one the retention walk selects with the deployment's "
                              f"retainTokens 1 for p/m ({start}..{end})")
    nothing = Expectation(action=Action.NOTHING, total=total, threshold=total + 1, target="p/m")
    assert decide_selected_range(nothing, summary(nodes[1], end)) is None


# ---------------------------------------------------------------- P-CMP-12: CMP-8's loop after each write


def _loop_point() -> tuple[Log, MeterState, Expectation]:
    """The busy log at thresholdRatio 1 with the window its total: a range is due (CMP-8), compactionRetries 1."""
    log = busy_log()
    meter, header, total = _measured(log)
    point = pressure_expectation(meter, header, log.events, _deployment(total, threshold_ratio=1.0, retain_tokens=1, compaction_retries=1),
                                 Dialect.A55)
    assert point is not None and point.action is Action.COMPACTION and point.retries == 1
    return log, meter, point


def test_P_CMP_12_another_transaction_is_due_while_over_the_threshold_with_attempts_left() -> None:
    """"for attempt in 0..compactionRetries: select ...; re-measure; if total < threshold return": with 0 or 1 of
    compactionRetries 1 + 1 transactions made and the total at the threshold (not below it), the next is due, on the
    range selected at retainTokens; after 2 none may follow."""
    log, meter, point = _loop_point()
    for made in (0, 1):
        due = retry_expectation(point, meter, log.events, Dialect.A55, made, False)
        assert due is not None and due.action is Action.COMPACTION and due.selected == point.selected
        assert (due.total, due.threshold) == (point.total, point.total)
        assert due.detail.startswith(f"after {made} of compactionRetries 1 + 1 transactions the total is still at or over the threshold")
    spent = retry_expectation(point, meter, log.events, Dialect.A55, 2, False)
    assert spent is not None and (spent.action, spent.detail, spent.selected) == (Action.NOTHING, "compactionRetries 1 + 1 transactions ran", None)


def test_P_CMP_12_no_transaction_follows_below_the_threshold_or_after_a_failed_one() -> None:
    """One token under the threshold the call returns; a failed transaction re-raises (CMP-23) even over it."""
    log, meter, point = _loop_point()
    below = retry_expectation(replace(point, threshold=point.total + 1), meter, log.events, Dialect.A55, 1, False)
    assert below is not None and (below.action, below.detail) == (Action.NOTHING, "the total measured after its last write is below the threshold")
    failed = retry_expectation(point, meter, log.events, Dialect.A55, 0, True)
    assert failed is not None and (failed.action, failed.detail) == (Action.NOTHING, "its last transaction failed, which ends the call (CMP-23)")


def test_P_CMP_12_the_loop_stops_with_no_range_and_decides_nothing_on_a_surface_the_selection_refuses() -> None:
    """CMP-11: a surface of one user message has no range ("if none → ... stop looping"); a result with no call is a
    corrupt surface to the balance walk: no decision."""
    alone = Log()
    alone.user("hello " * 50)
    alone.header()
    meter, _, total = _measured(alone)
    point = Expectation(action=Action.COMPACTION, total=total, threshold=1, target="p/m", retain_tokens=1, retries=3)
    none = retry_expectation(point, meter, alone.events, Dialect.A55, 1, False)
    assert none is not None and (none.action, none.detail) == (Action.NOTHING, "no range is selectable (retainTokens 1)")
    corrupt = Log()
    corrupt.user("hello " * 50)
    corrupt.header()
    corrupt.add("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": [{"type": "text", "text": "x" * 80}], "isError": False}, op="append")
    meter, _, _ = _measured(corrupt)
    assert retry_expectation(point, meter, corrupt.events, Dialect.A55, 1, False) is None


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_P_CMP_12_a_bracket_follows_exactly_when_one_is_due(dialect: Dialect) -> None:
    due = Expectation(action=Action.COMPACTION, total=900, threshold=800, target="p/m", detail="after 1 of ...")
    over = Expectation(action=Action.NOTHING, total=700, threshold=800, target="p/m", detail="the total is below")
    assert decide_retry(due, Action.COMPACTION, 40, dialect) is None
    assert decide_retry(over, Action.NOTHING, 40, dialect) is None
    where = "post-step (CMP-6)" if dialect is Dialect.A55 else "pre-step (DIA-6)"
    missing = decide_retry(due, Action.NOTHING, 40, dialect)
    assert missing == Rejected(rule="CMP-8", seq=40, reason=f"compaction stopped at this {where} point though another transaction was due "
                                                            "(900 estimated tokens, threshold 800 for p/m: after 1 of ...)")
    extra = decide_retry(over, Action.COMPACTION, 41, dialect)
    assert extra == Rejected(rule="CMP-8", seq=41, reason=f"another compaction ran at this {where} point though the total is below "
                                                          "(700 estimated tokens, threshold 800 for p/m)")


def test_CMP_23_a_bracket_end_with_an_error_is_a_failed_transaction() -> None:
    def end(data: dict[str, object]) -> Event:
        return make_event("compact/end", seq=5, time=0, data=freeze(data))  # type: ignore[arg-type]

    assert transaction_failed(end({"turn": 1, "error": "summary is not smaller"}))
    assert not transaction_failed(end({"turn": 1}))
