"""Issue 29: the whole-property contracts, the compaction and prune contracts, their planted faults, and the
iteration bounds of the suite's CrossHair runs -- concretely, without CrossHair (tests/proofs/test_proofs.py hunts).

For each planted fault of issue 29 the test shows both halves of the claim on a hand-built input: the
issue-18 contracts all hold under the fault (they could not see it), the new contract fails; and the real
model keeps every contract on the same input."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # proofs/ is repository tooling, not part of the installed package

from proofs.compaction_shapes import CompactionShape, compaction_keeps_one_range, prune_keeps_surface  # noqa: E402
from proofs.limits import ENV, Budget, install_from_env  # noqa: E402
from proofs.planted import compaction_faults  # noqa: E402
from proofs.planted.hunt import violated  # noqa: E402
from proofs.planted.model_faults import header_eq as planted_header_eq  # noqa: E402
from proofs.planted.whole_faults import WholeFault, installed  # noqa: E402
from proofs.scenarios import (  # noqa: E402
    ContributorShape,
    ReplyChoice,
    ReplyShape,
    Scenario,
    Scope,
    Text,
    TurnShape,
    discard_holds,
    inv_1,
    pfx_1,
    play,
)
from proofs.skeletons import HeaderChoice, Skeleton, StepEnd, StepSkel  # noqa: E402
from proofs.whole import discard_whole, freeze_whole, injects_whole  # noqa: E402
from sessionspec.model.compaction.records import Trigger  # noqa: E402
from sessionspec.model.header import EpochHeader, hdr4_clauses, header_eq  # noqa: E402
from sessionspec.model.jsonval import JsonObject  # noqa: E402
from sessionspec.model.log import Dialect  # noqa: E402
from sessionspec.model.loop import InterruptKind, Window  # noqa: E402
from sessionspec.model.prefix import Idiom, prefix_message  # noqa: E402
from sessionspec.spec.header_strategies import canonical_headers  # noqa: E402

TEXT = ReplyShape(ReplyChoice.TEXT, False, False)
PLAIN = TurnShape(TEXT, None, None, InterruptKind.CANCEL, False, False)
RESUMED = TurnShape(TEXT, None, None, InterruptKind.CANCEL, False, True)


def in_composition(kind: InterruptKind) -> TurnShape:
    return TurnShape(TEXT, None, Window.IN_COMPOSITION, kind, False, False)


def contributor(*, inject: bool = False, resumed: Text | None = None, throws: bool = False) -> ContributorShape:
    return ContributorShape(Idiom.PREPEND, Text.ALPHA, inject, False, throws, Scope.GLOBAL, resumed)


OLD = (inv_1, pfx_1, discard_holds)
NEW = (freeze_whole, discard_whole, injects_whole)
CASES = {
    WholeFault.REUSE_LOGGED_PREFIX: (Scenario(contributor(resumed=Text.BETA), None, PLAIN, RESUMED), freeze_whole),
    WholeFault.CACHE_DISPOSED: (Scenario(contributor(), None, in_composition(InterruptKind.DISPOSE), PLAIN), discard_whole),
    WholeFault.DEFERRED_INJECTS: (Scenario(contributor(inject=True), None, in_composition(InterruptKind.CANCEL), PLAIN),
                                  injects_whole),
}


def test_each_whole_fault_passes_the_old_contracts_and_fails_its_new_one() -> None:
    for fault, (scenario, catches) in CASES.items():
        real = play(scenario)
        assert [c(real) for c in OLD] == [None] * 3, fault
        assert [c(scenario, real) for c in NEW] == [None] * 3, fault
        with installed(fault):
            broken = play(scenario)
        assert [c(broken) for c in OLD] == [None] * 3, f"{fault}: an issue-18 contract sees it after all"
        assert catches(scenario, broken) is not None, fault


def test_a_resumed_instance_composes_its_own_contributors() -> None:
    """PFX-1/PFX-2: the second instance's requests start with 'beta 1', its own contributor's text."""
    played = play(Scenario(contributor(resumed=Text.BETA), None, PLAIN, RESUMED))
    first, second = (o.requests[0].request.messages[0] for o in played.outcomes)
    assert (first, second) == (prefix_message("alpha 1"), prefix_message("beta 1"))


def test_a_disposed_composition_is_reported_discarded() -> None:
    """PFX-5 for dispose: the outcome says interrupted, counts no composition, caches nothing, ends disposed."""
    outcome = play(Scenario(contributor(), None, in_composition(InterruptKind.DISPOSE), PLAIN)).outcomes[0]
    assert outcome.interrupted_composition and outcome.compositions == 0 and not outcome.requests
    assert outcome.instance.disposed and outcome.end_reason["kind"] == "disposed"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.from_type(Scenario))
def test_the_real_loop_keeps_the_whole_properties(scenario: Scenario) -> None:
    played = play(scenario)
    assert [c(scenario, played) for c in NEW] == [None] * 3


# --------------------------------------------------------------------------- header equality (HDR-4)


@settings(max_examples=300, deadline=None)
@given(canonical_headers(), canonical_headers(), st.sampled_from(list(Dialect)))
def test_header_eq_is_exactly_the_hdr4_clauses(a: EpochHeader, b: EpochHeader, dialect: Dialect) -> None:
    assert header_eq(a, b, dialect) == all(hdr4_clauses(a, b, dialect))
    assert header_eq(a, a, dialect)


def test_a_stronger_header_equality_breaks_only_the_new_clause() -> None:
    """A config key HDR-3 ignores: equal headers by HDR-4, unequal for the planted whole-config comparison."""
    a = EpochHeader(config=JsonObject((("provider", "p"), ("model", "m"))), system="s")
    b = EpochHeader(config=JsonObject((("provider", "p"), ("model", "m"), ("label", "x"))), system="s")
    assert header_eq(a, b) and violated(header_eq, (a, b), {}) is None
    assert violated(planted_header_eq, (a, b), {}) == "post: __return__ == all(hdr4_clauses(a, b, dialect))"


# --------------------------------------------------------------------------- compaction and prune


def step(end: StepEnd, *, prune: bool = False, long: bool = True) -> StepSkel:
    return StepSkel(HeaderChoice.SAME, end, prune, False, False, long)


LONG_TOOL = Skeleton(step(StepEnd.TEXT), step(StepEnd.TOOL_CALL), None, False, False, False)
PRUNED_TWICE = Skeleton(step(StepEnd.TOOL_CALL, prune=True), step(StepEnd.TOOL_CALL), None, False, False, False)


def test_compaction_and_prune_contracts_hold_and_their_faults_break_them() -> None:
    manual = CompactionShape(LONG_TOOL, Trigger.MANUAL, False)
    assert compaction_keeps_one_range(manual) is None and prune_keeps_surface(PRUNED_TWICE) is None
    assert compaction_faults.cites_short(manual) is not None
    split = compaction_faults.split_tail(manual)
    assert split is not None and "CMP-10" in split
    shadowed = compaction_faults.prune_shadowed(PRUNED_TWICE)
    assert shadowed is not None and "PRN-4" in shadowed


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.from_type(CompactionShape))
def test_the_real_compaction_and_prune_keep_their_contracts(shape: CompactionShape) -> None:
    assert compaction_keeps_one_range(shape) is None
    assert prune_keeps_surface(shape.skeleton) is None


# --------------------------------------------------------------------------- iteration bounds (part 4)


def test_a_budget_is_either_seconds_or_iterations() -> None:
    timed, bounded = Budget(seconds=2), Budget(iterations=40)
    assert timed.args() == ["--per_condition_timeout=2"] and ENV not in timed.env()
    assert bounded.args() == ["--max_uninteresting_iterations=0", "--per_path_timeout=300"]
    assert bounded.env()[ENV] == "40" and bounded.env()["PYTHONHASHSEED"] == "0"
    assert (timed.describe(), bounded.describe()) == ("2 s", "40 iterations")
    for wrong in ({}, {"seconds": 1.0, "iterations": 1}):
        try:
            Budget(**wrong)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"Budget({wrong}) accepted")


def test_the_plugin_bounds_crosshair_by_iterations() -> None:
    from crosshair import options

    saved, before = os.environ.get(ENV), options.DEFAULT_OPTIONS.max_iterations
    try:
        os.environ[ENV] = "17"
        install_from_env()
        assert options.DEFAULT_OPTIONS.max_iterations == 17
    finally:
        options.DEFAULT_OPTIONS.max_iterations = before
        if saved is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = saved
