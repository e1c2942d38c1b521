"""The model is total on malformed input (issue 43): each defensive decision taken, with the answer its rule gives.

Public functions answer a value or a Rejected naming the rule, never an exception (the guide's "total").  Each case
below feeds one malformed piece to one function: a session header whose version is a boolean (LOG-17: a version other
than 0), an assistant message whose content is not a list (DER-1), a surface marker on a log-only event (SURF-2), a
lock scan over an empty log (CMP-14: no open turn), a corrupt surface (CMP-10: more results than calls), an empty
surface (CMP-11: none), a region on a log that does not fold (CMP-13), a prune of a log that does not fold (PRN-4),
a reply whose text comes in no pieces (the scripted stream).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sessionspec.model.codec import SessionHeader, parse_session_header
from sessionspec.model.compaction import compact_region
from sessionspec.model.compaction.lock import bracket_owner
from sessionspec.model.compaction.retention import balanced_cuts, select_range, tool_call_delta
from sessionspec.model.derive import derive, project
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import Reply, ToolCallSpec
from sessionspec.model.loop.stream import reply_chunks
from sessionspec.model.meter import meter_state
from sessionspec.model.prune import PruneConfig, prune_pass, prune_session
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface


def _msg(seq: int, content: Any, type_name: str = "assistant/message") -> Event:
    data: dict[str, Any] = {"turn": 1, "step": 1, "content": content, "provenance": {"provider": "p", "model": "m"}}
    if type_name == "tool/result":
        data = {"turn": 1, "step": 1, "callId": "c", "content": content, "isError": False}
    return make_event(type_name, seq=seq, time=seq, data=freeze(data), surface_op="append")


@pytest.mark.parametrize("version", [True, False, 1, "0"])
def test_LOG_17_a_session_header_version_other_than_zero_is_refused(version: Any) -> None:
    header = parse_session_header(freeze({"type": "session", "version": version, "id": "s", "createdAt": 0}))  # type: ignore[arg-type]
    assert isinstance(header, Rejected) and header.rule == "LOG-17"
    odd = parse_session_header(freeze({"type": "session", "version": 0, "id": "s", "createdAt": 0, "seedLength": "3"}))  # type: ignore[arg-type]
    assert isinstance(odd, Rejected) and odd.rule == "LOG-18"
    ok = parse_session_header(freeze({"type": "session", "version": 0, "id": "s", "createdAt": 0}))  # type: ignore[arg-type]
    assert isinstance(ok, SessionHeader) and ok.seed_length == 0  # no seedLength: no seed


def test_DER_1_an_assistant_message_whose_content_is_not_a_list_derives_no_blocks() -> None:
    message = project(_msg(0, "text"), Dialect.A55)
    assert not isinstance(message, Rejected) and message is not None
    assert tool_call_delta(_msg(0, "text"), Dialect.A55) == 0


def test_SURF_2_a_log_only_event_with_source_seqs_is_refused() -> None:
    odd = make_event("session/title", seq=0, time=0, data=freeze({"title": "t"}), source_event_seqs=freeze([]))
    fold = fold_surface([odd])
    assert isinstance(fold, Rejected) and fold.rule == "SURF-2"


def test_CMP_14_no_open_turn_in_an_empty_log() -> None:
    owner = bracket_owner([])
    assert isinstance(owner, Rejected) and owner.rule == "CMP-14"


def test_CMP_10_a_surface_with_more_results_than_calls_is_corrupt() -> None:
    events = [_msg(0, "r", "tool/result")]
    cuts = balanced_cuts([0], events)
    assert isinstance(cuts, Rejected) and cuts.rule == "CMP-10"
    assert select_range([], [], [], 10) is None  # CMP-11: an empty surface: none


def test_CMP_13_a_region_of_a_log_that_does_not_fold_is_refused() -> None:
    broken = [make_event("user/message", seq=0, time=0, data=freeze({"content": [], "source": {"kind": "user"}}),
                         surface_op=freeze({"op": "replace", "start": 5, "end": 5}))]
    out = compact_region(broken, 0, 0, lambda call: Rejected(rule="CMP-18", reason="unused"))  # type: ignore[arg-type,return-value]
    assert isinstance(out, Rejected)


def test_PRN_4_a_prune_of_a_log_that_does_not_fold_is_refused() -> None:
    broken = [make_event("session/title", seq=0, time=0, data=freeze({"title": "t"}), surface_op="append")]
    config = PruneConfig(threshold_chars=100, head_chars=10, tail_chars=10)
    assert isinstance(prune_pass(broken, config), Rejected) and isinstance(prune_session(broken, config), Rejected)


def test_MTR_7_a_log_the_meter_cannot_fold_is_refused() -> None:
    outside = [_msg(0, [{"type": "text", "text": "x"}])]  # an assistant message with no open step
    assert isinstance(meter_state(outside), Rejected)
    assert isinstance(derive(outside), tuple)


def test_the_scripted_stream_of_a_reply_whose_text_comes_in_no_pieces() -> None:
    """textChunks: [] streams no delta (the block-start and block-end still carry the text); argumentsChunks: [] none."""
    chunks = reply_chunks(Reply(text="hi", text_chunks=()))
    assert [c["type"] for c in chunks][:2] == ["block-start", "block-end"]
    call = ToolCallSpec(call_id="c", name="echo", arguments="{}", result="r", arguments_chunks=())
    tool = reply_chunks(Reply(text="", tool_calls=(call,)))
    assert "tool-call-delta" not in [c["type"] for c in tool]
    assert replace(call, arguments_chunks=None).arguments == "{}"


def test_LOG_3_an_envelope_whose_seq_or_time_is_not_an_integer_is_refused() -> None:
    from sessionspec.model.codec import parse_event_line

    for line in ('{"type":"session/title","seq":"0","time":0,"data":{}}', '{"type":"session/title","seq":0,"time":"0","data":{}}'):
        assert isinstance(parse_event_line(line), Rejected)


def test_FMT_2_non_finite_numbers_and_surrogates_written_as_javascript_writes_them() -> None:
    from sessionspec.model.jsonval import js_stringify

    assert js_stringify(float("inf")) == "null" and js_stringify(float("nan")) == "null"  # JSON.stringify(Infinity)
    assert js_stringify("\ud800\ue000") == '"\\ud800\ue000"'


def test_LOG_14_an_empty_log_has_no_open_turn() -> None:
    from sessionspec.model.log import is_open

    assert is_open([], "turn/start", "turn/end") is False


def test_MTR_4_tools_that_are_not_a_list_are_priced_by_their_text() -> None:
    from sessionspec.model.header import EpochHeader
    from sessionspec.model.meter import estimate_header

    assert estimate_header(EpochHeader(config=freeze({}), tools="x")) == 1 + 4  # ceil4(U16('"x"')) + 4  # type: ignore[arg-type]


def test_MTR_9_an_open_block_of_no_known_type_cannot_be_priced() -> None:
    from sessionspec.model.meter import provider_output_price

    chunk = make_event("assistant/chunk", seq=0, time=0, data=freeze({"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "image"}}))
    message = replace(_msg(1, []), source_event_seqs=(0,))
    priced = provider_output_price(message, 0, [chunk])
    assert isinstance(priced, Rejected) and priced.rule == "MTR-9"


def test_INV_1_the_loop_refuses_a_log_whose_header_does_not_read() -> None:
    from sessionspec.model.loop import AgentConfig, Prompt, TurnScript, new_instance, run_turn, text_content

    header = make_event("request/header", seq=0, time=0, data=freeze({"header": "x", "reason": "initial"}))
    out = run_turn([header], new_instance(), AgentConfig(), TurnScript(prompt=Prompt(content=text_content("p"))))
    assert isinstance(out, Rejected)
    assert isinstance(derive([_msg(0, "text", "tool/result"), replace(_msg(1, [], "tool/result"), data=freeze({"turn": 1}))]), (tuple, Rejected))


def test_PRN_4_an_empty_log_prunes_nothing_and_a_result_without_call_id_prunes() -> None:
    config = PruneConfig(threshold_chars=50, head_chars=0, tail_chars=0)
    out = prune_pass([], config)
    assert not isinstance(out, Rejected) and out.events == ()
    result = make_event("tool/result", seq=0, time=0, data=freeze({"turn": 1, "step": 1, "content": [{"type": "text", "text": "r" * 80}], "isError": False}),
                        surface_op="append")
    pruned = prune_pass([result], config)
    assert not isinstance(pruned, Rejected) and len(pruned.pruned) == 1 and pruned.pruned[0].call_id is None


def test_DIA_13_a_replace_object_that_is_not_a_replace_takes_a_fresh_id() -> None:
    from sessionspec.model.jsonval import js_stringify
    from sessionspec.model.migrate import migrate_event

    odd = make_event("tool/result", seq=9, time=0, data=freeze({"callId": "c", "content": [], "isError": False}),
                     surface_op=freeze({"op": "append", "start": 1, "end": 1}))
    assert '"id":"legacy-message:s:9"' in js_stringify(migrate_event(odd, "s", {1: "kept"}).data)


def _d08_header() -> Event:
    return make_event("request/header", seq=0, time=0, data=freeze({"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}))


def test_DIA_3_DIA_5_a_d08_bracket_needs_an_open_turn() -> None:
    from sessionspec.model.compaction.d08 import bracket_owner as d08_owner
    from sessionspec.model.compaction.d08 import pressure_gate

    assert isinstance(d08_owner([]), Rejected)
    # DIA-6: only a busy lock (DIA-5) stops the gate; an owner refused for another reason is the region's to report
    assert pressure_gate([_d08_header()]) is None


def test_DIA_18_a_prune_record_of_a_result_without_a_message_prices_nothing() -> None:
    from sessionspec.model.prune import prune_record_d08

    (record,) = prune_record_d08(make_event("tool/result", seq=2, time=0, data=freeze({})), 5, 0)
    assert record.data["shadowedTokenCount"] == 0  # type: ignore[index]


def test_HDR_8_a_d08_seed_checks_its_headers_shape() -> None:
    from sessionspec.model.seed import validate_seed

    assert validate_seed([_d08_header()], Dialect.D08) is None


def test_CMP_10_an_assistant_message_that_does_not_project_counts_no_calls() -> None:
    odd = make_event("assistant/message", seq=0, time=0, data=freeze("not an object"), surface_op="append")
    assert tool_call_delta(odd, Dialect.A55) == 0


def test_MTR_6_MTR_8_a_message_outside_a_step_or_citing_no_chunks_is_refused() -> None:
    head = make_event("request/header", seq=0, time=0, data=freeze({"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}))
    bad_header = make_event("request/header", seq=0, time=0, data=freeze({"header": {"config": 5}, "reason": "initial"}))
    assert isinstance(meter_state([bad_header]), Rejected)
    message = make_event("assistant/message", seq=1, time=1, data=freeze({"turn": 1, "step": 1, "content": [],
                                                                          "provenance": {"provider": "p", "model": "m"}}), surface_op="append")
    assert isinstance(meter_state([head, message]), Rejected)  # no open step
    start = make_event("step/start", seq=1, time=1, data=freeze({"turn": 1, "step": 1}))
    cited = make_event("assistant/message", seq=2, time=2, data=freeze({"turn": 1, "step": 1, "content": [], "usage": {"inputTokens": 5, "outputTokens": 1},
                                                                         "provenance": {"provider": "p", "model": "m"}}),
                       surface_op="append", source_event_seqs=freeze([1]))
    assert isinstance(meter_state([head, start, cited]), Rejected)  # it cites a step/start, not a chunk (MTR-9)


def test_MTR_9_the_assembler_keeps_a_block_end_without_a_block_as_null() -> None:
    from sessionspec.model.assemble import BlockAssembler

    assembler = BlockAssembler()
    assembler.feed(freeze({"type": "block-end", "index": 0}))
    assert assembler.blocks() == (None,)


def _unprojectable(seq: int) -> Event:
    """A surface event whose data is not an object: the surface accepts the marker, the projection does not (DER-1)."""
    return make_event("user/message", seq=seq, time=seq, data=freeze("not an object"), surface_op="append")


def test_DER_1_an_event_that_does_not_project_stops_the_meter_the_derivation_and_the_rebuild() -> None:
    assert isinstance(meter_state([_unprojectable(0)]), Rejected)
    start = make_event("step/start", seq=1, time=1, data=freeze({"turn": 1, "step": 1}))
    from sessionspec.model.reconstruct import rebuild_request_at

    assert isinstance(rebuild_request_at([_unprojectable(0), start], 1, None), Rejected)


def test_MTR_6_an_assistant_message_with_no_step_open_is_refused() -> None:
    message = make_event("assistant/message", seq=0, time=0, data=freeze({"turn": 1, "step": 1, "content": [],
                                                                          "provenance": {"provider": "p", "model": "m"}}), surface_op="append")
    state = meter_state([message])
    assert isinstance(state, Rejected) and state.rule == "MTR-6"


def test_SURF_7_a_tool_result_rewrite_whose_data_is_not_an_object_is_refused() -> None:
    result = make_event("tool/result", seq=0, time=0, data=freeze({"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False}),
                        surface_op="append")
    rewrite = make_event("tool/result", seq=1, time=1, data=freeze("pruned"), surface_op=freeze({"op": "replace", "start": 0, "end": 0}),
                         source_event_seqs=freeze([0]))
    assert isinstance(fold_surface([result, rewrite]), Rejected)


def test_LOOP_2_a_turn_start_whose_turn_is_not_an_integer_is_passed_over() -> None:
    """LOOP-2 reads the last turn/start's turn; the book does not say what a non-integer turn gives (no writer
    logs one; the harness would add 1 to the value as it is, loop.ts 840-842).  The model passes over it to the
    turn/start before it, so a turn number is always an integer."""
    from sessionspec.model.loop import next_turn_number

    def start(seq: int, turn: object) -> Event:
        return make_event("turn/start", seq=seq, time=seq, data=freeze({"turn": turn, "trigger": {"kind": "message"}}))

    assert next_turn_number([start(0, 4), start(1, True)]) == 5
    assert next_turn_number([start(0, "7")]) == 1


def test_MTR_6_a_step_end_with_no_step_open_is_refused() -> None:
    end = make_event("step/end", seq=0, time=0, data=freeze({"turn": 1, "step": 1}))
    state = meter_state([end])
    assert isinstance(state, Rejected) and state.rule == "MTR-6"
