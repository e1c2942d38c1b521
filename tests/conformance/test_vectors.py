"""Conformance vectors (issue 6 part 1, issue 10 part 2): format, schema,
byte-stable generation, the model passes them, and the ground-truth vectors
expect what the real harness recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.vectors.command import VECTORS_DIR, generate, load_dir, rules_with_vectors, run_vector, run_vectors
from sessionspec.conformance.vectors.format import (
    FORMAT,
    FormatError,
    any_value,
    array,
    canonical_text,
    eq,
    exact_object,
    file_text,
    match,
    one_of,
    reject,
    some_fields,
    to_model,
    to_plain,
)
from sessionspec.conformance.vectors.schema import SCHEMA, validate
from sessionspec.spec.registry import registry_digest, rule_ids, rules
from tests.support import GROUNDTRUTH


@pytest.fixture(scope="module")
def committed() -> list[dict[str, Any]]:
    return load_dir(VECTORS_DIR)


def _vectors(files: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["id"]: v for f in files for v in f["vectors"]}


# --------------------------------------------------------------------------- the files


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
def test_committed_vectors_equal_a_fresh_generation() -> None:
    """Byte-stable regeneration: CI fails when vectors/ is stale (run `sessionspec vectors generate`)."""
    fresh = generate()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in VECTORS_DIR.glob("*.json")}
    assert sorted(on_disk) == sorted(fresh)
    stale = [name for name in fresh if on_disk[name] != fresh[name]]
    assert not stale, f"stale vector files: {stale}"


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
def test_generation_is_deterministic() -> None:
    assert generate() == generate()


def test_every_vector_file_validates_against_the_schema(committed: list[dict[str, Any]]) -> None:
    schema = json.loads((VECTORS_DIR / "schema.json").read_text(encoding="utf-8"))
    assert schema == json.loads(json.dumps(SCHEMA))
    for document in committed:
        assert validate(schema, document) == [], document["group"]


def test_every_file_names_the_format_and_the_registry_digest(committed: list[dict[str, Any]]) -> None:
    for document in committed:
        assert document["format"] == FORMAT
        assert document["registry"] == registry_digest()


def test_files_are_canonical_json_without_floats() -> None:
    floats: list[str] = []
    for path in VECTORS_DIR.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        value = json.loads(text, parse_float=lambda s: floats.append(s) or 0.0)
        assert text == file_text(value)
    assert floats == []


def test_vector_ids_are_unique(committed: list[dict[str, Any]]) -> None:
    ids = [v["id"] for f in committed for v in f["vectors"]]
    assert len(ids) == len(set(ids))


def test_vectors_name_only_registered_rules(committed: list[dict[str, Any]]) -> None:
    named = {r for f in committed for v in f["vectors"] for r in v["rules"]}
    assert named <= rule_ids()


def test_vectors_by_rule_lists_the_declaring_vectors(committed: list[dict[str, Any]]) -> None:
    from sessionspec.conformance.vectors.command import vectors_by_rule

    by_rule = vectors_by_rule()
    assert "gt/a-single-turn-no-prefix" in by_rule["PFX-10"]
    assert set(by_rule) == rules_with_vectors()
    for rule_id, ids in by_rule.items():
        assert all(rule_id in _vectors(committed)[i]["rules"] for i in ids)


def test_every_loop_and_prefix_rule_has_a_vector() -> None:
    """The rules the operation language expresses directly (LOOP, PFX) are all covered."""
    have = rules_with_vectors()
    missing = [r.id for r in rules() if r.area in ("LOOP", "PFX") and r.id not in have]
    assert not missing


def test_schema_rejects_a_malformed_vector() -> None:
    bad = {"format": FORMAT, "registry": registry_digest(), "group": "x",
           "vectors": [{"id": "v", "rules": ["not a rule"], "description": "", "initial": {},
                        "steps": [{"op": {"op": "send"}, "expect": {"eq": 1, "any": {}}}]}]}
    problems = validate(SCHEMA, bad)
    assert any("rules[0]" in p for p in problems)
    assert any("expect" in p for p in problems)


# --------------------------------------------------------------------------- running them


def test_the_model_passes_every_vector_in_process(committed: list[dict[str, Any]]) -> None:
    results = run_vectors(committed, None)
    assert [r.vector_id for r in results if not r.passed] == []
    assert len(results) == sum(len(f["vectors"]) for f in committed)


def test_a_wrong_answer_fails_its_vector(committed: list[dict[str, Any]]) -> None:
    """The runner can fail: an adapter whose system prompt differs is caught by rule-named vectors."""
    vector = _vectors(committed)["gt/a-single-turn-no-prefix"]
    wrong = json.loads(json.dumps(vector))
    wrong["initial"]["agent"]["system"] = "another system prompt"
    result = run_vector(InProcessAdapter(), wrong)
    assert not result.passed
    assert any("$.requests[0]" in f for f in result.failures)


def test_a_rejection_is_compared_by_rule(committed: list[dict[str, Any]]) -> None:
    vector = _vectors(committed)["loop/turn/disposed-instance"]
    expects = [s.get("expect") for s in vector["steps"]]
    # LOOP-1: the turn after `dispose` is refused, by rule ID only.
    assert {"reject": {"rule": "LOOP-1"}} in expects


# --------------------------------------------------------------------------- ground truth (issue 10 part 2)


def test_every_groundtruth_scenario_is_a_vector(committed: list[dict[str, Any]]) -> None:
    scenarios = sorted(p.name for p in GROUNDTRUTH.iterdir() if p.is_dir())
    assert len(scenarios) == 17
    covered = {v["id"].split("/")[1] for v in _vectors(committed).values() if v["id"].startswith("gt/")}
    assert covered == set(scenarios)


def _expected_requests(vector: dict[str, Any]) -> list[Any]:
    out = []
    for step in vector["steps"]:
        expect = step.get("expect", {})
        requests = expect.get("fields", {}).get("requests")
        if requests:
            out += [p["eq"] for p in requests["array"]]
    return out


@pytest.mark.parametrize("scenario", sorted(p.name for p in GROUNDTRUTH.iterdir() if p.is_dir() and p.name != "k-fork-seeded-child"))
def test_groundtruth_vector_expects_the_recorded_requests(committed: list[dict[str, Any]], scenario: str) -> None:
    """The expectations are the real harness's requests (loop requests, sessionId dropped), not the model's."""
    recorded = json.loads((GROUNDTRUTH / scenario / "requests.json").read_text(encoding="utf-8"))
    meta = json.loads((GROUNDTRUTH / scenario / "requests.meta.json").read_text(encoding="utf-8"))
    loop = [{k: v for k, v in r.items() if k != "sessionId"} for r, m in zip(recorded, meta) if m.get("agentLoopRequest", True)]
    assert _expected_requests(_vectors(committed)[f"gt/{scenario}"]) == loop


def test_groundtruth_vector_expects_the_recorded_log(committed: list[dict[str, Any]]) -> None:
    vector = _vectors(committed)["gt/j1-pressure-compaction"]
    final = vector["steps"][-1]
    assert final["op"] == {"op": "log"}
    events = final["expect"]["object"]["log"]["array"]
    recorded = [json.loads(line) for line in (GROUNDTRUTH / "j1-pressure-compaction" / "session.jsonl").read_text().splitlines()]
    assert [e["object"]["type"]["eq"] for e in events] == [r["type"] for r in recorded]
    # times are free; everything else is exact.
    assert all(e["object"]["time"] == {"any": {}} for e in events)


def test_groundtruth_summarizer_requests_are_expected(committed: list[dict[str, Any]]) -> None:
    """CMP-17: the summarizer requests of j1 are expected as recorded (instruction included)."""
    vector = _vectors(committed)["gt/j1-pressure-compaction"]
    summaries = [p["eq"] for s in vector["steps"] for p in s.get("expect", {}).get("fields", {}).get("summaries", {}).get("array", [])]
    recorded = [{k: v for k, v in r.items() if k != "sessionId"}
                for r in json.loads((GROUNDTRUTH / "j1-pressure-compaction" / "requests.json").read_text())
                if r.get("purpose") == "compaction"]
    assert summaries == recorded and len(recorded) == 2


# --------------------------------------------------------------------------- patterns and canonical JSON


def test_pattern_eq_and_one_of() -> None:
    assert match(eq({"a": [1, 2]}), {"a": [1, 2]}) == []
    assert match(eq({"a": [1, 2]}), {"a": [2, 1]})
    assert match(one_of("x", "y"), "y") == []
    assert match(one_of("x", "y"), "z")


def test_pattern_any_requires_presence() -> None:
    assert match(exact_object({"t": any_value()}), {"t": 5}) == []
    assert match(exact_object({"t": any_value()}), {})


def test_pattern_object_is_exact_and_fields_is_a_subset() -> None:
    assert match(exact_object({"a": eq(1)}), {"a": 1, "b": 2})
    assert match(some_fields({"a": eq(1)}), {"a": 1, "b": 2}) == []


def test_pattern_array_checks_length_and_items() -> None:
    assert match(array([eq(1)]), [1, 2])
    assert match(array([eq(1), any_value()]), [1, "x"]) == []


def test_pattern_reject_compares_rule_ids_only() -> None:
    rejected = {"reject": {"rules": ["LOOP-1", "PFX-5"], "reason": "any text"}}
    assert match(reject("PFX-5"), rejected) == []
    assert match(reject("LOOP-9"), rejected)
    assert match(reject("LOOP-1"), {"appended": []})
    # A rejection where a value was expected is a mismatch too.
    assert match(some_fields({}), rejected)


def test_unknown_pattern_is_a_format_error() -> None:
    with pytest.raises(FormatError):
        match({"regex": "x"}, "x")


def test_canonical_numbers_escape_floats() -> None:
    assert to_plain(0.5) == {"$number": "0.5"}
    assert to_plain(2.0) == 2
    assert to_model({"$number": "0.5"}) == 0.5
    assert canonical_text({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


# --------------------------------------------------------------------------- CLI


@pytest.mark.slow  # seconds each, out of the quick loop (issue 42 item 4), in .ci/run
def test_cli_vectors_run_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "generate", "--check"]) == 0
    assert main(["vectors", "generate", "--out", str(tmp_path)]) == 0
    (tmp_path / "loop.json").write_text("{}", encoding="utf-8")
    assert main(["vectors", "run", str(tmp_path)]) == 2
    assert "loop.json" in capsys.readouterr().err
    assert main(["vectors", "run", str(tmp_path / "missing")]) == 2


def test_cli_vectors_run_against_serve_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    document = json.loads((VECTORS_DIR / "groundtruth.json").read_text(encoding="utf-8"))
    document["vectors"] = document["vectors"][:3]
    (tmp_path / "some.json").write_text(json.dumps(document), encoding="utf-8")
    assert main(["vectors", "run", str(tmp_path), "--adapter", f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"]) == 0
    assert "3/3 vectors passed" in capsys.readouterr().out


# --------------------------------------------------------------------------- rule coverage (issue 7)


def test_every_registered_rule_outside_the_scope_list_has_a_vector() -> None:
    """Every registered rule not declared outside the model (spec/status.py, OutOfScope) is named by some vector."""
    from sessionspec.spec.registry import out_of_scope

    missing = sorted(rule_ids() - set(out_of_scope()) - rules_with_vectors())
    assert missing == []


def test_check_rule_vectors_reject_by_a_rule_they_declare(committed: list[dict[str, Any]]) -> None:
    """A targeted corruption expects a rule the vector declares (the rule it reasons from)."""
    checks = [v for v in _vectors(committed).values() if v["id"].startswith("check/rule/")]
    assert len(checks) >= 30
    for vector in checks:
        (step,) = vector["steps"]
        expected = step["expect"].get("reject", {}).get("rule")
        assert expected is None or expected in vector["rules"], vector["id"]


def test_a_corruption_vector_fails_an_implementation_that_accepts_it(committed: list[dict[str, Any]]) -> None:
    """The check vectors can fail: answering `valid` to a D08 compaction corruption is caught."""
    vector = _vectors(committed)["check/rule/d08/event-between-summary-and-checkpoint"]
    assert match(vector["steps"][0]["expect"], {"verdict": "valid"})
    assert match(vector["steps"][0]["expect"], {"reject": {"rules": ["DIA-16"], "reason": "x"}}) == []


def test_DIA_8_the_same_change_header_is_valid_in_A55_terms_but_not_D08(committed: list[dict[str, Any]]) -> None:
    """DIA-8: the vector's log, read as A55, names PFX-15 (a prefix change), not FMT-9: only D08 drops the prefix."""
    vector = _vectors(committed)["check/rule/d08/change-header-differs-only-in-message-prefix"]
    op = {**vector["steps"][0]["op"], "dialect": "A55"}
    assert InProcessAdapter().call(op)["reject"]["rules"] == ["PFX-15"]  # type: ignore[index]


@pytest.mark.parametrize("dialect", ["a55f148516", "611615650f"])
def test_CHK_4_pack_vectors_expect_the_real_files(committed: list[dict[str, Any]], dialect: str) -> None:
    """The expected lines of the real pack vectors are the real file (header excluded), not the model's output."""
    vector = _vectors(committed)[f"codec/pack/real/{dialect}"]
    real = (Path(__file__).parents[1] / "data" / "real" / dialect / "examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl")
    lines = [json.loads(line) for line in real.read_text().splitlines()[1:] if line.strip()]
    assert to_model(vector["steps"][0]["expect"]["object"]["lines"]["eq"]) == to_model(lines)
    assert any(line["type"].endswith("-chunks") for line in lines)


def test_LOG_14_repair_vectors_follow_the_rule(committed: list[dict[str, Any]]) -> None:
    """Closers continue the seqs at the log's time, tool results first, then step/end, then turn/end {interrupted}."""
    for vector in (v for v in _vectors(committed).values() if v["id"].startswith("codec/repair/")):
        (step,) = vector["steps"]
        last = json.loads(step["op"]["log"][-1])
        closers = step["expect"]["object"]["closers"]["eq"]
        assert [c["seq"] for c in closers] == list(range(last["seq"] + 1, last["seq"] + 1 + len(closers)))
        assert all(c["time"] == last["time"] for c in closers)
        types = [c["type"] for c in closers]
        if closers:
            assert types[-1] == "turn/end" and closers[-1]["data"]["reason"] == {"kind": "interrupted"}
            assert types == sorted(types, key=["tool/result", "step/end", "turn/end"].index)
        else:
            assert last["type"] == "turn/end"


def _run_broken(committed: list[dict[str, Any]], vector_id: str, rewrite: Any) -> bool:
    from sessionspec.conformance.adapter.session import ModelSession

    class Session(ModelSession):
        def handle(self, op: Any) -> Any:
            return rewrite(super().handle, op)

    return run_vector(InProcessAdapter(Session()), _vectors(committed)[vector_id]).passed


def test_CHK_4_pack_vectors_fail_a_writer_that_never_packs(committed: list[dict[str, Any]]) -> None:
    def verbatim(handle: Any, op: Any) -> Any:
        return {"lines": [json.loads(line) for line in op["log"]]} if op["op"] == "pack" else handle(op)

    assert _run_broken(committed, "codec/pack/three-deltas", lambda h, op: h(op))
    assert not _run_broken(committed, "codec/pack/three-deltas", verbatim)
    assert not _run_broken(committed, "codec/pack/real/a55f148516", verbatim)


def test_MTR_11_measure_vectors_fail_a_meter_that_ignores_the_override(committed: list[dict[str, Any]]) -> None:
    def ignore_override(handle: Any, op: Any) -> Any:
        return handle({k: v for k, v in op.items() if k != "override"})

    assert not _run_broken(committed, "codec/measure/message-prefix", ignore_override)
    assert _run_broken(committed, "codec/measure/empty-tools", ignore_override)


def test_DIA_18_d08_vectors_fail_a_checker_that_reads_d08_as_a55(committed: list[dict[str, Any]]) -> None:
    """A checker that ignores the D08 dialect accepts a prune without its compaction/prune record."""
    def as_a55(handle: Any, op: Any) -> Any:
        return handle({**op, "dialect": "A55"}) if op.get("dialect") == "D08" else handle(op)

    assert not _run_broken(committed, "check/rule/d08/prune-without-record", as_a55)
    assert not _run_broken(committed, "check/rule/d08/change-header-differs-only-in-message-prefix", as_a55)
