"""sessionspec/fast/companion.py against the definitions of model/compaction/companion.py and model/prune_check.py,
finding for finding.

The checker's compaction audit (which runs the twins, over its own priced surface, ``AuditSurface``) and the
model's definitions folded by ``tests/companion_cases.judged`` (over ``PricedSurface`` and ``balanced_cuts``) give
the same findings, in the same order: on the logs the loop simulator writes, on the real logs under tests/data, on
the brackets and prunes the model writes, and on every change of them the model refuses, both dialects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.check.logfile import read_path
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
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
from tests.support import with_data


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


def test_the_twins_judge_every_real_log_as_the_model() -> None:
    """The real logs under tests/data, both dialects (the turn, checkpoint and bracket twins at every turn)."""
    logs = 0
    for path in sorted((Path(__file__).parents[1] / "data").rglob("*.jsonl")):
        events = read_path(str(path)).events
        if any(e.type in ("turn/start", "user/message") for e in events):
            logs += 1
            for dialect in Dialect:
                same_findings(events, dialect)
    assert logs > 10


def _turn(seq: int, kind: str, **data: object) -> Event:
    return make_event(kind, seq=seq, time=0, data=freeze({"turn": 1, **data}))


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_turn_and_checkpoint_twins_judge_a_bracket_across_turns_as_the_model(dialect: Dialect) -> None:
    """A bracket left open at its turn's end (which closes it), then started again in the next turn; a checkpoint
    whose source is another plugin's, or which is no replace, inside the bracket."""
    events, start, summary, checkpoint, end = committed_bracket()
    n = len(events)
    across = [*events, start, _turn(n + 1, "turn/end", reason={"kind": "completed"}), _turn(n + 2, "turn/start", trigger={"kind": "message"}),
              replace(start, seq=n + 3), replace(summary, seq=n + 4), replace(checkpoint, seq=n + 5), replace(end, seq=n + 6)]
    same_findings(across, dialect)
    source = get(checkpoint.data, "source")
    assert isinstance(source, JsonObject)
    for changed in (with_data(checkpoint, source={**thaw(source), "plugin": "other"}), with_data(checkpoint, source="compact"),
                    replace(checkpoint, surface_op=ABSENT)):
        same_findings([*events, start, summary, changed, end], dialect)
