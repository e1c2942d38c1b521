"""DIA-10, DIA-14 and DIA-7 as the model decides them in a log (model/d08_shapes.py), against the D08 writer.

The model writes D08 shapes by the reader's migration (``migrate_legacy``, DIA-13: A55 shapes given their D08
identity) of the logs the loop simulator writes.  Both ways: every migrated message, turn end and retry is
accepted, and each change the rule forbids (an identity taken away, an unknown abort reason, a message for or
citing a failed attempt) is refused by that rule.  The fold here is the test's own (a RetryAttempts per step,
as the checker keeps one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.d08_shapes import (
    RetryAttempts,
    check_aborted_turn_end,
    check_message_identity,
    take_retry_event,
)
from sessionspec.model.jsonval import JsonObject, freeze, get, thaw
from sessionspec.model.log import Event, make_event
from sessionspec.model.migrate import migrate_legacy, migrate_turn_end_reason
from sessionspec.model.rejected import Rejected


def judged(events: Sequence[Event]) -> list[Rejected]:
    """The model's D08 shape definitions folded over ``events``: identity and abort reasons per event, attempts per step."""
    found: list[Rejected] = []
    attempts = RetryAttempts()
    for event in events:
        bad = check_message_identity(event) or (check_aborted_turn_end(event) if event.type == "turn/end" else None)
        found += [bad] if bad is not None else []
        attempts, retry_flaws = take_retry_event(attempts, event)
        found += retry_flaws
    return found


def d08_log(seed: int, events: int = 400) -> list[Event]:
    return list(migrate_legacy([event for block in generate_events(events, seed, 5) for event in block], "s"))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_d08_writer_writes_is_accepted(seed: int) -> None:
    log = d08_log(seed)
    assert {e.type for e in log} >= {"user/message", "assistant/message", "tool/result", "turn/end"}
    assert judged(log) == []


def _changed(event: Event, path: tuple[str, ...], value: object) -> Event:
    """``event`` with ``data`` at ``path`` set to ``value`` (deleted for None)."""
    data = thaw(event.data)
    assert isinstance(data, dict)
    at = data
    for key in path[:-1]:
        at = at[key]
    if value is None:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return replace(event, data=freeze(data))


IDENTITY_CHANGES = [
    ("user/message", ("id",), None), ("user/message", ("role",), "assistant"), ("user/message", ("source",), None),
    ("assistant/message", ("message", "id"), ""), ("assistant/message", ("message", "role"), "user"),
    ("assistant/message", ("message", "source", "kind"), "tool"), ("assistant/message", ("message", "source", "provider"), None),
    ("assistant/message", ("message",), None), ("tool/result", ("message", "source", "callId"), 7),
    ("tool/result", ("message", "content"), []), ("tool/result", ("message", "role"), "assistant"),
]


@pytest.mark.parametrize(("kind", "path", "value"), IDENTITY_CHANGES)
def test_a_message_without_its_identity_is_refused(kind: str, path: tuple[str, ...], value: object) -> None:
    log = d08_log(1)
    index = next(i for i, e in enumerate(log) if e.type == kind and isinstance(get(log[i].data, "message" if kind != "user/message" else "content"), (JsonObject, tuple)))
    changed = list(log)
    changed[index] = _changed(log[index], path, value)
    assert {(f.rule, f.seq) for f in judged(changed)} == {("DIA-10", log[index].seq)}


@pytest.mark.parametrize(("reason", "refused"), [
    ({"kind": "aborted"}, False), ({"kind": "disposed"}, False), ({"kind": "aborted", "reason": {"kind": "hook"}}, False),
    ({"kind": "aborted", "reason": {"kind": "timeout"}}, True), ({"kind": "aborted", "reason": "user"}, True),
    ({"kind": "error", "error": {}}, False),
])
def test_an_abort_reads_with_a_dia_14_reason(reason: dict[str, object], refused: bool) -> None:
    """The reader's migration (DIA-14's definition) gives coarse and disposed ends their reason; what it leaves
    without one of user, parent, hook, disposed (or legacy) is refused."""
    end = make_event("turn/end", seq=3, time=0, data=freeze({"turn": 1, "reason": thaw(migrate_turn_end_reason(freeze(reason)))}))
    assert (check_aborted_turn_end(end) is not None) is refused


def _message_with_chunks(log: list[Event], at_least: int) -> int:
    return next(i for i, e in enumerate(log) if e.type == "assistant/message" and isinstance(e.source_event_seqs, tuple)
                and len(e.source_event_seqs) >= at_least)


def _failing(chunk: Event) -> Event:
    return _changed(chunk, ("chunk",), {"type": "finish", "reason": {"kind": "error", "error": {"code": "CONTEXT_WINDOW_EXCEEDED"}}})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_message_for_a_failed_attempt_or_citing_one_is_refused(seed: int) -> None:
    log = d08_log(seed)
    index = _message_with_chunks(log, 3)
    cited = log[index].source_event_seqs
    assert isinstance(cited, tuple)
    by_seq = {e.seq: i for i, e in enumerate(log)}
    # An error finish in the middle: the retry's message cites the failed attempt's chunks.
    middle = list(log)
    middle[by_seq[cited[1]]] = _failing(log[by_seq[cited[1]]])
    assert {(f.rule, f.seq) for f in judged(middle)} == {("DIA-7", log[index].seq)}
    # The attempt's own finish is an error: the message is the failed attempt's.
    last = list(log)
    last[by_seq[cited[-1]]] = _failing(log[by_seq[cited[-1]]])
    found = [f for f in judged(last) if f.rule == "DIA-7"]
    assert len(found) == 2 and {f.seq for f in found} == {log[index].seq}
    # An interrupted message is DIA-15's, not DIA-7's.
    interrupted = list(last)
    interrupted[index] = _changed(log[index], ("interrupted",), True)
    assert judged(interrupted) == []


def test_DIA_10_each_missing_part_of_a_message_is_named_once() -> None:
    """DIA-10's shapes, part by part: the report names exactly the parts a message lacks (the flaw list is the
    finding's reason: with several parts missing, a reader learns every one, in the rule's order)."""
    from sessionspec.model.d08_shapes import assistant_message_flaws, tool_result_flaws, user_message_flaws

    user = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "role": "user", "id": "u1"}
    assert user_message_flaws(freeze(user)) == []
    assert user_message_flaws(freeze({})) == ["no content list", "no source", 'role is not "user"', "no id"]
    for key, broken, flaw in [("content", "hi", "no content list"), ("source", "user", "no source"),
                              ("role", "assistant", 'role is not "user"'), ("id", "", "no id")]:
        assert user_message_flaws(freeze({**user, key: broken})) == [flaw]

    model = {"kind": "model", "provider": "p", "model": "m"}
    assistant = {"turn": 1, "step": 1, "message": {"id": "a1", "role": "assistant", "content": [], "source": model}}
    assert assistant_message_flaws(freeze(assistant)) == []
    assert assistant_message_flaws(freeze({"turn": 1})) == ["no message object"]
    assert assistant_message_flaws(freeze({"message": {}})) == [
        "no message.id", 'message.role is not "assistant"', "no message.content list", "no message.source"]
    for source in ({**model, "kind": "tool"}, {**model, "provider": ""}, {**model, "model": 3}):
        assert assistant_message_flaws(freeze({"message": {**assistant["message"], "source": source}})) == [  # type: ignore[dict-item]
            'message.source is not {kind:"model", provider, model}']

    call = {"kind": "tool", "callId": "c1"}
    result = {"message": {"id": "r1", "role": "user", "content": [{"type": "tool-result"}], "source": call}}
    assert tool_result_flaws(freeze(result)) == []
    assert tool_result_flaws(freeze({"message": {"role": "assistant", "content": [], "source": {"kind": "tool"}}})) == [
        "no message.id", 'message.role is not "user"', "message.content is not [tool-result block]",
        'message.source is not {kind:"tool", callId}']
