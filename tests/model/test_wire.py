"""Request assembly (WIRE-1..6) of model.wire, checked against the real harness's requests."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.request_points import reconstruct_requests
from sessionspec.model.codec import parse_event_line
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, js_stringify, obj
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import Request, build_request, request_to_json
from sessionspec.spec.header_strategies import canonical_headers
from tests.support import GROUNDTRUTH

USER = obj((("role", "user"), ("content", "hi")))
PREFIX = (obj((("role", "user"), ("content", "prefix"))),)
FULL_CONFIG = obj(
    (
        ("provider", "p"), ("model", "m"), ("reasoningEffort", "high"), ("temperature", 0.5),
        ("maxTokens", 9), ("stop", ("END",)), ("custom", 1),
    )
)
TOOLS = (obj((("name", "t"), ("description", "d"), ("parameters", obj()))),)


def _scenarios() -> list[tuple[str, list[Event], int, list[str]]]:
    """(name, log, firstLiveSeq, expected loop requests as JS text minus sessionId) per ground-truth session."""
    out = []
    for directory in sorted(p for p in GROUNDTRUTH.iterdir() if p.is_dir()):
        requests = json.loads((directory / "requests.json").read_text(encoding="utf-8"))
        meta = json.loads((directory / "requests.meta.json").read_text(encoding="utf-8"))
        sessions = json.loads((directory / "sessions.json").read_text(encoding="utf-8"))
        for session_id, info in sessions.items():
            events: list[Event] = []
            for line in (directory / info["file"]).read_text(encoding="utf-8").splitlines():
                parsed = parse_event_line(line)
                assert not isinstance(parsed, Rejected)
                events.extend(parsed)
            expected = []
            for request, m in zip(requests, meta):
                if m["agentLoopRequest"] and m["sessionId"] == session_id:
                    value = freeze(request)
                    assert isinstance(value, JsonObject)
                    expected.append(js_stringify(JsonObject((k, v) for k, v in value.items() if k != "sessionId")))
            out.append((f"{directory.name}/{session_id}", events, info["header"].get("seedLength", 0), expected))
    return out


SCENARIOS = _scenarios()


@pytest.mark.parametrize(("name", "events", "first_live", "expected"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_WIRE_1_reconstructed_requests_equal_the_real_loop_requests(
    name: str, events: list[Event], first_live: int, expected: list[str]
) -> None:
    """WIRE-1/WIRE-2: field values and key order equal what the real loop handed to the model (JSONEQ)."""
    requests = reconstruct_requests(events, first_live_seq=first_live)
    assert not isinstance(requests, Rejected)
    assert [js_stringify(request_to_json(r)) if r is not None else None for r in requests] == expected


def test_WIRE_1_groundtruth_covers_all_loop_requests() -> None:
    # 43 loop requests of the session.jsonl logs plus the 3 of the k parent (session.parent.jsonl).
    assert sum(len(s[3]) for s in SCENARIOS) == 46


def test_WIRE_1_field_order_with_every_optional_field() -> None:
    header = EpochHeader(config=FULL_CONFIG, system="sys", tools=TOOLS, message_prefix=PREFIX)
    request = request_to_json(build_request(header, (USER,)))
    assert list(request.keys()) == [
        "provider", "model", "reasoningEffort", "messages", "system", "tools", "temperature", "maxTokens", "stop"
    ]
    assert request["temperature"] == 0.5 and request["stop"] == ("END",) and "custom" not in request


def test_WIRE_1_absent_fields_stay_absent() -> None:
    request = request_to_json(build_request(EpochHeader(config=obj((("provider", "p"), ("model", "m")))), ()))
    assert js_stringify(request) == '{"provider":"p","model":"m","messages":[]}'


def test_WIRE_2_prefix_precedes_history_and_system_is_not_a_message() -> None:
    header = EpochHeader(config=FULL_CONFIG, system="sys", message_prefix=PREFIX)
    request = build_request(header, (USER,))
    assert request.messages == (*PREFIX, USER)
    assert all(isinstance(m, JsonObject) and m.get("content") != "sys" for m in request.messages)
    assert request.system == "sys"


def test_WIRE_3_request_and_messages_are_deeply_immutable() -> None:
    request = build_request(EpochHeader(config=FULL_CONFIG, tools=TOOLS, message_prefix=PREFIX), (USER,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.model = "x"  # type: ignore[misc]
    assert isinstance(request.messages, tuple)
    message = request.messages[0]
    assert isinstance(message, JsonObject)
    with pytest.raises(TypeError):
        message["content"] = "mutated"
    tools = request.tools
    assert isinstance(tools, tuple) and isinstance(tools[0], JsonObject)
    with pytest.raises(TypeError):
        tools[0]["name"] = "x"
    stop = request.stop
    assert isinstance(stop, tuple)


def test_WIRE_4_request_value_carries_no_loop_marker_or_signal() -> None:
    """WIRE-4 (loop marking by identity) and the live ``signal`` are not values: the model's
    request has neither, so a marker can never leak into JSONEQ comparisons."""
    request = build_request(EpochHeader(config=FULL_CONFIG), (USER,))
    text = js_stringify(request_to_json(request))
    for key in ("signal", "sessionId", "agentLoopRequest", "purpose"):
        assert f'"{key}"' not in text
    assert not hasattr(request, "signal")


@given(canonical_headers(), st.lists(st.sampled_from((USER, PREFIX[0])), max_size=3))
def test_WIRE_5_request_is_a_pure_function_of_header_and_boundary(header: EpochHeader, boundary: list[JsonObject]) -> None:
    first = build_request(header, boundary)
    boundary.append(USER)  # later changes to the live list cannot reach the built request
    assert first == build_request(header, boundary[:-1])
    assert js_stringify(request_to_json(first)) == js_stringify(request_to_json(build_request(header, tuple(boundary[:-1]))))


def test_WIRE_6_replay_state_reaches_the_request_unstripped() -> None:
    """WIRE-6: adapter-layer changes (stripping a foreign ``replayState``) are not modelled: the
    model's request is the value at dispatch, with the provenance as logged."""
    provenance = obj((("provider", "other"), ("model", "m"), ("replayState", obj((("opaque", "x"),)))))
    assistant = obj((("role", "assistant"), ("content", ()), ("provenance", provenance)))
    request = build_request(EpochHeader(config=FULL_CONFIG), (assistant,))
    assert request.messages == (assistant,)


def test_WIRE_1_request_dataclass_defaults_are_absent() -> None:
    request = Request(provider="p", model="m", messages=())
    assert request.system is ABSENT and request.tools is ABSENT and request.stop is ABSENT
