"""Issue 43 item 3: each reachable outcome short of three vector shapes has a reason, and each group's claim that the
protocol cannot reach its outcomes holds (spec/decision_not_by_vectors.py).

The call graph (sessionspec/decisions/reach.py) is checked against what the recorded vectors did: every model
function a vector entered is one it reaches, so a function it does not reach is one no vector can enter.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator

import pytest

from sessionspec.conformance.adapter import stateless_ops
from sessionspec.conformance.adapter.decode import decode_compaction
from sessionspec.conformance.adapter.protocol import OperationError
from sessionspec.decisions.reach import OPERATIONS, model_functions_reached
from sessionspec.spec.decision_not_by_vectors import GROUPS, WORK_LEFT, Claim, Group, group_of, work_left
from sessionspec.spec.decision_points import derive_decisions
from sessionspec.spec.decision_table import Row, rows, short_reasons
from sessionspec.spec.decision_unreachable import SHORT_LINES

ALL_OPERATIONS = frozenset(OPERATIONS)


def _function(row: Row) -> tuple[str, str]:
    """(module, the named function holding the decision): a lambda's is the function around it ('' at top level)."""
    parts = [p for p in row.decision.function.split(".") if p != "<lambda>"]
    return row.decision.module, ".".join(parts)


def _members(group: Group) -> Iterator[Row]:
    return (r for r in rows() if r.unreachable is None and group_of(r.outcome_id) is group)


def _listing(items: list[str], limit: int = 20) -> str:
    return f"{len(items)}:\n  " + "\n  ".join(items[:limit]) + ("\n  ..." if len(items) > limit else "")


def test_every_outcome_short_of_three_vector_shapes_has_a_reason() -> None:
    """A group says why the protocol cannot reach it, or it is work left: some vector enters its function (the
    protocol reaches it), or WORK_LEFT says what is known of its function."""
    unstated = sorted(o for o, why in short_reasons().items() if why is None)
    assert not unstated, ("short of three vector shapes with no reason: find the vector (sessionspec/decisions/candidates*.py, "
                          f"search --extend) or say why in spec/decision_not_by_vectors.py: {_listing(unstated)}")


def test_the_short_list_is_current_and_gives_each_reason() -> None:
    """spec/decision_short_of_vectors.txt is ``python -m sessionspec.decisions.record --list-short`` of the committed pins."""
    fresh = {o: why for o, why in short_reasons().items() if why is not None}
    assert fresh == SHORT_LINES, "spec/decision_short_of_vectors.txt is stale: python -m sessionspec.decisions.record --list-short"


def test_the_call_graph_reaches_every_function_a_vector_entered() -> None:
    """The graph over-approximates the protocol's reach, or its 'not reached' proves nothing: each model function
    some recorded vector entered is reached from the operations."""
    reached = model_functions_reached(ALL_OPERATIONS)
    modules = {m for m, _ in reached}
    missed = sorted({f"{m}:{f}" for m, f in (_function(r) for r in rows() if r.pins.vectors) if (f and (m, f) not in reached)
                     or (not f and m not in modules)})
    assert not missed, f"vectors entered functions the call graph does not reach from any operation: {_listing(missed)}"


def test_the_call_graph_follows_each_operation_to_its_model_entry() -> None:
    """Each operation reaches the model function it is answered by (a graph that lost an edge would show less)."""
    expected = {"measure": ("meter", "measure"), "pack": ("codec", "pack_chunk_runs"), "repair": ("repair", "repair_closers"),
                "append-out-of-band": ("session", "out_of_band_events"), "compact": ("compaction.run", "pressure_compaction"),
                "session": ("loop.turn", "run_turn"), "replay": ("codec", "event_from_json")}
    for operation, function in expected.items():
        assert function in model_functions_reached([operation]), (operation, function)


@pytest.mark.parametrize("group", GROUPS, ids=[g.name for g in GROUPS])
def test_each_group_names_outcomes_of_this_model(group: Group) -> None:
    """A group's entries name functions with decisions (a renamed function leaves no stale entry behind)."""
    assert any(True for _ in _members(group)), f"{group.name} holds no reachable outcome"
    functions = {f"{d.module}:{d.function}" for d in derive_decisions()} | {d.module for d in derive_decisions()}
    stale = [w for w in group.functions if not any(f == w or f.startswith(w + ".") for f in functions)]
    assert not stale, f"{group.name} names functions with no decision: {stale}"
    outcomes = {o for d in derive_decisions() for o in d.outcome_ids()}
    assert group.outcomes <= outcomes, sorted(group.outcomes - outcomes)


@pytest.mark.parametrize("group", [g for g in GROUPS if g.claim is Claim.NO_OPERATION], ids=lambda g: g.name)
def test_no_operation_reaches_the_functions_of_a_no_operation_group(group: Group) -> None:
    reached = model_functions_reached(ALL_OPERATIONS)
    modules = {m for m, _ in reached}
    wrong = sorted({f"{m}:{f}" for m, f in (_function(r) for r in _members(group)) if (m, f) in reached or (not f and m in modules)})
    assert not wrong, f"{group.name}: an operation reaches {_listing(wrong)}"


def test_the_deployment_groups_functions_are_reached_only_through_the_deployment_fold() -> None:
    """Without sessionspec/check/deployment_fold.py no operation reaches them (a method of the Deployment class aside,
    which the graph reaches by its name's other meanings: only model/deployment.py builds a Deployment), and the check
    operation passes no deployment to check_log."""
    (group,) = [g for g in GROUPS if g.claim is Claim.DEPLOYMENT]
    reached = model_functions_reached(ALL_OPERATIONS, without=["sessionspec.check.deployment_fold"])
    wrong = sorted({f"{m}:{f}" for m, f in (_function(r) for r in _members(group)) if (m, f) in reached and not f.startswith("Deployment.")})
    assert not wrong, _listing(wrong)
    taken = sorted(r.outcome_id for r in _members(group) if r.pins.vectors)
    assert not taken, f"a vector takes an outcome of the deployment group: {_listing(taken)}"
    calls = [n for n in ast.walk(ast.parse(inspect.getsource(stateless_ops.check_op)))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "check_log"]
    assert calls and all(len(c.args) <= 2 and not any(k.arg == "deployment" for k in c.keywords) for c in calls)


def test_the_protocols_compaction_carries_no_model_policy_or_summarization_target() -> None:
    """The model-policies group: whatever the operation sends, compact-basic's policies and target stay CMP-3's defaults."""
    setup = decode_compaction({"modelPolicies": [{"provider": "mock", "model": "mock-1", "thresholdRatio": 0.5}],
                               "summarizationProvider": "mock", "summarizationModel": "mock-1"})
    assert setup.config.model_policies == ()
    assert (setup.config.summarization_provider, setup.config.summarization_model) == ("", "")


@pytest.mark.parametrize("prune", [{"thresholdChars": 0}, {"thresholdChars": -1}, {"headChars": -1}, {"tailChars": -1},
                                   {"thresholdChars": 40, "headChars": 1, "tailChars": 1}, {"bogus": 1},
                                   {"thresholdChars": 1.5}, 5])
def test_a_refused_prune_configuration_is_an_operation_error(prune: object) -> None:
    """The refused-prune-configuration group: PRN-1's refusals never reach a vector's answer (head 1 + the marker's
    39 code points + tail 1 = 41 exceeds a threshold of 40)."""
    with pytest.raises(OperationError):
        decode_compaction({"prune": prune})


def test_a_prune_configuration_at_its_edge_is_accepted_and_one_past_it_refused() -> None:
    """1 + 39 + 0 = 40 fits a threshold of 40 (the accepted edge); 2 + 39 + 0 = 41 does not."""
    accepted = decode_compaction({"prune": {"thresholdChars": 40, "headChars": 1, "tailChars": 0}})
    assert accepted.prune is not None and accepted.prune.threshold_chars == 40
    with pytest.raises(OperationError):
        decode_compaction({"prune": {"thresholdChars": 40, "headChars": 2, "tailChars": 0}})
    assert decode_compaction({"prune": None}).prune is None  # no prune: resolve_prune_config never sees a missing config


def test_work_left_names_only_functions_still_short_and_entered_by_no_vector() -> None:
    """WORK_LEFT may only shrink: an entry whose function a vector now enters, a group covers, or that has no outcome
    short of three shapes comes off."""
    table = [r for r in rows() if r.unreachable is None]
    entered = {(r.decision.module, r.decision.function) for r in table if r.pins.vectors}
    used = {key for r in table if r.pins.vector_shapes < 3 and r.not_by_vectors is None
            and (r.decision.module, r.decision.function) not in entered
            for key, note in WORK_LEFT.items() if work_left(r.decision.module, r.decision.function) == note
            and f"{r.decision.module}:{r.decision.function}".startswith(key)}
    assert set(WORK_LEFT) <= used, f"take off WORK_LEFT: {sorted(set(WORK_LEFT) - used)}"
