"""The compaction contracts (model/compaction/contracts.py), called directly.

tests/proofs/test_proofs_whole.py checks them too, but through ``proofs/planted/hunt.py``, which evaluates a
contract in the function's globals and so cannot run under mutmut's trampolines (docs/quality.md); these tests
state the same properties without that indirection.  Expected values: on a real compaction the contracts hold
(CMP-22, CMP-23, CMP-24); on a forged one they name the broken rule.  The prune contracts are in test_prune.py,
HDR-4's clauses in test_header.py."""

from __future__ import annotations

from dataclasses import replace

from sessionspec.model.compaction import (
    CompactionRun,
    Range,
    RegionOutcome,
    RegionResult,
    Trigger,
    compact_if_needed,
    compact_region,
)
from sessionspec.model.compaction.contracts import (
    appended_in_order,
    checkpoint_is_one_range,
    region_holds,
    replace_ops,
    run_holds,
)
from sessionspec.model.jsonval import JsonObject, freeze, get, with_values
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from tests.support import BUSY_LOG_PRUNE, Log, busy_log, short


def _overflow_run() -> tuple[list[Event], CompactionRun]:
    log = busy_log()  # four 400-character tool results: the overflow run prunes them, then compacts once
    run = compact_if_needed(log.events, short, trigger=Trigger.CONTEXT_OVERFLOW, prune=BUSY_LOG_PRUNE)
    assert not isinstance(run, Rejected) and run.error is None and len(run.results) == 1
    return log.events, run


def test_CMP_22_PRN_4_a_real_overflow_run_keeps_its_contract() -> None:
    events, run = _overflow_run()
    types = [e.type for e in run.events]
    assert types.count("tool/result") == 4 and types.count("compact/start") == 1
    assert run_holds(events, run, Dialect.A55) is None
    (checkpoint,) = [e for e in replace_ops(run.events) if e.type != "tool/result"]
    assert checkpoint_is_one_range((*events, *run.events), checkpoint, Dialect.A55) is None


def test_CMP_22_a_real_region_keeps_its_contract_and_a_moved_range_breaks_it() -> None:
    log = busy_log()
    outcome = compact_region(log.events, 1, 6, short)
    assert not isinstance(outcome, Rejected) and outcome.result is not None
    summary = next(e for e in outcome.events if e.type == "compact/summary")
    assert get(summary.data, "shadowedRange") == freeze({"start": 1, "end": 6})
    assert region_holds(log.events, 1, 6, outcome, Dialect.A55) is None
    assert region_holds(log.events, 1, 11, outcome, Dialect.A55) == "CMP-22: the checkpoint does not replace the requested range 1..11"


def test_CMP_22_a_summary_at_seq_0_naming_another_range_breaks_the_checkpoint() -> None:
    """CMP-22: the summary the checkpoint cites names the range it replaces; a summary at seq 0 is cited too."""
    log = Log()
    log.add("compact/summary", {"turn": 1, "shadowedRange": {"start": 3, "end": 3}})
    log.add("turn/start", {"turn": 1})
    log.user("a")
    log.user("b")
    checkpoint = make_event("user/message", seq=4, time=0, data=freeze({"content": [{"type": "text", "text": "S"}], "source": {"kind": "user"}}),
                            source_event_seqs=freeze([1, 0, 2]), surface_op=freeze({"op": "replace", "start": 2, "end": 2}))
    assert checkpoint_is_one_range([*log.events, checkpoint], checkpoint, Dialect.A55) == \
        "the summary names the range (3, 3), the checkpoint replaces (2, 2)"


def test_CMP_24_a_request_header_among_the_appended_events_is_named() -> None:
    log = busy_log()
    header = make_event("request/header", seq=len(log.events), time=0, data=freeze({"header": {"config": {}}, "reason": "initial"}))
    assert appended_in_order(log.events, [header]) == "CMP-24: compaction wrote a request/header (the prefix, system or tools would change)"


def test_a_run_that_reports_fewer_compactions_than_it_wrote_checkpoints_breaks_its_contract() -> None:
    events, run = _overflow_run()
    failed = replace(run, results=())
    assert run_holds(events, failed, Dialect.A55) == "the run reports 0 compactions and wrote 1 checkpoints"


def _real_region() -> tuple[list[Event], RegionOutcome, RegionResult]:
    log = busy_log()
    outcome = compact_region(log.events, 1, 6, short)
    assert not isinstance(outcome, Rejected) and outcome.result is not None
    assert region_holds(log.events, 1, 6, outcome, Dialect.A55) is None
    return log.events, outcome, outcome.result


def test_CMP_22_a_region_whose_summary_names_another_range_breaks_its_contract() -> None:
    """CMP-22: the summary record names the range the checkpoint replaces; a summary that names another one is a
    violation even when the result and the checkpoint's citations agree with each other."""
    events, outcome, _ = _real_region()
    forged = tuple(replace(e, data=with_values(e.data, shadowedRange=freeze({"start": 1, "end": 5})))
                   if e.type == "compact/summary" and isinstance(e.data, JsonObject) else e for e in outcome.events)
    assert region_holds(events, 1, 6, replace(outcome, events=forged), Dialect.A55) == \
        "the summary names the range (1, 5), the checkpoint replaces (1, 6)"


def test_CMP_15_a_region_whose_result_prices_other_nodes_than_it_replaced_breaks_its_contract() -> None:
    """CMP-15/CMP-22: ``shadowedSeqs`` are the nodes the checkpoint cites after ``[start, summary]``; a result
    naming fewer is a violation although the checkpoint itself is one range."""
    events, outcome, result = _real_region()
    fewer = replace(outcome, result=replace(result, shadowed_seqs=result.shadowed_seqs[:-1]))
    assert region_holds(events, 1, 6, fewer, Dialect.A55) == "CMP-15: the priced nodes are not the replaced nodes"


def test_CMP_22_CMP_23_region_contract_clauses_each_name_their_rule() -> None:
    """A failed transaction (no result) holds when it replaced nothing (CMP-23) and breaks when it did; a result
    whose checkpoint is not the replace, or whose shadowedRange is not the replaced range, breaks CMP-22; an
    append out of seq order is named first."""
    events, outcome, result = _real_region()
    (checkpoint,) = replace_ops(outcome.events)
    assert region_holds(events, 1, 6, replace(outcome, result=None), Dialect.A55) == \
        "CMP-23: a failed compaction replaced part of the surface"
    without_replace = tuple(e for e in outcome.events if e.seq != checkpoint.seq)
    assert region_holds(events, 1, 6, replace(outcome, result=None, events=without_replace[:1]), Dialect.A55) is None
    assert region_holds(events, 1, 6, replace(outcome, result=replace(result, checkpoint_seq=checkpoint.seq + 1)),
                        Dialect.A55) == "CMP-22: a compaction must replace once, with its checkpoint"
    assert region_holds(events, 1, 6, replace(outcome, result=replace(result, shadowed_range=Range(start=1, end=5))),
                        Dialect.A55) == "CMP-22: the result's shadowedRange is not the replaced range"
    shifted = (replace(outcome.events[0], seq=outcome.events[0].seq + 1), *outcome.events[1:])
    assert region_holds(events, 1, 6, replace(outcome, events=shifted), Dialect.A55) == \
        f"the appended event 0 has seq {len(events) + 1}, not {len(events)}"
