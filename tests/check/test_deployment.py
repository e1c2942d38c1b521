"""``check --deployment FILE`` (issue 44, item 3): the deployment's facts decide the rules a log alone cannot.

Each log here is written by the loop model (``model.loop.run_turn`` with compact-basic mounted,
``compaction_hooks``) under a configuration; each planted fault is a writer configured otherwise than the
deployment says (or not compacting at all).  Without the deployment every log is valid (nothing in it breaks
a rule the log alone decides); with it, the verdict flips to invalid with the rule the fault breaks.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from sessionspec import api
from sessionspec.check.task import Task, check_task
from sessionspec.cli import main
from sessionspec.model.codec import pack_chunk_runs, serialize_event
from sessionspec.model.compaction import CONTEXT_WINDOW_EXCEEDED, CompactConfig
from sessionspec.model.compaction.region import compact_region
from sessionspec.model.deployment import read_deployment
from sessionspec.model.jsonval import freeze, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    CompactionPlugin,
    Hooks,
    Prompt,
    Reply,
    ReplyKind,
    TurnScript,
    compaction_hooks,
    text_content,
)
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.spec.machine_scripts import compaction_plugin
from tests.support import DUMP_AGENT, DUMP_DEPLOYMENT, dump_turn, dump_turns

AGENT = DUMP_AGENT
# The configuration the deployment states: compaction_plugin(700, prune=True) as a deployment file.
PLUGIN = compaction_plugin(700, prune=True)
DEPLOYMENT = DUMP_DEPLOYMENT
_turn = dump_turn


def _written(hooks: Hooks) -> tuple[Event, ...]:
    return dump_turns(hooks)


def _file(tmp_path: Path, name: str, log: tuple[Event, ...]) -> str:
    path = tmp_path / name
    path.write_text("".join(serialize_event(e) + "\n" for e in log), encoding="utf-8")
    return str(path)


def _deployment(tmp_path: Path, value: object = None) -> str:
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(DEPLOYMENT if value is None else value), encoding="utf-8")
    return str(path)


def _rules(path: str, deployment: str) -> tuple[api.Verdict, list[str], api.Verdict]:
    """The verdict without the deployment, the rules found with it, and the verdict with it."""
    alone = api.check_file(path)
    assert alone.findings == (), alone.findings
    decided = api.check_file(path, deployment=api.read_deployment_file(deployment))
    return alone.verdict, [f.rule for f in decided.findings], decided.verdict


def _plugin(**changes: object) -> CompactionPlugin:
    return replace(PLUGIN, **changes)  # type: ignore[arg-type]


def test_a_log_written_under_the_deployment_stays_valid(tmp_path: Path) -> None:
    log = _written(compaction_hooks(PLUGIN))
    assert any(e.type == "compact/start" for e in log) and any(e.type == "tool/result" and e.surface_op for e in log)
    assert _rules(_file(tmp_path, "ok.jsonl", log), _deployment(tmp_path)) == (api.Verdict.VALID, [], api.Verdict.VALID)


def test_CMP_6_compaction_that_had_to_run_at_post_step_and_did_not(tmp_path: Path) -> None:
    """The same turns written with no compaction mounted: at the first post-step whose measurement reaches
    floor(700 x 0.5) = 350 tokens, compactIfNeeded had to prune (the 900-character results exceed
    thresholdChars 400); the finding sits on that step's step/end."""
    path = _file(tmp_path, "uncompacted.jsonl", _written(Hooks()))
    verdict, rules, decided = _rules(path, _deployment(tmp_path))
    assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID
    assert set(rules) == {"CMP-6"}
    first = api.check_file(path, deployment=api.read_deployment_file(_deployment(tmp_path))).findings[0]
    assert "threshold 350 for mock/mock-1" in first.reason and "a prune pass was due" in first.reason
    # Without a prune service, a compaction (a selectable range) was due at the same points.
    without_prune = _deployment(tmp_path, {**DEPLOYMENT, "prune": None})
    found = api.check_file(path, deployment=api.read_deployment_file(without_prune)).findings
    assert {f.rule for f in found} == {"CMP-6"} and "a compaction was due" in found[0].reason


def test_CMP_8_compaction_below_the_threshold_is_a_wrong_pressure_figure(tmp_path: Path) -> None:
    """A writer that resolved a context window of 400 (threshold 200) compacts where the deployment's
    model declares 700 (threshold 350): its first action comes at a post-step whose measured total is
    under 350, so compaction ran below its threshold."""
    path = _file(tmp_path, "small-window.jsonl", _written(compaction_hooks(_plugin(context_window=400))))
    verdict, rules, decided = _rules(path, _deployment(tmp_path))
    assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID
    assert "CMP-8" in rules


def test_PRN_3_a_prune_that_kept_the_head_but_not_the_configured_tail(tmp_path: Path) -> None:
    """The writer prunes with tailChars 0; the deployment says 50.  The log alone shows a marker after
    100 code points and none kept after it, which is pruneContent under some configuration (valid);
    under the deployment's it is not."""
    writer = _plugin(prune=PruneConfig(threshold_chars=400, head_chars=100, tail_chars=0))
    path = _file(tmp_path, "no-tail.jsonl", _written(compaction_hooks(writer)))
    verdict, rules, decided = _rules(path, _deployment(tmp_path))
    assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID
    assert set(rules) == {"PRN-3"}


def test_PRN_4_a_prune_pass_that_left_a_result_the_configuration_prunes(tmp_path: Path) -> None:
    """The writer's prune threshold is 1000 code points, so its passes leave the 900-character results
    the deployment's 400 prunes: each such pass is a PRN-4 finding naming the seqs it did not prune."""
    writer = _plugin(prune=PruneConfig(threshold_chars=1000, head_chars=100, tail_chars=50))
    path = _file(tmp_path, "high-threshold.jsonl", _written(compaction_hooks(writer)))
    verdict, rules, decided = _rules(path, _deployment(tmp_path))
    assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID
    assert "PRN-4" in rules


def _replanted(end: int) -> tuple[Event, ...]:
    """The log written under the deployment up to the end of its first compaction's turn, that bracket rewritten by
    the model's region transaction (CMP-13) for the range ``1..end`` instead of the one the writer selected."""
    log = _written(compaction_hooks(PLUGIN))
    start = next(i for i, e in enumerate(log) if e.type == "compact/start")
    turn_end = next(i for i, e in enumerate(log) if i > start and e.type == "turn/end")
    region = compact_region(log[:start], 1, end, PLUGIN.summarizer, max_tokens=128, time=log[start].time)
    assert not isinstance(region, Rejected) and len(region.events) == 4  # start, summary, checkpoint, end: seqs kept
    return (*log[:start], *region.events, *log[start + 4 : turn_end + 1])


def test_CMP_12_a_range_one_node_short_of_or_past_the_deployments_selection(tmp_path: Path) -> None:
    """At the first post-step the writer compacts, the retention walk with the deployment's retainTokens 87 selects
    1..74 (surface 1, 18, 58, 35, 39, 55, 59, 74, 78, 94, 97; the cuts before 74 and after it are balanced).  The
    same bracket over 1..59 or 1..78 is a range some retainTokens selects (valid alone); under the deployment it is
    not the one selected (P-CMP-4)."""
    same = _replanted(74)  # the writer's own range: the writer's bracket, event for event (times aside)
    assert [(e.seq, e.type, e.data) for e in same] == [(e.seq, e.type, e.data) for e in _written(compaction_hooks(PLUGIN))[: len(same)]]
    for end in (59, 78):
        path = _file(tmp_path, f"range-{end}.jsonl", _replanted(end))
        verdict, rules, decided = _rules(path, _deployment(tmp_path))
        assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID and rules == ["CMP-12"]
        (found,) = api.check_file(path, deployment=api.read_deployment_file(_deployment(tmp_path))).findings
        assert found.reason == f"compaction range 1..{end} is not the one the retention walk selects with the deployment's retainTokens 87 for mock/mock-1 (1..74)"


@pytest.mark.parametrize("retain", [40, 150])
def test_CMP_12_a_writer_keeping_another_retain_tokens_records_other_ranges(tmp_path: Path, retain: int) -> None:
    """A writer configured with retainTokens 40 (it compacts more) or 150 (less) than the deployment's 87: valid alone,
    and with the deployment every bracket whose range differs is a CMP-12 finding, the brackets after the first
    pressure write of a point included (the harness selects again after a prune pass or a compaction)."""
    writer = _plugin(config=replace(PLUGIN.config, retain_tokens=retain))
    path = _file(tmp_path, f"retain-{retain}.jsonl", _written(compaction_hooks(writer)))
    verdict, rules, decided = _rules(path, _deployment(tmp_path))
    assert verdict is api.Verdict.VALID and decided is api.Verdict.INVALID and rules and set(rules) == {"CMP-12"}


def test_auto_off_in_the_deployment_makes_every_pressure_compaction_a_finding(tmp_path: Path) -> None:
    """CMP-6 runs compactIfNeeded only "when auto": a deployment with auto false and a log that compacts."""
    path = _file(tmp_path, "ok.jsonl", _written(compaction_hooks(PLUGIN)))
    off = _deployment(tmp_path, {**DEPLOYMENT, "compaction": {**DEPLOYMENT["compaction"], "auto": False}})  # type: ignore[dict-item]
    assert {f.rule for f in api.check_file(path, deployment=api.read_deployment_file(off)).findings} == {"CMP-8"}


def test_a_deployment_that_does_not_state_the_window_decides_nothing(tmp_path: Path) -> None:
    path = _file(tmp_path, "uncompacted.jsonl", _written(Hooks()))
    other_model = _deployment(tmp_path, {**DEPLOYMENT, "models": [{"provider": "other", "model": "m", "contextWindow": 700}]})
    assert api.check_file(path, deployment=api.read_deployment_file(other_model)).findings == ()


def test_the_command_line_the_api_and_worker_processes_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "uncompacted.jsonl", _written(Hooks()))
    deployment = _deployment(tmp_path)
    code = main(["check", "--format", "json", "--deployment", deployment, path, path])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    expected = api.check_file(path, deployment=api.read_deployment_file(deployment)).to_json()
    assert records[0] == expected
    assert main(["check", "--format", "json", "--jobs", "2", "--deployment", deployment, path, path]) == 1
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == records
    task = Task(path=path, deployment=api.read_deployment_file(deployment))
    assert check_task(pickle.loads(pickle.dumps(task))).to_json() == expected


@pytest.mark.parametrize(("value", "named"), [
    ({"version": 1, "compaction": {"thresholdRatio": "high"}}, "compaction.thresholdRatio: must be a number (CMP-3)"),
    ({"version": 1, "compaction": {"retainRatio": 0.9, "thresholdRatio": 0.5}}, "retainRatio must be below thresholdRatio (CMP-3)"),
    ({"version": 1, "compaction": {"threshold": 0.5}}, "compaction.threshold: unknown key (CMP-3)"),
    ({"version": 1, "compaction": {"modelPolicies": [{"provider": "p"}]}}, "modelPolicies entries need provider and model (CMP-3)"),
    ({"version": 1, "prune": {"thresholdChars": 100, "headChars": 50, "tailChars": 50}}, "prune: headChars + marker + tailChars exceeds thresholdChars (PRN-1)"),
    ({"version": 1, "prune": {"headChars": 1.5}}, "prune: prune config headChars must be an integer (PRN-1)"),
    ({"version": 1, "models": [{"provider": "p", "model": "m", "contextWindow": 0}]}, "models[0].contextWindow: must be a positive integer (CMP-4)"),
    ({"version": 2}, "version: must be 1 (deployment.v1)"),
    ({"version": 1, "window": 1}, "window: unknown key (known: version, compaction, prune, models) (deployment.v1)"),
    ({"version": 1, "models": [{"provider": "p", "model": "m", "contextWindow": 5}, {"provider": "p", "model": "m", "contextWindow": 6}]},
     "models[1]: p/m is declared twice (deployment.v1)"),
])
def test_a_deployment_the_harness_would_refuse_is_a_usage_error_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object, named: str) -> None:
    path = _file(tmp_path, "ok.jsonl", _written(Hooks()))
    deployment = _deployment(tmp_path, value)
    assert main(["check", "--deployment", deployment, path]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    with pytest.raises(api.DeploymentError, match="deployment.json"):
        api.read_deployment_file(deployment)


def test_an_unreadable_or_non_json_deployment_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "ok.jsonl", _written(Hooks()))
    assert main(["check", "--deployment", str(tmp_path / "missing.json"), path]) == 2
    assert "cannot read" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert main(["check", "--deployment", str(broken), path]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_the_reader_is_the_models_and_keeps_the_config_it_states() -> None:
    read = read_deployment(freeze(DEPLOYMENT))
    assert not isinstance(read, Rejected)
    assert read.compaction == CompactConfig(threshold_ratio=0.5, retain_tokens=87, max_tokens=128)
    assert read.prune == PLUGIN.prune and read.context_window("mock", "mock-1") == 700 and read.context_window("mock", "x") is None


def test_the_run_lists_the_rules_it_could_not_decide_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --deployment the rules that need it are listed with the summary (in part: those the log alone
    decides the rest of), then the request-only ones; with it, only the request-only ones.  json, sarif and
    junit carry the list always; text shows it with -v (the summary line stays the last line otherwise)."""
    path = _file(tmp_path, "ok.jsonl", _written(compaction_hooks(PLUGIN)))
    deployment = _deployment(tmp_path)
    assert main(["check", "-v", path]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("not decided: CMP-6 (in part), CMP-7 (in part), CMP-8, CMP-9 (in part), CMP-12 (in part), PRN-3 (in part), PRN-4 (in part), "
                           "DIA-6 (in part), DIA-7 (in part) "
                           "need --deployment FILE")
    assert "rules only the request shows (PFX-11, LOOP-6, WIRE-1" in last
    assert main(["check", "-v", "--deployment", deployment, path]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("not decided: ") and "--deployment" not in last and "WIRE-1" in last
    # Without -v the text output ends with the summary line, as it always has.
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("checked 1 file: 1 valid")
    assert main(["check", "--format", "json", path]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    whys = {item["rule"]: item["why"] for item in summary["notDecided"]}
    assert {rule for rule, why in whys.items() if why == "deployment"} == {"CMP-6", "CMP-7", "CMP-8", "CMP-9", "CMP-12", "DIA-6", "DIA-7", "PRN-3", "PRN-4"}
    assert whys["WIRE-1"] == "request-only" and "SURF-3" not in whys
    assert main(["check", "--format", "sarif", "--deployment", deployment, path]) == 0
    sarif = json.loads(capsys.readouterr().out)
    listed = sarif["runs"][0]["properties"]["summary"]["notDecided"]
    assert listed and all(item["why"] == "request-only" for item in listed)
    assert main(["check", "--format", "junit", path]) == 0
    assert '<property name="not-decided CMP-6" value="deployment" />' in capsys.readouterr().out


def test_a_turn_ended_interrupted_is_not_held_to_a_compaction_it_did_not_run(tmp_path: Path) -> None:
    """CMP-6: none runs once the signal is aborted, and where an abort landed is not logged: the points of a
    turn that ended interrupted are not judged for a compaction that did not run."""
    log = list(_written(Hooks()))
    ends = [i for i, e in enumerate(log) if e.type == "turn/end"]
    for i in ends:
        log[i] = replace(log[i], data=freeze({"turn": log[i].data["turn"], "reason": {"kind": "aborted"}}))  # type: ignore[index]
    path = _file(tmp_path, "aborted.jsonl", tuple(log))
    assert api.check_file(path).findings == ()
    assert api.check_file(path, deployment=api.read_deployment_file(_deployment(tmp_path))).findings == ()


D08_RECOVERY = Path(__file__).resolve().parents[1] / "data" / "real" / "611615650f" / "examples" / "headless-agent" / "tests" / \
    "snapshots" / "compaction-recovery" / "session.jsonl"


def _d08_deployment(tmp_path: Path, window: int) -> api.Deployment:
    target = {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": window}
    return api.read_deployment_file(_deployment(tmp_path, {"version": 1, "compaction": {}, "prune": None, "models": [target]}))


def test_DIA_6_the_D08_pre_step_form_on_a_real_log(tmp_path: Path) -> None:
    """A log the D08 harness wrote (611615650f, compaction-recovery): under the window it recorded
    (request/context contextWindow 128000, threshold 102400 with CMP-3's defaults) no pre-step had to
    compact, and its overflow compaction inside step 2 (DIA-7) is not a pressure point.  Declared with a
    window of 100 (threshold 80), the pre-step before step 2 (after step/end at seq 16) had a range to
    compact (head 4..4 with retainTokens floor(100 x 0.16) = 16) and the log shows none: DIA-6; the
    request/context's 128000 is not the declared window: CMP-8."""
    alone = api.check_file(str(D08_RECOVERY))
    assert alone.verdict is api.Verdict.VALID and alone.findings == ()
    assert api.check_file(str(D08_RECOVERY), deployment=_d08_deployment(tmp_path, 128000)).findings == ()
    found = api.check_file(str(D08_RECOVERY), deployment=_d08_deployment(tmp_path, 100)).findings
    assert [(f.rule, f.seq) for f in found] == [("CMP-8", 7), ("DIA-6", 17)]
    assert "range 4..4 is selectable (retainTokens 16)" in found[1].reason


def test_a_log_with_packed_chunk_rows_is_decided_as_the_same_log_unpacked(tmp_path: Path) -> None:
    """CHK-6: a packed row's chunks are the same events; the meter reads them one by one."""
    log = _written(Hooks())
    packed = tmp_path / "packed.jsonl"
    packed.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in _plain(pack_chunk_runs(log))), encoding="utf-8")
    assert any(json.loads(line)["type"].endswith("-chunks") for line in packed.read_text(encoding="utf-8").splitlines())
    deployment = api.read_deployment_file(_deployment(tmp_path))
    unpacked = api.check_file(_file(tmp_path, "unpacked.jsonl", log), deployment=deployment).findings
    assert unpacked and [(f.rule, f.seq) for f in api.check_file(str(packed), deployment=deployment).findings] == \
        [(f.rule, f.seq) for f in unpacked]


def _plain(rows: tuple[object, ...]) -> list[object]:
    return [json.loads(js_stringify(row)) for row in rows]  # type: ignore[arg-type]


def test_a_log_the_meter_refuses_stops_the_decisions_with_a_note(tmp_path: Path) -> None:
    """MTR-8: a message's malformed usage makes the meter refuse the log; the deployment's decisions stop
    there, and a note says so (the log-alone rules report what is wrong)."""
    log = list(_written(Hooks()))
    at = next(i for i, e in enumerate(log) if e.type == "assistant/message")
    data = dict(log[at].data)
    data["usage"] = {"inputTokens": "many", "outputTokens": 1}
    log[at] = replace(log[at], data=freeze(data))
    report = api.check_file(_file(tmp_path, "bad-usage.jsonl", tuple(log)), deployment=api.read_deployment_file(_deployment(tmp_path)))
    assert not any(f.rule in ("CMP-6", "CMP-8") for f in report.findings)
    assert any(n.startswith(f"the deployment's decisions stopped at seq {at}: the token meter refuses the log there (MTR-8") for n in report.notes)


def test_a_scrubbed_header_leaves_the_pressure_figure_unknown(tmp_path: Path) -> None:
    """FMT-6: "no finding depends on" a placeholder.  A snapshot whose headers' system prompt is scrubbed to
    ``{{system}}`` has no known header price, so no trigger point is judged (the prunes' content still is)."""
    log = list(_written(Hooks()))
    for i, e in enumerate(log):
        if e.type == "request/header":
            data = json.loads(serialize_event(e))["data"]
            data["header"]["system"] = "{{system}}"
            log[i] = replace(e, data=freeze(data))
    path = _file(tmp_path, "scrubbed.jsonl", tuple(log))
    assert api.check_file(path).verdict is api.Verdict.VALID
    assert api.check_file(path, deployment=api.read_deployment_file(_deployment(tmp_path))).findings == ()


def _overflowing(hooks: Hooks, kind: ReplyKind) -> tuple[Event, ...]:
    """Two turns, then one whose first request overflows (CONTEXT_WINDOW_EXCEEDED, thrown or in the stream) and
    whose retry answers."""
    overflow = Reply(kind=kind, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")
    script = TurnScript(prompt=Prompt(content=text_content("question " + "long " * 40)), replies=(overflow, Reply(text="recovered")))
    return dump_turns(hooks, (_turn(1, 300), _turn(2, 300), script))


# Pressure never qualifies (thresholdRatio 1 of a window of 700 is never reached here): only the overflow decides.
NO_PRESSURE = {**DEPLOYMENT, "compaction": {**DEPLOYMENT["compaction"], "thresholdRatio": 1}}  # type: ignore[dict-item]
NO_PRESSURE_PLUGIN = _plugin(config=CompactConfig(threshold_ratio=1.0, retain_tokens=87, max_tokens=128))


@pytest.mark.parametrize("kind", [ReplyKind.ERROR_THROWN, ReplyKind.ERROR_IN_BAND])
def test_CMP_7_overflow_recovery_that_had_to_run_and_did_not(tmp_path: Path, kind: ReplyKind) -> None:
    """CMP-7: after a failed step whose failure is CONTEXT_WINDOW_EXCEEDED (logged by its error finish, or by
    the turn's error end), with no earlier overflow and maxOverflowRetries 1, compactIfNeeded(context-overflow)
    had to run; its range selection (retainTokens 0) has the head of the first two turns.  The writer with
    compaction mounted recovered (valid); the same turns unmounted fail the turn: CMP-7 at its end."""
    deployment = _deployment(tmp_path, NO_PRESSURE)
    recovered = _file(tmp_path, "recovered.jsonl", _overflowing(compaction_hooks(NO_PRESSURE_PLUGIN), kind))
    assert _rules(recovered, deployment) == (api.Verdict.VALID, [], api.Verdict.VALID)
    log = _overflowing(Hooks(), kind)
    verdict, rules, decided = _rules(_file(tmp_path, "failed.jsonl", log), deployment)
    assert (verdict, rules, decided) == (api.Verdict.VALID, ["CMP-7"], api.Verdict.INVALID)
    found = api.check_file(str(tmp_path / "failed.jsonl"), deployment=api.read_deployment_file(deployment)).findings[0]
    assert found.seq == log[-1].seq and log[-1].type == "turn/end" and "overflow recovery had to run" in found.reason


def test_CMP_7_a_recovery_beyond_maxOverflowRetries(tmp_path: Path) -> None:
    """The writer recovers the overflow (its maxOverflowRetries is 1); the deployment says 0 (recovery
    disabled): the recovery it logged after the failed step (whose error finish names the code) ran though
    no overflow retry was allowed."""
    path = _file(tmp_path, "recovered.jsonl", _overflowing(compaction_hooks(NO_PRESSURE_PLUGIN), ReplyKind.ERROR_IN_BAND))
    disabled = _deployment(tmp_path, {**NO_PRESSURE, "compaction": {**NO_PRESSURE["compaction"], "maxOverflowRetries": 0}})  # type: ignore[dict-item]
    assert _rules(path, disabled) == (api.Verdict.VALID, ["CMP-7"], api.Verdict.INVALID)
