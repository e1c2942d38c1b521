"""Every ``--format json`` output validates against its versioned JSON Schema in docs/schemas/.

Real output of the real commands (through ``sessionspec.cli.main``), on real
and hostile inputs, is validated with ``jsonschema`` (Draft 2020-12).  Each
schema is itself checked, and rejects a corrupted copy of the output, so a
schema that accepts anything fails here.  The schemas of commands that do not
print JSON yet are proposals; their tests skip, naming what to wire, until the command accepts
``--format json``.  ``vectors run``, ``conform`` and ``mutants`` print version 2 (issue 27); the version 1
files stay for readers of older output.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessionspec.cli import build_parser, main
from tests.support import GROUNDTRUTH

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _errors(validator: Draft202012Validator, document: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def test_every_schema_is_a_valid_versioned_draft_2020_12_schema() -> None:
    names = sorted(p.name for p in SCHEMAS.glob("*.json"))
    assert names
    for name in names:
        schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
        assert re.fullmatch(r"[a-z-]+\.v\d+\.schema\.json", name) and schema["$id"].endswith("/" + name)
        Draft202012Validator.check_schema(schema)


def test_check_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jsonl"
    good = (GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl").read_text(encoding="utf-8")
    broken.write_text(good + '{"type":"user/message","seq":999\n', encoding="utf-8")  # a line that does not parse: FMT-1
    missing = tmp_path / "missing.jsonl"
    code, out = _run(capsys, "check", "--format", "json", str(GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl"),
                     str(broken), str(missing))
    records = [json.loads(line) for line in out.splitlines()]
    validator = _validator("check.v4.schema.json")
    for record in records:
        assert _errors(validator, record) == []
    assert [r["kind"] for r in records] == ["file", "file", "file", "summary"]
    assert [r.get("verdict") for r in records[:3]] == ["valid", "invalid", "unreadable"] and records[1]["findings"]
    assert records[3]["exit"] == code == 2
    wrong = copy.deepcopy(records[1])
    wrong["findings"][0]["kind"] = "fatal"
    assert _errors(validator, wrong)
    # QF-15: an unparsable line after the log's last turn/end is a torn tail the real file load drops.
    assert records[1]["findings"][0]["loader"] == "accepts" and records[1]["loader"] == "accepts"
    wrong = copy.deepcopy(records[1])
    wrong["findings"][0]["loader"] = "maybe"
    assert _errors(validator, wrong)


@pytest.mark.parametrize("scenario", ["b-prefix-idioms-tool-roundtrip", "j1-pressure-compaction", "h1-resume-no-drift"])
def test_replay_json(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    validator = _validator("replay.v2.schema.json")
    log = str(GROUNDTRUTH / scenario / "session.jsonl")
    for extra in ((), ("--economics", "--cache-model", "anthropic")):
        code, out = _run(capsys, "replay", log, "--format", "json", *extra)
        document = json.loads(out)
        assert code == 0 and _errors(validator, document) == []
        assert ("economics" in document["meta"]) == bool(extra)
    wrong = copy.deepcopy(document)
    wrong["requests"][0]["meta"]["prefixLength"] = -1
    assert _errors(validator, wrong)


def test_economics_json(capsys: pytest.CaptureFixture[str]) -> None:
    validator = _validator("economics.v1.schema.json")
    code, out = _run(capsys, "economics", "--format", "json", "--seeds", "1", "--cache-model", "openai")
    document = json.loads(out)
    assert code == 0 and _errors(validator, document) == [] and len(document["rows"]) == 18
    wrong = copy.deepcopy(document)
    wrong["rows"][0]["design"] = "z"
    assert _errors(validator, wrong)


def test_rules_json_and_properties_json(capsys: pytest.CaptureFixture[str]) -> None:
    validator = _validator("rules.v1.schema.json")
    for extra in ((), ("--properties",), ("--area", "SURF")):
        code, out = _run(capsys, "rules", "--format", "json", *extra)
        document = json.loads(out)
        assert code == 0 and _errors(validator, document) == []
        assert ("properties" in document) == (extra == ("--properties",))
    assert _errors(validator, {"registry": "x", "rules": []})


def test_vectors_pack_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    validator = _validator("vectors-pack.v2.schema.json")
    code, out = _run(capsys, "vectors", "pack", "--out", str(tmp_path / "v.tar.gz"), "--format", "json")
    document = json.loads(out)
    assert code == 0 and _errors(validator, document) == []
    wrong = copy.deepcopy(document)
    wrong["manifest"]["files"][0]["sha256"] = "0" * 63
    assert _errors(validator, wrong)


def _accepts_json(*command: str) -> bool:
    parser = build_parser()
    try:
        args = parser.parse_args([*command, "--format", "json"])
    except SystemExit:
        return False
    return getattr(args, "format", None) == "json"


def test_vectors_run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not _accepts_json("vectors", "run", str(tmp_path)):
        pytest.skip("not wired: `vectors run` has no --format json yet (docs/schemas/vectors-run.v1.schema.json is the proposal)")
    from sessionspec.conformance.vectors.command import VECTORS_DIR

    code, out = _run(capsys, "vectors", "run", str(VECTORS_DIR), "--format", "json")
    assert code == 0 and _errors(_validator("vectors-run.v3.schema.json"), json.loads(out)) == []


def test_conform_json(capsys: pytest.CaptureFixture[str]) -> None:
    if not _accepts_json("conform", "--adapter", "x"):
        pytest.skip("not wired: `conform` has no --format json yet (docs/schemas/conform.v1.schema.json is the proposal)")
    import sys

    code, out = _run(capsys, "conform", "--adapter", f"{sys.executable} -m sessionspec.conformance.adapter.serve_model",
                     "--examples", "3", "--format", "json")
    assert code == 0 and _errors(_validator("conform.v3.schema.json"), json.loads(out)) == []


def test_mutants_json(capsys: pytest.CaptureFixture[str]) -> None:
    if not _accepts_json("mutants"):
        pytest.skip("not wired: `mutants` has no --format json yet (docs/schemas/mutants.v1.schema.json is the proposal)")
    code, out = _run(capsys, "mutants", "--only", "keep-empty-tools", "--examples", "5", "--format", "json")
    assert code == 0 and _errors(_validator("mutants.v3.schema.json"), json.loads(out)) == []


def test_deployment_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``check --deployment FILE`` reads the format of deployment.v1 (an input, not an output): every file
    the schema accepts here, check accepts, and each shape the schema refuses, check refuses (exit 2)."""
    validator = _validator("deployment.v1.schema.json")
    log = str(GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl")
    accepted: list[Any] = [
        {"version": 1},
        {"version": 1, "compaction": {"thresholdRatio": 0.5, "retainTokens": 87, "maxTokens": 128, "auto": True,
                                      "modelPolicies": [{"provider": "p", "model": "m", "retainRatio": 0.1}]},
         "prune": {"thresholdChars": 400, "headChars": 100, "tailChars": 50},
         "models": [{"provider": "mock", "model": "mock-1", "contextWindow": 700}]},
        {"version": 1, "prune": None},
    ]
    refused: list[Any] = [
        {},
        {"version": 2},
        {"version": 1, "compaction": {"thresholdRatio": "0.5"}},
        {"version": 1, "compaction": {"thresholdRatio": 0}},
        {"version": 1, "compaction": {"retainRatio": 0.1, "retainTokens": 5}},
        {"version": 1, "compaction": {"thresholds": 1}},
        {"version": 1, "prune": {"headChars": -1}},
        {"version": 1, "prune": "off"},
        {"version": 1, "models": [{"provider": "p", "model": "m", "contextWindow": 0}]},
        {"version": 1, "models": [{"provider": "p", "model": "m"}]},
    ]
    for number, document in enumerate(accepted + refused):
        path = tmp_path / f"d{number}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        valid = not _errors(validator, document)
        assert valid == (document in accepted), document
        assert main(["check", "--deployment", str(path), log]) == (0 if valid else 2), document
        capsys.readouterr()
