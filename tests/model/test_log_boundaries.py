"""INV-5, SURF-2/3, LOG-14, LOG-17 and FMT-6 on inputs at their edges (issue 43): a request rebuilt at the log's end
and past it, surface markers of the wrong shape, crash repair of messages whose content is not a block list, a load
of nothing, a placeholder in an object key.

INV-5 rebuilds ``log[0:step_start]`` and needs a step/start at that seq (INV-2 otherwise).  SURF-3: "surfaceOp MUST
be either the string "append" or an object with exactly three own keys {op:"replace", start, end}, where start and
end are non-negative safe integers".  LOG-14: "each tool-call block of an assistant/message registers the call as
pending".  LOG-17: a load rejects any request/header-delta and any request/header with reason fallback.  FMT-6: a
placeholder token anywhere in a JSON value, keys and strings at any depth.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.log import Event, make_event
from sessionspec.model.loop import AgentConfig, Prompt, Reply, TurnScript, new_instance, run_turn, text_content
from sessionspec.model.placeholder import mentions_placeholder
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.rejected import Rejected
from sessionspec.model.repair import repair_closers
from sessionspec.model.seed import validate_load
from sessionspec.model.surface import fold_surface


def _turn() -> tuple[Event, ...]:
    out = run_turn((), new_instance(), AgentConfig(system="S"), TurnScript(prompt=Prompt(content=text_content("p")), replies=(Reply(text="a"),)))
    assert not isinstance(out, Rejected)
    return out.log


@pytest.mark.parametrize("offset", [0, 1])
def test_INV_5_a_boundary_at_or_past_the_end_of_the_log_is_no_request(offset: int) -> None:
    log = _turn()
    rebuilt = rebuild_request_at(log, len(log) + offset, None)
    assert isinstance(rebuilt, Rejected) and rebuilt.rule == "INV-2"
    assert isinstance(rebuild_request_at(log, -1, None), Rejected)


def test_INV_5_a_log_whose_header_does_not_read_is_rejected() -> None:
    log = _turn()
    header = next(i for i, e in enumerate(log) if e.type == "request/header")
    broken = (*log[:header], replace(log[header], data=freeze({"header": "not a header", "reason": "initial"})), *log[header + 1:])
    step = next(e.seq for e in log if e.type == "step/start")
    assert isinstance(rebuild_request_at(broken, step, None), Rejected)


def _surface(op: Any) -> Event:
    return make_event("user/message", seq=0, time=0, data=freeze({"content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}),
                      surface_op=freeze(op))


@pytest.mark.parametrize("op", [{"op": 5, "start": 0, "end": 0}, {"op": "replace", "start": 0, "end": -1},
                                {"op": "replace", "start": 0, "end": 2**53}, "prepend", 7])
def test_SURF_3_a_surface_op_of_the_wrong_shape_is_rejected(op: Any) -> None:
    fold = fold_surface([_surface(op)])
    assert isinstance(fold, Rejected) and fold.rule in ("SURF-3", "SURF-2")


def test_SURF_2_a_log_only_event_carries_no_source_seqs() -> None:
    odd = make_event("session/title", seq=0, time=0, data=freeze({"title": "t"}), source_event_seqs=freeze([0]))
    fold = fold_surface([odd])
    assert isinstance(fold, Rejected) and fold.rule == "SURF-2"


def _open_step_with(content: Any) -> list[Event]:
    events = [make_event("turn/start", seq=0, time=0, data=freeze({"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})),
              make_event("step/start", seq=1, time=1, data=freeze({"turn": 1, "step": 1})),
              make_event("assistant/message", seq=2, time=2, data=freeze({"turn": 1, "step": 1, "content": content,
                                                                         "provenance": {"provider": "p", "model": "m"}}),
                         surface_op="append")]
    return events


@pytest.mark.parametrize(("content", "pending"), [(None, 0), ("text", 0), (["loose", {"type": "text", "text": "t"}], 0),
                                                  ([{"type": "tool-call", "name": "echo", "arguments": "{}"}], 1),
                                                  ([{"type": "tool-call", "id": "c1"}, {"type": "tool-call", "id": "c2"}], 2)])
def test_LOG_14_repair_closes_the_step_and_every_pending_call(content: Any, pending: int) -> None:
    """Only tool-call blocks register pending calls (one synthetic result each, an id-less one too); the step and the
    turn are closed after them."""
    closers = repair_closers(_open_step_with(content))
    types = [e.type for e in closers]
    assert types.count("tool/result") == pending and types[-2:] == ["step/end", "turn/end"]


def test_LOG_17_a_load_of_nothing_is_valid_and_refusals_come_first() -> None:
    assert validate_load([]) is None
    delta = make_event("request/header-delta", seq=0, time=0, data=freeze({}))
    assert isinstance(validate_load([delta]), Rejected)
    log = _turn()
    header = next(i for i, e in enumerate(log) if e.type == "request/header")
    fallback = replace(log[header], data=JsonObject((*((k, v) for k, v in log[header].data.items() if k != "reason"), ("reason", "fallback"))))  # type: ignore[union-attr]
    assert isinstance(validate_load((*log[:header], fallback, *log[header + 1:])), Rejected)


def test_FMT_6_a_placeholder_in_an_object_key_counts() -> None:
    assert mentions_placeholder(freeze({"{{cwd}}": 1})) and mentions_placeholder(freeze([{"a": "x {{home}} y"}]))
    assert not mentions_placeholder(freeze({"cwd": "{not a token}"}))
