"""``check --deployment FILE`` decides D08's overflow recovery inside the failed attempt's step (DIA-7; issue 44, item 3).

Each log is the D08 harness's own compaction-recovery log (611615650f, headless-agent) up to its failed attempt's
``CONTEXT_WINDOW_EXCEEDED`` finish (seq 18), continued by the model: its recoveries are the model's
``recover_overflow`` in the D08 dialect (the first writes, event for event, the bracket the harness wrote: range 4..4),
then the retry streams (the real retry, renumbered) or the failure is thrown (``step/end``, ``turn/end`` error,
agent.ts:386-387 and 292).  The planted faults are a writer configured otherwise than the deployment says: none
mounted (a recovery that had to run and did not), or a larger ``maxOverflowRetries`` (a recovery beyond the
deployment's budget, which compact-basic counts as recoveries that retried, index.ts:188-189, 206, 221).  Without the
deployment each log is valid; with it the verdict flips to invalid naming DIA-7.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sessionspec import api
from sessionspec.model.codec import serialize_event
from sessionspec.model.compaction import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactConfig,
    Summarizer,
    SummarizerOutput,
    SummaryCall,
    recover_overflow,
)
from sessionspec.model.compaction.records import Ids
from sessionspec.model.jsonval import Absent, Json, JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event, make_event
from tests.support import D08_HEADLESS, events_of_lines

REAL = D08_HEADLESS / "compaction-recovery" / "session.jsonl"
SESSION, *ROWS = REAL.read_text(encoding="utf-8").splitlines()
FAILED_FINISH = 18  # step 2's first attempt: finish {kind: error, failure: {code: CONTEXT_WINDOW_EXCEEDED}}
RETRY = 23  # the retry's first chunk, after the harness's recovery bracket (19..22)


EVENTS = events_of_lines(*ROWS)


def _summary(text: str) -> Summarizer:
    def summarize(call: SummaryCall) -> SummarizerOutput:
        return SummarizerOutput(summary=(freeze({"type": "text", "text": text}),), provider=call.provider, model=call.model,
                                max_tokens=call.max_tokens)
    return summarize


def _recovery(log: list[Event], prior: int, max_overflow_retries: int, text: str) -> tuple[Event, ...]:
    """The model's D08 overflow recovery on ``log`` (CMP-7's gate with ``prior`` earlier retries, CMP-9's steps)."""
    decision = recover_overflow(log, _summary(text), failure_code=CONTEXT_WINDOW_EXCEEDED, prior_overflow_failures=prior,
                                dialect=Dialect.D08, config=CompactConfig(max_overflow_retries=max_overflow_retries),
                                ids=lambda attempt: Ids(compaction_id=f"c{len(log)}", message_id=f"m{len(log)}"), time=log[-1].time)
    assert decision.retry and decision.error is None
    return decision.events


def _renumbered(events: list[Event], start: int) -> list[Event]:
    """``events`` moved to begin at seq ``start``, their citations moved with them."""
    by = start - events[0].seq
    def moved(cited: Json | Absent) -> Json | Absent:
        return tuple(s + by if isinstance(s, int) else s for s in cited) if isinstance(cited, tuple) else cited
    return [replace(e, seq=e.seq + by, source_event_seqs=moved(e.source_event_seqs)) for e in events]


def _thrown(log: list[Event], kind: str = "error") -> list[Event]:
    """The failure thrown after the listeners returned no retry: the step's end, then the turn's."""
    failure = get(get(get(EVENTS[FAILED_FINISH].data, "chunk"), "reason"), "failure")
    reason = {"kind": "error", "error": failure} if kind == "error" else {"kind": kind, "reason": {"kind": "user"}}  # DIA-14
    end = make_event("step/end", seq=len(log), time=log[-1].time, data=freeze({"turn": 1, "step": 2}))
    return [*log, end, make_event("turn/end", seq=len(log) + 1, time=log[-1].time, data=freeze({"turn": 1, "reason": reason}))]


def _retried(log: list[Event]) -> list[Event]:
    """The retry streamed and answered: the harness's retry, its message citing only its own chunks."""
    return [*log, *_renumbered(EVENTS[RETRY:], len(log))]


def _file(tmp_path: Path, name: str, log: list[Event]) -> str:
    path = tmp_path / name
    path.write_text(SESSION + "\n" + "".join(serialize_event(e) + "\n" for e in log), encoding="utf-8")
    return str(path)


def _deployment(tmp_path: Path, **compaction: object) -> api.Deployment:
    """The harness's target with the window its log records (no pre-step reaches CMP-3's threshold of it)."""
    target = {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 128000}
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps({"version": 1, "compaction": compaction, "prune": None, "models": [target]}), encoding="utf-8")
    return api.read_deployment_file(str(path))


def _flip(path: str, deployment: api.Deployment) -> list[tuple[str, int | None, str]]:
    """The findings with the deployment of a log valid without it."""
    alone = api.check_file(path)
    assert (alone.verdict, alone.findings) == (api.Verdict.VALID, ()), alone.findings
    decided = api.check_file(path, deployment=deployment)
    assert decided.verdict is (api.Verdict.INVALID if decided.findings else api.Verdict.VALID)
    return [(f.rule, f.seq, f.reason) for f in decided.findings]


def test_DIA_7_the_model_s_recovery_is_the_harness_s_bracket() -> None:
    """The first recovery, written by the model at the failed attempt, is the bracket the harness wrote there (its
    summarizer call's record aside): the same range, shadowed seqs and priced count, at the same seqs."""
    written = _recovery(EVENTS[:RETRY - 4], 0, 1, "The request established a durable compaction premise.")
    assert [(e.seq, e.type) for e in written] == [(e.seq, e.type) for e in EVENTS[RETRY - 4:RETRY]]
    summary, real = written[1].data, EVENTS[RETRY - 3].data
    assert isinstance(summary, JsonObject) and isinstance(real, JsonObject)
    assert [summary[k] for k in ("shadowedRange", "shadowedSeqs", "shadowedTokenCount")] == \
        [real[k] for k in ("shadowedRange", "shadowedSeqs", "shadowedTokenCount")]
    assert written[2].surface_op == EVENTS[RETRY - 2].surface_op


def test_DIA_7_the_harness_s_own_recovery_is_valid_with_its_configuration(tmp_path: Path) -> None:
    assert _flip(str(REAL), _deployment(tmp_path)) == []


@pytest.mark.parametrize(("compaction", "why"), [
    ({"maxOverflowRetries": 0}, "0 earlier recovery(ies) that retried reach maxOverflowRetries 0"),
    ({"auto": False}, "auto is off"),  # compact-basic registers its listeners only when auto (index.ts:129)
])
def test_DIA_7_a_recovery_the_deployment_does_not_allow(tmp_path: Path, compaction: dict[str, object], why: str) -> None:
    """The harness's log under a deployment that disables recovery: its bracket at seq 19 ran though none was allowed."""
    assert _flip(str(REAL), _deployment(tmp_path, **compaction)) == [("DIA-7", 19, f"overflow recovery ran though {why}")]


@pytest.mark.parametrize(("ending", "seq"), [("thrown", 20), ("retried", 19)])
def test_DIA_7_a_recovery_that_had_to_run_and_did_not(tmp_path: Path, ending: str, seq: int) -> None:
    """No compaction mounted: after the failed attempt the failure is thrown (decided at the turn's end), or another
    listener retried (decided at the retry's first chunk).  With maxOverflowRetries 1 and no earlier retry, CMP-9's
    selection with retainTokens 0 had range 4..4 to compact (the one the harness compacted)."""
    log = list(EVENTS[:FAILED_FINISH + 1])
    path = _file(tmp_path, f"{ending}.jsonl", _thrown(log) if ending == "thrown" else _retried(log))
    (found,) = _flip(path, _deployment(tmp_path))
    assert found[:2] == ("DIA-7", seq)
    assert found[2].startswith("overflow recovery had to run after this failed attempt and wrote nothing (overflow 1 with "
                               "maxOverflowRetries 1; range 4..4 is selectable (retainTokens 0);")
    assert _flip(path, _deployment(tmp_path, maxOverflowRetries=0)) == []  # nothing was allowed: nothing was due


def test_DIA_7_a_turn_aborted_after_the_failed_attempt_is_not_judged(tmp_path: Path) -> None:
    """"only if ... the signal is not aborted" (index.ts:183); where the abort landed is not logged."""
    path = _file(tmp_path, "aborted.jsonl", _thrown(list(EVENTS[:FAILED_FINISH + 1]), "aborted"))
    assert _flip(path, _deployment(tmp_path)) == []


def _twice() -> list[Event]:
    """A writer with maxOverflowRetries 2: its first recovery retried, the retry overflowed again, and its second
    recovery (a shorter summary of the checkpoint) retried too; that retry answered."""
    log = list(EVENTS[:FAILED_FINISH + 1])
    log += _recovery(log, 0, 2, "The request established a durable compaction premise.")
    log.append(replace(EVENTS[FAILED_FINISH], seq=len(log)))
    log += _recovery(log, 1, 2, "Premise.")
    return _retried(log)


def test_DIA_7_a_recovery_beyond_maxOverflowRetries(tmp_path: Path) -> None:
    """The second overflow of the step comes after one recovery that retried: with the deployment's
    maxOverflowRetries 1 (CMP-3's default) the listener returns next() (index.ts:188-189) and the second bracket
    (seq 24) should not have run; with 2 it is the writer's configuration and valid."""
    log = _twice()
    assert [e.type for e in log[19:29]] == ["compaction/start", "compaction/summary", "user/message", "compaction/end",
                                            "assistant/chunk", "compaction/start", "compaction/summary", "user/message",
                                            "compaction/end", "assistant/chunk"]
    path = _file(tmp_path, "twice.jsonl", log)
    assert _flip(path, _deployment(tmp_path, maxOverflowRetries=2)) == []
    assert _flip(path, _deployment(tmp_path)) == [
        ("DIA-7", 24, "overflow recovery ran though 1 earlier recovery(ies) that retried reach maxOverflowRetries 1")]


def test_DIA_7_without_the_deployment_the_failed_attempt_is_listed_as_not_decided(tmp_path: Path) -> None:
    """The file's list names the places the deployment's decisions would judge: the failed attempt's finish (DIA-7)
    and the compaction after it (CMP-9); with the deployment they are decided and not listed."""
    listed = {(item.rule, item.what, item.seq) for item in api.check_file(str(REAL)).undecided}
    assert {("DIA-7", "failed attempt", 18), ("CMP-9", "compaction after a failed attempt", 19)} <= listed
    assert not any(item.rule == "CMP-7" for item in api.check_file(str(REAL)).undecided)
    decided = api.check_file(str(REAL), deployment=_deployment(tmp_path)).undecided
    assert not any(item.rule in ("DIA-7", "CMP-9") for item in decided)


def test_DIA_7_a_point_another_listener_retried_first_is_listed_not_judged(tmp_path: Path) -> None:
    """llm-retry retried the overflow (``llm/retry``, then the retry) with no compaction before it: in its normal mode it
    retries a listed code without calling the next listener (llm-retry src/index.ts at 611615650f), so whether
    compaction's listener ran is the provider's retry policy and the listeners' order, which neither file states.
    The same log without the ``llm/retry`` is a recovery that had to run and did not."""
    log = list(EVENTS[:FAILED_FINISH + 1])
    failure = get(get(get(EVENTS[FAILED_FINISH].data, "chunk"), "reason"), "failure")
    retry = make_event("llm/retry", seq=len(log), time=log[-1].time, data=freeze({
        "retryId": "r1", "turn": 1, "step": 2, "provider": "deepseek-official", "mode": "normal", "policyKey": "k",
        "retry": 1, "maxRetries": 3, "delayMs": 10, "failure": failure}))
    path = _file(tmp_path, "llm-retry.jsonl", _retried([*log, retry]))
    assert _flip(path, _deployment(tmp_path)) == []
    listed = {(item.rule, item.why, item.what, item.seq) for item in api.check_file(path, deployment=_deployment(tmp_path)).undecided}
    assert ("DIA-7", "not-stated", "overflow point", FAILED_FINISH + 1) in listed


# Each recovery summarizes the previous checkpoint more shortly, so each is smaller (CMP-21) and retries.
SUMMARIES = ("The request established a durable compaction premise.", "Premise.", "P")


def _overflows(count: int, writer: int) -> tuple[list[Event], list[int]]:
    """A writer with maxOverflowRetries ``writer``: ``count`` overflows in step 2, each recovered (and retried) while
    fewer than ``writer`` recoveries retried, else thrown; and the seqs where its recoveries start."""
    log, starts = list(EVENTS[:FAILED_FINISH + 1]), list[int]()
    for i in range(count):
        if i:
            log.append(replace(EVENTS[FAILED_FINISH], seq=len(log)))
        if i >= writer:
            return _thrown(log), starts
        starts.append(len(log))
        log += _recovery(log, i, writer, SUMMARIES[i])
    return _retried(log), starts


@pytest.mark.parametrize(("count", "writer"), [(1, 0), (2, 1), (3, 2), (1, 1), (2, 2), (3, 3)])
def test_DIA_7_a_writer_s_budget_against_the_deployment_s_both_ways(tmp_path: Path, count: int, writer: int) -> None:
    """The writer's log is valid under its own maxOverflowRetries; under another, the recoveries it wrote with i >= the
    deployment's earlier recoveries that retried ran beyond it, and the overflow it threw (its budget spent) had to
    be recovered when the deployment's is larger (each checkpoint so far is a range: CMP-9 with retainTokens 0)."""
    log, starts = _overflows(count, writer)
    path = _file(tmp_path, f"{count}-{writer}.jsonl", log)
    for allowed in range(4):
        beyond = [("DIA-7", seq, f"overflow recovery ran though {i} earlier recovery(ies) that retried reach maxOverflowRetries {allowed}")
                  for i, seq in enumerate(starts) if i >= allowed]
        unrecovered = writer < count and writer < allowed
        found = _flip(path, _deployment(tmp_path, maxOverflowRetries=allowed))
        assert [f for f in found if "ran though" in f[2]] == beyond
        assert [(rule, seq) for rule, seq, reason in found if "had to run" in reason] == ([("DIA-7", log[-1].seq)] if unrecovered else [])
        assert (found == []) is (allowed == writer or (writer == count and allowed > writer))
