"""`sessionspec replay` (issue 8): text, json and html on real, ground-truth
and generated logs; errors name the line and rule; economics per request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given

from sessionspec.economics import ANTHROPIC, NEUTRAL, request_costs, shape_of_request
from sessionspec.model.codec import serialize_event
from sessionspec.model.jsonval import js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.wire import Request, request_to_json
from sessionspec.replay import LoadedLog, ReplayReport, load_log_text, replay, report_to_json, report_to_text
from sessionspec.replay_html import report_to_html
from sessionspec.spec.log_strategies import well_formed_logs
from tests.support import GROUNDTRUTH, REAL

A55_LOGS = sorted((REAL / "a55f148516").rglob("*.jsonl"))
D08_LOGS = sorted((REAL / "611615650f").rglob("*.jsonl"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sessionspec.cli", "replay", *args], capture_output=True, text=True)


def _report(events: tuple[Event, ...], **kw: object) -> ReplayReport:
    report = replay(events, **kw)  # type: ignore[arg-type]
    assert isinstance(report, ReplayReport), str(report)
    return report


def _events(path: Path) -> tuple[Event, ...]:
    loaded = load_log_text(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, LoadedLog), str(loaded)
    return loaded.events


def test_INV_5_replay_text_shows_reason_and_changes() -> None:
    done = _cli(str(GROUNDTRUTH / "g-header-change-system-and-tools" / "session.jsonl"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("== request ") == 4
    assert 'reason "initial"' in out and out.count('reason "change"') >= 2
    assert "(system changed)" in out and "(tools changed)" in out
    assert "append-extends the previous request" in out


def test_replay_request_option_selects_one_request_and_out_writes_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = _cli(str(GROUNDTRUTH / "g-header-change-system-and-tools" / "session.jsonl"), "--format", "json",
                "--request", "2", "--out", str(out))
    assert done.returncode == 0 and done.stdout == ""
    value = json.loads(out.read_text())
    assert [r["meta"]["index"] for r in value["requests"]] == [1]
    assert value["requests"][0]["meta"]["headerReason"] == "change"


def test_replay_request_out_of_range_is_a_usage_error() -> None:
    done = _cli(str(GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl"), "--request", "5")
    assert done.returncode == 2 and "out of range" in done.stderr and "Traceback" not in done.stderr


def test_LOG_4_replay_reports_line_and_rule_for_a_bad_line(tmp_path: Path) -> None:
    lines = (GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl").read_text().splitlines()
    lines[3] = lines[3][:-1]  # truncate the JSON
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    done = _cli(str(bad))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    # "<file>:4: <RULE-ID>: <reason>"
    location, rule = done.stderr.split(f"{bad}:", 1)[1].split(": ")[:2]
    assert location == "4" and rule.split("-")[0].isalpha() and rule.split("-")[1].isdigit()


def test_SURF_5_replay_reports_rule_and_line_for_a_semantic_error(tmp_path: Path) -> None:
    lines = (GROUNDTRUTH / "b-prefix-idioms-tool-roundtrip" / "session.jsonl").read_text().splitlines()
    text = "\n".join(line.replace('"surfaceOp":"append"', '"surfaceOp":{"op":"replace","start":999,"end":999}', 1)
                     if i == 20 and '"surfaceOp":"append"' in line else line for i, line in enumerate(lines))
    if text == "\n".join(lines):
        pytest.skip("line 21 of the fixture is not a surface append")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text + "\n")
    done = _cli(str(bad))
    assert done.returncode == 1 and "Traceback" not in done.stderr and f"{bad}:21: SURF-" in done.stderr


def test_replay_missing_file_is_a_clear_error() -> None:
    done = _cli("/nonexistent/x.jsonl")
    assert done.returncode == 2
    assert done.stderr == "sessionspec replay: /nonexistent/x.jsonl: unreadable (cannot open: No such file or directory)\n"


@pytest.mark.parametrize("path", A55_LOGS, ids=lambda p: str(p.relative_to(REAL)))
def test_INV_5_replay_real_a55_logs_every_request_rebuilds_from_scratch(path: Path) -> None:
    """On the real logs, each replayed request equals the from-scratch
    executable definition (rebuild_request_at) at the same boundary."""
    events = _events(path)
    report = _report(events, cache_model=ANTHROPIC)
    assert all(r.cost is not None and 0 <= r.cost.cache_hit_tokens <= r.cost.input_tokens for r in report.requests)
    for r in report.requests:
        rebuilt = rebuild_request_at(events, r.point.step_start_seq, r.point.first_chunk_seq)
        assert isinstance(rebuilt, Request), str(rebuilt)
        assert js_stringify(request_to_json(rebuilt)) == js_stringify(r.request)
    json.dumps(report_to_json(report))
    assert report_to_text(report).count("== request ") == len(report.requests)
    assert report_to_html(report).count('<section class="request"') == len(report.requests)


@pytest.mark.parametrize("path", D08_LOGS, ids=lambda p: str(p.relative_to(REAL)))
def test_DIA_8_replay_real_d08_logs_have_no_prefix(path: Path) -> None:
    report = _report(_events(path), dialect=Dialect.D08)
    assert all(r.prefix_length == 0 for r in report.requests)
    report_to_html(report)


def test_replay_json_is_deterministic_and_documented_shape() -> None:
    path = str(GROUNDTRUTH / "j1-pressure-compaction" / "session.jsonl")
    a, b = _cli(path, "--format", "json", "--economics"), _cli(path, "--format", "json", "--economics")
    assert a.returncode == 0 and a.stdout == b.stdout
    value = json.loads(a.stdout)
    assert set(value) == {"requests", "summaries", "meta"}
    first = value["requests"][0]
    assert list(first)[:2] == ["provider", "model"] and list(first)[-1] == "meta"
    assert {"stepStartSeq", "headerReason", "prefixLength", "changes", "economics"} <= set(first["meta"])
    assert value["meta"]["economics"]["inputTokens"] == sum(r["meta"]["economics"]["inputTokens"] for r in value["requests"])
    # a compaction between requests is reported as a replace of the resend
    assert any("compaction checkpoint" in c for r in value["requests"] for c in r["meta"]["changes"])


def test_replay_economics_text_prints_tokens_and_totals() -> None:
    done = _cli(str(GROUNDTRUTH / "g-header-change-system-and-tools" / "session.jsonl"), "--economics", "--cache-model", "openai")
    assert done.returncode == 0
    assert done.stdout.count("tokens: input") == 4 and "totals (openai)" in done.stdout
    assert "first differing block: tools" in done.stdout


def test_replay_html_marks_regions_and_timeline() -> None:
    report = _report(_events(GROUNDTRUTH / "j2-tool-result-prune" / "session.jsonl"))
    page = report_to_html(report)
    assert page.count('<section class="request"') == len(report.requests) == 3
    assert 'data-region="prefix"' in page and 'data-region="new"' in page
    assert 'data-replace="prune"' in page
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_INV_6_replay_after_compaction_resend_changes_only_by_the_replace() -> None:
    report = _report(_events(GROUNDTRUTH / "j3-overflow-compaction-retry" / "session.jsonl"))
    after = [r for r in report.requests if any("compaction checkpoint" in c for c in r.changes)]
    assert after, "the overflow retry follows a compaction"
    assert all(r.point.header_seq == report.requests[0].point.header_seq for r in after)  # no header event (CMP-24)


def _has_replace_between(events: tuple[Event, ...], lo: int, hi: int) -> bool:
    return any(isinstance(e.surface_op, dict) and e.surface_op.get("op") == "replace" for e in events[lo:hi])


@given(well_formed_logs())
def test_P_INV_4_cache_hit_of_next_request_covers_previous(events: tuple[Event, ...]) -> None:
    """Generated logs: under the design, with an unchanged header and no
    replace in between, request k+1's cache-hit part covers all of request k
    (neutral cache model), and replay text/json/html all render."""
    report = _report(events)
    shapes = [shape_of_request(r.point.request(), r.prefix_length) for r in report.requests]  # type: ignore[arg-type]
    costs = request_costs(shapes, NEUTRAL)
    for k in range(1, len(report.requests)):
        prev, cur = report.requests[k - 1], report.requests[k]
        if cur.point.header_seq == prev.point.header_seq and not _has_replace_between(
                events, prev.point.step_start_seq, cur.point.step_start_seq):
            assert costs[k].previous_covered
            assert costs[k].cache_hit_tokens >= shapes[k - 1].tokens
    assert report_to_html(report).count('<section class="request"') == len(report.requests)
    json.dumps(report_to_json(report))


@given(well_formed_logs())
def test_replay_cli_roundtrip_on_generated_logs(events: tuple[Event, ...]) -> None:
    """The loader reads what the codec writes: loading the serialized log
    gives the same report."""
    loaded = load_log_text("\n".join(serialize_event(e) for e in events) + "\n")
    assert isinstance(loaded, LoadedLog)
    assert report_to_json(_report(loaded.events)) == report_to_json(_report(events))


def test_LOOP_1_replay_skips_the_seed_given_by_the_session_header() -> None:
    """A seeded child log: the header line's seedLength (38) marks the source
    session's events; the child's own first request anchors with `resume`."""
    path = REAL / "a55f148516/examples/acp-agent/tests/snapshots/subagent-fork/session.1.jsonl"
    done = _cli(str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout)
    assert value["meta"]["firstLiveSeq"] == 38
    assert [r["meta"]["stepStartSeq"] for r in value["requests"]] == [40]
    assert value["requests"][0]["meta"]["headerReason"] == "resume"
    unseeded = json.loads(_cli(str(path), "--format", "json", "--seed-length", "0").stdout)
    assert len(unseeded["requests"]) > 1  # the seed's own requests are there when not skipped


def test_INV_5_replay_of_simulated_logs_with_compactions_matches_the_simulators_requests() -> None:
    """On a log written by the model's own loop (compactions, prunes, resumes),
    every request replay prints equals the executable definition: a fresh
    derivation before its step/start and the header at its first chunk."""
    from sessionspec.simulate import simulate, to_jsonl

    events = simulate(7, 40, contributors=2, compaction=True)
    loaded = load_log_text(to_jsonl(events))
    assert isinstance(loaded, LoadedLog)
    value = report_to_json(_report(loaded.events))
    requests = value["requests"]
    assert len(requests) > 40 and any(e.type == "compact/start" for e in events)
    for request in requests:
        step_start = request["meta"]["stepStartSeq"]
        first_chunk = next((e.seq for e in events[step_start:] if e.type == "assistant/chunk"), None)
        end = next((e.seq for e in events[step_start:] if e.type == "step/end"), len(events))
        rebuilt = rebuild_request_at(events[: end + 1], step_start, first_chunk if first_chunk is not None and first_chunk < end else None)
        assert isinstance(rebuilt, Request)
        assert json.loads(js_stringify(request_to_json(rebuilt))) == {k: v for k, v in request.items() if k != "meta"}
