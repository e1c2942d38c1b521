"""Where each dialect's compaction trigger points lie (model/compaction/point_places.py): one definition, which the
deployment's judgement (trigger_points.PointRules) and check's list of what it could not decide both read."""

from __future__ import annotations

import pytest

from sessionspec.model.compaction.point_places import point_places
from sessionspec.model.compaction.records import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.compaction.trigger_points import point_rules
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_judged_points_lie_where_the_places_say(dialect: Dialect) -> None:
    places, rules = point_places(dialect), point_rules(dialect)
    assert rules.places is places  # the judgement reads the one definition the listing reads, not a copy of it


def _chunk(chunk: object) -> Event:
    return make_event("assistant/chunk", seq=3, time=0, data=freeze({"turn": 1, "step": 1, "chunk": chunk}))


def test_A55_CMP_6_post_step_and_an_overflow_point_after_a_failed_step_end() -> None:
    """CMP-6: "after the assistant message ... before `step/end`"; CMP-7: "after the failed step's `step/end`"."""
    places = point_places(Dialect.A55)
    assert (places.opens, places.closes, places.rule) == (frozenset({"assistant/message"}), "step/end", "CMP-6")
    assert (places.overflow_rule, places.overflow_what, places.overflow_opens) == ("CMP-7", "failed step", "step/end")
    end = make_event("step/end", seq=3, time=0, data=freeze({"turn": 1, "step": 1}))
    assert places.opens_overflow(end, False) and not places.opens_overflow(end, True)
    assert not places.opens_overflow(_chunk({"type": "finish", "reason": {"kind": "error"}}), False)


def test_D08_DIA_6_pre_step_and_DIA_7_an_overflow_point_at_the_failed_attempt_s_finish() -> None:
    """DIA-6: "after the previous `step/end`, or after `turn/start` ...; before `step/start`"; DIA-7: the recovery runs
    inside the failed attempt's step, when its finish is an error or aborted (agent.ts:373) naming
    CONTEXT_WINDOW_EXCEEDED (compact-basic index.ts:183), whether or not the step has a message yet."""
    places = point_places(Dialect.D08)
    assert (places.opens, places.closes, places.rule) == (frozenset({"turn/start", "step/end"}), "step/start", "DIA-6")
    assert (places.overflow_rule, places.overflow_what, places.overflow_opens) == ("DIA-7", "failed attempt", "assistant/chunk")
    for kind in ("error", "aborted"):
        finish = _chunk({"type": "finish", "reason": {"kind": kind, "failure": {"code": CONTEXT_WINDOW_EXCEEDED}}})
        assert places.opens_overflow(finish, False) and places.opens_overflow(finish, True)
    assert not places.opens_overflow(_chunk({"type": "finish", "reason": {"kind": "stop", "failure": {"code": CONTEXT_WINDOW_EXCEEDED}}}), False)
    assert not places.opens_overflow(_chunk({"type": "finish", "reason": {"kind": "error", "failure": {"code": "RATE_LIMITED"}}}), False)
    assert not places.opens_overflow(_chunk({"type": "text-delta", "reason": {"kind": "error", "failure": {"code": CONTEXT_WINDOW_EXCEEDED}}}), False)
    end = make_event("step/end", seq=3, time=0, data=freeze({"chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"code": CONTEXT_WINDOW_EXCEEDED}}}}))
    assert not places.opens_overflow(end, False)
