"""Each file's list of the rules its check could not decide, and why (issue 44, item 3: "``check``'s report lists
the rules it could not decide for this log and why"; sessionspec/check/declines.py).

The logs are the loop model's (``tests/support.dump_turns``: four turns that call ``echo``, with compact-basic and
the prune mounted or not), checked as in tests/check/test_deployment.py.  The expected places are counted from the
log itself: a post-step point opens at each ``assistant/message`` and is decided at the step's first compaction
event (CMP-8) or at its ``step/end`` (CMP-6); each prune replacement is PRN-3's and PRN-4's; a summary's
``shadowedTokenCount`` is CMP-15's.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from sessionspec import api
from sessionspec.check.report import FileReport
from sessionspec.cli import main
from sessionspec.model.codec import serialize_event
from sessionspec.model.compaction import CONTEXT_WINDOW_EXCEEDED
from sessionspec.model.jsonval import JsonObject, freeze, get
from sessionspec.model.log import Event
from sessionspec.model.loop import Hooks, Prompt, Reply, ReplyKind, TurnScript, compaction_hooks, text_content
from sessionspec.model.prune import PruneConfig
from sessionspec.spec.machine_scripts import compaction_plugin
from tests.support import DUMP_DEPLOYMENT, REAL, dump_turn, dump_turns

PLUGIN = compaction_plugin(700, prune=True)
# A log the D08 harness wrote (611615650f), judged with a deployment in tests/check/test_deployment.py.
D08_RECOVERY = REAL / "611615650f" / "examples" / "headless-agent" / "tests" / "snapshots" / "compaction-recovery" / "session.jsonl"
DEPLOYMENT_RULES = frozenset({"CMP-6", "CMP-7", "CMP-8", "CMP-9", "DIA-6", "PRN-3", "PRN-4"})


def _file(tmp_path: Path, name: str, log: tuple[Event, ...]) -> str:
    path = tmp_path / name
    path.write_text("".join(serialize_event(e) + "\n" for e in log), encoding="utf-8")
    return str(path)


def _deployment(tmp_path: Path, value: object = None) -> api.Deployment:
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(DUMP_DEPLOYMENT if value is None else value), encoding="utf-8")
    return api.read_deployment_file(str(path))


def _listed(report: FileReport) -> dict[tuple[str, str], tuple[int, int]]:
    """(rule, why) -> (first seq, count), summed over the places named."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for item in report.undecided:
        seq, count = out.get((item.rule, item.why), (item.seq, 0))
        out[(item.rule, item.why)] = (min(seq, item.seq), count + item.count)
    return out


def _post_steps(log: tuple[Event, ...]) -> tuple[list[int], list[int]]:
    """The seqs where each post-step point is decided: with compaction (its first compaction event) or without (its
    ``step/end``), counted from the log (CMP-6: the point lies after the assistant message, before ``step/end``)."""
    ran, idle, open_ = [], [], False
    for event in log:
        acted = event.type in ("compact/start", "compaction/prune") or _is_prune(event)
        if open_ and acted:
            ran.append(event.seq)
            open_ = False
        elif open_ and event.type == "step/end":
            idle.append(event.seq)
            open_ = False
        if event.type == "assistant/message":
            open_ = True
    return ran, idle


def _is_prune(event: Event) -> bool:
    return event.type == "tool/result" and isinstance(event.surface_op, JsonObject) and get(event.surface_op, "op") == "replace"


def _scrubbed(log: tuple[Event, ...]) -> tuple[Event, ...]:
    """The same log with every header's system prompt scrubbed to ``{{system}}`` (FMT-6), as snapshot tests write."""
    out = list(log)
    for i, event in enumerate(out):
        if event.type == "request/header":
            data = json.loads(serialize_event(event))["data"]
            data["header"]["system"] = "{{system}}"
            out[i] = replace(event, data=freeze(data))
    return tuple(out)


def test_a_log_with_compaction_points_lists_them_without_the_deployment_and_not_with_it(tmp_path: Path) -> None:
    log = dump_turns(compaction_hooks(PLUGIN))
    path = _file(tmp_path, "compacted.jsonl", log)
    ran, idle = _post_steps(log)
    prunes = [e.seq for e in log if _is_prune(e)]
    assert ran and idle and prunes  # the log has both kinds of point and prunes (else this test proves nothing)
    alone = api.check_file(path)
    assert alone.verdict is api.Verdict.VALID
    assert _listed(alone) == {("CMP-6", "deployment"): (idle[0], len(idle)), ("CMP-8", "deployment"): (ran[0], len(ran)),
                              ("PRN-3", "deployment"): (prunes[0], len(prunes)), ("PRN-4", "deployment"): (prunes[0], len(prunes))}
    # The deployment states the compaction, the prune and the model's window: every point is judged.
    assert api.check_file(path, deployment=_deployment(tmp_path)).undecided == ()


def test_a_plain_log_lists_only_its_pressure_points_and_none_of_the_other_deployment_rules(tmp_path: Path) -> None:
    """No compaction mounted, so no compaction event, prune, failed step or request/context: of the rules that need
    the deployment only CMP-6 has places here (each post-step point, where compaction might have had to run)."""
    log = dump_turns(Hooks())
    ran, idle = _post_steps(log)
    assert not ran
    report = api.check_file(_file(tmp_path, "plain.jsonl", log))
    assert _listed(report) == {("CMP-6", "deployment"): (idle[0], len(idle))}
    assert {item.rule for item in report.undecided} & DEPLOYMENT_RULES == {"CMP-6"}


def test_a_log_without_an_assistant_message_lists_none_of_the_deployment_rules(tmp_path: Path) -> None:
    """The turns cut before the first reply: no post-step point opens (CMP-6's lies after the assistant message)."""
    log = dump_turns(Hooks())
    first = next(i for i, e in enumerate(log) if e.type == "assistant/message")
    report = api.check_file(_file(tmp_path, "cut.jsonl", log[:first]))
    assert report.undecided == ()


def test_a_scrubbed_header_lists_the_pressure_figures_it_could_not_price(tmp_path: Path) -> None:
    """FMT-6: a placeholder has no known price.  With the deployment, every trigger point's pressure figure (the
    meter's total, MTR: CMP-6 where nothing ran, CMP-8 where compaction ran) reads the scrubbed header, so none is
    judged; each is listed.  A summary's ``shadowedTokenCount`` prices the shadowed nodes only, which the header's
    scrub leaves as written: the count agrees, CMP-15 is decided and not listed."""
    log = _scrubbed(dump_turns(compaction_hooks(PLUGIN)))
    path = _file(tmp_path, "scrubbed.jsonl", log)
    ran, idle = _post_steps(log)
    assert ran and idle
    assert _listed(api.check_file(path))[("CMP-6", "deployment")] == (idle[0], len(idle))
    decided = api.check_file(path, deployment=_deployment(tmp_path))
    assert decided.findings == ()
    assert _listed(decided) == {("CMP-6", "placeholder"): (idle[0], len(idle)), ("CMP-8", "placeholder"): (ran[0], len(ran))}


def test_a_scrubbed_shadowed_node_lists_the_count_it_could_not_price(tmp_path: Path) -> None:
    """The first prompt scrubbed to ``{{prompt}}`` (as a snapshot scrubber writes it): the summary that shadows it
    recorded the price of the text the writer saw, the priced sum of the scrub disagrees, and CMP-15's definition
    declines (FMT-6) instead of finding.  Listed with or without the deployment; the other summary, whose nodes
    hold no placeholder, is decided."""
    log = list(dump_turns(compaction_hooks(PLUGIN)))
    at = next(i for i, e in enumerate(log) if e.type == "user/message")
    data = json.loads(serialize_event(log[at]))["data"]
    data["content"][0]["text"] = "{{prompt}}"
    log[at] = replace(log[at], data=freeze(data))
    path = _file(tmp_path, "scrubbed-node.jsonl", tuple(log))
    summaries = [e for e in log if e.type == "compact/summary"]
    shadowing = [e.seq for e in summaries if log[at].seq in e.data["shadowedSeqs"]]  # type: ignore[operator]
    assert len(summaries) > len(shadowing) == 1
    for deployment in (None, _deployment(tmp_path)):
        report = api.check_file(path, deployment=deployment)
        assert report.findings == () and _listed(report)[("CMP-15", "placeholder")] == (shadowing[0], 1)
    # Unscrubbed, every count is priced and decided.
    assert ("CMP-15", "placeholder") not in _listed(api.check_file(_file(tmp_path, "priced.jsonl", dump_turns(compaction_hooks(PLUGIN)))))


def test_a_deployment_that_does_not_state_the_window_or_the_prune_says_so(tmp_path: Path) -> None:
    log = dump_turns(compaction_hooks(PLUGIN))
    path = _file(tmp_path, "compacted.jsonl", log)
    ran, idle = _post_steps(log)
    prunes = [e.seq for e in log if _is_prune(e)]
    other_model = _deployment(tmp_path, {**DUMP_DEPLOYMENT, "models": [{"provider": "other", "model": "m", "contextWindow": 700}], "prune": None})
    assert _listed(api.check_file(path, deployment=other_model)) == {
        ("CMP-6", "not-stated"): (idle[0], len(idle)), ("CMP-8", "not-stated"): (ran[0], len(ran)),
        ("PRN-3", "not-stated"): (prunes[0], len(prunes))}


def test_a_turn_ended_interrupted_lists_the_points_it_did_not_judge(tmp_path: Path) -> None:
    """CMP-6 had to run at some post-steps of the uncompacted log (its findings with the deployment); with every turn
    ended ``aborted`` those points are not judged, and each such turn is listed once as interrupted."""
    log = dump_turns(Hooks())
    deployment = _deployment(tmp_path)
    found = api.check_file(_file(tmp_path, "plain.jsonl", log), deployment=deployment).findings
    assert found and {f.rule for f in found} == {"CMP-6"}
    turn_of = {}
    turn = None
    for event in log:
        if event.type == "turn/start":
            turn = event.seq
        turn_of[event.seq] = turn
    aborted = [replace(e, data=freeze({"turn": e.data["turn"], "reason": {"kind": "aborted"}})) if e.type == "turn/end" else e  # type: ignore[index]
               for e in log]
    report = api.check_file(_file(tmp_path, "aborted.jsonl", tuple(aborted)), deployment=deployment)
    assert report.findings == ()
    turns = sorted({turn_of[f.seq] for f in found if f.seq is not None})
    first_per_turn = [min(f.seq for f in found if f.seq is not None and turn_of[f.seq] == t) for t in turns]
    assert _listed(report) == {("CMP-6", "interrupted"): (first_per_turn[0], len(turns))}


@pytest.mark.parametrize("kind", [ReplyKind.ERROR_THROWN, ReplyKind.ERROR_IN_BAND])
def test_a_failed_step_lists_its_overflow_point(tmp_path: Path, kind: ReplyKind) -> None:
    """CMP-7: after a step that recorded no assistant message, the overflow recovery's point (judged with the
    deployment when the failure is CONTEXT_WINDOW_EXCEEDED, tests/check/test_deployment.py)."""
    overflow = Reply(kind=kind, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")
    script = TurnScript(prompt=Prompt(content=text_content("question")), replies=(overflow, Reply(text="recovered")))
    log = dump_turns(Hooks(), (dump_turn(1, 300), script))
    step_ends, answered = [], False
    for event in log:
        if event.type == "step/start":
            answered = False
        elif event.type == "assistant/message":
            answered = True
        elif event.type == "step/end" and not answered:
            step_ends.append(event.seq)
    assert len(step_ends) == 1
    listed = _listed(api.check_file(_file(tmp_path, "failed.jsonl", log)))
    assert listed[("CMP-7", "deployment")] == (step_ends[0], 1)
    assert ("CMP-7", "deployment") not in _listed(api.check_file(_file(tmp_path, "plain.jsonl", dump_turns(Hooks()))))


@pytest.mark.parametrize(("writer", "rule"), [
    (Hooks(), "CMP-6"),
    (compaction_hooks(replace(PLUGIN, context_window=400)), "CMP-8"),
    (compaction_hooks(replace(PLUGIN, prune=PruneConfig(threshold_chars=400, head_chars=100, tail_chars=0))), "PRN-3"),
    (compaction_hooks(replace(PLUGIN, prune=PruneConfig(threshold_chars=1000, head_chars=100, tail_chars=50))), "PRN-4"),
])
def test_every_finding_the_deployment_gives_was_listed_as_not_decided_without_it(tmp_path: Path, writer: Hooks, rule: str) -> None:
    """The planted faults of tests/check/test_deployment.py: what the deployment finds, the file's list without it
    named, at or before the finding (the list and the decisions find the same places)."""
    path = _file(tmp_path, "log.jsonl", dump_turns(writer))
    found = [f for f in api.check_file(path, deployment=_deployment(tmp_path)).findings if f.rule == rule]
    assert found
    first, count = _listed(api.check_file(path))[(rule, "deployment")]
    assert first <= min(f.seq for f in found if f.seq is not None) and count >= (len(found) if rule != "PRN-4" else 1)


def test_the_formats_carry_the_file_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json: the file record's ``notDecided`` (the api's); text: a line per item under the verdict with -v only; sarif:
    the file as a run artifact; the run's own list stays in the summary alone."""
    path = _file(tmp_path, "compacted.jsonl", dump_turns(compaction_hooks(PLUGIN)))
    expected = api.check_file(path)
    assert main(["check", "--format", "json", path]) == 0
    file_record, summary = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert file_record == expected.to_json()
    assert [(i["rule"], i["why"], i["seq"], i["count"]) for i in file_record["notDecided"]] == \
        [(i.rule, i.why, i.seq, i.count) for i in expected.undecided]
    assert not any(i["why"] == "request-only" for i in file_record["notDecided"])
    assert any(i["why"] == "request-only" for i in summary["notDecided"])
    assert main(["check", "-v", path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:1 + len(expected.undecided)] == [f"{path}: not decided: {i.text()}" for i in expected.undecided]
    assert lines[0].startswith(f"{path}: valid")
    assert main(["check", path]) == 0
    assert "not decided" not in capsys.readouterr().out
    assert main(["check", "--format", "sarif", path]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert [a["properties"]["notDecided"] for a in run["artifacts"]] == [file_record["notDecided"]]


def test_the_list_crosses_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "compacted.jsonl", dump_turns(compaction_hooks(PLUGIN)))
    report = api.check_file(path)
    assert report.undecided and pickle.loads(pickle.dumps(report)) == report
    assert main(["check", "--format", "json", "--jobs", "2", path, path]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records[0] == records[1] == report.to_json()


def test_a_run_that_leaves_rules_out_lists_only_the_rules_it_asks_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--select``/``--ignore`` (sessionspec/check/selection.py): a rule the run does not ask about is not listed."""
    path = _file(tmp_path, "compacted.jsonl", dump_turns(compaction_hooks(PLUGIN)))
    assert {item.rule for item in api.check_file(path).undecided} == {"CMP-6", "CMP-8", "PRN-3", "PRN-4"}
    assert main(["check", "--format", "json", "--ignore", "PRN", path]) == 0
    assert {i["rule"] for i in json.loads(capsys.readouterr().out.splitlines()[0])["notDecided"]} == {"CMP-6", "CMP-8"}
    assert main(["check", "--format", "json", "--select", "PRN-3", path]) == 0
    assert [i["rule"] for i in json.loads(capsys.readouterr().out.splitlines()[0])["notDecided"]] == ["PRN-3"]


def test_an_overflow_point_the_deployment_cannot_judge_is_listed_with_why(tmp_path: Path) -> None:
    """CMP-7's point after the failed step (tests/check/test_deployment.py judges it under the full deployment):
    a deployment without the compaction configuration leaves it not decided ('not-stated'); a scrubbed header
    leaves its figure unknown ('placeholder')."""
    overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED, error_message="too long")
    script = TurnScript(prompt=Prompt(content=text_content("question " + "long " * 40)), replies=(overflow, Reply(text="recovered")))
    log = dump_turns(Hooks(), (dump_turn(1, 300), dump_turn(2, 300), script))
    point = next(e.seq for e in log if e.type == "turn/end" and e.data["reason"]["kind"] == "error")  # type: ignore[index]
    no_compaction = _deployment(tmp_path, {k: v for k, v in DUMP_DEPLOYMENT.items() if k != "compaction"})
    assert _listed(api.check_file(_file(tmp_path, "failed.jsonl", log), deployment=no_compaction))[("CMP-7", "not-stated")] == (point, 1)
    scrubbed = api.check_file(_file(tmp_path, "scrubbed.jsonl", _scrubbed(log)), deployment=_deployment(tmp_path))
    assert scrubbed.findings == () and _listed(scrubbed)[("CMP-7", "placeholder")] == (point, 1)
    assert ("CMP-7", "placeholder") not in _listed(api.check_file(_file(tmp_path, "failed.jsonl", log), deployment=_deployment(tmp_path)))


def test_a_D08_log_lists_its_pre_step_points_and_its_request_context(tmp_path: Path) -> None:
    """The D08 harness's own log (tests/check/test_deployment.py's DIA-6 test judges it with the deployment): its
    pre-step points (DIA-6: after turn/start or step/end, decided at the next step/start) and its request/context
    (CMP-8: the window it records); D08 marks no overflow point (DIA-7), so no CMP-7 even after a failed attempt."""
    log = [json.loads(line) for line in D08_RECOVERY.read_text(encoding="utf-8").splitlines()[1:]]
    starts, opened = [], False
    for row in log:
        if row["type"] == "step/start" and opened:
            starts.append(row["seq"])
        if row["type"] in ("turn/start", "step/end"):
            opened = True
        elif row["type"] in ("step/start", "turn/end"):
            opened = False
    contexts = [row["seq"] for row in log if row["type"] == "request/context"]
    report = api.check_file(str(D08_RECOVERY))
    assert report.dialect is api.Dialect.D08 and starts and contexts
    listed = _listed(report)
    assert listed[("DIA-6", "deployment")] == (starts[0], len(starts))
    assert listed[("CMP-8", "deployment")][0] <= contexts[0]
    assert ("CMP-7", "deployment") not in listed
