"""The PRN-4/PRN-5 contract of ``prune_pass`` finds each way a prune can break it (issue 43).

``only_surface_results`` and ``prune_again_is_empty`` are the predicates ``prune_pass``'s contract states (and
CrossHair checks): each refusal branch is taken here by a real prune outcome with one thing changed, so a predicate
that stopped seeing that breach would fail this test. Expected messages from PRN-4: "appends only; each replacement
replaces exactly one tool/result node of the surface, once, cites it alone and keeps its keys"; PRN-5: a second pass
prunes nothing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.prune import PruneConfig, PruneOutcome, only_surface_results, prune_again_is_empty, prune_pass
from sessionspec.model.rejected import Rejected
from tests.support import BUSY_LOG_PRUNE, busy_log


def _real() -> tuple[tuple[Event, ...], PruneOutcome]:
    log = busy_log()
    outcome = prune_pass(log.events, BUSY_LOG_PRUNE)
    assert not isinstance(outcome, Rejected) and outcome.events[0].surface_op == freeze({"op": "replace", "start": 6, "end": 6})
    return tuple(log.events), outcome


def _first_changed(outcome: PruneOutcome, **changes: object) -> PruneOutcome:
    return replace(outcome, events=(replace(outcome.events[0], **changes), *outcome.events[1:]))


def _replace_op(start: int, end: int) -> JsonObject:
    return freeze({"op": "replace", "start": start, "end": end})  # type: ignore[return-value]


CASES = [
    ("a seq that is not the next", {"seq": 99}, "appended event 0 has seq 99"),
    ("no surface op", {"surface_op": freeze("append")}, "that is not a one-node replace"),
    ("a range of two nodes", {"surface_op": _replace_op(6, 11)}, "that is not a one-node replace"),
    ("a node off the surface", {"surface_op": _replace_op(999, 999), "source_event_seqs": (999,)}, "not a tool result of the surface"),
    ("a node that is not a tool result", {"surface_op": _replace_op(1, 1), "source_event_seqs": (1,)}, "not a tool result of the surface"),
    ("a citation of another event", {"source_event_seqs": (5,)}, "the prune of seq 6 cites (5,)"),
]


@pytest.mark.parametrize(("name", "changes", "says"), CASES, ids=[c[0] for c in CASES])
def test_PRN_4_the_contract_refuses_a_prune_with_one_thing_wrong(name: str, changes: dict[str, object], says: str) -> None:
    events, outcome = _real()
    found = only_surface_results(events, _first_changed(outcome, **changes), Dialect.A55)
    assert found is not None and says in found, (name, found)


def test_PRN_4_the_contract_refuses_a_node_replaced_twice_another_type_or_changed_keys() -> None:
    events, outcome = _real()
    twice = replace(outcome, events=(outcome.events[0], replace(outcome.events[0], seq=outcome.events[0].seq + 1)))
    assert "(or twice)" in (only_surface_results(events, twice, Dialect.A55) or "")
    message = make_event("user/message", seq=len(events), time=0, data=freeze({"content": [], "source": {"kind": "user"}}),
                         source_event_seqs=(6,), surface_op=_replace_op(6, 6))
    assert "not a one-node replace" in (only_surface_results(events, replace(outcome, events=(message,)), Dialect.A55) or "")
    data = outcome.events[0].data
    assert isinstance(data, JsonObject)
    fewer = JsonObject(tuple((k, v) for k, v in data.items() if k != "isError"))
    assert "changes more than the content" in (only_surface_results(events, _first_changed(outcome, data=fewer), Dialect.A55) or "")
    # an A55 prune writes no compaction/prune record (only D08 does, DIA-18)
    record = make_event("compaction/prune", seq=len(events), time=0, data=freeze({"shadowedSeqs": [6]}))
    assert "not a one-node replace" in (only_surface_results(events, replace(outcome, events=(record,)), Dialect.A55) or "")


def test_PRN_4_data_that_is_not_an_object_is_left_to_the_fold() -> None:
    """The keys are compared only between objects; a replacement whose data is not one passes this clause."""
    events, outcome = _real()
    assert only_surface_results(events, _first_changed(outcome, data="x"), Dialect.A55) is None


def test_PRN_4_PRN_5_the_contract_promises_nothing_for_an_invalid_log_or_configuration() -> None:
    events, outcome = _real()
    broken = events[1:]  # no turn/start: the surface fold refuses it
    assert only_surface_results(broken, outcome, Dialect.A55) is None
    assert prune_again_is_empty(broken, outcome, BUSY_LOG_PRUNE, Dialect.A55) is True
    assert prune_again_is_empty(events, outcome, PruneConfig(threshold_chars=0, head_chars=0, tail_chars=0), Dialect.A55) is True


def test_PRN_5_a_second_pass_over_a_broken_prune_is_not_empty() -> None:
    """A prune outcome that makes the log invalid (an appended seq out of order): the second pass is refused, so the
    idempotence clause fails."""
    events, outcome = _real()
    assert prune_again_is_empty(events, _first_changed(outcome, seq=99), BUSY_LOG_PRUNE, Dialect.A55) is False
