"""The adapter protocol ``sessionspec-adapter/1`` and the reference adapter
(``sessionspec serve-model``)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sessionspec.conformance.adapter.driver import InProcessAdapter, ProcessAdapter, answer, serve
from sessionspec.conformance.adapter.protocol import PROTOCOL, AdapterError
from sessionspec.conformance.adapter.session import ModelSession
from tests.support import GROUNDTRUTH

SERVE = f"{sys.executable} -m sessionspec.conformance.adapter.serve_model"


def _text(t: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": t}]


def _send(prompt: str, *replies: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"op": "send", "prompt": {"content": _text(prompt)}, "replies": list(replies), **extra}


PREFIX = {"role": "user", "content": _text("<pfx>")}
AGENT = {"system": "S", "contributors": [{"idiom": "prepend", "content": [PREFIX]}]}


@pytest.fixture
def served() -> Iterator[ProcessAdapter]:
    adapter = ProcessAdapter(SERVE)
    yield adapter
    adapter.close()


def test_hello_names_the_protocol(served: ProcessAdapter) -> None:
    assert served.call({"op": "hello"})["protocol"] == PROTOCOL


def test_PFX_11_prefix_leads_the_request_over_the_protocol(served: ProcessAdapter) -> None:
    served.call({"op": "init", "agent": AGENT})
    answer_ = served.call(_send("hi", {"text": "yo"}))
    (request,) = answer_["requests"]  # type: ignore[misc]
    # WIRE-1/PFX-11: system in its slot, prefix first, then the prompt.
    assert request == {"provider": "mock", "model": "mock-1", "system": "S",
                       "messages": [PREFIX, {"role": "user", "content": _text("hi")}]}
    types = [e["type"] for e in answer_["appended"]]  # type: ignore[index, union-attr]
    assert types[:4] == ["turn/start", "user/message", "step/start", "request/header"]
    assert types[-3:] == ["assistant/message", "step/end", "turn/end"]


def test_LOOP_1_a_disposed_instance_rejects_by_rule(served: ProcessAdapter) -> None:
    served.call({"op": "init", "agent": AGENT})
    assert served.call({"op": "dispose"}) == {}
    rejected = served.call(_send("hi"))
    assert rejected["reject"]["rules"] == ["LOOP-1"]  # type: ignore[index]
    served.call({"op": "resume"})
    assert "appended" in served.call(_send("again"))


def test_LOOP_8_non_integer_numbers_travel_as_number_escapes(served: ProcessAdapter) -> None:
    served.call({"op": "init", "agent": {**AGENT, "requestConfig": {"temperature": {"$number": "0.7"}}}})
    (request,) = served.call(_send("hi"))["requests"]  # type: ignore[misc]
    assert request["temperature"] == {"$number": "0.7"}


def test_malformed_operations_are_protocol_errors() -> None:
    session = ModelSession()
    assert "error" in json.loads(answer(session.handle, "not json"))
    assert json.loads(answer(session.handle, '{"id": 3, "op": "fly"}')) == {"id": 3, "error": "unknown op 'fly'"}
    bad_window = json.loads(answer(session.handle, json.dumps({"id": 4, **_send("x", interrupt={"window": "nowhere"})})))
    assert bad_window["id"] == 4 and "interrupt.window" in bad_window["error"]


def test_serve_answers_one_line_per_request() -> None:
    stdin = io.StringIO('{"id": 1, "op": "hello"}\n\n{"id": 2, "op": "log"}\n')
    stdout = io.StringIO()
    assert serve(ModelSession().handle, stdin, stdout) == 0
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [line["id"] for line in lines] == [1, 2]
    assert lines[1] == {"id": 2, "ok": {"log": []}}


def test_an_answer_quoting_a_lone_surrogate_is_a_utf8_line() -> None:
    """A rejection's reason may quote a log line's lone surrogate (check/decision/0526 made serve-model fail with
    UnicodeEncodeError): the line escapes it, and decodes to the same answer; other text stays as it is."""
    reason = "bad type 'x\ud800y'"
    line = answer(lambda op: {"reject": {"rules": ["LOG-3"], "reason": reason}}, '{"id": 1, "op": "check"}')
    line.encode("utf-8")
    assert json.loads(line) == {"id": 1, "reject": {"rules": ["LOG-3"], "reason": reason}}
    plain = answer(lambda op: {"reject": {"rules": ["LOG-3"], "reason": "é"}}, '{"id": 2, "op": "check"}')
    assert "é" in plain


def test_a_protocol_error_is_an_adapter_error_for_the_client(served: ProcessAdapter) -> None:
    with pytest.raises(AdapterError, match="malformed"):
        served.call({"op": "fly"})


def test_a_dead_adapter_is_reported() -> None:
    adapter = ProcessAdapter(f"{sys.executable} -c pass")
    with pytest.raises(AdapterError):
        adapter.call({"op": "hello"})
    adapter.close()
    with pytest.raises(AdapterError, match="cannot start"):
        ProcessAdapter("/nonexistent/adapter-binary")


def test_FMT_7_check_operation_judges_a_log() -> None:
    lines = (GROUNDTRUTH / "a-single-turn-no-prefix" / "session.jsonl").read_text().splitlines()
    model = InProcessAdapter()
    assert model.call({"op": "check", "log": lines}) == {"verdict": "valid"}
    # LOG-1: drop the turn/start; the seqs no longer start at 0.
    verdict = model.call({"op": "check", "log": lines[1:]})
    assert "LOG-1" in verdict["reject"]["rules"]  # type: ignore[index]


def test_INV_5_replay_operation_rebuilds_the_recorded_requests() -> None:
    name = "b-prefix-idioms-tool-roundtrip"
    lines = (GROUNDTRUTH / name / "session.jsonl").read_text().splitlines()
    recorded = [{k: v for k, v in r.items() if k != "sessionId"} for r in json.loads((GROUNDTRUTH / name / "requests.json").read_text())]
    assert InProcessAdapter().call({"op": "replay", "log": lines})["requests"] == recorded


def test_LOG_15_fork_keeps_the_log_through_the_last_turn_end() -> None:
    model = InProcessAdapter()
    model.call({"op": "init", "agent": AGENT})
    first = model.call(_send("one"))
    model.call(_send("two", interrupt={"window": "after-stream"}))
    forked = model.call({"op": "fork"})
    # The seed ends at the latest turn/end (the second turn ended aborted: it is kept).
    assert forked["length"] == len(model.call({"op": "log"})["log"])  # type: ignore[arg-type]
    assert forked["length"] > len(first["appended"])  # type: ignore[arg-type, operator]


def test_serve_model_rejects_an_unknown_mutant() -> None:
    done = subprocess.run([sys.executable, "-m", "sessionspec.conformance.adapter.serve_model", "--mutant", "nope"], capture_output=True, text=True,
                          input="", check=False)
    assert done.returncode == 2
    assert "unknown mutant" in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- codec and session operations


def _gt_lines(name: str) -> list[str]:
    return [line for line in (GROUNDTRUTH / name / "session.jsonl").read_text().splitlines() if line.strip()]


def _chunk_line(seq: int, time: int, chunk: dict[str, Any]) -> str:
    return json.dumps({"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": 1, "step": 1, "chunk": chunk}})


def test_CHK_4_pack_writes_one_row_per_run_of_three() -> None:
    deltas = [_chunk_line(s, t, {"type": "text-delta", "index": 0, "text": x}) for s, t, x in ((0, 10, "a"), (1, 12, "b"), (2, 11, "c"))]
    lines = InProcessAdapter().call({"op": "pack", "log": deltas})["lines"]
    # CHK-4: seq0/time0 of the first member, dt the signed time steps, texts in order.
    assert lines == [{"type": "text-chunks", "seq0": 0, "time0": 10,
                      "data": {"turn": 1, "step": 1, "index": 0, "dt": [2, -1], "texts": ["a", "b", "c"]}}]
    # A run of two stays verbatim.
    assert InProcessAdapter().call({"op": "pack", "log": deltas[:2]})["lines"] == [json.loads(x) for x in deltas[:2]]


def test_CHK_2_an_extra_chunk_key_is_not_packable() -> None:
    deltas = [_chunk_line(s, 0, {"type": "text-delta", "index": 0, "text": "x", **({"extra": 1} if s == 1 else {})}) for s in range(3)]
    assert InProcessAdapter().call({"op": "pack", "log": deltas})["lines"] == [json.loads(x) for x in deltas]


def test_LOG_14_repair_closes_an_open_step_and_turn() -> None:
    lines = _gt_lines("a-single-turn-no-prefix")
    cut = lines[:6]
    last = json.loads(cut[-1])
    closers = InProcessAdapter().call({"op": "repair", "log": cut})["closers"]
    # seq = last.seq + 1, …; time = last.time; step/end then turn/end {interrupted}.
    assert closers == [
        {"type": "step/end", "seq": last["seq"] + 1, "time": last["time"], "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": last["seq"] + 2, "time": last["time"], "data": {"turn": 1, "reason": {"kind": "interrupted"}}},
    ]
    assert InProcessAdapter().call({"op": "repair", "log": lines}) == {"closers": []}


def test_LOG_16_out_of_band_append_wraps_a_synthetic_turn() -> None:
    lines = _gt_lines("a-single-turn-no-prefix")
    trigger = {"kind": "injection", "source": {"kind": "plugin", "plugin": "t"}}
    op = {"op": "append-out-of-band", "log": lines, "type": "session/title", "data": {"title": "x"}, "trigger": trigger}
    appended = InProcessAdapter().call(op)["appended"]
    assert [(e["type"], e["seq"]) for e in appended] == [("turn/start", 21), ("session/title", 22), ("turn/end", 23)]
    assert appended[0]["data"] == {"turn": 2, "trigger": trigger}
    assert appended[2]["data"] == {"turn": 2, "reason": {"kind": "completed"}}
    surface = InProcessAdapter().call({**op, "type": "user/message"})
    assert surface["reject"]["rules"] == ["LOG-16"]
    # The trigger of a synthetic turn is the caller's: no default is invented.
    no_trigger = json.loads(answer(ModelSession().handle, json.dumps({"id": 1, **{k: v for k, v in op.items() if k != "trigger"}})))
    assert "trigger" in no_trigger["error"]


def test_MTR_11_measure_keeps_a_usage_anchor_only_for_an_equal_header() -> None:
    rows = [json.loads(line) for line in _gt_lines("a-single-turn-no-prefix")]
    for row in rows:
        if row["type"] == "assistant/message":
            row["data"]["usage"] = {"inputTokens": 1000, "outputTokens": 10}
    lines = [json.dumps(r) for r in rows]
    header = next(r for r in rows if r["type"] == "request/header")["data"]["header"]
    model = InProcessAdapter()

    def kind(override: dict[str, Any] | None) -> Any:
        op: dict[str, Any] = {"op": "measure", "log": lines, **({} if override is None else {"override": override})}
        return model.call(op)["baseline"]

    # MTR-8: provider usage 1000 + 10 exceeds the estimate, so the anchor is a usage baseline.
    assert kind(None) == {"kind": "usage", "tokens": 1010}
    # MTR-11: tools [] vs absent does not invalidate it; a messagePrefix or system difference does.
    assert kind({**header, "tools": []}) == {"kind": "usage", "tokens": 1010}
    assert kind({**header, "messagePrefix": [PREFIX]})["kind"] == "estimated"
    assert kind({**header, "system": "other"})["kind"] == "estimated"


def test_LOG_6_a_rejected_init_leaves_the_session() -> None:
    lines = _gt_lines("a-single-turn-no-prefix")
    model = InProcessAdapter()
    model.call({"op": "init", "log": lines})
    bad = [lines[0].replace('"time":', '"time":-0,"x":', 1), *lines[1:]]
    assert model.call({"op": "init", "log": bad})["reject"]["rules"] == ["LOG-4"]
    assert len(model.call({"op": "log"})["log"]) == len(lines)


def test_CMP_13_region_validation_rejects_without_events() -> None:
    rows = [json.loads(line) for line in _gt_lines("b-prefix-idioms-tool-roundtrip")]
    cut = [json.dumps(r) for r in rows[: next(i for i, r in enumerate(rows) if r["type"] == "tool/result") + 2]]
    call = next(r["seq"] for r in rows if r["type"] == "tool/call")
    message = next(r["seq"] for r in rows if r["type"] == "assistant/message" and r["seq"] < call and r["data"]["turn"] == 2)
    model = InProcessAdapter()

    def region(start: int, end: int) -> Any:
        return model.call({"op": "compact", "log": cut, "trigger": "region", "region": {"start": start, "end": end},
                           "compaction": {"summaries": [_text("S")]}})

    # start not a surface node (a log-only step/start); start after end; end inside a tool pair.
    assert region(2, message)["reject"]["rules"] == ["CMP-13"]
    assert region(message, 1)["reject"]["rules"] == ["CMP-13"]
    assert region(1, message)["reject"]["rules"] == ["CMP-13"]


def test_DIA_6_D08_pressure_compaction_runs_before_step_start() -> None:
    lines = [line for line in (GROUNDTRUTH.parent / "real/611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl")
             .read_text().splitlines() if line.strip()]
    step_starts = [i for i, line in enumerate(lines) if '"type":"step/start"' in line]
    op = {"op": "compact", "dialect": "D08", "trigger": "pressure", "compaction": {"summaries": [_text("S")], "contextWindow": 100000}}
    inside = InProcessAdapter().call({**op, "log": lines[: step_starts[1] + 1]})
    assert inside["reject"]["rules"] == ["DIA-6"]
    between = InProcessAdapter().call({**op, "log": lines[: step_starts[1]]})
    assert "appended" in between
    # A55 is the other way round: post-step, inside the step (CMP-6).
    a55 = InProcessAdapter().call({**op, "dialect": "A55", "log": _gt_lines("a-single-turn-no-prefix")})
    assert a55["reject"]["rules"] == ["CMP-6"]


def test_serve_model_answers_hostile_request_lines_without_a_traceback() -> None:
    """Invalid UTF-8 and a request nested 100,000 deep each get an ``error`` answer; the server goes on."""
    hostile = b'\xff{"id": 1}\n' + b"[" * 100_000 + b"\n" + b'{"id": 3, "op": "hello"}\n'
    done = subprocess.run([sys.executable, "-m", "sessionspec.conformance.adapter.serve_model"], input=hostile,
                          capture_output=True, timeout=60)
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert [sorted(a) for a in answers[:2]] == [["error", "id"], ["error", "id"]]
    assert answers[2] == {"id": 3, "ok": {"protocol": PROTOCOL, "implementation": "sessionspec model"}}
