"""Decision outcomes of the shape area no other test took (issue 43 item 1): LOG-9's field types, LOG-12's
prompt envelope, LOG-10/DIA-9's plugin records, CMP-1's summary, LOG-11/DIA-14's turn/end reasons, the record
keys' orders, and the header records' types, canonical keys and placement (HDR-1, HDR-2, FMT-9, DIA-12).

Each test builds the event whose decision is at stake and asserts what the rule says of it (a finding of the
rule, or none).
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.event_shape import check_core_shape, check_prompt_shape
from sessionspec.model.header import EpochHeader
from sessionspec.model.header_log import (
    HeaderTrack,
    check_canonical_header,
    check_header_record,
    check_header_types,
    check_placement,
    header_shapes,
    open_step,
)
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.log_only_shape import check_compaction_shape, check_plugin_shape
from sessionspec.model.record_keys import valid_orders
from sessionspec.model.rejected import Rejected
from sessionspec.model.turn_end_reason import check_turn_end_reason


def _event(type_name: str, data: Any, seq: int = 7) -> Event:
    return make_event(type_name, seq=seq, time=seq, data=freeze(data))


def _rules(found: list[Rejected] | Rejected | None) -> list[tuple[str, str]]:
    found = [] if found is None else [found] if isinstance(found, Rejected) else found
    return [(r.rule, r.reason) for r in found]


# ---------------------------------------------------------------- LOG-9: field types of the core table

_RESULT = {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": True}
_MESSAGE = {"turn": 1, "step": 1, "content": [], "provenance": {"provider": "p", "model": "m"}}


@pytest.mark.parametrize(("data", "flaw"), [
    (_RESULT, None),
    ({**_RESULT, "error": {"name": "E", "code": "X"}}, None),
    ({**_RESULT, "error": {"code": "X", "name": "E"}}, "tool/result error is not {name, code}"),
    ({**_RESULT, "error": "boom"}, "tool/result error is not {name, code}"),
], ids=["no-error", "error", "error-keys-out-of-order", "error-not-object"])
def test_LOG_9_a_tool_result_error_is_name_then_code(data: dict[str, Any], flaw: str | None) -> None:
    assert _rules(check_core_shape(_event("tool/result", data), Dialect.A55)) == ([] if flaw is None else [("LOG-9", flaw)])


@pytest.mark.parametrize(("data", "flaw"), [
    (_MESSAGE, None),
    ({**_MESSAGE, "usage": {"inputTokens": 1}}, None),
    ({**_MESSAGE, "usage": 3}, "assistant/message usage is not an object"),
    ({**_MESSAGE, "provenance": {"model": "m", "provider": "p"}}, "assistant/message provenance is not {provider, model, replayState?}"),
], ids=["no-usage", "usage", "usage-not-object", "provenance-out-of-order"])
def test_LOG_9_an_assistant_message_carries_provenance_and_usage_of_its_types(data: dict[str, Any], flaw: str | None) -> None:
    assert _rules(check_core_shape(_event("assistant/message", data), Dialect.A55)) == ([] if flaw is None else [("LOG-9", flaw)])


@pytest.mark.parametrize("todos", ["x", [{"status": "pending", "content": "a"}], [{"content": "a"}]], ids=["not-list", "out-of-order", "no-status"])
def test_LOG_9_todos_are_a_list_of_content_then_status(todos: Any) -> None:
    assert _rules(check_core_shape(_event("todo/write", {"todos": todos}), Dialect.A55)) == [
        ("LOG-9", "todo/write todos is not a list of {content, status: pending|in_progress|completed}")]


def test_LOG_9_a_trigger_source_is_an_object() -> None:
    found = _rules(check_core_shape(_event("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": "user"}}), Dialect.A55))
    assert len(found) == 1 and found[0][0] == "LOG-9" and "is not {kind: message|injection, source}" in found[0][1]
    assert check_core_shape(_event("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {}}}), Dialect.A55) == []


# ---------------------------------------------------------------- LOG-12: the prompt's envelope


_PROMPT = {"content": [], "source": {"kind": "user"}}
_ENVELOPE_FLAW = ("LOG-12", "user/message envelope is not {displayContent, prefixContexts: [{source, meta?}]}")


@pytest.mark.parametrize(("contexts", "ok"), [
    ([], True), ([{"source": "s"}, {"source": "s", "meta": {}}], True),
    ("x", False), ([{"meta": {}}], False), ([{"meta": {}, "source": "s"}], False),
], ids=["empty", "two", "not-list", "no-source", "out-of-order"])
def test_LOG_12_prefix_contexts_are_a_list_of_source_meta(contexts: Any, ok: bool) -> None:
    data = {**_PROMPT, "envelope": {"displayContent": [], "prefixContexts": contexts}}
    assert _rules(check_prompt_shape(_event("user/message", data))) == ([] if ok else [_ENVELOPE_FLAW])


# ---------------------------------------------------------------- LOG-10, DIA-9, CMP-1: log-only records


def test_LOG_10_other_plugin_types_are_opaque() -> None:
    assert check_plugin_shape(_event("llm/retry", {"anything": 1})) is None


@pytest.mark.parametrize(("data", "flaw"), [
    ({"title": "t", "messageSeqs": [1], "source": "s"}, None),
    ({"title": "t", "messageSeqs": 1, "source": "s"}, "session/title data has a title or messageSeqs of the wrong type"),
], ids=["ok", "seqs-not-list"])
def test_LOG_10_a_session_title_has_a_list_of_message_seqs(data: dict[str, Any], flaw: str | None) -> None:
    assert _rules(check_plugin_shape(_event("session/title", data))) == ([] if flaw is None else [("LOG-10", flaw)])


_NOT_STRINGS = "request/context data has a provider or model that is not a string"
_BAD_WINDOW = "request/context data has a contextWindow that is not a positive integer"


@pytest.mark.parametrize(("data", "flaw"), [
    ({"provider": "p", "model": "m", "contextWindow": 1}, None),
    ({"provider": "p", "model": "m"}, None),
    ({"provider": 1, "model": "m"}, _NOT_STRINGS),
    ({"provider": "p", "model": None}, _NOT_STRINGS),
    ({"provider": "p", "model": "m", "contextWindow": 0}, _BAD_WINDOW),
    ({"provider": "p", "model": "m", "contextWindow": -5}, _BAD_WINDOW),
    ({"provider": "p", "model": "m", "contextWindow": True}, _BAD_WINDOW),
    ({"provider": "p", "model": "m", "contextWindow": 1.5}, _BAD_WINDOW),
], ids=["ok", "no-window", "provider", "model", "zero", "negative", "bool", "fraction"])
def test_DIA_9_request_context_names_strings_and_a_positive_window(data: dict[str, Any], flaw: str | None) -> None:
    assert _rules(check_plugin_shape(_event("request/context", data))) == ([] if flaw is None else [("DIA-9", flaw)])


@pytest.mark.parametrize(("provider", "model"), [(3, "m"), ("p", None), ("", "m")])
def test_CMP_1_a_summary_names_a_non_empty_string_provider_and_model(provider: Any, model: Any) -> None:
    data = {"summary": [], "shadowedRange": {"start": 1, "end": 2}, "shadowedSeqs": [1, 2], "shadowedTokenCount": 3,
            "provider": provider, "model": model}
    assert _rules(check_compaction_shape(_event("compact/summary", data), Dialect.A55)) == [
        ("CMP-1", "compact/summary data has an empty provider or model")]


# ---------------------------------------------------------------- the record keys' orders


def test_valid_orders_are_the_required_keys_with_any_optional_ones_in_order() -> None:
    """Keys of this test's own (the orders are cached: a table asked before would not be computed again)."""
    assert valid_orders(()) == frozenset({()})
    assert valid_orders((("decisions_a", True), ("decisions_b", False), ("decisions_c", True))) == frozenset({
        ("decisions_a", "decisions_c"), ("decisions_a", "decisions_b", "decisions_c")})


# ---------------------------------------------------------------- LOG-11 and DIA-14: turn/end reasons


def _end(reason: Any, dialect: Dialect = Dialect.A55) -> list[tuple[str, str]]:
    return _rules(check_turn_end_reason(_event("turn/end", {"turn": 1, "reason": reason}), dialect))


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_LOG_11_an_error_step_is_an_integer_not_a_boolean(dialect: Dialect) -> None:
    assert _end({"kind": "error", "step": True, "message": "m"}, dialect) == [("LOG-11", 'turn/end reason "error" has a step that is not an integer')]


@pytest.mark.parametrize("failure", [{"message": "m"}, {"message": 5, "code": "X"}, {"code": "X"}], ids=["no-code", "message-not-string", "no-message"])
def test_LOG_11_an_error_failure_has_a_message_and_a_code(failure: dict[str, Any]) -> None:
    assert _end({"kind": "error", "step": 1, "failure": failure}) == [("LOG-11", 'turn/end reason "error" has a failure without message and code')]
    assert _end({"kind": "error", "step": 1, "failure": {"message": "m", "code": None}}) == []


def test_LOG_11_an_error_with_a_failure_is_kind_step_failure() -> None:
    found = _end({"kind": "error", "failure": {"message": "m", "code": "X"}})
    assert len(found) == 1 and found[0] == ("LOG-11", "turn/end reason \"error\" lacks 'step'")


def test_DIA_14_a_reason_without_kind_is_no_kind_the_reader_knows() -> None:
    assert _end({}, Dialect.D08) == [("LOG-11", "turn/end reason null is not a turn/end reason kind")]


@pytest.mark.parametrize("error", [{"message": "m", "code": 5}, {"message": 5, "code": "X"}, {"code": "X"}], ids=["code", "message", "no-message"])
def test_DIA_14_an_error_end_carries_an_llm_failure(error: dict[str, Any]) -> None:
    assert _end({"kind": "error", "error": error}, Dialect.D08) == [
        ("LOG-11", 'turn/end reason "error" has an error that is not an LLM failure {message, code, status?, providerRetryAfterMs?, requestId?}')]
    assert _end({"kind": "error", "error": {"message": "m", "code": "X"}}, Dialect.D08) == []


# ---------------------------------------------------------------- HDR-1, HDR-2, FMT-9: header records


def _header(header: dict[str, Any], reason: str = "initial") -> Event:
    return _event("request/header", {"header": header, "reason": reason})


_CONFIG = {"provider": "p", "model": "m"}


@pytest.mark.parametrize(("field", "value", "what"), [
    ("config.temperature", True, "a number"), ("config.temperature", "hot", "a number"),
    ("config.stop", "x", "a list of strings"), ("config.stop", ["a", 1], "a list of strings"),
    ("tools", [1], "a list of tool schemas"), ("messagePrefix", [{"role": "user"}, 5], "a list of messages"),
], ids=["temperature-bool", "temperature-string", "stop-string", "stop-number", "tools-entry", "prefix-entry"])
def test_HDR_1_header_field_types(field: str, value: Any, what: str) -> None:
    header: dict[str, Any] = {"config": dict(_CONFIG)}
    if field.startswith("config."):
        header["config"][field.removeprefix("config.")] = value
    else:
        header[field] = value
    found = _rules(check_header_types(_header(header), Dialect.A55))
    assert len(found) == 1 and found[0][0] == "HDR-1" and found[0][1].startswith(f"request/header {field} is ") and found[0][1].count(f"not {what}") == 1


def test_HDR_1_a_prefix_of_placeholders_is_opaque() -> None:
    """FMT-6 / LEG-8: a scrubbed prefix (``{{messagePrefix}}`` entries) skips the type check."""
    assert check_header_types(_header({"config": _CONFIG, "messagePrefix": ["{{messagePrefix}}", 5]}), Dialect.A55) == []


def test_HDR_2_an_empty_header_object_has_no_key_out_of_place() -> None:
    assert check_canonical_header(_header({}), Dialect.A55) == []


def test_DIA_12_a_retry_header_after_a_finish_is_in_place() -> None:
    """DIA-12: each attempt has its header; one after the attempt's finish chunk (DIA-7) opens the retry."""
    shapes = header_shapes(Dialect.D08)
    track = HeaderTrack()
    open_step(track)
    track.step_header = 3
    track.last_chunk = _event("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "error"}}}, seq=5)
    assert check_placement(track, 6, shapes) is None
    track.last_chunk = _event("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}, seq=5)
    found = check_placement(track, 6, shapes)
    assert isinstance(found, Rejected) and found.rule == "FMT-9"


def test_FMT_9_a_change_after_a_scrubbed_header_decides_no_equality() -> None:
    """FMT-6: the header in force has a scrubbed field, so whether the change changed anything is hidden (no HDR-4
    finding though the visible fields are equal); the instance was anchored, so (e) holds."""
    shapes = header_shapes(Dialect.A55)
    track = HeaderTrack()
    open_step(track)
    anchor = EpochHeader(config=freeze(_CONFIG), system="{{system}}")
    assert check_header_record(track, _header({"config": _CONFIG, "system": "{{system}}"}), anchor, shapes, True) == []
    open_step(track)
    change = EpochHeader(config=freeze(_CONFIG), system="{{system}}")
    assert track.anchored
    assert check_header_record(track, _header({"config": _CONFIG, "system": "{{system}}"}, "change"), change, shapes, True) == []
    # Only the header in force is scrubbed: whether the change's "s" differs from it is still hidden.
    open_step(track)
    assert check_header_record(track, _header({"config": _CONFIG, "system": "s"}, "change"), EpochHeader(config=freeze(_CONFIG), system="s"),
                               shapes, True) == []
    # The same change against a header in force without a scrubbed field is HDR-4's equal change.
    plain = HeaderTrack()
    open_step(plain)
    check_header_record(plain, _header({"config": _CONFIG, "system": "s"}), EpochHeader(config=freeze(_CONFIG), system="s"), shapes, True)
    open_step(plain)
    found = check_header_record(plain, _header({"config": _CONFIG, "system": "s"}, "change"), EpochHeader(config=freeze(_CONFIG), system="s"), shapes, True)
    assert _rules(found) == [("FMT-9", "change header equal to the header in force (HDR-4)")]
