"""The loop state machine over the correct model (all invariants), plus the
shrunk counterexamples found while building it, kept as named regressions."""

from __future__ import annotations

from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine

from sessionspec.model.jsonval import JsonObject
from sessionspec.model.loop import InterruptKind
from sessionspec.model.prefix import Idiom
from sessionspec.spec.machines import loop_machine
from tests.under_test import WITH_CHECKER

LoopMachine = loop_machine(WITH_CHECKER)

# The active profile (ci/dev/thorough from conftest) decides max_examples;
# the step count keeps each run short under `ci`.
TestLoopMachine = LoopMachine.TestCase
TestLoopMachine.settings = settings(settings(), stateful_step_count=25)


def _check(machine: RuleBasedStateMachine) -> None:
    for name in ("reconstructable", "frozen_prefix", "cache_stable", "prefix_not_history", "header_reasons",
                 "compaction_envelope", "compaction_keeps_tool_pairs", "compaction_resummarizes",
                 "overflow_compaction_placed", "pressure_compaction_placed", "prune_content_only", "dispatch_scoped",
                 "steering_first_in_first_out", "prune_threshold"):
        getattr(machine, name)()


def test_regression_P_LOOP_1_fork_of_fork_headers_belong_to_seed() -> None:
    """Shrunk: send, fork, send, fork.  The second fork's seed holds the first
    child's ``resume`` header; seed headers belong to the source session."""
    machine = LoopMachine()
    for _ in range(2):
        machine.send_turn(kind="text")
        _check(machine)
        machine.fork()
        _check(machine)
    machine.send_turn(kind="text")
    _check(machine)
    machine.teardown()


def test_regression_teardown_without_rules() -> None:
    """Shrunk: a machine that ran no rule tears down (target() lives in teardown)."""
    machine = LoopMachine()
    _check(machine)
    machine.teardown()


def test_every_kind_of_turn_in_one_sequence() -> None:
    """A hand-picked sequence through every rule keeps all invariants."""
    machine = LoopMachine()
    machine.add_contributor(idiom=Idiom.PREPEND, inject=True, mutate_after=True)
    machine.add_contributor(idiom=Idiom.APPEND, inject=False, mutate_after=False)
    for step in (
        lambda: machine.send_turn(kind="tools"),
        machine.drift_contributors,
        machine.reorder_contributors,
        lambda: machine.send_turn(kind="continue"),
        lambda: machine.change_system_prompt(n=2),
        lambda: machine.change_tools(which="reversed"),
        lambda: machine.change_request_listener(changes=JsonObject((("temperature", 0.5), ("provider", "other-provider")))),
        lambda: machine.request_error_turn(in_band=True, retries=2, then_fail=False),
        lambda: machine.request_error_turn(in_band=False, retries=0, then_fail=True),
        lambda: machine.interrupt_in_composition(kind=InterruptKind.CANCEL),
        machine.resume,
        lambda: machine.interrupt_in_composition(kind=InterruptKind.CANCEL),
        lambda: machine.send_turn(kind="inject"),
        machine.throwing_contributor_turn,
        machine.blocked_prompt,
        machine.fork,
        lambda: machine.send_turn(kind="reasoning"),
        lambda: machine.interrupt_in_composition(kind=InterruptKind.DISPOSE),
        lambda: machine.send_turn(kind="empty"),
    ):
        step()
        _check(machine)
    # After the fork the child's instance has already composed, so the
    # "inside the waterfall" dispose never fires (no waterfall runs): 3 requests.
    assert [len(r) for r in machine.session.requests] == [3]
    machine.teardown()


def test_P_CMP_5_P_CMP_3_P_CMP_4_P_CMP_10_P_CMP_11_P_PRN_3_compaction_rules_in_one_sequence() -> None:
    """A hand-picked sequence through the compaction rules (pressure with
    prunes, overflow recovery, a second overflow failing, manual compaction,
    the refused idle compaction) and the LOOP-11/12 rules keeps every invariant."""
    from sessionspec.spec.loop_compaction_properties import brackets

    machine = LoopMachine()
    machine.mount_compaction(window=700, prune=True)
    machine.add_contributor(idiom=Idiom.PREPEND, inject=False, mutate_after=False)
    for step in (
        lambda: machine.big_tool_turn(size=900),
        lambda: machine.send_turn(kind="tools"),
        lambda: machine.big_tool_turn(size=2000),
        lambda: machine.overflow_turn(twice=False),
        machine.parallel_tools_with_deferred_context,
        lambda: machine.truncated_or_throwing_step_result(throw=False),
        lambda: machine.truncated_or_throwing_step_result(throw=True),
        machine.manual_compaction_turn,
        machine.manual_compaction_between_turns,
        lambda: machine.overflow_turn(twice=True),
        machine.resume,
        lambda: machine.interrupt_in_composition(kind=InterruptKind.CANCEL),
        lambda: machine.big_tool_turn(size=900),
        lambda: machine.big_tool_turn(size=300),
    ):
        step()
        _check(machine)
    log = machine.session.log
    committed = [b for b in brackets(log) if b.checkpoint is not None]
    assert len(committed) >= 4 and len(machine.session.summaries) >= len(committed)
    assert any(e.type == "tool/result" and e.surface_op != "append" for e in log)
    ends = [e.data["reason"]["kind"] for e in log if e.type == "turn/end"]  # type: ignore[index]
    assert "max-tokens" in ends and "error" in ends
    assert machine.session.recompositions == 1
    machine.teardown()
