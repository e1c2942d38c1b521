"""Cache economics (sessionspec/economics.py) and `sessionspec economics` (issue 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.designs import Design, Workload, compare_designs, design_requests, evaluate_design, generate_scenario
from sessionspec.economics import (
    ANTHROPIC,
    DEEPSEEK,
    NEUTRAL,
    OPENAI,
    BlockKind,
    CacheModel,
    HitRule,
    RequestShape,
    estimate_message,
    metered_hit,
    request_costs,
    shape_of,
)
from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.spec.json_strategies import json_values, texts
from tests.support import GROUNDTRUTH


def _msg(text: str, role: str = "user") -> JsonObject:
    return JsonObject((("role", role), ("content", (JsonObject((("type", "text"), ("text", text))),))))


def _shape(*texts_: str, system: str = "sys", route: str = "r") -> RequestShape:
    return shape_of(route=route, system=system, tools=freeze([]), prefix=(), history=[_msg(t) for t in texts_])


# ----------------------------------------------------------------- meter agreement


def test_MTR_3_estimate_agrees_with_model_meter_on_groundtruth_messages() -> None:
    from sessionspec.model import meter

    count = 0
    for path in sorted(GROUNDTRUTH.glob("*/requests.json")):
        for request in json.loads(path.read_text()):
            for m in request["messages"]:
                assert estimate_message(freeze(m)) == meter.estimate_message(freeze(m))
                count += 1
    assert count > 100


@given(st.lists(st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, texts(40)),
    st.builds(lambda n, a: {"type": "tool-call", "id": "c", "name": n, "arguments": a}, texts(), texts(30)),
    st.builds(lambda t: {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": t}]}, texts(30)),
    json_values(4),
), max_size=5))
def test_MTR_2_estimate_agrees_with_model_meter_on_generated_content(blocks: list[object]) -> None:
    from sessionspec.model import meter

    message = freeze({"role": "user", "content": blocks})
    assert estimate_message(message) == meter.estimate_message(message)


def test_MTR_2_known_prices() -> None:
    # "abcde": ceil(5/4)=2, +4 block, +4 message
    assert estimate_message(_msg("abcde")) == 10
    # non-BMP counts two UTF-16 units: 2 units -> 1 token
    assert estimate_message(_msg("\U0001F600")) == 9


# ----------------------------------------------------------------- cache models


def test_openai_meter_minimum_and_granularity() -> None:
    assert metered_hit(OPENAI, 1023) == 0
    assert metered_hit(OPENAI, 1100) == 1024
    assert metered_hit(OPENAI, 1300) == 1280
    assert metered_hit(NEUTRAL, 7) == 7 and metered_hit(NEUTRAL, 0) == 0
    assert metered_hit(ANTHROPIC, 1000) == 0 and metered_hit(ANTHROPIC, 1500) == 1500


def test_longest_prefix_credits_a_partial_overlap_request_unit_does_not() -> None:
    a = _shape("A" * 400, "B" * 400)
    b = _shape("A" * 400, "C" * 400)
    neutral = request_costs([a, b], NEUTRAL)
    unit = request_costs([a, b], CacheModel(name="u", min_cacheable=0, granularity=1,
                                            hit=HitRule.REQUEST_UNIT, read_price=0.1, source=""))
    assert neutral[1].cache_hit_tokens > 0 and unit[1].cache_hit_tokens == 0
    assert neutral[1].first_difference == "history message 1"


def test_deepseek_common_prefix_unit_is_persisted_for_a_third_request() -> None:
    a, b, c = _shape("A" * 400, "B"), _shape("A" * 400, "C"), _shape("A" * 400, "D")
    costs = request_costs([a, b, c], DEEPSEEK)
    assert costs[1].cache_hit_tokens == 0  # A+C does not fully match the unit A+B
    assert costs[2].cache_hit_tokens == a.blocks[0].tokens + a.blocks[1].tokens + a.blocks[2].tokens


def test_first_difference_attributes_drift_and_route_change() -> None:
    a = _shape("x", "y")
    b = _shape("x", "y", system="other")
    c = _shape("x", "y", system="other", route="r2")
    costs = request_costs([a, b, c], NEUTRAL)
    assert costs[1].first_difference == "system" and costs[1].cache_hit_tokens > 0  # tools block still shared
    assert costs[2].first_difference == "route (provider/model)" and costs[2].cache_hit_tokens == 0
    d = _shape("x", "y", "z")
    assert request_costs([a, d], NEUTRAL)[1].first_difference is None


# ----------------------------------------------------------------- designs


@given(st.sampled_from(list(Workload)), st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_P_INV_4_design_cache_hit_covers_previous_request_within_instance(
        workload: Workload, seed: int, instances: int, turns: int, steps: int) -> None:
    """Under the design (a), within an instance the header never changes, so
    the cache-hit part of request k+1 covers all of request k."""
    s = generate_scenario(workload, seed, instances=instances, turns=turns, steps=steps, opener_chars=400)
    reqs = design_requests(s, Design.FROZEN_PREFIX)
    costs = request_costs([r.shape for r in reqs], NEUTRAL)
    assert not any(r.header_changed for r in reqs)
    for k in range(1, len(reqs)):
        if not reqs[k].first_of_instance:
            assert costs[k].previous_covered
            assert costs[k].cache_hit_tokens >= reqs[k - 1].shape.tokens


@given(st.sampled_from(list(Workload)), st.integers(0, 10_000), st.sampled_from([NEUTRAL, OPENAI, ANTHROPIC, DEEPSEEK]))
def test_after_slot_alternative_repays_its_tokens_on_every_request(workload: Workload, seed: int, model: CacheModel) -> None:
    s = generate_scenario(workload, seed, turns=2, steps=2, opener_chars=400)
    reqs = design_requests(s, Design.SLOTS)
    costs = request_costs([r.shape for r in reqs], model)
    for r, c in zip(reqs, costs):
        after = sum(b.tokens for b in r.shape.blocks if b.kind is BlockKind.AFTER)
        assert after > 0 and c.uncached_tokens >= after


def test_designs_agree_when_the_opener_never_changes() -> None:
    """Per-turn and per-instance composition send identical requests while the
    content is stable: recomposing does not bust the cache by itself."""
    s = generate_scenario(Workload.NEVER, 7)
    a, e = evaluate_design(s, Design.FROZEN_PREFIX), evaluate_design(s, Design.PER_TURN)
    assert (a.full_price_tokens, a.cache_read_tokens) == (e.full_price_tokens, e.cache_read_tokens)
    assert a.header_changes == e.header_changes == 0 and a.resume_drift_tokens == 0


def test_durable_opener_is_stale_after_resume_and_the_design_is_not() -> None:
    s = generate_scenario(Workload.AT_RESUME, 3)
    c, a = evaluate_design(s, Design.DURABLE_OPENER), evaluate_design(s, Design.FROZEN_PREFIX)
    assert c.stale_requests > 0 and a.stale_requests == 0
    assert a.resume_drift_tokens > 0  # the refresh is paid, attributably, at the resume


def test_mid_session_change_is_a_change_header_for_per_step_and_per_turn_designs() -> None:
    s = generate_scenario(Workload.MID_SESSION, 5)
    for design in (Design.SLOTS, Design.SYSTEM_SECTION, Design.PER_TURN):
        assert evaluate_design(s, design).header_changes >= 1
    assert evaluate_design(s, Design.FROZEN_PREFIX).header_changes == 0
    assert evaluate_design(s, Design.FROZEN_PREFIX).stale_requests > 0
    assert evaluate_design(s, Design.FROZEN_PREFIX_NOTICE).stale_requests == 0


def test_compare_designs_covers_every_design_and_workload() -> None:
    rows = compare_designs((1,), OPENAI)
    assert {(r.design, r.workload) for r in rows} == {(d, w) for d in Design for w in Workload}
    assert all(r.full_price_tokens + r.cache_read_tokens == r.input_tokens for r in rows)


def test_economics_cli_prints_the_table() -> None:
    done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "economics", "--seeds", "1", "--format", "markdown"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("| (a) frozen session prefix |") == 3
    as_json = subprocess.run([sys.executable, "-m", "sessionspec.cli", "economics", "--seeds", "1", "--format", "json",
                              "--cache-model", "deepseek"], capture_output=True, text=True, check=True)
    assert len(json.loads(as_json.stdout)["rows"]) == len(Design) * len(Workload)
    bad = subprocess.run([sys.executable, "-m", "sessionspec.cli", "economics", "--seeds", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_docs_economics_shows_the_current_table() -> None:
    """docs/economics.md quotes the neutral and OpenAI tables verbatim; a model
    change that moves a number must update the document."""
    doc = (Path(__file__).parents[2] / "docs" / "economics.md").read_text(encoding="utf-8")
    for preset in ("neutral", "openai"):
        done = subprocess.run([sys.executable, "-m", "sessionspec.cli", "economics", "--format", "markdown", "--cache-model", preset],
                              capture_output=True, text=True, check=True)
        table = done.stdout.split("\n", 1)[1].strip()
        assert table in doc, f"{preset} table in docs/economics.md is out of date"


# ---------------------------------------------------------------- metered_hit boundaries


@pytest.mark.parametrize("shared,hit", [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)])
def test_openai_meter_counts_from_the_minimum_in_granularity_steps(shared: int, hit: int) -> None:
    assert metered_hit(OPENAI, shared) == hit


@pytest.mark.parametrize("shared,hit", [(0, 0), (1, 1), (7, 7)])
def test_neutral_meter_counts_every_shared_token(shared: int, hit: int) -> None:
    assert metered_hit(NEUTRAL, shared) == hit
