"""Where each dialect's compaction trigger points lie (model/compaction/point_places.py): one definition, which the
deployment's judgement (trigger_points.PointRules) and check's list of what it could not decide both read."""

from __future__ import annotations

import pytest

from sessionspec.model.compaction.point_places import point_places
from sessionspec.model.compaction.trigger_points import point_rules
from sessionspec.model.log import Dialect


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_judged_points_lie_where_the_places_say(dialect: Dialect) -> None:
    places, rules = point_places(dialect), point_rules(dialect)
    assert (rules.opens, rules.closes, rules.rule, rules.where) == (places.opens, places.closes, places.rule, places.where)


def test_A55_CMP_6_post_step_and_a_marked_overflow_point() -> None:
    """CMP-6: "after the assistant message ... before `step/end`"; CMP-7: "after the failed step's `step/end`"."""
    places = point_places(Dialect.A55)
    assert (places.opens, places.closes, places.rule, places.marks_overflow_point) == (frozenset({"assistant/message"}), "step/end", "CMP-6", True)


def test_D08_DIA_6_pre_step_and_no_marked_overflow_point() -> None:
    """DIA-6: "after the previous `step/end`, or after `turn/start` ...; before `step/start`"; DIA-7: the recovery runs
    inside the failed attempt's step, where the log marks no point."""
    places = point_places(Dialect.D08)
    assert (places.opens, places.closes, places.rule, places.marks_overflow_point) == (
        frozenset({"turn/start", "step/end"}), "step/start", "DIA-6", False)
