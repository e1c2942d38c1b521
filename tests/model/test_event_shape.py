"""The data shapes as the model decides them in a log (model/event_shape.py, turn_end_reason.py, log_only_shape.py
and header_log.py's data and canonical header): LOG-9, LOG-11, LOG-12, HDR-7, HDR-2, CMP-1, DIA-4, LOG-10, DIA-9.

Both ways, over what the model writes: the loop simulator's logs (``sessionspec.generate``) and the D08 reader's
migration of them (DIA-13), and the compaction transaction's bracket in each dialect; every event is accepted,
and each change a rule forbids is refused by that rule.  The plugin records the model does not write
(``session/title``, ``request/context``) are taken from a real D08 log.  Then LOG-9's field types as told, by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.compaction import Ids, SummaryCall, Trigger, compact_if_needed
from sessionspec.model.compaction.records import SummarizerOutput
from sessionspec.model.event_shape import check_core_shape, check_prompt_shape, check_type_shape
from sessionspec.model.jsonval import JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import compaction_hooks
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.rejected import Rejected
from sessionspec.spec.machine_scripts import compaction_plugin
from tests.support import D08_HEADLESS, dump_turns, events_of_lines


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's shape definitions over ``events``, as the checker's fold runs them on each live event."""
    return [finding for event in events for finding in (*check_core_shape(event, dialect), *check_type_shape(event, dialect))]


def loop_log(seed: int, events: int = 600) -> list[Event]:
    return [event for block in generate_events(events, seed, 2) for event in block]


def migrated_log(seed: int, events: int = 600) -> list[Event]:
    return list(migrate_legacy(loop_log(seed, events), "s"))


def _d08_summary(call: SummaryCall) -> SummarizerOutput:
    """The default D08 summarizer's output: raw output, a streamed call and its usage (DIA-4)."""
    text = freeze({"type": "text", "text": "S"})
    return SummarizerOutput(summary=(text,), provider=call.provider, model=call.model, max_tokens=64, raw_output=(text,),
                            llm_stream_call=True, usage=freeze({"inputTokens": 5, "outputTokens": 1}))


def compaction_log(dialect: Dialect) -> list[Event]:
    """A55: the turns the loop writes with compact-basic, which compact under pressure; D08: a migrated loop log and
    the bracket a manual compaction appends to it (the loop model writes A55 only)."""
    match dialect:
        case Dialect.A55:
            return list(dump_turns(compaction_hooks(compaction_plugin(700, prune=True))))
        case Dialect.D08:
            log = migrated_log(1, 400)
            run = compact_if_needed(log, _d08_summary, dialect=dialect, trigger=Trigger.MANUAL,
                                    ids=lambda attempt: Ids(compaction_id="c", message_id="k", source_command_id="cmd"))
            assert not isinstance(run, Rejected) and run.events
            return [*log, *run.events]


def real_d08_log() -> list[Event]:
    """The events of a real D08 log (its first line is the session header, FMT-1)."""
    return events_of_lines(*(D08_HEADLESS / "advanced-toolchain" / "session.jsonl").read_text(encoding="utf-8").splitlines()[1:])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_writes_is_accepted(seed: int) -> None:
    log = loop_log(seed)
    assert {e.type for e in log} >= {"turn/start", "turn/end", "user/message", "assistant/chunk", "tool/result", "request/header"}
    assert judged(log) == []
    assert judged(migrated_log(seed), Dialect.D08) == []


@pytest.mark.parametrize("dialect", list(Dialect))
def test_what_compaction_writes_is_accepted(dialect: Dialect) -> None:
    log = compaction_log(dialect)
    assert {e.type for e in log} & {"compact/summary", "compaction/summary"}
    assert judged(log, dialect) == []


def test_a_real_d08_log_with_plugin_records_is_accepted() -> None:
    log = real_d08_log()
    assert {e.type for e in log} >= {"session/title", "request/context"}
    assert judged(log, Dialect.D08) == []


def _edited(event: Event, edit: Callable[[Any], Any]) -> Event:
    """``event`` with ``edit`` applied to a plain copy of its data (``edit`` returns the new data or None for the same)."""
    data = thaw(event.data)
    changed = edit(data)
    return replace(event, data=freeze(data if changed is None else changed))


def _first(log: list[Event], kind: str, where: Callable[[Event], bool] = lambda e: True) -> int:
    return next(i for i, e in enumerate(log) if e.type == kind and where(e))


def _rules_after(log: list[Event], index: int, edit: Callable[[Any], Any], dialect: Dialect = Dialect.A55) -> set[str]:
    changed = list(log)
    changed[index] = _edited(log[index], edit)
    return {finding.rule for finding in judged(changed, dialect)}


def _swap_first_two(data: dict[str, Any]) -> dict[str, Any]:
    items = list(data.items())
    return dict([items[1], items[0], *items[2:]])


def _set(key: str, value: object) -> Callable[[Any], None]:
    return lambda data: data.__setitem__(key, value)


def _is_chunk(kind: str) -> Callable[[Event], bool]:
    return lambda e: isinstance(e.data, JsonObject) and isinstance(chunk := e.data.get("chunk"), JsonObject) and chunk.get("type") == kind


def _not_aborted(event: Event) -> bool:
    return get(get(event.data, "reason"), "kind") != "aborted"


A55_CHANGES: list[tuple[str, str, Callable[[Event], bool], Callable[[Any], Any]]] = [
    # LOG-9: a table's keys, their order, a field's type, a chunk kind and its keys
    ("LOG-9", "step/start", lambda e: True, _swap_first_two),
    ("LOG-9", "tool/call", lambda e: True, _set("arguments", {"text": "x"})),
    ("LOG-9", "tool/result", lambda e: True, _set("isError", "false")),
    ("LOG-9", "assistant/message", lambda e: True, _set("extra", 1)),
    ("LOG-9", "turn/start", lambda e: True, lambda d: d["trigger"].__setitem__("kind", "timer")),
    ("LOG-9", "assistant/chunk", _is_chunk("text-delta"), lambda d: d["chunk"].__setitem__("type", "text")),
    ("LOG-9", "assistant/chunk", _is_chunk("finish"), lambda d: d["chunk"].__setitem__("extra", 1)),
    # LOG-11: a reason the loop never writes
    # (a reason-bearing aborted is LOG-8's load check, LEG-4)
    ("LOG-11", "turn/end", _not_aborted, lambda d: d["reason"].__setitem__("extra", 1)),
    ("LOG-11", "turn/end", lambda e: True, _set("reason", {"kind": "error", "step": "1", "message": "m"})),
    ("LOG-11", "turn/end", lambda e: True, _set("reason", {"kind": "rejected", "reason": 3})),
    # LOG-12: prompt data
    ("LOG-12", "user/message", lambda e: True, lambda d: {"source": d["source"], "content": d["content"]}),
    ("LOG-12", "user/message", lambda e: True, _set("envelope", {"displayContent": []})),
    ("LOG-12", "steering/message", lambda e: True, _swap_first_two),
    # HDR-7: the record's data; HDR-2 (PFX-10): the canonical header
    ("HDR-7", "request/header", lambda e: True, _swap_first_two),
    ("HDR-2", "request/header", lambda e: True, lambda d: d["header"].__setitem__("tools", [])),
    ("HDR-2", "request/header", lambda e: True, lambda d: d["header"].__setitem__("messagePrefix", [])),
    ("HDR-2", "request/header", lambda e: True, lambda d: d.__setitem__("header", {"system": "s", **d["header"]})),
    ("HDR-2", "request/header", lambda e: True, lambda d: d["header"].__setitem__("adapterDefaults", {})),
]


@pytest.mark.parametrize(("rule", "kind", "where", "edit"), A55_CHANGES, ids=[f"{r}-{k}-{i}" for i, (r, k, _, _) in enumerate(A55_CHANGES)])
@pytest.mark.parametrize("seed", [0, 4])
def test_each_change_a_rule_forbids_is_refused_by_it(rule: str, kind: str, where: Callable[[Event], bool], edit: Callable[[Any], Any], seed: int) -> None:
    log = loop_log(seed, 1500)
    assert _rules_after(log, _first(log, kind, where), edit) == {rule}


D08_CHANGES: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("LOG-11", "turn/end", _set("reason", {"kind": "bogus"})),
    ("LOG-11", "turn/end", _set("reason", {"kind": "error", "error": {"message": "m"}})),
    ("LOG-11", "turn/end", _set("reason", {"kind": "blocked", "why": "x"})),
    ("LOG-9", "user/message", lambda d: d["source"].pop("kind")),
    ("LOG-9", "step/end", _swap_first_two),
    ("HDR-2", "request/header", lambda d: d["header"].__setitem__("extra", 1)),
]


@pytest.mark.parametrize(("rule", "kind", "edit"), D08_CHANGES, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(D08_CHANGES)])
def test_each_change_a_d08_rule_forbids_is_refused_by_it(rule: str, kind: str, edit: Callable[[Any], Any]) -> None:
    log = migrated_log(2, 1500)
    assert _rules_after(log, _first(log, kind), edit, Dialect.D08) == {rule}


@pytest.mark.parametrize(("dialect", "rule"), [(Dialect.A55, "CMP-1"), (Dialect.D08, "DIA-4")])
def test_a_summary_record_out_of_its_shape_is_refused(dialect: Dialect, rule: str) -> None:
    log = compaction_log(dialect)
    summary = _first(log, "compact/summary" if dialect is Dialect.A55 else "compaction/summary")
    for edit in (lambda d: {k: d[k] for k in reversed(d)}, _set("provider", ""), _set("shadowedRange", [1, 2]), lambda d: d.pop("model")):
        assert _rules_after(log, summary, edit, dialect) == {rule}


def test_a_bracket_record_out_of_its_shape_is_cmp_1() -> None:
    log = compaction_log(Dialect.A55)
    assert _rules_after(log, _first(log, "compact/start"), _set("extra", 1)) == {"CMP-1"}
    assert _rules_after(log, _first(log, "compact/end"), lambda d: {"error": "e", **d}) == {"CMP-1"}


@pytest.mark.parametrize(("kind", "rule", "edit"), [
    ("session/title", "LOG-10", _set("title", 1)), ("session/title", "LOG-10", lambda d: d.pop("source")),
    ("request/context", "DIA-9", _set("contextWindow", 0)), ("request/context", "DIA-9", _set("model", None)),
    ("request/context", "DIA-9", _swap_first_two),
])
def test_a_plugin_record_out_of_its_shape_is_refused(kind: str, rule: str, edit: Callable[[Any], Any]) -> None:
    log = real_d08_log()
    assert _rules_after(log, _first(log, kind), edit, Dialect.D08) == {rule}


WRONG = [
    ("step/end", {"turn": "1", "step": True}, ["turn is not an integer", "step is not an integer"]),
    ("turn/end", {"turn": 1.5, "reason": {"kind": "completed"}}, ["turn is not an integer"]),
    ("turn/start", {"turn": None, "trigger": {"kind": "message", "source": {}}}, ["turn is not an integer"]),
    ("turn/start", {"turn": 1, "trigger": {"kind": "timer", "source": {}}},
     ['trigger {"kind":"timer","source":{}} is not {kind: message|injection, source}']),
    ("tool/call", {"turn": 1, "step": 1, "callId": 7, "name": None, "arguments": {}},
     ["callId is not a string", "name is not a string", "arguments is not a string"]),
    ("tool/result", {"turn": True, "step": 1, "callId": "c", "content": "x", "isError": "false", "error": {"code": 1}},
     ["turn is not an integer", "content is not a list", "isError is not a boolean", "error is not {name, code}"]),
    ("assistant/message", {"turn": 1, "step": 1, "content": [1], "provenance": {"model": "m"}, "usage": []},
     ["content is not a list of objects", "provenance is not {provider, model, replayState?}", "usage is not an object"]),
    ("prompt/blocked", {"content": {}, "source": [], "reason": 1},
     ["content is not a list", "source is not an object", "reason is not a string"]),
    ("todo/write", {"todos": [{"content": "c", "status": "done"}]},
     ["todos is not a list of {content, status: pending|in_progress|completed}"]),
]


@pytest.mark.parametrize(("kind", "data", "flaws"), WRONG, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(WRONG)])
def test_every_wrongly_typed_field_is_told_in_the_table_order(kind: str, data: dict[str, object], flaws: list[str]) -> None:
    """LOG-9's field types as told: every typed field of a core event that has the wrong type is named, in the order
    of the rule book's table (the keys first).  Written out by hand, so a rewrite of the checks keeps the reports."""
    event = make_event(kind, seq=3, time=0, data=freeze(data))
    found = check_core_shape(event, Dialect.A55)
    assert [f.reason for f in found] == [f"{kind} {why}" for why in flaws]
    assert {(f.rule, f.seq) for f in found} == {("LOG-9", 3)}


def test_a_data_that_is_not_an_object_lacks_every_field() -> None:
    event = make_event("tool/result", seq=0, time=0, data=freeze([1]))
    assert [f.reason for f in check_core_shape(event, Dialect.A55)] == [
        "tool/result data is not an object", "tool/result turn is not an integer", "tool/result step is not an integer",
        "tool/result callId is not a string", "tool/result content is not a list", "tool/result isError is not a boolean",
    ]


def test_the_key_flaw_comes_before_the_type_flaws() -> None:
    event = make_event("step/start", seq=0, time=0, data=freeze({"step": 1, "turn": "1"}))
    reasons = [f.reason for f in check_core_shape(event, Dialect.D08)]
    assert reasons[1:] == ["step/start turn is not an integer"]
    assert reasons[0].startswith("step/start data has its keys out of order")


_PROMPT = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
_ENVELOPE = {"displayContent": [], "prefixContexts": [{"source": {"kind": "skill"}}]}


@pytest.mark.parametrize(("kind", "data", "flaws"), [
    ("steering/message", {"turn": 1, **_PROMPT}, []),
    ("user/message", {**_PROMPT, "envelope": _ENVELOPE, "meta": {}}, []),
    # LOG-12 "`steering/message` without its `turn`": the turn leads its data, and a data that is no object has none
    ("steering/message", {**_PROMPT, "turn": 1}, ["data does not start with its turn"]),
    ("steering/message", [1], ["data does not start with its turn"]),
    # "{content, source, envelope?, meta?}": the keys, then content a list, source a MessageSource
    ("user/message", {"source": {"kind": "user"}, "content": []}, ["data has its keys out of order (source, content; expected content, source)"]),
    ("user/message", {"content": "hi", "source": {}}, ["content is not a list", "source is not an object with a kind"]),
    ("steering/message", {"turn": 1, "content": [], "source": {"kind": 1}}, ["source is not an object with a kind"]),
    # "`envelope = {displayContent, prefixContexts: [{source, meta?}]}`"
    ("user/message", {**_PROMPT, "envelope": {"displayContent": []}}, ["envelope is not {displayContent, prefixContexts: [{source, meta?}]}"]),
    ("user/message", {**_PROMPT, "envelope": {**_ENVELOPE, "prefixContexts": [{"meta": {}}]}},
     ["envelope is not {displayContent, prefixContexts: [{source, meta?}]}"]),
    ("user/message", {**_PROMPT, "envelope": {**_ENVELOPE, "prefixContexts": {}}}, ["envelope is not {displayContent, prefixContexts: [{source, meta?}]}"]),
])
def test_LOG_12_each_prompt_flaw_is_told_at_the_events_seq(kind: str, data: object, flaws: list[str]) -> None:
    """LOG-12's prompt data, flaw by flaw: every finding names LOG-12 and the seq of the event it is about (the line
    the checker reports), whether it is the steering turn or the prompt's own fields."""
    event = make_event(kind, seq=7, time=0, data=freeze(data))
    found = check_prompt_shape(event)
    assert [(f.rule, f.seq, f.reason) for f in found] == [("LOG-12", 7, f"{kind} {why}") for why in flaws]
