"""Hypothesis properties for compaction, the meter and the prune (RULES §16.3)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check.compaction_audit import audit_compactions
from sessionspec.model.compaction import (
    CompactConfig,
    Trigger,
    compact_if_needed,
    compact_region,
    select_range,
)
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect
from sessionspec.model.meter import measure
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import fold_surface
from sessionspec.spec import compaction_properties, loop_compaction_properties, meter_properties, prune_properties
from sessionspec.spec.compaction_properties import (
    audit_clean,
    bounded_transactions,
    d08_bracket_adjacent,
    failure_leaves_surface,
    pressure_gated,
    range_balanced,
    retention_minimal,
    success_bracket_well_formed,
    surface_shrinks,
)
from sessionspec.spec.meter_properties import meter_nodes_are_surface, override_keeps_nodes, total_is_header_plus_nodes
from sessionspec.spec.prune_properties import prune_content_bounds, prune_idempotent
from tests.support import Log, short

# A step: a user message of some size, or an assistant message with 0..2 tool
# calls answered in order (results of various sizes); the last step may stay
# open (calls without all their results) so rounding is exercised.
step = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 600)),
    st.tuples(st.just("tools"), st.lists(st.integers(0, 900), min_size=0, max_size=2)),
)


@st.composite
def logs(draw: st.DrawFn) -> Log:
    log = Log()
    log.add("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    log.header(system="s" * draw(st.integers(0, 200)))
    steps = draw(st.lists(step, min_size=1, max_size=7))
    number = 0
    for kind, payload in steps:
        if kind == "user":
            assert isinstance(payload, int)
            log.user("u" * payload)
            continue
        assert isinstance(payload, list)
        number += 1
        log.add("step/start", {"turn": 1, "step": number})
        calls = tuple(f"c{number}-{i}" for i in range(len(payload)))
        log.assistant(1, number, text="a" * 20, calls=calls)
        answered = len(payload) if draw(st.booleans()) or number < len(steps) else max(0, len(payload) - 1)
        for call, size in list(zip(calls, payload))[:answered]:
            log.result(1, number, call, "r" * size)
        log.add("step/end", {"turn": 1, "step": number})
    return log


@given(logs(), st.integers(0, 2000))
def test_P_CMP_3_P_CMP_4_selection_balanced_head_anchored_minimal(log: Log, retain: int) -> None:
    m, fold = measure(log.events), fold_surface(log.events)
    assert not isinstance(m, Rejected) and not isinstance(fold, Rejected)
    priced = [(n.seq, n.tokens) for n in m.nodes]
    assert retention_minimal(priced, fold.state.nodes, log.events, retain) is None
    chosen = select_range(priced, fold.state.nodes, log.events, retain)
    if chosen is not None and not isinstance(chosen, Rejected):
        assert chosen.start == fold.state.nodes[0]
        assert chosen.end != fold.state.nodes[-1]  # never the whole surface
        assert range_balanced(log.events, chosen) is None


@given(logs())
def test_P_CMP_1_P_CMP_6_P_CMP_7_overflow_transaction(log: Log) -> None:
    run = compact_if_needed(log.events, short, trigger=Trigger.CONTEXT_OVERFLOW)
    assert not isinstance(run, Rejected)
    events = [*log.events, *run.events]
    assert audit_clean(events, audit=audit_compactions) is None
    if run.results:
        fold = fold_surface(log.events)
        assert not isinstance(fold, Rejected)
        r = run.results[0]
        outcome = compact_region(log.events, r.shadowed_range.start, r.shadowed_range.end, short)
        assert not isinstance(outcome, Rejected)
        assert success_bracket_well_formed(log.events, outcome) is None
        assert surface_shrinks(log.events, outcome) is None
        assert failure_leaves_surface(log.events, outcome) is None


@given(logs(), st.integers(50, 3000))
def test_P_CMP_9_P_CMP_12_pressure_gating_and_bounded_retries(log: Log, window: int) -> None:
    config = CompactConfig(threshold_ratio=0.5, retain_tokens=20, compaction_retries=1)
    run = compact_if_needed(log.events, short, config=config, context_window=window)
    assert not isinstance(run, Rejected)
    assert pressure_gated(log.events, run, config, window) is None
    assert bounded_transactions(run, config) is None
    assert audit_clean([*log.events, *run.events], audit=audit_compactions) is None


@given(logs())
def test_P_CMP_2_failed_summary_leaves_surface(log: Log) -> None:
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    nodes = fold.state.nodes
    outcome = compact_region(log.events, nodes[0], nodes[0], lambda call: Rejected(rule="CMP-18", reason="boom"))
    if isinstance(outcome, Rejected):
        return  # validation failed before any event (CMP-13)
    assert outcome.error is not None and failure_leaves_surface(log.events, outcome) is None
    assert audit_clean([*log.events, *outcome.events], audit=audit_compactions) is None


@given(logs(), st.text(max_size=30))
def test_P_MTR_1_P_MTR_2_P_MTR_3_meter(log: Log, system: str) -> None:
    header = EpochHeader(config=freeze({"provider": "p", "model": "m"}), system=system or "x")
    assert meter_nodes_are_surface(log.events) is None
    assert override_keeps_nodes(log.events, header) is None
    assert total_is_header_plus_nodes(log.events, header) is None


texts = st.text(alphabet=st.sampled_from("ab\U0001F600\n"), max_size=120)
blocks = st.lists(
    st.one_of(texts.map(lambda t: {"type": "text", "text": t}), st.just({"type": "image", "data": "i"})),
    max_size=4,
)


@given(blocks, st.integers(0, 20), st.integers(0, 20), st.integers(0, 40))
def test_P_PRN_1_prune_content_bounds(content: list[object], head: int, tail: int, slack: int) -> None:
    config = PruneConfig(threshold_chars=head + 39 + tail + slack, head_chars=head, tail_chars=tail)
    assert prune_content_bounds(freeze(content), config) is None


@given(logs())
def test_P_PRN_2_prune_idempotent(log: Log) -> None:
    assert prune_idempotent(log.events, PruneConfig(threshold_chars=100, head_chars=20, tail_chars=10)) is None


def test_P_DIA_2_predicate_flags_non_adjacent_d08_bracket() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("compaction/start", {"compactionId": "a", "turn": 1})
    log.add("compaction/end", {"compactionId": "b", "turn": 1, "error": "x"})
    assert d08_bracket_adjacent(log.events, audit=audit_compactions) is not None


def test_PROPERTY_PREDICATES_are_compaction_properties() -> None:
    table = {**compaction_properties.PROPERTY_PREDICATES, **meter_properties.PROPERTY_PREDICATES,
             **prune_properties.PROPERTY_PREDICATES, **loop_compaction_properties.PROPERTY_PREDICATES}
    assert all(k.startswith(("P-CMP-", "P-MTR-", "P-PRN-", "P-DIA-")) for k in table)
    assert prune_properties.PROPERTY_PREDICATES["P-PRN-2"] is prune_idempotent
    assert Dialect.D08 is not Dialect.A55
