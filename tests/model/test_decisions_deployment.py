"""Decision outcomes of the deployment reader, the guard and the stream provenance no other test took (issue 43 item 1).

Each test takes an outcome of model/deployment.py, model/guard.py or model/provenance.py and asserts what its
rule says there: CMP-3's reader refuses what ``resolveConfig`` refuses, naming the field; CMP-4 wants a
positive integer context window; a guard's error end names its package and rule (INV-2..4, LOG-13,
LOOP-16); SURF-13's message and result clauses.
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.compaction.policy import CompactConfig
from sessionspec.model.deployment import FILE_FORMAT, Deployment, ModelCapabilities, read_compact_config, read_deployment
from sessionspec.model.guard import guard_trip
from sessionspec.model.jsonval import ABSENT, freeze, parse_json
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.provenance import (
    StepStream,
    check_message_stream,
    check_result_stream,
    check_stream_provenance,
    take_call,
    take_chunks,
)
from sessionspec.model.rejected import Rejected


def _deployment(**parts: Any) -> Deployment | Rejected:
    return read_deployment(freeze({"version": 1, **parts}))


def _refused(read: object, rule: str, field: str) -> None:
    assert isinstance(read, Rejected), read
    assert read.rule == rule and field in read.reason, read


# ---------------------------------------------------------------- the deployment file (CMP-3, CMP-4, its format)


def test_the_deployment_must_be_an_object() -> None:
    _refused(read_deployment(freeze([1])), FILE_FORMAT, "JSON object")


def test_version_true_is_not_version_1() -> None:
    """``true == 1`` in Python, not in the file's format (the schema's ``const: 1``)."""
    _refused(_deployment(version=True), FILE_FORMAT, "version")


def test_CMP_3_compaction_must_be_an_object() -> None:
    _refused(_deployment(compaction=5), "CMP-3", "compaction: must be an object")


def test_CMP_3_a_ratio_is_a_number_not_a_boolean() -> None:
    _refused(_deployment(compaction={"thresholdRatio": True}), "CMP-3", "compaction.thresholdRatio: must be a number")
    read = _deployment(compaction={"thresholdRatio": 1})
    assert isinstance(read, Deployment) and isinstance(read.compaction, CompactConfig)
    assert read.compaction.threshold_ratio == 1.0


def test_CMP_3_model_policies_is_an_array_of_objects_of_known_keys() -> None:
    _refused(_deployment(compaction={"modelPolicies": {}}), "CMP-3", "compaction.modelPolicies: must be an array")
    _refused(_deployment(compaction={"modelPolicies": [7]}), "CMP-3", "compaction.modelPolicies[0]: must be an object")
    _refused(_deployment(compaction={"modelPolicies": [{"provider": "p", "window": 1}]}), "CMP-3", "compaction.modelPolicies[0].window: unknown key")


def test_read_compact_config_refuses_a_non_object() -> None:
    _refused(read_compact_config(freeze("x")), "CMP-3", "compaction: must be an object")


def test_models_is_an_array_of_known_objects() -> None:
    _refused(_deployment(models={}), FILE_FORMAT, "models: must be an array")
    _refused(_deployment(models=[1]), FILE_FORMAT, "models[0]: must be an object")
    _refused(_deployment(models=[{"provider": "p", "model": "m", "contextWindow": 1, "x": 0}]), FILE_FORMAT, "models[0].x: unknown key")


def test_an_empty_models_array_declares_no_window() -> None:
    read = _deployment(models=[])
    assert isinstance(read, Deployment) and read.models == ()
    assert read.context_window("p", "m") is None
    assert Deployment().context_window("p", "m") is None


@pytest.mark.parametrize("entry", [
    {}, {"model": "m", "contextWindow": 1}, {"provider": "", "model": "m", "contextWindow": 1},
    {"provider": "p", "contextWindow": 1}, {"provider": "p", "model": 3, "contextWindow": 1}, {"provider": "p", "model": "", "contextWindow": 1},
], ids=["empty", "no-provider", "empty-provider", "no-model", "model-not-string", "empty-model"])
def test_a_model_names_a_non_empty_provider_and_model(entry: dict[str, Any]) -> None:
    _refused(_deployment(models=[entry]), FILE_FORMAT, "provider and model must be non-empty strings")


@pytest.mark.parametrize("window", [0, -1, 1.5, "8", True], ids=["zero", "negative", "fraction", "string", "bool"])
def test_CMP_4_a_context_window_is_a_positive_integer(window: Any) -> None:
    _refused(_deployment(models=[{"provider": "p", "model": "m", "contextWindow": window}]), "CMP-4", "models[0].contextWindow")


def test_CMP_4_a_window_written_1000_0_is_the_integer_1000() -> None:
    """JSON text ``1000.0`` is the JS number 1000, a positive integer."""
    read = read_deployment(parse_json('{"version": 1, "models": [{"provider": "p", "model": "m", "contextWindow": 1000.0}]}'))
    assert isinstance(read, Deployment) and read.context_window("p", "m") == 1000


def test_models_of_other_providers_or_other_names_are_distinct() -> None:
    read = _deployment(models=[{"provider": "p", "model": "m", "contextWindow": 10}, {"provider": "q", "model": "m", "contextWindow": 20},
                               {"provider": "p", "model": "n", "contextWindow": 30}])
    assert isinstance(read, Deployment)
    assert read.models == (ModelCapabilities(provider="p", model="m", context_window=10), ModelCapabilities(provider="q", model="m", context_window=20),
                           ModelCapabilities(provider="p", model="n", context_window=30))
    assert (read.context_window("q", "m"), read.context_window("p", "n"), read.context_window("q", "n")) == (20, 30, None)
    _refused(_deployment(models=[{"provider": "p", "model": "m", "contextWindow": 10}, {"provider": "p", "model": "m", "contextWindow": 20}]),
             FILE_FORMAT, "models[1]: p/m is declared twice")


# ---------------------------------------------------------------- the writer's guard (INV-2..4, LOG-13, LOOP-16)


@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_LOOP_16_an_invariant_error_without_a_package_named(dialect: Dialect) -> None:
    """An ``INVARIANT`` code with no message, or one the guard did not word, names no package: the turn's error is LOOP-16's."""
    for error in ({"code": "INVARIANT"}, {"code": "INVARIANT", "message": "something broke"}):
        reason = {"kind": "error", **error} if dialect is Dialect.A55 else {"kind": "error", "error": error}
        trip = guard_trip(freeze(reason), dialect)
        assert trip is not None
        assert (trip.package, trip.rule) == ("(package not named)", "LOOP-16")
        assert trip.message == error.get("message", "")


# ---------------------------------------------------------------- SURF-13's clauses


def _event(type_name: str, seq: int, data: dict[str, Any], cited: Any = ABSENT) -> Event:
    return make_event(type_name, seq=seq, time=seq, data=freeze(data), source_event_seqs=freeze(cited) if cited is not ABSENT else ABSENT,
                      surface_op="append" if type_name in ("assistant/message", "tool/result") else ABSENT)


def test_SURF_13_no_chunks_taken_leaves_the_stream_as_it_was() -> None:
    stream = StepStream()
    take_chunks(stream, (), Dialect.A55)
    assert stream == StepStream()


def test_SURF_13_a_message_without_provenance_is_not_judged_here() -> None:
    """"An absent field means the source was not recorded" (LOOP-11's to judge, not SURF-13's)."""
    stream = StepStream()
    take_chunks(stream, (_event("assistant/chunk", 3, {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "a"}}),), Dialect.A55)
    assert check_message_stream(_event("assistant/message", 4, {"turn": 1, "step": 1}), stream) == []


def test_SURF_13_a_result_answers_a_call_without_id_by_null() -> None:
    """A tool/call without a callId keys as ``null``; a result without one answers it and must cite it."""
    stream = StepStream()
    take_call(stream, _event("tool/call", 5, {"turn": 1, "step": 1, "name": "t", "arguments": "{}"}))
    assert check_result_stream(_event("tool/result", 6, {"turn": 1, "step": 1, "content": []}, cited=[5]), stream, Dialect.A55) is None
    missing = check_result_stream(_event("tool/result", 7, {"turn": 1, "step": 1, "content": []}), stream, Dialect.A55)
    assert isinstance(missing, Rejected) and missing.rule == "SURF-13" and "cites nothing, not [5]" in missing.reason


def test_LOG_14_a_tool_not_started_result_cites_nothing() -> None:
    stream = StepStream()
    closer = {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": True, "error": {"name": "ToolNotStarted", "code": "TOOL_NOT_STARTED"}}
    assert check_result_stream(_event("tool/result", 8, closer), stream, Dialect.A55) is None
    citing = check_result_stream(_event("tool/result", 8, closer, cited=[2]), stream, Dialect.A55)
    assert isinstance(citing, Rejected) and citing.rule == "SURF-13" and "its call has no tool/call in this step" in citing.reason


def test_SURF_13_a_result_without_call_or_provenance_is_no_closer() -> None:
    found = check_result_stream(_event("tool/result", 8, {"turn": 1, "step": 1, "callId": "c", "content": []}), StepStream(), Dialect.A55)
    assert isinstance(found, Rejected) and found.rule == "SURF-13" and "not a TOOL_NOT_STARTED closer" in found.reason


@pytest.mark.parametrize("type_name", ["user/message", "tool/call", "step/end"])
def test_SURF_13_judges_only_messages_and_results(type_name: str) -> None:
    assert check_stream_provenance(_event(type_name, 9, {"turn": 1, "step": 1}, cited=[1, 2]), StepStream(), Dialect.A55) == []
