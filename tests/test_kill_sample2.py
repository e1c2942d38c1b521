"""Kill tests for the survivors of issue 29's seed-1 sample of 400 mutants over model/ (docs/quality.md,
``quality/run --sample-total 400 --seed 1``).  Each expected value is read off the rule the mutated line
implements (spec/rulebook.md): a rejection's rule and, where the book quotes it, its reason; a field the
rule defines; a value the rule computes."""

from __future__ import annotations

import json

import pytest

from model.codec import expand_row, parse_event_line, parse_value
from model.compaction import CONTEXT_WINDOW_EXCEEDED, compact_if_needed
from model.compaction.policy import CompactConfig, ModelPolicy, check_compact_config, target_policy
from model.compaction.records import Ids, SummarizerOutput, SummaryCall, Trigger
from model.compaction.region import check_region, compact_region, price_region
from model.header import EpochHeader, header_eq
from model.jsonval import ABSENT, JsonObject, freeze, get, js_number, number_from_float_text
from model.log import Dialect, Event, make_event
from model.loop import Placement, Prompt, PromptContext, prompt_message_data
from model.loop.errors import interruption_reason
from model.loop.events import Draft, ErrorAction, RequestErrorContext
from model.loop.listeners import CompactionPlugin, overflow_listener
from model.loop.script import InterruptKind
from model.loop.state import APPEND, log_writer
from model.meter import Baseline, BaselineKind, Measurement, PricedNode, measure, meter_state, provider_output_price
from model.prune import PruneConfig, check_prune_config, content_chars, resolve_prune_config, tool_result_content
from model.rejected import Rejected
from model.surface import check_tool_result_rewrite
from tests.support import busy_log, d08_log, short


def _row(data: dict[str, object], time0: object = 0) -> JsonObject:
    value = parse_value(json.dumps({"type": "text-chunks", "seq0": 5, "time0": time0, "data": data}))
    assert isinstance(value, JsonObject)
    return value


def test_CHK_5_the_reason_names_the_bad_dt_and_the_bad_time0() -> None:
    """CHK-5: "rejected 'malformed <tag> storage row'"; the model appends which check failed."""
    bad_dt = expand_row(_row({"turn": 1, "step": 1, "index": 0, "dt": [0], "texts": ["a", "b", "c"]}))
    assert isinstance(bad_dt, Rejected) and (bad_dt.rule, bad_dt.seq) == ("CHK-5", 5)
    assert bad_dt.reason == "malformed text-chunks storage row: dt"
    bad_time = expand_row(_row({"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]}, time0=1.5))
    assert isinstance(bad_time, Rejected) and bad_time.reason == "malformed text-chunks storage row: time0"


def test_CMP_3_retain_ratio_at_or_above_the_threshold_is_refused_with_its_reason() -> None:
    refused = check_compact_config(CompactConfig(threshold_ratio=0.5, retain_ratio=0.5))
    assert isinstance(refused, Rejected) and refused.rule == "CMP-3"
    assert refused.reason == "compact config: retainRatio must be below thresholdRatio"


def test_CMP_4_a_matching_policy_overlays_max_tokens_and_the_summarization_model() -> None:
    """CMP-4: "the defaults overlaid field-wise by the modelPolicies entry whose (provider, model) equals the
    target exactly"."""
    policy = ModelPolicy(provider="p", model="m", max_tokens=100, summarization_provider="sp", summarization_model="sm")
    config = CompactConfig(max_tokens=8192, summarization_provider="dp", summarization_model="dm", model_policies=(policy,))
    resolved = target_policy(config, "p", "m")
    assert (resolved.max_tokens, resolved.summarization_provider, resolved.summarization_model) == (100, "sp", "sm")
    other = target_policy(config, "p", "other")
    assert (other.max_tokens, other.summarization_provider, other.summarization_model) == (8192, "dp", "dm")


def test_HDR_4_headers_whose_tools_are_the_same_placeholder_text_are_equal() -> None:
    """Q-15 / FMT-6: a placeholder string in place of the tools is compared by its text."""
    a = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[tools elided]")
    b = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[tools elided]")
    c = EpochHeader(config=freeze({"provider": "p", "model": "m"}), tools="[other]")
    assert header_eq(a, b) and not header_eq(a, c)


def test_js_number_of_zero_is_0() -> None:
    """JS: String(0) and String(-0) are "0"."""
    assert js_number(0) == "0" and js_number(0.0) == "0" and js_number(-0.0) == "0"


def test_LOG_4_an_integral_float_text_up_to_2_53_minus_1_reads_as_an_integer() -> None:
    """JS has one number type: 9007199254740991.0 is the largest safe integer, read as an integer."""
    value = number_from_float_text("9007199254740991.0")
    assert value == 2**53 - 1 and isinstance(value, int)
    assert isinstance(number_from_float_text("9007199254740992.0"), float)


def test_a_json_object_refuses_assignment_saying_it_is_immutable() -> None:
    with pytest.raises(TypeError, match="^JsonObject is immutable$"):
        freeze({"a": 1})["a"] = 2  # type: ignore[index]


def test_LOOP_15_a_foreign_abort_ends_as_an_error_naming_the_step() -> None:
    """Q-30: a foreign abort reason ends ``{kind:"error", step, message:"turn interrupted"}``."""
    assert interruption_reason(InterruptKind.FOREIGN, 3) == freeze({"kind": "error", "step": 3, "message": "turn interrupted"})
    assert interruption_reason(InterruptKind.CANCEL, 3) == freeze({"kind": "aborted"})


def test_MTR_10_an_empty_log_measures_none_with_no_delta() -> None:
    """Q-23: a headerless, empty-priced surface has the baseline ``none``: 0 tokens, delta 0."""
    measured = measure([])
    assert not isinstance(measured, Rejected)
    assert (measured.baseline.tokens, measured.surface_delta_tokens, measured.total_tokens) == (0, 0, 0)


def _chunk(seq: int, turn: int = 1) -> object:
    return make_event("assistant/chunk", seq=seq, time=0,
                      data=freeze({"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "hi"}}))


def _message(seq: int, cited: object) -> object:
    return make_event("assistant/message", seq=seq, time=0, source_event_seqs=freeze(cited),
                      data=freeze({"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}}))


@pytest.mark.parametrize(("cited", "reason"), [
    ([-1], "cites an invalid chunk seq -1"),
    ([True], "cites an invalid chunk seq True"),
    (["0"], "cites an invalid chunk seq '0'"),
    ([3], "cites an invalid chunk seq 3"),
    ([0, 0], "cites an invalid chunk seq 0"),
    ([2], "cites seq 2, which is not an assistant/chunk"),
])
def test_MTR_9_every_cited_seq_must_be_an_earlier_unique_chunk(cited: list[object], reason: str) -> None:
    """MTR-9: "every cited seq MUST be `< event.seq`, unique, an `assistant/chunk` of the same turn and step
    (else reject)"; the seq is an integer (LOG-4, not a boolean)."""
    step_start = make_event("step/start", seq=2, time=0, data=freeze({"turn": 1, "step": 1}))
    events = [_chunk(0), _chunk(1), step_start]
    message = _message(3, cited)
    refused = provider_output_price(message, 7, [*events, message])  # type: ignore[arg-type, list-item]
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-9", 3)
    assert refused.reason == f"token meter: assistant/message {reason}"
    # The two cited chunks assemble one text block "hihi": MTR-2 ceil4(4) + 4, plus ROLE_OVERHEAD 4.
    assert provider_output_price(_message(3, [0, 1]), 7, [*events, message]) == (1 + 4) + 4  # type: ignore[arg-type, list-item]


def test_PRN_1_bad_configs_are_refused_under_PRN_1() -> None:
    """PRN-1: values are integers, and headChars + CP(PRUNE_MARKER) + tailChars <= thresholdChars."""
    over = check_prune_config(PruneConfig(threshold_chars=100, head_chars=50, tail_chars=50))
    assert isinstance(over, Rejected) and over.rule == "PRN-1"
    not_int = resolve_prune_config(freeze({"headChars": "10"}))
    assert isinstance(not_int, Rejected) and not_int.rule == "PRN-1"
    assert not_int.reason == "prune config headChars must be an integer"
    not_object = resolve_prune_config(freeze([1]))
    assert isinstance(not_object, Rejected) and not_object.rule == "PRN-1"
    assert not_object.reason == "prune config must be an object"


def test_PRN_2_only_text_blocks_count() -> None:
    """PRN-2: "summed over `text` blocks only; non-text blocks count 0"."""
    blocks = freeze([{"type": "text", "text": "abc"}, {"type": "reasoning", "text": "0123456789"}])
    assert content_chars(blocks) == 3


def test_DIA_18_a_d08_tool_result_without_content_blocks_has_no_prunable_content() -> None:
    for message in ({"role": "tool", "content": []}, {"role": "tool"}):
        event = make_event("tool/result", seq=4, time=0, data=freeze({"turn": 1, "step": 1, "message": message}))
        assert tool_result_content(event, Dialect.D08) is None


def test_SURF_7_a_replace_of_several_nodes_by_a_tool_result_is_refused_on_its_seq() -> None:
    result = make_event("tool/result", seq=5, time=0, data=freeze({"turn": 1, "step": 1, "callId": "c", "content": []}))
    refused = check_tool_result_rewrite(result, (1, 2), [])
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("SURF-7", 5)


def _lines(*lines: str) -> list[Event]:
    events: list[Event] = []
    for line in lines:
        parsed = parse_event_line(line)
        assert not isinstance(parsed, Rejected)
        events.extend(parsed)
    return events


STEP_START = '{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}'


def test_MTR_7_a_replace_the_meter_cannot_place_is_refused_under_MTR_7_with_a_reason() -> None:
    """MTR-7: replace locates the positional range on the meter's own node list (invalid → reject)."""
    events = _lines(
        '{"type":"user/message","seq":0,"time":0,"data":{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
        '{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"y"}],"source":{"kind":"user"}},'
        '"surfaceOp":{"op":"replace","start":0,"end":7}}',
    )
    refused = meter_state(events)
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-7", 1)
    assert isinstance(refused.reason, str) and refused.reason.startswith("token meter: ") and "7" in refused.reason


def test_MTR_8_malformed_usage_is_refused_under_MTR_8() -> None:
    events = _lines(STEP_START, '{"type":"assistant/message","seq":1,"time":0,"data":{"turn":1,"step":1,'
                    '"content":[{"type":"text","text":"ok"}],"usage":{"inputTokens":"x","outputTokens":1}},"surfaceOp":"append"}')
    refused = meter_state(events)
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-8", 1)


def test_CMP_13_a_seq_off_the_surface_is_refused_with_the_books_reason() -> None:
    """CMP-13: both seqs on the surface ("compactRegion: start|end seq X not found in surface")."""
    for start, end, reason in ((5, 1, "compactRegion: start seq 5 not found in surface"),
                               (0, 9, "compactRegion: end seq 9 not found in surface")):
        refused = check_region([], [0, 1], start, end, Dialect.A55)
        assert isinstance(refused, Rejected) and (refused.rule, refused.reason) == ("CMP-13", reason)


def test_CMP_15_a_measurement_whose_nodes_moved_is_refused_with_the_books_reason() -> None:
    measured = Measurement(log_revision=2, baseline=Baseline(kind=BaselineKind.NONE, tokens=0), surface_delta_tokens=0,
                           total_tokens=7, surface_tokens=7, nodes=(PricedNode(seq=0, tokens=3), PricedNode(seq=1, tokens=4)),
                           header=ABSENT)
    assert price_region(measured, 0, 1, (0, 1)) == 7
    refused = price_region(measured, 0, 1, (0, 2))
    assert isinstance(refused, Rejected)
    assert (refused.rule, refused.reason) == ("CMP-15", "selected surface changed before summarization began")


def test_CMP_17_no_summarization_target_closes_the_bracket_with_the_books_error() -> None:
    """CMP-17: no configured pair, no requestHeader().config → raise "no provider/model available for
    summarization"; CMP-23 closes the bracket with that error."""
    events = _lines(
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}',
        '{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
    )

    def never(call: SummaryCall) -> SummarizerOutput:
        raise AssertionError("the summarizer must not be called")

    outcome = compact_region(events, 1, 1, never)
    assert not isinstance(outcome, Rejected) and outcome.result is None and outcome.error is not None
    assert (outcome.error.rule, outcome.error.reason) == ("CMP-17", "no provider/model available for summarization")
    assert [(e.type, get(e.data, "error")) for e in outcome.events][-1] == ("compact/end", "no provider/model available for summarization")


def test_DIA_2_a_run_stamps_its_time_and_the_identities_of_its_attempt() -> None:
    """DIA-2: the D08 identities are passed in (per attempt); every appended event carries the run's time."""
    log = d08_log()
    run = compact_if_needed(log.events, short, dialect=Dialect.D08, trigger=Trigger.MANUAL, time=77,
                            ids=lambda attempt: Ids(compaction_id=f"c{attempt}", message_id=f"k{attempt}"))
    assert not isinstance(run, Rejected) and run.error is None and len(run.results) == 1
    assert {e.time for e in run.events} == {77}
    assert get(run.events[0].data, "compactionId") == "c0"


def test_LOOP_4_the_envelope_lists_each_prefix_context_with_its_source_and_meta() -> None:
    """LOOP-4: ``envelope = {displayContent, prefixContexts:[{source, meta?}]}``."""
    source = freeze({"kind": "plugin", "plugin": "memory"})
    context = PromptContext(content=(freeze({"type": "text", "text": "C"}),), source=source,
                            placement=Placement.PROMPT_PREFIX, meta=freeze({"k": 1}))
    prompt_content = (freeze({"type": "text", "text": "P"}),)
    data = prompt_message_data(Prompt(content=prompt_content, contexts=(context,)))
    assert get(data, "envelope") == freeze({"displayContent": [{"type": "text", "text": "P"}],
                                            "prefixContexts": [{"source": {"kind": "plugin", "plugin": "memory"}, "meta": {"k": 1}}]})


def test_DIA_10_a_d08_session_writer_validates_an_append_by_the_d08_projection() -> None:
    """DIA-10: a D08 assistant/message projects as ``data.message``; the writer of a D08 session accepts it
    and the boundary is that message (the A55 projection would find no ``data.content`` and refuse it)."""
    writer = log_writer([], Dialect.D08)
    assert not isinstance(writer, Rejected)
    message = {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "model"}}
    seq = writer.append(Draft(type_name="assistant/message", data=freeze({"turn": 1, "step": 1, "message": message}),
                              surface_op=APPEND))
    assert seq == 0 and writer.boundary() == (freeze(message),)


def test_CMP_9_PRN_6_the_overflow_listener_prunes_first_and_dispatches_the_summary_after_compact_start() -> None:
    """CMP-9: on a context overflow, prune (if a prune service exists) and re-measure, then run one region
    transaction; PRN-6: the prune runs from compactIfNeeded on overflow; CMP-15: the summarizer request is
    sent right after the bracket's ``compact/start`` (the log then holds that event)."""
    log = busy_log()  # four tool results of 400 characters, each above the 100-character threshold
    plugin = CompactionPlugin(summarizer=short, instruction="I", prune=PruneConfig(threshold_chars=100, head_chars=10, tail_chars=10))
    context = RequestErrorContext(turn=1, step=5, failure=JsonObject((("code", CONTEXT_WINDOW_EXCEEDED),)), prior_failures=(),
                                  default=ErrorAction.FAIL)
    decision = overflow_listener(plugin)(log.events, context)
    assert decision.action is ErrorAction.RETRY
    types = [d.type_name for d in decision.drafts]
    assert types[:4] == ["tool/result"] * 4 and types[4] == "compact/start"
    start_seq = len(log.events) + 4
    assert [s.dispatch_len for s in decision.side_calls] == [start_seq + 1]
