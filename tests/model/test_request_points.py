"""FMT-8, HDR-9 and INV-7 as the model decides them in a log (model/request_points.py), against the loop that sends
the requests.

Both ways, over turns the model's loop runs (``run_turn``: texts, tool rounds, continuations, request errors that it
retries): the points the model finds in the log are exactly the requests the loop sent, each rebuilt from the log
equal to the sent one (P-INV-1), and the log is accepted; the loop simulator's longer logs (``sessionspec.generate``,
A55 and read as D08) are accepted too.  Each change the rules forbid is refused by its rule: no header in force at a
request (FMT-9, HDR-9), a header naming no provider or model (HDR-8), a header or a surface event a rebuild cannot
read (HDR-1, DER-1: the one finding, at that event).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.generate import generate_events
from sessionspec.model.jsonval import freeze, js_stringify, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import (
    AgentConfig,
    Prompt,
    Reply,
    ReplyKind,
    SentRequest,
    TurnScript,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.migrate import migrate_legacy
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.rejected import Rejected
from sessionspec.model.request_points import LoggedRequest, check_request_points, logged_requests
from sessionspec.model.wire import request_to_json
from sessionspec.simulate import ECHO_TOOL, PERSONA
from sessionspec.spec.machine_scripts import REPLY_KINDS, replies_of

AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
RETRIED = Reply(kind=ReplyKind.ERROR_THROWN, retry=True)


def loop_run(kinds: list[tuple[str, bool]]) -> tuple[tuple[Event, ...], list[SentRequest]]:
    """One instance's turns, each of a drawn reply kind, a request error retried first when drawn."""
    log: tuple[Event, ...] = ()
    instance = new_instance()
    sent: list[SentRequest] = []
    for turn, (kind, error_first) in enumerate(kinds, start=1):
        replies = ((RETRIED,) if error_first else ()) + replies_of(kind, turn)
        out = run_turn(log, instance, AGENT, TurnScript(prompt=Prompt(content=text_content(f"q{turn}")), replies=replies))
        assert not isinstance(out, Rejected), out
        log, instance = out.log, out.instance
        sent.extend(out.requests)
    return log, sent


def _rebuilt(log: tuple[Event, ...], point: LoggedRequest) -> str:
    """The point's request rebuilt by INV-5's definition, the log cut where its header is folded (HDR-9)."""
    upto = log if point.first_chunk_seq is not None else log[: point.header_at]
    request = rebuild_request_at(upto, point.step_start_seq, point.first_chunk_seq)
    assert not isinstance(request, Rejected), request
    return js_stringify(request_to_json(request))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(REPLY_KINDS, st.booleans()), min_size=1, max_size=4))
def test_the_points_are_the_requests_the_loop_sent(kinds: list[tuple[str, bool]]) -> None:
    log, sent = loop_run(kinds)
    points = logged_requests(log)
    assert [p.step_start_seq for p in points] == [r.step_start_seq for r in sent]
    for point, request in zip(points, sent, strict=True):
        assert _rebuilt(log, point) == js_stringify(request_to_json(request.request))
    assert check_request_points(log, Dialect.A55) == []


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_what_the_loop_simulator_writes_is_accepted_in_both_dialects(seed: int) -> None:
    log = [event for block in generate_events(600, seed, 2) for event in block]
    assert logged_requests(log)
    assert check_request_points(log, Dialect.A55) == []
    assert check_request_points(migrate_legacy(log, "s"), Dialect.D08) == []


def _edited(log: tuple[Event, ...], seq: int, edit: object) -> list[Event]:
    data = thaw(log[seq].data)
    assert isinstance(data, dict) and callable(edit)
    changed = list(log)
    changed[seq] = replace(log[seq], data=freeze(edit(data)))
    return changed


def _headers(log: tuple[Event, ...]) -> list[int]:
    return [e.seq for e in log if e.type == "request/header"]


def _config_emptied(key: str) -> object:
    def edit(data: dict[str, object]) -> dict[str, object]:
        data["header"]["config"][key] = ""  # type: ignore[index]
        return data
    return edit


@pytest.mark.parametrize("kinds", [[("tools", False)], [("text", True), ("continue", False)]])
def test_a_request_without_a_readable_header_in_force_is_refused(kinds: list[tuple[str, bool]]) -> None:
    log, _ = loop_run(kinds)
    points = logged_requests(log)
    first = _headers(log)[0]
    gone = list(log)
    gone[first] = make_event("plugin/header-gone", seq=first, time=log[first].time, data=log[first].data)
    found = check_request_points(gone, Dialect.A55)
    # HDR-9: with the one header gone, no request has a header in force; each is reported at its first chunk.
    assert [(f.rule, f.seq) for f in found] == [("FMT-9", p.first_chunk_seq or p.step_start_seq) for p in points]
    for key in ("provider", "model"):
        assert {f.rule for f in check_request_points(_edited(log, first, _config_emptied(key)), Dialect.A55)} == {"HDR-8"}
    unreadable = _edited(log, first, lambda data: {**data, "header": 5})
    assert [(f.rule, f.seq) for f in check_request_points(unreadable, Dialect.A55)] == [("HDR-1", first)]


def test_a_surface_event_a_rebuild_cannot_read_is_the_one_finding() -> None:
    log, _ = loop_run([("tools", False), ("text", False)])
    message = next(e.seq for e in log if e.type == "user/message")
    broken = _edited(log, message, lambda data: {k: v for k, v in data.items() if k != "content"})
    assert [(f.rule, f.seq) for f in check_request_points(broken, Dialect.A55)] == [("DER-1", message)]
