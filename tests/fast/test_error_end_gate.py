"""The quirk fold (sessionspec/check/observations.py QuirkAudit) hands a live ``turn/end`` to Q-4's
``error_step_never_started`` and to ``guard_trip`` only when its reason's kind is ``error``: both definitions answer
None for any other end, whatever its reason holds (the step it names, an INVARIANT code, a guard message)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.diagnostics import error_step_never_started
from sessionspec.model.guard import INVARIANT_CODE, guard_trip
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, make_event
from sessionspec.spec.json_strategies import json_values

_CARRIER = st.fixed_dictionaries({"code": st.sampled_from([INVARIANT_CODE, "X"]), "message": st.sampled_from(["invariant in @pkg/a", "m", ""])})


@given(st.one_of(st.sampled_from(["completed", "aborted", "rejected", "max-tokens", "Error", ""]), json_values(1)).filter(lambda k: k != "error"),
       st.integers(-1, 5), _CARRIER, _CARRIER, st.sampled_from(list(Dialect)), st.sets(st.integers(0, 5)))
def test_both_definitions_answer_none_for_an_end_that_is_no_error(kind: object, step: int, failure: dict[str, str], error: dict[str, str],
                                                                  dialect: Dialect, started: set[int]) -> None:
    reason = freeze({"kind": kind, "step": step, "failure": failure, "error": error, **failure})
    event = make_event("turn/end", seq=3, time=0, data=freeze({"turn": 1, "reason": reason}))
    assert error_step_never_started(event, started) is None
    assert guard_trip(reason, dialect) is None

