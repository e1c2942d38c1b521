"""The decisions are named from the code, and the probe counts what a run takes without changing it (issue 43).

The derivation and the rewrite are tested on a small module written here (every kind of decision once),
run plain and instrumented side by side; the model itself is tested by running every vector under the
probe (the answers must not change).
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from sessionspec.spec.decision_points import PROBE, Kind, derive_decisions, instrument_source, module_files
from sessionspec.spec.decision_probe import ModuleProbe, Probe, recording

SAMPLE = '''
import math
from typing import assert_never

def decide(a, b, items, table, extra, kind, xs):
    out = []
    if a < b:
        out.append("lt")
    if a == b or not items:
        out.append("eq-or-empty")
    while items and items[0] > 10:
        out.append(items.pop(0))
    for x in xs:
        out.append(x)
    table.update(extra)
    out.append(math.floor(a / 2))
    out.append(a // 3)
    out.append(min(a, b))
    match kind:
        case "one":
            out.append(1)
        case "two":
            out.append(2)
        case _:
            assert_never(kind)
    try:
        out.append(1 // b)
    except ZeroDivisionError:
        out.append("zero")
    same = a == b
    return out, same, 0 <= a < 100
'''


def _load(source: str, probe: Probe | None) -> types.ModuleType:
    decisions, tree = instrument_source("sample", source)
    module = types.ModuleType("sample")
    if probe is not None:
        module.__dict__["__decision_probe__"] = ModuleProbe(probe, 0)
        exec(compile(tree, "<sample>", "exec"), module.__dict__)
    else:
        exec(compile(source, "<sample>", "exec"), module.__dict__)
    return module


def test_each_kind_of_decision_is_named_from_the_code() -> None:
    decisions, _ = instrument_source("sample", SAMPLE)
    found = {(d.kind, d.text): d.outcomes for d in decisions}
    assert found[(Kind.COMPARE, "a < b")] == ("below", "equal", "above")
    assert found[(Kind.BRANCH, "a == b or not items")] == ("true", "false")
    assert found[(Kind.CONDITION, "a == b")] == found[(Kind.CONDITION, "not items")] == ("true", "false")
    assert found[(Kind.COMPARE, "items[0] > 10")] == ("below", "equal", "above")
    assert found[(Kind.ORDER, "items.pop(0)")] == ("single", "several")
    assert found[(Kind.LOOP, "for x in xs")] == ("none", "some")
    assert found[(Kind.MERGE, "table.update(extra)")] == ("disjoint", "overlap")
    assert found[(Kind.ROUNDING, "math.floor(a / 2)")] == found[(Kind.ROUNDING, "a // 3")] == ("exact", "rounded")
    assert found[(Kind.COMPARE, "min(a, b)")] == ("below", "equal", "above")
    # the assert_never case is the type checker's, not an outcome
    assert found[(Kind.CASES, "match kind")] == ("case 'one'", "case 'two'")
    assert found[(Kind.HANDLER, "try: except ZeroDivisionError")] == ("except ZeroDivisionError",)
    assert found[(Kind.BRANCH, "a == b")] == ("true", "false")  # a comparison computed as a value
    assert found[(Kind.COMPARE, "0 <= a")] == found[(Kind.COMPARE, "a < 100")] == ("below", "equal", "above")
    assert len({d.id for d in decisions}) == len(decisions)


@pytest.mark.parametrize("args", [
    (3, 5, [20, 11, 4], {"k": 1}, {"k": 2}, "one", []),
    (5, 5, [], {}, {"n": 0}, "two", [1, 2]),
    (9, 0, [10], {"a": 1}, {}, "one", ["x"]),
    (200, 7, [50], {}, {}, "two", [()]),
])
def test_the_rewrite_returns_what_the_code_returns_and_counts_each_outcome(args: tuple[object, ...]) -> None:
    plain_args = [list(a) if isinstance(a, list) else dict(a) if isinstance(a, dict) else a for a in args]
    decisions, _ = instrument_source("sample", SAMPLE)
    probe = Probe(decisions)
    expected = _load(SAMPLE, None).decide(*plain_args)
    got = _load(SAMPLE, probe).decide(*args)
    assert got == expected and args == tuple(plain_args)  # the same mutations of the arguments too
    taken = probe.taken()
    a, b = args[0], args[1]
    assert isinstance(a, int) and isinstance(b, int)
    lt = next(o for o in taken if o.startswith("sample:decide: a < b =>"))
    assert lt.endswith("below" if a < b else "equal" if a == b else "above")
    assert any(o.endswith("a // 3 => " + ("exact" if a % 3 == 0 else "rounded")) for o in taken)
    assert any(o.endswith("for x in xs => " + ("some" if args[6] else "none")) for o in taken)


def test_a_flipped_decision_takes_the_other_way() -> None:
    """A comparison moves its boundary, a FIFO take becomes LIFO, a merge keeps the old key, a floor rounds up."""
    decisions, _ = instrument_source("sample", SAMPLE)
    probe = Probe(decisions)
    module = _load(SAMPLE, probe)
    by_text = {d.text: d.id for d in decisions}
    with probe.flipped(by_text["a < b"]):
        assert "lt" in module.decide(5, 5, [], {}, {}, "one", [])[0]  # a <= b now
    with probe.flipped(by_text["items.pop(0)"]):
        assert module.decide(1, 5, [30, 20, 5], {}, {}, "one", [])[0][1:3] == [5, 20]
    table = {"k": 1}
    with probe.flipped(by_text["table.update(extra)"]):
        module.decide(1, 5, [], table, {"k": 2, "j": 3}, "one", [])
    assert table == {"k": 1, "j": 3}
    with probe.flipped(by_text["math.floor(a / 2)"]):
        assert 2 in module.decide(3, 5, [], {}, {}, "one", [])[0]  # ceil(1.5)


def test_model_decisions_have_unique_ids_and_skip_the_contract_helpers() -> None:
    decisions = derive_decisions()
    assert len({d.id for d in decisions}) == len(decisions) > 1000
    modules = {m for m, _ in module_files()}
    assert "compaction.contracts" not in modules and "rules" not in modules
    assert {"loop.turn", "compaction.policy", "meter", "prune", "header"} <= modules
    # the decisions issue 43 names, each found in the code
    ids = {d.id for d in decisions}
    assert "loop.turn:drain_steering: pending.pop(0)" in ids
    assert "compaction.run:compact_under_pressure: now < spec.threshold_tokens" in ids
    assert "compaction.policy:compact_spec: math.floor(context_window * policy.threshold_ratio)" in ids
    assert "loop.instance:apply_request_listener: merged.update(changes)" in ids


def test_a_cached_function_counts_whatever_ran_before_the_recording() -> None:
    """A warm ``@cache`` never runs its body: the recording starts with the model's caches empty, so a recording
    counts the same in a fresh process and after other tests (CI's vector pins once differed by test order), and
    ends with them empty, so no answer computed under the probe is served afterwards."""
    from sessionspec.model import record_keys

    keys = (("a", True), ("b", False))
    record_keys.valid_orders(keys)  # warm, as an earlier test leaves it
    with recording() as probe:
        assert record_keys.valid_orders(keys) == frozenset({("a",), ("a", "b")})
    assert {"record_keys:valid_orders: required => true", "record_keys:valid_orders: required => false"} <= set(probe.taken())
    assert record_keys.valid_orders.cache_info().currsize == 0


def test_recording_changes_no_answer_of_the_model_and_restores_its_code(tmp_path: Path) -> None:
    """Every vector still passes on the instrumented model (their expectations are the plain model's answers),
    and after the block every function of model/ runs its own code again."""
    from sessionspec.decisions.record import record_vectors
    from sessionspec.model.loop import turn

    before = turn.drain_steering.__code__
    outer = turn.__dict__.get(PROBE)  # set while the suite itself runs under a recording (the pins' record run)
    with recording() as probe:
        assert turn.drain_steering.__code__ is not before or PROBE in before.co_names
        assert record_vectors(probe) == []
    assert turn.drain_steering.__code__ is before
    assert turn.__dict__.get(PROBE) is outer  # an outer recording counts on
    assert "loop.turn:drain_steering: pending.pop(0) => single" in probe.taken()


def test_conform_can_ask_which_decisions_a_trace_reaches() -> None:
    """The hook for conform (sessionspec/decisions/trace.py): the outcomes one protocol trace takes on the model, and
    a coverage report over named traces against the table's reachable outcomes."""
    from sessionspec.decisions.trace import DecisionCoverage, trace_outcomes
    from sessionspec.spec.decision_table import reachable_outcomes

    send = {"op": "send", "prompt": {"content": [{"type": "text", "text": "hi"}]}, "replies": [{"kind": "text", "text": "a"}],
            "steering": [{"content": [{"type": "text", "text": "s1"}]}, {"content": [{"type": "text", "text": "s2"}]}]}
    taken = trace_outcomes({"agent": {"system": "S"}}, [send])
    assert "loop.turn:drain_steering: pending.pop(0) => several" in taken
    assert "loop.turn:drain_steering: pending.pop(0) => single" in taken
    from sessionspec.conformance.adapter.driver import InProcessAdapter

    with DecisionCoverage() as coverage, coverage.trace("t1"):
        adapter = InProcessAdapter()
        adapter.call({"op": "init", "agent": {"system": "S"}})
        adapter.call(send)
    report = coverage.report()
    assert report["reachable"] == len(reachable_outcomes()) and 0 < report["reached"] < report["reachable"]
    assert set(report["byTrace"]) == {"t1"} and "loop.turn:drain_steering: pending.pop(0) => several" in report["byTrace"]["t1"]
    assert len(report["missing"]) == report["reachable"] - report["reached"]
