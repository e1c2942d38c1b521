"""``sessionspec conform``: differential testing against the model, with a
shrunk, replayable divergence mapped to a rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionspec.cli import main
from sessionspec.conformance.adapter.driver import InProcessAdapter, ProcessAdapter
from sessionspec.conformance.conform.search import compare_trace, divergence_rule, run_conform
from sessionspec.conformance.mutants import adapter_command
from sessionspec.conformance.vectors.command import load_dir, run_vectors

SERVE = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"


def _text(t: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": t}]


PREFIX = {"role": "user", "content": _text("<p>")}
AGENT: dict[str, Any] = {"agent": {"system": "S", "contributors": [{"idiom": "prepend", "content": [PREFIX]}]}}
SEND: dict[str, Any] = {"op": "send", "prompt": {"content": _text("hi")}, "replies": [{"text": "a"}]}


def test_the_model_never_diverges_from_itself() -> None:
    assert run_conform(None, examples=30) is None


def test_serve_model_never_diverges_from_the_model() -> None:
    assert run_conform(SERVE, examples=30) is None


def test_PFX_11_a_prefix_after_history_diverges_with_its_rule() -> None:
    target = ProcessAdapter(adapter_command("prefix-after-history"))
    try:
        divergence = compare_trace(target, AGENT, [SEND])
    finally:
        target.close()
    assert divergence is not None
    assert divergence.rule == "PFX-11"
    assert divergence.mismatches[0].startswith("$.requests[0].messages")


def test_PFX_2_the_shrunk_divergence_is_a_minimal_replayable_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = adapter_command("recompose-every-turn")
    code = main(["conform", "--adapter", command, "--examples", "60", "--out", str(tmp_path / "divergence.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("DIVERGENCE (PFX-2)")
    # Recomposition is only visible from the second turn on: the shrunk trace is two sends (the second one
    # diverging), with at most one change between them.
    document = json.loads((tmp_path / "divergence.json").read_text(encoding="utf-8"))
    (vector,) = document["vectors"]
    ops = [s["op"]["op"] for s in vector["steps"]]
    assert ops.count("send") == 2 and ops[-1] == "send" and len(ops) <= 3
    # Replayable: the model passes the vector, the mutant fails it.
    files = load_dir(tmp_path)
    assert all(r.passed for r in run_vectors(files, None))
    assert not any(r.passed for r in run_vectors(files, command))


def test_divergence_rule_names_the_rejecting_rule() -> None:
    assert divergence_rule({"appended": []}, {"reject": {"rules": ["LOOP-1"], "reason": ""}}, ["$: rejected"]) == "LOOP-1"


def test_LOOP_9_an_extra_header_maps_to_header_recording() -> None:
    header = {"type": "request/header", "seq": 3, "time": 3, "data": {"header": {}, "reason": "change"}}
    step = {"type": "step/start", "seq": 3, "time": 3, "data": {"turn": 1, "step": 2}}
    rule = divergence_rule({"appended": [step]}, {"appended": [header, step]},
                           ["$.appended: expected 1 items, got 2", "$.appended[0].type: differs"])
    assert rule == "LOOP-9"


def test_PFX_9_a_prefix_message_in_history_maps_to_PFX_9() -> None:
    header = {"type": "request/header", "data": {"header": {"messagePrefix": [PREFIX]}, "reason": "initial"}}
    history = {"type": "user/message", "data": {"content": PREFIX["content"], "source": {"kind": "user"}}, "surfaceOp": "append"}
    rule = divergence_rule({"appended": [{"type": "step/start"}, header]}, {"appended": [history, {"type": "step/start"}, header]},
                           ["$.appended: expected 2 items, got 3", "$.appended[0].type: differs"])
    assert rule == "PFX-9"


def test_LOOP_6_a_missing_request_inject_maps_to_LOOP_6_not_PFX_2() -> None:
    """An adapter that drops a request-time inject (``requestInject``) lacks a ``user/message`` the model
    appended: the inject is LOOP-6's (it joins the next request), not a composition that did not run (PFX-2,
    the mapping of another missing history message); the partial adapter's run mapped it to PFX-2 with no prefix."""
    late = {"content": [{"type": "text", "text": "late"}], "source": {"kind": "user"}}
    op = {"op": "send", "prompt": {"content": [{"type": "text", "text": "work"}]},
          "replies": [{"kind": "text", "text": "a", "requestInject": late}]}
    inject = {"type": "user/message", "data": late, "surfaceOp": "append"}
    step = {"type": "step/start", "data": {"turn": 1, "step": 1}}
    mismatches = ["$.appended: expected 2 items, got 1", "$.appended[0].type: differs"]
    assert divergence_rule({"appended": [inject, step]}, {"appended": [step]}, mismatches, None, op) == "LOOP-6"
    other = {"type": "user/message", "data": {"content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}}
    assert divergence_rule({"appended": [other, step]}, {"appended": [step]}, mismatches, None, op) == "PFX-2"


def test_conform_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", SERVE, "--examples", "0"]) == 2
    assert main(["conform", "--adapter", "/nonexistent/adapter"]) == 2
    # An adapter that exits at once is reported, not mistaken for agreement.
    assert main(["conform", "--adapter", f"{sys.executable} -c pass"]) == 2
    err = capsys.readouterr().err
    assert "cannot start" in err and "closed its output" in err and "Traceback" not in err


def test_conform_cli_reports_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--adapter", SERVE, "--examples", "10"]) == 0
    assert "no divergence in 10 traces run" in capsys.readouterr().out


def test_in_process_adapter_answers_like_the_server() -> None:
    served, local = ProcessAdapter(SERVE), InProcessAdapter()
    try:
        for op in ({"op": "init", **AGENT}, SEND, SEND, {"op": "log"}):
            assert served.call(op) == local.call(op)
    finally:
        served.close()


def test_the_generator_reaches_every_window_and_abort_kind() -> None:
    """Issue 16: the interrupts drawn cover every window with every abort kind, and generated traces carry
    every turn shape and contributor kind listed within the default budget of 200 traces (generation only, no
    trace is run; the coverage report of a real 1,000-trace run is in docs/conformance.md)."""
    from hypothesis import HealthCheck, given, settings

    from sessionspec.conformance.conform.traces import KINDS, WINDOWS, interrupts, strategies

    seen: set[tuple[str, str]] = set()
    features: set[str] = set()
    quick = settings(max_examples=200, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck))

    @quick
    @given(interrupts())
    def draw_interrupt(interrupt: dict[str, Any]) -> None:
        seen.add((interrupt["window"], interrupt["kind"]))

    @quick
    @given(strategies())
    def draw_trace(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
        text = json.dumps(case)
        features.update(key for key in FEATURES if f'"{key}"' in text)

    draw_interrupt()
    draw_trace()
    assert {w for w, _ in seen} == set(WINDOWS)
    assert {k for _, k in seen} == set(KINDS)
    assert features == set(FEATURES)


FEATURES = ("throws", "lossy", "scope", "prune", "requestConfig", "blockReason", "submitError", "steering", "reasoning",
            "maxTokens", "continueWith", "stepResultError", "deferred", "systemAfter", "toolsAfter", "interrupt",
            "preStepError", "contexts", "requestInject", "mutationError", "isError")


def test_conform_reports_coverage_at_the_end_of_a_run(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", "--adapter", SERVE, "--examples", "8", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "coverage of what the adapter answered, in the 8 traces it started:" in out and "interrupt windows:" in out and "rules exercised" in out


def test_progress_is_printed_while_shrinking() -> None:
    import io

    progress = io.StringIO()
    divergence = run_conform(adapter_command("prefix-after-history"), examples=20, progress=progress, progress_every=0.0)
    assert divergence is not None
    assert "conform: shrinking a divergence (" in progress.getvalue()
