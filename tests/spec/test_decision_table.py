"""The decision table (issue 43 item 1): every reachable outcome of every decision of the model has a pin.

The decisions come from the code (spec/decision_points.py), the pins from recorded runs (spec/decision_pins.json,
``python -m sessionspec.decisions.record --tests``); docs/decisions.md renders both.  A model change that adds a
decision fails here until the pins are recorded again and the new outcome is pinned or shown unreachable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionspec.spec.decision_points import derive_decisions
from sessionspec.spec.decision_render import DOC, REGENERATE, render
from sessionspec.spec.decision_table import PinSet, read_pins, rows, short_of_vectors, unpinned
from sessionspec.spec.decision_unreachable import NOT_YET_PINNED, SHORT_OF_VECTORS, UNREACHABLE

RECORD = "python -m sessionspec.decisions.record --tests -n 2"


def _listing(outcomes: list[str], limit: int = 25) -> str:
    shown = "\n  ".join(outcomes[:limit])
    return f"{len(outcomes)} outcome(s):\n  {shown}" + ("\n  ..." if len(outcomes) > limit else "")


def test_every_reachable_outcome_is_pinned() -> None:
    """A test, a machine rule, a vector or a CrossHair target CI runs takes each outcome not shown unreachable, but
    those listed as work left (NOT_YET_PINNED, which may only shrink: a listed outcome that is pinned comes off)."""
    missing = {r.outcome_id for r in unpinned()}
    new = sorted(missing - set(NOT_YET_PINNED))
    done = sorted(set(NOT_YET_PINNED) - missing)
    assert not new, f"unpinned: write the test or vector that takes it (then {RECORD}), or show it unreachable in " \
                    f"spec/decision_unreachable.py: {_listing(new)}"
    assert not done, f"listed in NOT_YET_PINNED but pinned now (or gone): take them off: {_listing(done)}"


def test_the_pins_name_outcomes_of_this_model() -> None:
    """Every recorded outcome is one the code has: a stale pins file is re-recorded, not trusted."""
    outcomes = {o for d in derive_decisions() for o in d.outcome_ids()}
    stale = sorted(set(read_pins().outcomes) - outcomes)
    assert not stale, f"spec/decision_pins.json names outcomes the model no longer has ({RECORD}): {_listing(stale)}"


@pytest.mark.parametrize("declared", [UNREACHABLE, NOT_YET_PINNED], ids=["unreachable", "not-yet-pinned"])
def test_declared_outcomes_exist_and_say_why(declared: dict[str, str]) -> None:
    outcomes = {o for d in derive_decisions() for o in d.outcome_ids()}
    unknown = sorted(set(declared) - outcomes)
    assert not unknown, f"declared for outcomes the model does not have: {_listing(unknown)}"
    assert all(reason.strip() for reason in declared.values())


def test_no_recorded_run_takes_an_outcome_declared_unreachable() -> None:
    taken = [r.outcome_id for r in rows() if r.unreachable is not None and (r.pins.tests or r.pins.machine or r.pins.vectors)]
    assert not taken, f"declared unreachable but taken by a recorded run: {_listing(taken)}"


def test_each_reachable_outcome_has_three_independent_vectors_or_is_listed() -> None:
    """Issue 43 item 3: three vectors of distinct trace shapes take each reachable outcome the protocol can reach (the
    others have their group's reason, spec/decision_not_by_vectors.py).  Those that do not yet are listed as work left
    (SHORT_OF_VECTORS): the list may only shrink, and an outcome that reaches three is taken off it."""
    short = {r.outcome_id for r in short_of_vectors()}
    new = sorted(short - set(SHORT_OF_VECTORS))
    done = sorted(set(SHORT_OF_VECTORS) - short)
    assert not new, f"fewer than three vector shapes and not listed: {_listing(new)}"
    assert not done, f"listed as short of vectors but now pinned three times: take them off SHORT_OF_VECTORS: {_listing(done)}"


def test_docs_decisions_md_is_a_fresh_rendering() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), f"docs/decisions.md is stale; regenerate it with: {REGENERATE}"


@pytest.mark.slow
def test_the_vector_pins_are_current(tmp_path: Path) -> None:
    """Recording the committed vectors again gives the committed vector pins (counts and shapes)."""
    from sessionspec.decisions.record import record

    out = tmp_path / "pins.json"
    out.write_text((Path(__file__).resolve().parents[2] / "spec" / "decision_pins.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert record(out=out) == 0
    fresh, committed = read_pins(out), read_pins()

    def vectors(outcome: str, pins: PinSet) -> tuple[int, int]:
        found = pins.outcomes.get(outcome)
        return (0, 0) if found is None else (found.vectors, found.vector_shapes)

    differing = sorted(o for o in set(fresh.outcomes) | set(committed.outcomes) if vectors(o, fresh) != vectors(o, committed))
    assert not differing, f"the vector pins changed ({RECORD}): {_listing(differing)}"
