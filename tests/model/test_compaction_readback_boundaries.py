"""CMP-16/CMP-17/CMP-18 and CMP-8's retry loop at their edges (issue 43): summarizer requests read back from
brackets whose records are incomplete, a summary without system or text, a total equal to the threshold after a
compaction, counts that are not integers.

CMP-17: the request is "{provider, model, messages: input.messages ++ [instruction], system?, tools?, maxTokens}";
CMP-18: "keep only text blocks; no block with non-whitespace text -> raise"; CMP-8: "re-measure; if total <
threshold return its result" (so a total equal to the threshold goes on to the next attempt).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sessionspec.model.compaction import CompactConfig, SummarizerOutput, SummaryCall, pressure_compaction
from sessionspec.model.compaction.policy import check_compact_config
from sessionspec.model.compaction.readback import summary_requests
from sessionspec.model.compaction.summary import summary_text_blocks
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.loop import AgentConfig, Prompt, Reply, TurnScript, new_instance, run_turn, text_content
from sessionspec.model.meter import measure_state, meter_state
from sessionspec.model.rejected import Rejected


def _summarize(call: SummaryCall) -> SummarizerOutput:
    return SummarizerOutput(summary=text_content("S"), provider=call.provider, model=call.model, max_tokens=call.max_tokens)


def _post_step(system: str = "S", turns: int = 3) -> tuple[Event, ...]:
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for n in range(turns):
        out = run_turn(log, instance, AgentConfig(system=system), TurnScript(prompt=Prompt(content=text_content(f"prompt {n} " * 100)),
                                                                              replies=(Reply(text=f"answer {n} " * 30),)))
        assert not isinstance(out, Rejected)
        log, instance = out.log, out.instance
    return log[:max(e.seq for e in log if e.type == "step/end")]


def _compacted(system: str = "S") -> tuple[Event, ...]:
    log = _post_step(system)
    run = pressure_compaction(log, _summarize, config=CompactConfig(threshold_ratio=0.5, retain_tokens=0), context_window=2)
    assert not isinstance(run, Rejected) and run.results
    return (*log, *run.events)


def _summary_edited(log: tuple[Event, ...], change: dict[str, Any]) -> tuple[Event, ...]:
    index = next(i for i, e in enumerate(log) if e.type == "compact/summary")
    data = {k: v for k, v in {**log[index].data, **change}.items() if v is not None}  # type: ignore[dict-item]
    return (*log[:index], replace(log[index], data=freeze(data)), *log[index + 1:])  # type: ignore[arg-type]


def test_CMP_17_a_recorded_bracket_reads_back_as_its_request() -> None:
    (request,) = summary_requests(_compacted(), Dialect.A55, "condense")
    assert list(request)[:3] == ["provider", "model", "messages"] and request["system"] == "S" and request["maxTokens"] == 8192


def test_CMP_17_a_header_without_system_gives_a_request_without_system() -> None:
    (request,) = summary_requests(_compacted(system=""), Dialect.A55, "condense")
    assert "system" not in request


@pytest.mark.parametrize(("change", "requests"), [
    ({"maxTokens": None}, 1),      # no recorded cap: the request carries none
    ({"provider": 7}, 0),           # a provider that is not a string: no request
    ({"model": None}, 0),
    ({"shadowedSeqs": "all"}, 0),   # not an array: no request
])
def test_CMP_16_incomplete_summary_records(change: dict[str, Any], requests: int) -> None:
    found = summary_requests(_summary_edited(_compacted(), change), Dialect.A55, "condense")
    assert len(found) == requests
    if requests:
        assert "maxTokens" not in found[0]


def test_CMP_16_shadowed_seqs_outside_the_log_are_not_read() -> None:
    log = _compacted()
    shadowed = get(next(e for e in log if e.type == "compact/summary").data, "shadowedSeqs")
    assert isinstance(shadowed, tuple)
    odd = (*shadowed, -1, len(log), len(log) + 5, "x")
    (request,) = summary_requests(_summary_edited(log, {"shadowedSeqs": list(odd)}), Dialect.A55, "condense")
    (plain,) = summary_requests(log, Dialect.A55, "condense")
    assert request == plain


def test_CMP_16_a_bracket_without_a_summary_reads_back_as_nothing() -> None:
    log = _compacted()
    without = tuple(e for e in log if e.type != "compact/summary")
    assert summary_requests(without, Dialect.A55, "condense") == ()


@pytest.mark.parametrize(("summary", "kept"), [
    ([{"type": "text", "text": 5}, {"type": "text", "text": "ok"}], 2),
    ([{"type": "image"}, {"type": "text", "text": " x "}], 1),
])
def test_CMP_18_only_text_blocks_are_kept_and_one_must_have_text(summary: list[Any], kept: int) -> None:
    out = summary_text_blocks(freeze(summary))  # type: ignore[arg-type]
    assert not isinstance(out, Rejected) and len(out) == kept
    assert isinstance(summary_text_blocks(freeze([{"type": "text", "text": 5}])), Rejected)  # type: ignore[arg-type]


def test_CMP_8_a_total_equal_to_the_threshold_after_a_compaction_goes_on_to_the_next_attempt() -> None:
    log = _post_step(turns=4)
    config = CompactConfig(threshold_ratio=0.5, retain_tokens=0, compaction_retries=1)
    first = pressure_compaction(log, _summarize, config=replace(config, compaction_retries=0), context_window=2)
    assert not isinstance(first, Rejected) and len(first.results) == 1
    state = meter_state((*log, *first.events))
    assert not isinstance(state, Rejected)
    after = measure_state(state).total_tokens  # the total the loop re-measures after its first transaction
    at = pressure_compaction(log, _summarize, config=config, context_window=2 * after)
    above = pressure_compaction(log, _summarize, config=config, context_window=2 * after + 2)
    assert not isinstance(at, Rejected) and not isinstance(above, Rejected)
    def starts(run: Any) -> int:
        return [e.type for e in run.events].count("compact/start")

    assert starts(above) == 1 and above.error is None  # total < threshold: done after one transaction
    assert starts(at) == 2  # equal: not below the threshold, so a second transaction


@pytest.mark.parametrize("field", ["retain_tokens", "max_tokens", "compaction_retries", "max_overflow_retries"])
@pytest.mark.parametrize("value", [1.5, True])
def test_CMP_3_counts_that_are_not_integers_are_refused(field: str, value: object) -> None:
    assert isinstance(check_compact_config(CompactConfig(**{field: value})), Rejected)  # type: ignore[arg-type]


def test_JsonObject_results_are_objects() -> None:
    assert all(isinstance(r, JsonObject) for r in summary_requests(_compacted(), Dialect.A55, "condense"))


def test_CMP_16_a_summary_citing_a_seq_off_the_surface_or_a_header_that_does_not_read_gives_no_request() -> None:
    log = _compacted()
    (only_instruction,) = summary_requests(_summary_edited(log, {"shadowedSeqs": [0]}), Dialect.A55, "condense")
    assert len(only_instruction["messages"]) == 1  # type: ignore[arg-type]  # seq 0 is turn/start: no message to summarise
    header = next(i for i, e in enumerate(log) if e.type == "request/header")
    broken = (*log[:header], replace(log[header], data=freeze({"header": 5, "reason": "initial"})), *log[header + 1:])
    assert summary_requests(broken, Dialect.A55, "condense") == ()


def test_CMP_13_a_region_on_a_log_the_meter_refuses_or_with_a_corrupt_surface_is_refused() -> None:
    from sessionspec.model.compaction import compact_region
    from sessionspec.model.log import make_event

    log = list(_post_step())
    nodes = [e.seq for e in log if e.surface_op == "append"]
    # the surface folds, the meter does not: a second step/start while a step is open (MTR-6)
    twice = make_event("step/start", seq=len(log), time=0, data=freeze({"turn": 3, "step": 2}))
    out = compact_region([*log, twice], nodes[0], nodes[1], _summarize)
    failed = out if isinstance(out, Rejected) else out.error if hasattr(out, "error") else None
    assert failed is not None or (not isinstance(out, Rejected) and out.result is None)
    orphan = make_event("tool/result", seq=len(log), time=0, data=freeze({"turn": 1, "step": 1, "callId": "x", "content": [], "isError": False}),
                        surface_op="append")
    out = compact_region([*log, orphan], nodes[0], nodes[1], _summarize)
    assert isinstance(out, Rejected) and out.rule in ("CMP-10", "CMP-13")


def test_CMP_16_a_shadowed_node_that_does_not_project_gives_no_request() -> None:
    log = _compacted()
    shadowed = get(next(e for e in log if e.type == "compact/summary").data, "shadowedSeqs")
    assert isinstance(shadowed, tuple) and isinstance(shadowed[0], int)
    first = shadowed[0]
    broken = (*log[:first], replace(log[first], data=freeze("not an object")), *log[first + 1:])
    assert summary_requests(broken, Dialect.A55, "condense") == ()
