"""Unit tests for the token meter (MTR), named after rule IDs."""

from __future__ import annotations

import pytest

from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, freeze
from sessionspec.model.log import Dialect, make_event
from sessionspec.model.meter import (
    BaselineKind,
    ceil4,
    estimate_header,
    estimate_message,
    measure,
    meter_state,
    node_price,
    price,
    provider_output_price,
)
from sessionspec.model.rejected import Rejected
from tests.support import Log, events_of_lines


def test_MTR_1_ceil4_and_u16_lengths() -> None:
    assert [ceil4(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]
    # U+1F600 is 2 UTF-16 units: one text block of 2 units -> ceil4(2) + 4.
    assert price(freeze([{"type": "text", "text": "\U0001F600"}])) == 5
    assert price(freeze([{"type": "text", "text": "\U0001F600" * 2}])) == 5
    assert price(freeze([{"type": "text", "text": "\U0001F600" * 3}])) == 6


def test_MTR_2_block_prices() -> None:
    assert price(freeze([{"type": "reasoning", "text": "abcde"}])) == 2 + 4
    assert price(freeze([{"type": "tool-call", "id": "i", "name": "abcde", "arguments": "{}"}])) == 2 + 1 + 4
    inner = [{"type": "text", "text": "abcd"}]
    assert price(freeze([{"type": "tool-result", "toolCallId": "i", "content": inner, "isError": False}])) == (1 + 4) + 4
    image = {"type": "image", "data": "xyz"}
    assert price(freeze([image])) == 4 + ceil4(len('{"type":"image","data":"xyz"}'))


def test_MTR_3_message_adds_role_overhead() -> None:
    assert estimate_message(freeze({"role": "assistant", "content": []})) == 4
    assert estimate_message(freeze({"role": "user", "content": [{"type": "text", "text": "abcd"}]})) == 9


def test_MTR_4_DIA_9_header_price_prefix_system_tools_not_config() -> None:
    prefix = freeze([{"role": "user", "content": [{"type": "text", "text": "abcd"}]}])
    tools = freeze([{"name": "t"}])
    h = EpochHeader(config=freeze({"provider": "p" * 400, "model": "m"}), system="abcdefgh", tools=tools, message_prefix=prefix)
    assert estimate_header(ABSENT) == 0
    assert estimate_header(h) == 9 + (2 + 4) + (ceil4(len('[{"name":"t"}]')) + 4)
    # DIA-9: D08 prices system and tools only.
    assert estimate_header(h, Dialect.D08) == (2 + 4) + (ceil4(len('[{"name":"t"}]')) + 4)
    assert estimate_header(EpochHeader(config=freeze({}), tools=())) == 0


def test_MTR_5_malformed_replay_rejects() -> None:
    log = Log()
    log.add("step/start", {"turn": 1, "step": 1})
    log.add("step/start", {"turn": 1, "step": 2})
    bad = measure(log.events)
    assert isinstance(bad, Rejected) and bad.rule == "MTR-6"


def test_MTR_6_assistant_outside_step_rejects() -> None:
    log = Log()
    log.assistant(1, 1, text="hi")
    bad = measure(log.events)
    assert isinstance(bad, Rejected) and bad.rule == "MTR-6"
    log = Log()
    log.add("step/start", {"turn": 1, "step": 1})
    log.add("step/end", {"turn": 1, "step": 2})
    assert isinstance(measure(log.events), Rejected)


def test_MTR_7_replace_uses_signed_delta() -> None:
    log = Log()
    u = log.user("a" * 400)
    log.user("b")
    before = measure(log.events)
    assert not isinstance(before, Rejected)
    log.add("user/message", {"content": [{"type": "text", "text": "c"}], "source": {"kind": "user"}},
            op={"op": "replace", "start": u, "end": u}, prov=[u])
    after = measure(log.events)
    assert not isinstance(after, Rejected)
    assert [n.seq for n in after.nodes] == [2, 1]
    assert after.surface_tokens == before.surface_tokens - 108 + 9
    assert node_price(log.events[2]) == 9


def test_MTR_8_usage_anchor_and_heuristic_fallback() -> None:
    log = Log()
    log.header()
    log.add("step/start", {"turn": 1, "step": 1})
    log.add("assistant/message", {"turn": 1, "step": 1, "content": [{"type": "text", "text": "abcd"}],
                                  "provenance": {"provider": "p", "model": "m"},
                                  "usage": {"inputTokens": 1000, "outputTokens": 5, "reasoningTokens": 99}}, op="append")
    m = measure(log.events)
    assert not isinstance(m, Rejected)
    assert m.baseline.kind is BaselineKind.USAGE and m.baseline.tokens == 1005
    # Usage that undercuts the heuristic is not trusted.
    small = Log()
    small.header(system="s" * 4000)
    small.add("step/start", {"turn": 1, "step": 1})
    small.add("assistant/message", {"turn": 1, "step": 1, "content": [{"type": "text", "text": "abcd"}],
                                    "provenance": {"provider": "p", "model": "m"},
                                    "usage": {"inputTokens": 1, "outputTokens": 1}}, op="append")
    s = measure(small.events)
    assert not isinstance(s, Rejected) and s.baseline.kind is BaselineKind.ESTIMATED
    assert s.total_tokens == 1004 + 9


def test_MTR_9_provider_output_from_cited_chunks() -> None:
    log = Log()
    log.add("step/start", {"turn": 1, "step": 1})
    log.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}})
    log.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "abcdefgh"}})
    seq = log.add("assistant/message", {"turn": 1, "step": 1, "content": [], "provenance": {}}, op="append", prov=[1, 2])
    assert provider_output_price(log.events[seq], 0, log.events[:seq]) == (2 + 4) + 4
    empty = log.add("assistant/message", {"turn": 1, "step": 1, "content": []}, op="append", prov=[])
    assert provider_output_price(log.events[empty], 0, log.events[:empty]) == 0
    wrong = log.add("assistant/message", {"turn": 1, "step": 2, "content": []}, op="append", prov=[1])
    assert isinstance(provider_output_price(log.events[wrong], 0, log.events[:wrong]), Rejected)


def test_MTR_10_override_never_changes_nodes() -> None:
    log = Log()
    log.header()
    log.user("abcd")
    plain = measure(log.events)
    other = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="x" * 400)
    overridden = measure(log.events, override=other)
    assert not isinstance(plain, Rejected) and not isinstance(overridden, Rejected)
    assert plain.nodes == overridden.nodes and plain.surface_tokens == overridden.surface_tokens
    assert overridden.total_tokens == 104 + plain.surface_tokens
    empty = measure([])
    assert not isinstance(empty, Rejected) and empty.baseline.kind is BaselineKind.NONE


def test_MTR_11_header_change_drops_usage_anchor() -> None:
    log = Log()
    log.header()
    log.add("step/start", {"turn": 1, "step": 1})
    log.add("assistant/message", {"turn": 1, "step": 1, "content": [{"type": "text", "text": "abcd"}],
                                  "provenance": {"provider": "p", "model": "m"},
                                  "usage": {"inputTokens": 1000, "outputTokens": 5}}, op="append")
    log.add("step/end", {"turn": 1, "step": 1})
    log.header(system="changed")
    m = measure(log.events)
    assert not isinstance(m, Rejected) and m.baseline.kind is BaselineKind.ESTIMATED


# ---------------------------------------------------------------- MTR-7/8/9 refusals, MTR-10 empty log


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


def test_MTR_9_a_non_array_citation_or_a_chunk_of_another_turn_is_refused_under_MTR_9() -> None:
    """MTR-9: the cited seqs are an array of ``assistant/chunk`` seqs "of the same turn and step (else reject)"."""
    events = [_chunk(0, turn=2), _chunk(1)]
    for cited, reason in ((1, "sourceEventSeqs is not an array"), ([0], "cites chunk seq 0 of another turn or step")):
        message = _message(2, cited)
        refused = provider_output_price(message, 7, [*events, message])  # type: ignore[arg-type, list-item]
        assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-9", 2)
        assert refused.reason == f"token meter: assistant/message {reason}"


STEP_START = '{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}'


def test_MTR_7_a_replace_the_meter_cannot_place_is_refused_under_MTR_7_with_a_reason() -> None:
    """MTR-7: replace locates the positional range on the meter's own node list (invalid → reject)."""
    events = events_of_lines(
        '{"type":"user/message","seq":0,"time":0,"data":{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
        '{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"text","text":"y"}],"source":{"kind":"user"}},'
        '"surfaceOp":{"op":"replace","start":0,"end":7}}',
    )
    refused = meter_state(events)
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-7", 1)
    assert isinstance(refused.reason, str) and refused.reason.startswith("token meter: ") and "7" in refused.reason


def test_MTR_8_malformed_usage_is_refused_under_MTR_8() -> None:
    events = events_of_lines(STEP_START, '{"type":"assistant/message","seq":1,"time":0,"data":{"turn":1,"step":1,'
                    '"content":[{"type":"text","text":"ok"}],"usage":{"inputTokens":"x","outputTokens":1}},"surfaceOp":"append"}')
    refused = meter_state(events)
    assert isinstance(refused, Rejected) and (refused.rule, refused.seq) == ("MTR-8", 1)


def test_DIA_9_a_d08_measurement_prices_an_override_by_system_and_tools_only() -> None:
    """DIA-9: "The token meter's header price MUST be system + tools only (overrides MTR-4)": a prefix in the
    override adds nothing under D08; under A55 it adds its messages' price (MTR-4)."""
    prefix = freeze([{"role": "user", "content": [{"type": "text", "text": "p" * 40}]}])
    header = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system="abcd", message_prefix=prefix)
    d08, a55 = measure([], Dialect.D08, override=header), measure([], Dialect.A55, override=header)
    assert not isinstance(d08, Rejected) and not isinstance(a55, Rejected)
    assert d08.total_tokens == 1 + 4  # ceil4(U16("abcd")) + 4
    assert a55.total_tokens > d08.total_tokens


def test_DIA_9_the_meter_reads_a_d08_header_by_d08() -> None:
    """DIA-9/DIA-10: a D08 log's header is read as D08 (``adapterDefaults`` kept, no ``messagePrefix``), so the
    measurement's header is the D08 header."""
    header = {"config": {"provider": "p", "model": "m"}, "adapterDefaults": {"temperature": 1},
              "messagePrefix": [{"role": "user", "content": "p"}]}
    events = [make_event("request/header", seq=0, time=0, data=freeze({"header": header, "reason": "initial"}))]
    measured = measure(events, Dialect.D08)
    assert not isinstance(measured, Rejected) and isinstance(measured.header, EpochHeader)
    assert measured.header.adapter_defaults == freeze({"temperature": 1}) and measured.header.message_prefix is ABSENT
