"""sessionspec/fast/companion.py against the definitions of model/compaction/companion.py and model/prune_check.py,
finding for finding.

The checker's compaction audit (which runs the twins, over its own priced surface, ``AuditSurface``) and the
model's definitions folded by ``tests/companion_cases.judged`` (over ``PricedSurface`` and ``balanced_cuts``) give
the same findings, in the same order: on the logs the loop simulator writes, on the brackets and prunes the model
writes, and on every change of them the model refuses, both dialects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.log import Dialect, Event
from tests.companion_cases import (
    D08_REFUSALS,
    PRUNE_REFUSALS,
    REFUSALS,
    bracket_edit,
    committed_bracket,
    d08_bracket_edit,
    judged,
    manual_bracket,
    pruned_result,
    simulated,
)


def same_findings(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> None:
    assert list(audit_compactions(events, dialect)) == judged(events, dialect)


@settings(max_examples=3, deadline=None)
@given(st.integers(0, 10_000))
def test_the_twins_judge_the_simulated_loop_as_the_model(seed: int) -> None:
    same_findings(simulated(seed))


def test_the_twins_accept_what_the_model_writes() -> None:
    events, *bracket = committed_bracket()
    same_findings([*events, *bracket])
    events, *bracket = manual_bracket()
    same_findings([*events, *bracket], Dialect.D08)
    events, replacement = pruned_result()
    same_findings([*events, replacement])


@pytest.mark.parametrize(("name", "rule"), REFUSALS)
def test_the_twins_refuse_each_bracket_change_as_the_model(name: str, rule: str) -> None:
    same_findings(bracket_edit(name))
    same_findings(bracket_edit(name), Dialect.D08)


@pytest.mark.parametrize(("name", "rule"), D08_REFUSALS)
def test_the_twins_refuse_each_d08_bracket_change_as_the_model(name: str, rule: str) -> None:
    same_findings(d08_bracket_edit(name), Dialect.D08)


@pytest.mark.parametrize(("name", "edit", "rule"), PRUNE_REFUSALS, ids=[name for name, _, _ in PRUNE_REFUSALS])
def test_the_twins_refuse_each_prune_change_as_the_model(name: str, edit: Callable[[list[Event], Event], list[Event]], rule: str) -> None:
    events, replacement = pruned_result()
    same_findings(edit(events, replacement))
    same_findings(edit(events, replacement), Dialect.D08)
