"""Unit tests for the token meter (MTR), named after rule IDs."""

from __future__ import annotations

from model.header import EpochHeader
from model.jsonval import ABSENT, freeze
from model.log import Dialect
from model.meter import (
    BaselineKind,
    ceil4,
    estimate_header,
    estimate_message,
    measure,
    node_price,
    price,
    provider_output_price,
)
from model.rejected import Rejected
from tests.support import Log


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
