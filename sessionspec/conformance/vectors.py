"""``sessionspec vectors generate|run``: the conformance vectors (``sessionspec-vectors/1``).

A vector is a language-neutral script: an initial state (seed log lines, agent
options with contributors), then ``steps``, each an adapter operation
(sessionspec/conformance/adapter.py) with an optional expectation *pattern* over its answer
(sessionspec/conformance/vector_format.py).  Files group vectors and carry the format name and the
rule-registry digest; they are canonical JSON, so ``generate`` is byte-stable
and a test fails when the committed ``vectors/`` differ from a fresh generation.

Sources of the expectations:

- ``groundtruth.json``: the 17 scenarios recorded from the real harness; the
  expected requests and the final log come from ``tests/data/groundtruth`` (the
  real data), never from the model;
- ``replay.json``: reconstruction of the recorded requests from each recorded
  log alone (issue 10 part 1), again expected from the real data;
- ``check.json``: log verdicts, ``valid`` for real logs and ``reject {rule}``
  for one targeted corruption each (the rule is the one the corruption breaks),
  including ``check/rule/*``: one vector for each rule no other vector reaches
  (D08 reading, compaction brackets, legacy and synthetic logs);
- ``codec.json``: the operations below the loop (chunk-row writer, crash repair,
  out-of-band appends, the token meter, compact-basic's entry points, seed
  loading); the real ``pack`` vectors expect the real files;
- ``loop.json``: hand-written scenarios per rule; their expected answers are
  recorded from the model (the oracle) and the scenario says which rule it exercises.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from model.codec import serialize_event
from sessionspec.conformance.adapter import AdapterError, InProcessAdapter, ProcessAdapter, Response
from sessionspec.conformance.vector_format import (
    FORMAT,
    SCHEMA,
    FormatError,
    PlainJson,
    any_value,
    array,
    eq,
    exact_object,
    file_text,
    match,
    one_of,
    reject,
    rejection_rules,
    some_fields,
    to_plain,
    validate,
)
from sessionspec.replay import LoadError, load_log_text
from spec.registry import registry_digest, rule_ids

HELP: Final = "generate the conformance vectors, or run a vector directory against an adapter command"
ROOT: Final = Path(__file__).resolve().parents[2]
VECTORS_DIR: Final = ROOT / "vectors"
GROUNDTRUTH: Final = ROOT / "tests" / "data" / "groundtruth"
SCHEMA_FILE: Final = "schema.json"

Op = dict[str, Any]


# --------------------------------------------------------------------------- building blocks


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    op: Op
    expect: PlainJson | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Vector:
    id: str
    rules: tuple[str, ...]
    description: str
    initial: Op
    steps: tuple[Step, ...]

    def to_json(self) -> dict[str, PlainJson]:
        steps: list[PlainJson] = []
        for s in self.steps:
            step: dict[str, PlainJson] = {"op": to_plain(s.op)}
            if s.expect is not None:
                step["expect"] = s.expect
            steps.append(step)
        rules: list[PlainJson] = [r for r in sorted(set(self.rules))]
        return {"id": self.id, "rules": rules, "description": self.description,
                "initial": to_plain(self.initial), "steps": steps}


def text(t: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": t}]


def message(t: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": text(t)}


def contributor(t: str, idiom: str = "prepend", role: str = "user", **extra: Any) -> dict[str, Any]:
    return {"idiom": idiom, "content": [message(t, role)], **extra}


def send(prompt: str, *replies: dict[str, Any], **extra: Any) -> Op:
    return {"op": "send", "prompt": {"content": text(prompt)}, "replies": list(replies), **extra}


def reply(t: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"kind": "text", "text": t, **extra}


def echo(call_id: str, arg: str, t: str = "", usage: list[int] | None = None) -> dict[str, Any]:
    arguments = json.dumps({"text": arg}, separators=(",", ":"))
    r: dict[str, Any] = {"kind": "tool-calls", "text": t, "toolCalls": [{
        "callId": call_id, "name": "echo", "arguments": arguments, "result": f"echo:{arg}",
        "argumentsChunks": [arguments[:5], arguments[5:]]}], "usage": usage or [10, 5]}
    if t:
        r["textChunks"] = [t]
    return r


def event_pattern(event: Mapping[str, Any]) -> PlainJson:
    """An event as the implementation must append it: every field exact except
    ``time`` (the clock is free, Q-17) and the text of an error the
    implementation words itself (errors are compared by rule, never by text):
    ``compact/end.error`` and the ``message`` of an error ``turn/end`` reason."""
    fields: dict[str, PlainJson] = {k: any_value() if k == "time" else eq(v) for k, v in event.items()}
    data = event.get("data")
    if isinstance(data, dict) and event.get("type") == "compact/end" and "error" in data:
        fields["data"] = exact_object({k: any_value() if k == "error" else eq(v) for k, v in data.items()})
    if isinstance(data, dict) and event.get("type") == "request/header" and isinstance(data.get("header"), dict):
        # Field by field, so a difference names the header field (HDR-2, PFX-15, LOOP-9).
        header = exact_object({k: eq(v) for k, v in data["header"].items()})
        fields["data"] = exact_object({k: header if k == "header" else eq(v) for k, v in data.items()})
    reason = data.get("reason") if isinstance(data, dict) else None
    if event.get("type") == "turn/end" and isinstance(reason, dict) and reason.get("kind") == "error" and "message" in reason:
        assert isinstance(data, dict)
        reason_pattern = exact_object({k: any_value() if k == "message" else eq(v) for k, v in reason.items()})
        fields["data"] = exact_object({k: reason_pattern if k == "reason" else eq(v) for k, v in data.items()})
    return exact_object(fields)


def events_pattern(events: Iterable[Mapping[str, Any]]) -> PlainJson:
    return array([event_pattern(e) for e in events])


def recorded_expectation(response: Response) -> PlainJson:
    """An answer of the model as a pattern: exact, except event times."""
    rules = rejection_rules(response)
    if rules is not None:
        assert rules, response
        return reject(rules[0])
    fields: dict[str, PlainJson] = {}
    for key, value in response.items():
        if key in ("appended", "log") and isinstance(value, list):
            fields[key] = events_pattern(v for v in value if isinstance(v, dict))
        elif key in ("requests", "summaries") and isinstance(value, list):
            # Field by field, so a mismatch names the field that differs.
            fields[key] = array([exact_object({k: eq(x) for k, x in r.items()}) if isinstance(r, dict) else eq(r)
                                 for r in value])
        else:
            fields[key] = eq(value)
    return exact_object(fields)


def record(vector_id: str, rules: Sequence[str], description: str, initial: Op, ops: Sequence[Op],
           final_log: bool = False) -> Vector:
    """A hand-written scenario whose expectations are the model's answers."""
    adapter = InProcessAdapter()
    first = adapter.call({"op": "init", **initial})
    assert "reject" not in first, (vector_id, first)
    steps: list[Step] = []
    for op in ops:
        steps.append(Step(op=op, expect=recorded_expectation(adapter.call(op))))
    if final_log:
        steps.append(Step(op={"op": "log"}, expect=recorded_expectation(adapter.call({"op": "log"}))))
    return Vector(id=vector_id, rules=tuple(rules), description=description, initial=initial, steps=tuple(steps))


# --------------------------------------------------------------------------- ground truth (real data)


PERSONA: Final = "You are an AI agent powered by the DeepSeek Harness SDK.\n\nYou are the ground-truth test agent."
ECHO_TOOL: Final = {"name": "echo", "description": "echo back the text argument",
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}


def _gt_lines(name: str, file: str = "session.jsonl") -> list[str]:
    return [line for line in (GROUNDTRUTH / name / file).read_text(encoding="utf-8").splitlines() if line.strip()]


def _gt_requests(name: str, session: str | None = None, loop_only: bool = True) -> list[dict[str, Any]]:
    recorded = json.loads((GROUNDTRUTH / name / "requests.json").read_text(encoding="utf-8"))
    meta_path = GROUNDTRUTH / name / "requests.meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else [{} for _ in recorded]
    out = []
    for request, info in zip(recorded, meta):
        if session is not None and request.get("sessionId") != session:
            continue
        if loop_only and info.get("agentLoopRequest") is False:
            continue
        out.append({k: v for k, v in request.items() if k != "sessionId"})
    return out


def _gt_summaries(name: str) -> list[dict[str, Any]]:
    recorded = json.loads((GROUNDTRUTH / name / "requests.json").read_text(encoding="utf-8"))
    return [{k: v for k, v in r.items() if k != "sessionId"} for r in recorded if r.get("purpose") == "compaction"]


def _count(response: Response, key: str) -> int:
    value = response.get(key)
    return len(value) if isinstance(value, list) else 0


def groundtruth_vector(name: str, rules: Sequence[str], initial: Op, ops: Sequence[Op], *, session: str | None = None,
                       log_file: str = "session.jsonl") -> Vector:
    """A scenario replayed through the operations; each ``send`` expects the real
    requests it dispatched (split by the model's count per send, the values are
    the recorded ones), and the final log must be the recorded log (times free)."""
    expected = _gt_requests(name, session)
    summaries = _gt_summaries(name)
    adapter = InProcessAdapter()
    adapter.call({"op": "init", **initial})
    steps: list[Step] = []
    taken = 0
    summaries_taken = 0
    for op in ops:
        response = adapter.call(op)
        if op["op"] != "send" or "reject" in response:
            steps.append(Step(op=op, expect=recorded_expectation(response) if op["op"] != "send" else None))
            continue
        count = _count(response, "requests")
        mine = expected[taken: taken + count]
        taken += count
        pattern: dict[str, PlainJson] = {"requests": array([eq(r) for r in mine])}
        made = _count(response, "summaries")
        if summaries:
            pattern["summaries"] = array([eq(s) for s in summaries[summaries_taken: summaries_taken + made]])
            summaries_taken += made
        steps.append(Step(op=op, expect=some_fields(pattern)))
    if taken != len(expected):
        raise FormatError(f"{name}: the scenario dispatched {taken} loop requests, the recording has {len(expected)}")
    real_log = [json.loads(line) for line in _gt_lines(name, log_file)]
    steps.append(Step(op={"op": "log"}, expect=exact_object({"log": events_pattern(real_log)})))
    return Vector(id=f"gt/{name}" + (f"/{session}" if session else ""), rules=tuple(rules),
                  description=(GROUNDTRUTH / name / "scenario.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# "),
                  initial=initial, steps=tuple(steps))


def _agent(*contributors: dict[str, Any], tools: bool = False, system: str = PERSONA) -> dict[str, Any]:
    agent: dict[str, Any] = {"system": system, "contributors": list(contributors)}
    if tools:
        agent["tools"] = [ECHO_TOOL]
    return agent


def _gt_text(t: str, out: int | None = None, **extra: Any) -> dict[str, Any]:
    return reply(t, usage=[10, len(t) if out is None else out], **extra)


def groundtruth_vectors() -> list[Vector]:
    v: list[Vector] = []
    v.append(groundtruth_vector("a-single-turn-no-prefix", ["PFX-10", "LOOP-9", "WIRE-1", "LOOP-5"],
                                {"agent": _agent()}, [send("hello", _gt_text("hello back"))]))
    a1 = {"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>A1 append: skills catalog</system-reminder>"},
        {"type": "text", "text": "second block of A1"}]}
    b_agent = _agent(contributor("<system-reminder>P1 prepend: workspace rules</system-reminder>"),
                     {"idiom": "append", "content": [a1]},
                     contributor("<system-reminder>P2 prepend: memory</system-reminder>"),
                     {"idiom": "prepend", "content": []}, tools=True)
    v.append(groundtruth_vector("b-prefix-idioms-tool-roundtrip", ["PFX-3", "PFX-4", "PFX-7", "PFX-11", "LOOP-7", "DER-6", "SURF-13", "LOG-9", "LEG-7"],
                                {"agent": b_agent},
                                [send("turn one", _gt_text("first answer")),
                                 send("turn two: please echo ping", echo("call-1", "ping", "let me echo"), _gt_text("echo done"))]))
    inject = {"content": text("<system-reminder>injected during composition</system-reminder>"),
              "source": {"kind": "plugin", "plugin": "gt-composer"}, "meta": {"kind": "gt-inject"}}
    v.append(groundtruth_vector("c-inject-during-composition", ["PFX-8"],
                                {"agent": _agent(contributor("<system-reminder>prefix from the injecting contributor</system-reminder>",
                                                             inject=inject))},
                                [send("first prompt", _gt_text("saw the injected context")),
                                 send("second prompt", _gt_text("second turn answer"))]))
    v.append(groundtruth_vector("d-cancel-during-composition-then-recompose", ["PFX-5", "LOOP-15", "LEG-7"],
                                {"agent": _agent(contributor("STALE opener"))},
                                [send("dropped prompt", interrupt={"window": "in-composition"}),
                                 {"op": "configure", "agent": {"contributors": [contributor("fresh opener #2")]}},
                                 send("real prompt", _gt_text("reply to the real prompt")),
                                 {"op": "configure", "agent": {"contributors": [contributor("would be #3")]}},
                                 send("third prompt", _gt_text("third turn reply"))]))
    v.append(groundtruth_vector("e-dispose-during-composition", ["PFX-5", "LOOP-15"],
                                {"agent": _agent(contributor("never sent"))},
                                [send("go", interrupt={"window": "in-composition", "kind": "dispose"}),
                                 send("after dispose")]))
    good = contributor("good contributor prefix")
    v.append(groundtruth_vector("f-throwing-contributor", ["PFX-12", "LOOP-16"],
                                {"agent": _agent(good, {"idiom": "prepend", "content": [],
                                                        "throws": "contributor exploded on first composition"})},
                                [send("first prompt (composition throws)"),
                                 {"op": "configure", "agent": {"contributors": [good, {"idiom": "prepend", "content": []}]}},
                                 send("second prompt", _gt_text("recovered turn answer"))]))
    changed = PERSONA + "\n\nNew guidance added during a tool call."
    shout = {"name": "shout", "description": "a second tool registered between turns",
             "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}
    g_echo = echo("call-g1", "a")
    g_echo["systemAfter"] = changed
    v.append(groundtruth_vector("g-header-change-system-and-tools", ["LOOP-9", "HDR-4", "PFX-15"],
                                {"agent": _agent(contributor("<system-reminder>stable prefix</system-reminder>"), tools=True)},
                                [send("turn one: call echo", g_echo, _gt_text("step two after a system change")),
                                 {"op": "configure", "agent": {"system": changed, "tools": [ECHO_TOOL, shout]}},
                                 send("turn two", _gt_text("turn two after a tools change")),
                                 send("turn three", _gt_text("turn three with nothing changed"))]))
    h_agent = _agent(contributor("<system-reminder>workspace instructions v1</system-reminder>"), tools=True)
    v.append(groundtruth_vector("h1-resume-no-drift", ["PFX-1", "LOOP-1", "LOOP-8", "LOOP-9", "HDR-6"], {"agent": h_agent},
                                [send("generation one prompt", echo("call-h1", "gen1"), _gt_text("gen1 answer")),
                                 {"op": "resume"},
                                 send("generation two prompt", _gt_text("gen2 answer"))]))
    i_agent = _agent(contributor("<system-reminder>prefix composed once</system-reminder>"), {"idiom": "prepend", "content": []})
    v.append(groundtruth_vector("i-request-error-retry", ["LOOP-14", "PFX-7"], {"agent": i_agent},
                                [send("please answer", {"kind": "error-thrown", "errorCode": "SERVER", "retry": True},
                                      {"kind": "error-in-band", "errorCode": "OVERLOADED", "errorMessage": "in-band overload",
                                       "errorStatus": 529, "retry": True},
                                      _gt_text("third time lucky")),
                                 send("and again", _gt_text("second turn answer"))]))

    def identity(agent_id: str) -> dict[str, Any]:
        return _agent(contributor(f"<system-reminder>agent identity: {agent_id}</system-reminder>"), tools=True)

    v.append(groundtruth_vector("k-fork-seeded-child", ["LOOP-1", "PFX-1"], {"agent": identity("gt-k-parent")},
                                [send("parent first", _gt_text("parent turn 1")),
                                 send("parent second (echo)", echo("call-k1", "parent"), _gt_text("parent turn 2 done"))],
                                session="gt-k-parent", log_file="session.parent.jsonl"))
    v.append(groundtruth_vector("k-fork-seeded-child", ["LOG-15", "LOOP-1", "LOOP-2", "LOOP-8", "PFX-1"],
                                {"agent": identity("gt-k-child"), "log": _gt_lines("k-fork-seeded-child", "session.parent.jsonl")[:24]},
                                [send("child task", _gt_text("child answer")),
                                 send("child follow-up", _gt_text("child answer 2"))], session="gt-k-child"))
    l_agent = _agent(contributor("prefix after a blocked turn"))
    v.append(groundtruth_vector("l-blocked-prompt-then-turn", ["PFX-14", "LOOP-3"], {"agent": l_agent},
                                [{"op": "send", "prompt": {"content": text("forbidden request"), "blockReason": "policy says no"}},
                                 send("allowed request", _gt_text("answer to the allowed prompt"))]))
    ctx = [{"content": text("<system-reminder>per-prompt context</system-reminder>"),
            "source": {"kind": "plugin", "plugin": "gt-ctx"}, "placement": "separate"}]

    def m_turn(t: str, *replies: dict[str, Any]) -> Op:
        return {"op": "send", "prompt": {"content": text(t), "contexts": ctx}, "replies": list(replies)}

    v.append(groundtruth_vector("m-steering-empty-assistant-reasoning", ["DER-5", "LOOP-13", "LOOP-4", "LOOP-12", "WIRE-6"],
                                {"agent": _agent(contributor("a system-role prefix message", role="system"))},
                                [m_turn("turn one (empty reply)", {"kind": "empty"}),
                                 m_turn("turn two (reasoning, then continuation steering)",
                                        reply("reasoned answer", textChunks=["reasoned answer"], reasoning="thinking about it",
                                              usage=None, continueWith="keep going on the goal"),
                                        _gt_text("after continuation steering")),
                                 m_turn("turn three", _gt_text("last"))]))
    v.append(groundtruth_vector("o-cancel-after-composition-before-anchor", ["PFX-16", "LOOP-15"],
                                {"agent": _agent(contributor("prefix composed during turn 1"))},
                                [send("turn one (cancelled in pre-step)", interrupt={"window": "after-pre-step"}),
                                 {"op": "configure", "agent": {"contributors": [contributor("prefix composed during turn 2")]}},
                                 send("turn two", _gt_text("answer in turn two"))]))
    v.append(groundtruth_vector("q-seeded-log-without-header", ["LOOP-9", "HDR-5"],
                                {"agent": _agent(contributor("<system-reminder>prefix over a header-less seed</system-reminder>")),
                                 "log": _gt_lines("q-seeded-log-without-header")[:6]},
                                [send("live question", _gt_text("first live answer"))]))
    return v


def _seed_length(name: str, session: str) -> int:
    """The child's ``seedLength`` from the recorded sessions.json (LOG-8)."""
    entry = json.loads((GROUNDTRUTH / name / "sessions.json").read_text(encoding="utf-8")).get(session)
    if not isinstance(entry, dict):
        raise FormatError(f"{name}: no session {session} in sessions.json")
    return int(entry["header"].get("seedLength", 0))


def recorded_reply(rows: Sequence[Row], turn: int, step: int) -> dict[str, Any]:
    """The model's reply to one recorded request, read back from the recorded
    stream (chunks) and the tool outputs: the *inputs* of the scenario, so a
    compaction scenario can be replayed without retyping long texts."""
    chunks = [r["data"]["chunk"] for r in rows
              if r["type"] == "assistant/chunk" and r["data"]["turn"] == turn and r["data"]["step"] == step]
    if not chunks:
        return {"kind": "error-thrown", "errorCode": "CONTEXT_WINDOW_EXCEEDED", "errorMessage": "context window exceeded"}
    spec: dict[str, Any] = {"kind": "text", "text": ""}
    deltas = [c["text"] for c in chunks if c["type"] == "text-delta"]
    if deltas:
        spec["text"] = "".join(deltas)
        if deltas != list(spec["text"]):
            spec["textChunks"] = deltas
    reasoning = [c["text"] for c in chunks if c["type"] == "reasoning-delta"]
    if reasoning:
        spec["reasoning"] = "".join(reasoning)
    usage = [c["usage"] for c in chunks if c["type"] == "usage"]
    spec["usage"] = [usage[0]["inputTokens"], usage[0]["outputTokens"]] if usage else None
    calls = []
    for block in (c["block"] for c in chunks if c["type"] == "block-end" and c["block"]["type"] == "tool-call"):
        pieces = [c["argumentsDelta"] for c in chunks if c["type"] == "tool-call-delta" and c["id"] == block["id"]]
        result = next(r for r in rows if r["type"] == "tool/result" and r["data"]["callId"] == block["id"])
        calls.append({"callId": block["id"], "name": block["name"], "arguments": block["arguments"],
                      "argumentsChunks": pieces, "result": result["data"]["content"][0]["text"],
                      "isError": result["data"]["isError"]})
    if calls:
        spec["kind"] = "tool-calls"
        spec["toolCalls"] = calls
    return spec


def _recorded_turns(name: str) -> list[Op]:
    """One ``send`` per recorded turn: its prompt and the replies of its steps."""
    rows = _rows(name)
    out: list[Op] = []
    for start in (r for r in rows if r["type"] == "turn/start"):
        turn = start["data"]["turn"]
        prompt = next(r for r in rows if r["type"] == "user/message" and r["seq"] == start["seq"] + 1)
        steps = sorted({r["data"]["step"] for r in rows if r["type"] == "step/start" and r["data"]["turn"] == turn})
        out.append({"op": "send", "prompt": {"content": prompt["data"]["content"]},
                    "replies": [recorded_reply(rows, turn, step) for step in steps]})
    return out


def _instruction(name: str) -> str:
    summary = _gt_summaries(name)
    return str(summary[0]["messages"][-1]["content"][0]["text"]) if summary else ""


def compaction_groundtruth_vectors() -> list[Vector]:
    """j1-j3: pressure compaction, tool-result prune and overflow compaction, as the real harness ran them."""
    out: list[Vector] = []
    checkpoint = [{"type": "text", "text": "CHECKPOINT: user asked for work; tools ran; results were ok."}]
    configs = {
        "j1-pressure-compaction": ({"thresholdRatio": {"$number": "0.5"}, "retainTokens": 250, "maxTokens": 256,
                                    "compactionRetries": 1, "contextWindow": 2000, "summaries": [checkpoint, checkpoint]},
                                   ["CMP-3", "CMP-4", "CMP-5", "CMP-6", "CMP-8", "CMP-11", "CMP-12", "CMP-15", "CMP-16", "CMP-17",
                                    "CMP-20", "CMP-22", "CMP-24", "SURF-13", "FMT-4", "DER-7", "LEG-7", "MTR-1", "MTR-2", "MTR-3", "MTR-4", "MTR-5", "MTR-7", "MTR-8",
                                    "MTR-6", "MTR-9", "MTR-10", "CMP-1", "CMP-2", "WIRE-4", "SURF-5", "SURF-6", "SURF-8"]),
        "j2-tool-result-prune": ({"thresholdRatio": {"$number": "0.25"}, "retainTokens": 100, "contextWindow": 800,
                                  "prune": {"thresholdChars": 200, "headChars": 60, "tailChars": 30},
                                  "summaries": [checkpoint]},
                                 ["PRN-1", "PRN-2", "PRN-3", "PRN-4", "PRN-5", "PRN-6", "SURF-7", "SURF-8", "SURF-13", "DER-7"]),
        "j3-overflow-compaction-retry": ({"thresholdRatio": 1, "retainTokens": 30, "maxTokens": 64, "compactionRetries": 0,
                                          "maxOverflowRetries": 1, "contextWindow": 1000000000, "summaries": [checkpoint]},
                                         ["CMP-7", "CMP-9", "LOOP-14", "CMP-16"]),
    }
    for name, (compaction, rules) in configs.items():
        header = next(json.loads(line) for line in _gt_lines(name) if '"request/header"' in line)["data"]["header"]
        compaction = {**compaction, "instruction": _instruction(name)}
        agent: dict[str, Any] = {"system": header["system"], "tools": header.get("tools", []), "compaction": compaction,
                                 "contributors": [{"idiom": "prepend", "content": header.get("messagePrefix", [])}]}
        out.append(groundtruth_vector(name, rules, {"agent": agent}, _recorded_turns(name)))
    return out


def replay_vectors() -> list[Vector]:
    """Issue 10 part 1 as vectors: the recorded requests rebuilt from each recorded log alone."""
    out: list[Vector] = []
    for directory in sorted(p for p in GROUNDTRUTH.iterdir() if p.is_dir()):
        files: list[tuple[str, str | None]] = [("session.jsonl", None)]
        if (directory / "session.parent.jsonl").exists():
            files = [("session.jsonl", "gt-k-child"), ("session.parent.jsonl", "gt-k-parent")]
        for file, session in files:
            expected = _gt_requests(directory.name, session)
            summaries = _gt_summaries(directory.name)
            pattern: dict[str, PlainJson] = {"requests": array([eq(r) for r in expected])}
            if summaries:
                # The summarizer's instruction is an opaque parameter (not logged): any final message.
                pattern["summaries"] = array([some_fields({
                    k: array([eq(m) for m in val[:-1]] + [any_value()]) if k == "messages" else eq(val)
                    for k, val in s.items()}) for s in summaries])
            op: Op = {"op": "replay", "log": _gt_lines(directory.name, file)}
            rules: tuple[str, ...] = ("INV-3", "INV-5", "INV-7", "HDR-9", "WIRE-1", "WIRE-2", "FMT-8", "SURF-1", "SURF-11",
                                      "DER-4")
            if directory.name in ("j1-pressure-compaction", "j2-tool-result-prune"):
                # The fold of a log with replacements equals the live, incremental surface (the recorded requests).
                rules += ("SURF-10",)
            if directory.name == "m-steering-empty-assistant-reasoning":
                # The expected requests are the llm/stream values (reasoning blocks and provenance kept), not what an adapter sends.
                rules += ("WIRE-6",)
            if directory.name == "g-header-change-system-and-tools":
                # system and tools of every request are the folded header's (INV-4), across change headers.
                rules += ("INV-4",)
            if session is not None and session == "gt-k-child":
                op["firstLiveSeq"] = _seed_length(directory.name, session)
                rules += ("LOG-8", "FMT-11")
            out.append(Vector(id=f"replay/{directory.name}" + ("" if session is None else f"/{session}"),
                              rules=rules,
                              description=f"rebuild every recorded request of {directory.name}/{file} from the log alone",
                              initial={}, steps=(Step(op=op, expect=some_fields(pattern)),)))
    return out


# --------------------------------------------------------------------------- log verdicts


Row = dict[str, Any]


def _rows(name: str, file: str = "session.jsonl") -> list[Row]:
    return [json.loads(line) for line in _gt_lines(name, file)]


def _lines(rows: Sequence[Row]) -> list[str]:
    return [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in rows]


def _first(rows: Sequence[Row], type_name: str, nth: int = 0, **data: Any) -> int:
    hits = [i for i, r in enumerate(rows) if r.get("type") == type_name and all(r["data"].get(k) == val for k, val in data.items())]
    return hits[nth]


def _mutated(name: str, change: Callable[[list[Row]], list[Row] | None]) -> list[str]:
    rows = copy.deepcopy(_rows(name))
    changed = change(rows)
    return _lines(rows if changed is None else changed)


def _set(path: Sequence[str | int], value: Any, type_name: str, nth: int = 0, **data: Any) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[_first(rows, type_name, nth, **data)]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: Sequence[str], type_name: str, nth: int = 0) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[_first(rows, type_name, nth)]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _swap_types(rows: list[Row]) -> None:
    start = _first(rows, "step/start")
    chunk = _first(rows, "assistant/chunk")
    rows.insert(chunk, rows.pop(start))
    for seq, row in enumerate(rows):
        row["seq"] = seq


def _duplicate_seq(rows: list[Row]) -> None:
    rows[5]["seq"] = rows[4]["seq"]


def _drop_type(type_name: str) -> Callable[[list[Row]], list[Row]]:
    def change(rows: list[Row]) -> list[Row]:
        index = _first(rows, type_name)
        gone = rows[index]["seq"]
        out = []
        for i, row in enumerate(rows):
            if i == index:
                continue
            if row["seq"] > gone:
                row["seq"] -= 1
            if "sourceEventSeqs" in row:
                row["sourceEventSeqs"] = [s - 1 if s > gone else s for s in row["sourceEventSeqs"] if s != gone]
                if not row["sourceEventSeqs"]:
                    del row["sourceEventSeqs"]
            op = row.get("surfaceOp")
            if isinstance(op, dict):
                op["start"] -= op["start"] > gone
                op["end"] -= op["end"] > gone
            out.append(row)
        return out

    return change


# --------------------------------------------------------------------------- recorded corruptions


def _dump(row: Any) -> str:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False)


def _leaf_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The key paths of ``value`` in depth-first order (objects and arrays)."""
    out: list[tuple[str | int, ...]] = []
    items: Iterable[tuple[str | int, Any]] = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out += _leaf_paths(child, (*prefix, key))
    return out


def _wrong(value: Any) -> Any:
    """A value of the same JSON kind that breaks it: -1, "", [], {} or the negation."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return -1 if value >= 0 else 0
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return 0


def _renumber(rows: list[Any], gone: int | None = None) -> list[Any]:
    for seq, row in enumerate(rows):
        if isinstance(row, dict) and isinstance(row.get("seq"), int):
            row["seq"] = seq
    return rows


MUTATION_KINDS: Final = ("drop", "duplicate", "swap-next", "seq-plus-one", "time-text", "type-unknown", "no-data",
                         "surface-append", "surface-none", "surface-replace-self", "sources-none", "sources-shift",
                         "truncate", "reverse-keys", *(f"deep-{op}-{k}" for op in ("drop", "null", "wrong") for k in range(6)))


def mutate(lines: Sequence[str], kind: str, index: int) -> list[str] | None:
    """One corruption of line ``index`` of a log (None when it does not apply).
    Only the touched lines are re-serialized; the others stay byte-exact."""
    out = list(lines)
    try:
        row = json.loads(lines[index])
    except json.JSONDecodeError:
        return None
    if not isinstance(row, dict):
        return None
    match kind:
        case "drop":
            del out[index]
            return out
        case "duplicate":
            out.insert(index, lines[index])
            return out
        case "swap-next":
            if index + 1 >= len(lines):
                return None
            rows = [json.loads(x) for x in lines]
            rows[index], rows[index + 1] = rows[index + 1], rows[index]
            if not all(isinstance(r, dict) and isinstance(r.get("seq"), int) for r in rows):
                return None
            return [_dump(r) for r in _renumber(rows)]
        case "seq-plus-one" | "time-text" | "type-unknown" | "no-data":
            key, value = {"seq-plus-one": ("seq", row.get("seq", 0) + 1 if isinstance(row.get("seq"), int) else None),
                          "time-text": ("time", "later"), "type-unknown": ("type", "x/unknown"),
                          "no-data": ("data", None)}[kind]
            if key not in row or (kind == "seq-plus-one" and value is None):
                return None
            if kind == "no-data":
                del row["data"]
            else:
                row[key] = value
        case "surface-append":
            row["surfaceOp"] = "append"
        case "surface-none":
            if "surfaceOp" not in row:
                return None
            del row["surfaceOp"]
        case "surface-replace-self":
            if not isinstance(row.get("seq"), int):
                return None
            row["surfaceOp"] = {"op": "replace", "start": row["seq"], "end": row["seq"]}
        case "sources-none":
            if "sourceEventSeqs" not in row:
                return None
            del row["sourceEventSeqs"]
        case "sources-shift":
            if not isinstance(row.get("sourceEventSeqs"), list):
                return None
            row["sourceEventSeqs"] = [s + 1 if isinstance(s, int) else s for s in row["sourceEventSeqs"]]
        case "truncate":
            out[index] = lines[index][: len(lines[index]) // 2]
            return out
        case "reverse-keys":
            row = dict(reversed(list(row.items())))
        case _ if kind.startswith("deep-"):
            _, op, k = kind.split("-")
            paths = _leaf_paths(row.get("data"), ("data",)) if isinstance(row.get("data"), dict | list) else []
            if int(k) >= len(paths):
                return None
            path = paths[int(k)]
            parent: Any = row
            for step in path[:-1]:
                parent = parent[step]
            last = path[-1]
            if op == "drop":
                del parent[last]
            elif op == "null":
                parent[last] = None
            else:
                parent[last] = _wrong(parent[last])
        case _:
            raise FormatError(f"unknown mutation {kind}")
    out[index] = _dump(row)
    return out


# One corruption per rule the checker names, found by an offline search over
# the ground-truth logs and small real logs (rule, log under tests/data, kind, line).
# Generation re-applies each and asserts the checker still names the rule.
RECORDED_CORRUPTIONS: Final[tuple[tuple[str, str, str, int], ...]] = (
    ("LOG-13", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 0),
    ("LOG-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 0),
    ("LOG-2", "groundtruth/a-single-turn-no-prefix/session.jsonl", "time-text", 0),
    ("LOG-3", "groundtruth/a-single-turn-no-prefix/session.jsonl", "no-data", 0),
    ("SURF-2", "groundtruth/a-single-turn-no-prefix/session.jsonl", "surface-append", 0),
    ("FMT-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "truncate", 0),
    ("SURF-5", "groundtruth/a-single-turn-no-prefix/session.jsonl", "surface-replace-self", 1),
    ("DER-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 1),
    ("FMT-9", "groundtruth/a-single-turn-no-prefix/session.jsonl", "drop", 2),
    ("HDR-8", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 3),
    ("HDR-1", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-0", 3),
    ("HDR-7", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-5", 3),
    ("SURF-4", "groundtruth/a-single-turn-no-prefix/session.jsonl", "swap-next", 17),
    ("LOG-11", "groundtruth/a-single-turn-no-prefix/session.jsonl", "deep-drop-1", 20),
    ("CMP-14", "groundtruth/j1-pressure-compaction/session.jsonl", "type-unknown", 0),
    ("CMP-15", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-drop-1", 1),
    ("SURF-6", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 13),
    ("CMP-10", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-null-2", 13),
    ("CMP-22", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 58),
    ("CMP-25", "groundtruth/j1-pressure-compaction/session.jsonl", "swap-next", 58),
    ("CMP-20", "groundtruth/j1-pressure-compaction/session.jsonl", "deep-drop-0", 59),
    ("SURF-7", "groundtruth/j2-tool-result-prune/session.jsonl", "deep-drop-0", 12),
    ("PRN-3", "groundtruth/j2-tool-result-prune/session.jsonl", "deep-drop-4", 12),
    ("CHK-5", "real/a55f148516/examples/acp-agent/tests/snapshots/text-turn/session.jsonl", "no-data", 7),
    ("DIA-19", "real/611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", "deep-drop-0", 20),
)


def recorded_check_vectors() -> list[Vector]:
    from sessionspec.conformance.adapter import InProcessAdapter as Model

    out: list[Vector] = []
    model = Model()
    for rule, source, kind, index in RECORDED_CORRUPTIONS:
        lines = [line for line in (ROOT / "tests" / "data" / source).read_text(encoding="utf-8").splitlines() if line.strip()]
        mutated = mutate(lines, kind, index)
        if mutated is None:
            raise FormatError(f"corruption {kind} does not apply to line {index} of {source}")
        answer = model.call({"op": "check", "log": list[PlainJson](mutated)})
        if rule not in (rejection_rules(answer) or []):
            raise FormatError(f"{source} with {kind} at line {index} no longer breaks {rule}: {answer}")
        out.append(Vector(id=f"check/recorded/{rule}", rules=(rule,),
                          description=f"{source} with one corruption ({kind} at line {index + 1}) breaks {rule}",
                          initial={}, steps=(Step(op={"op": "check", "log": mutated}, expect=reject(rule)),)))
    return out


SNAPSHOTS: Final = "examples/acp-agent/tests/snapshots"
# Real logs the checker must accept (source under tests/data/real, rules beyond FMT-7 they exercise).
REAL_VALID: Final = (
    (f"a55f148516/{SNAPSHOTS}/text-turn/session.jsonl", ("FMT-1", "FMT-3")),
    (f"a55f148516/{SNAPSHOTS}/packed-chunks/session.jsonl", ("CHK-1", "CHK-5", "CHK-6", "CHK-8", "FMT-5")),
    (f"a55f148516/{SNAPSHOTS}/todo-write/session.jsonl", ("LOG-13",)),
    (f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl", ("FMT-10",)),
    (f"611615650f/{SNAPSHOTS}/packed-chunks/session.jsonl", ("FMT-10", "CHK-6", "FMT-5")),
    ("611615650f/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", ("FMT-10", "DIA-1", "DIA-19")),
)


def _real_lines(source: str) -> list[str]:
    return [line for line in (ROOT / "tests" / "data" / "real" / source).read_text(encoding="utf-8").splitlines() if line.strip()]


# (id, rules, scenario, corruption, the rule the corruption breaks)
CORRUPTIONS: Final[tuple[tuple[str, str, str, Callable[[list[Row]], list[Row] | None]], ...]] = (
    ("drop-tool-result", "LOG-13", "b-prefix-idioms-tool-roundtrip", _drop_type("tool/result")),
    ("drop-tool-call", "LOG-13", "b-prefix-idioms-tool-roundtrip", _drop_type("tool/call")),
    ("step-start-after-chunk", "LOG-13", "a-single-turn-no-prefix", _swap_types),
    ("duplicate-seq", "LOG-1", "a-single-turn-no-prefix", _duplicate_seq),
    ("wrong-turn-number", "LOG-13", "b-prefix-idioms-tool-roundtrip", _set(["data", "turn"], 7, "turn/start", 1)),
    ("reason-bearing-aborted", "LEG-4", "d-cancel-during-composition-then-recompose",
     _set(["data", "reason"], {"kind": "aborted", "reason": {"kind": "user"}}, "turn/end")),
    ("surface-op-on-log-only-event", "SURF-2", "a-single-turn-no-prefix", _set(["surfaceOp"], "append", "step/start")),
    ("second-initial-header", "FMT-9", "h1-resume-no-drift", _set(["data", "reason"], "initial", "request/header", reason="resume")),
    ("fallback-header-reason", "LEG-2", "a-single-turn-no-prefix", _set(["data", "reason"], "fallback", "request/header")),
    ("header-without-provider", "HDR-8", "a-single-turn-no-prefix", _delete(["data", "header", "config", "provider"], "request/header")),
    ("header-delta", "LEG-1", "a-single-turn-no-prefix", _set(["type"], "request/header-delta", "request/header")),
)


def _replace_first(old: str, new: str, line: int = 0) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        assert old in lines[line], (old, lines[line][:80])
        return lines[:line] + [lines[line].replace(old, new, 1)] + lines[line + 1:]

    return change


def _surface_op_extra_key(lines: list[str]) -> list[str]:
    row = json.loads(lines[1])
    row["surfaceOp"] = {"op": "replace", "start": 1, "end": 1, "x": 1}
    return [lines[0], _dump(row), *lines[2:]]


def _session_header(version: int) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        return [_dump({"type": "session", "version": version, "id": "vector", "createdAt": 0}), *lines]

    return change


# Corruptions of the raw text (id, the rule broken, scenario, change); None: the result stays valid.
RAW_CORRUPTIONS: Final[tuple[tuple[str, str | None, str, Callable[[list[str]], list[str]]], ...]] = (
    ("textual-minus-zero", "LOG-4", "a-single-turn-no-prefix", _replace_first('"time":', '"time":-0,"x":')),
    ("duplicate-key", "FMT-2", "a-single-turn-no-prefix", _replace_first('{"type":"turn/start",', '{"type":"turn/start","type":"turn/start",')),
    ("surface-op-extra-key", "SURF-3", "a-single-turn-no-prefix", _surface_op_extra_key),
    ("session-header-version-1", "LOG-17", "a-single-turn-no-prefix", _session_header(1)),
    ("mode-set-event", "LEG-3", "a-single-turn-no-prefix", _replace_first('"type":"turn/start"', '"type":"mode/set"')),
    ("empty-reasoning-effort", "LEG-6", "a-single-turn-no-prefix", _replace_first('"config":{', '"config":{"reasoningEffort":"",', 3)),
    ("session-header-line", None, "a-single-turn-no-prefix", _session_header(0)),
)


def _gt_check_lines(name: str) -> list[str]:
    """The recorded log as the checker reads it beside its sessions.json: a seeded log
    gets its session header line, so its seed (written elsewhere) is not judged as live."""
    lines = _gt_lines(name)
    sidecar = GROUNDTRUTH / name / "sessions.json"
    entries = json.loads(sidecar.read_text(encoding="utf-8")).values() if sidecar.exists() else []
    for entry in entries:
        header = entry.get("header", {})
        if entry.get("file") == "session.jsonl" and "seedLength" in header:
            return [_dump({"type": "session", **header}), *lines]
    return lines


def check_vectors() -> list[Vector]:
    out: list[Vector] = []
    for directory in sorted(p for p in GROUNDTRUTH.iterdir() if p.is_dir()):
        plugin = ("LOG-10",) if any('"type":"compact/' in line for line in _gt_lines(directory.name)) else ()
        out.append(Vector(id=f"check/valid/{directory.name}", rules=("FMT-7", *plugin),
                          description=f"the recorded log of {directory.name} is valid",
                          initial={}, steps=(Step(op={"op": "check", "log": _gt_check_lines(directory.name)},
                                                  expect=exact_object({"verdict": eq("valid")})),)))
    for source, rules in REAL_VALID:
        out.append(Vector(id=f"check/valid/{source}", rules=("FMT-7", *rules),
                          description=f"the real log {source} is valid",
                          initial={}, steps=(Step(op={"op": "check", "log": _real_lines(source)},
                                                  expect=exact_object({"verdict": eq("valid")})),)))
    for name, broken, scenario, edit in RAW_CORRUPTIONS:
        lines = edit(_gt_lines(scenario))
        if broken is None:
            out.append(Vector(id=f"check/valid/{name}", rules=("FMT-1", "LOG-18"),
                              description=f"{scenario} behind a session header line: the header sits outside the log",
                              initial={}, steps=(Step(op={"op": "check", "log": lines}, expect=exact_object({"verdict": eq("valid")})),)))
            continue
        out.append(Vector(id=f"check/{broken}/{name}", rules=(broken, "FMT-7"),
                          description=f"{scenario} with one corruption ({name}) breaks {broken}",
                          initial={}, steps=(Step(op={"op": "check", "log": lines}, expect=reject(broken)),)))
    for name, rule, scenario, change in CORRUPTIONS:
        out.append(Vector(id=f"check/{rule}/{name}", rules=(rule, "FMT-7"),
                          description=f"{scenario} with one corruption ({name}) breaks {rule}",
                          initial={}, steps=(Step(op={"op": "check", "log": _mutated(scenario, change)}, expect=reject(rule)),)))
    return out


# --------------------------------------------------------------------------- one vector per remaining rule


HEADLESS: Final = "611615650f/examples/headless-agent/tests/snapshots"
# The D08 overflow compaction of the corpus (rows 20-23: start, summary, checkpoint, end; row 0 is the session header).
D08_COMPACTION: Final = f"{HEADLESS}/compaction-recovery/session.jsonl"
D08_CHILD: Final = f"{HEADLESS}/subagent-settlement/child.expected.jsonl"


def _real_rows(source: str) -> list[Row]:
    return [json.loads(line) for line in _real_lines(source)]


def _d08_compaction_rows() -> list[Row]:
    """The D08 compaction log with its 17 kB system prompt and tool list cut
    short (the header is not part of any rule these vectors exercise; the log
    stays valid)."""
    rows = _real_rows(D08_COMPACTION)
    header = rows[_first(rows, "request/header")]["data"]["header"]
    header["system"] = "You are headless-agent (system prompt shortened for the vectors)."
    header["tools"] = header["tools"][:1]
    return rows


def _shift(value: int, at: int) -> int:
    return value + 1 if value >= at else value


def _insert_row(rows: list[Row], index: int, row: Row) -> list[Row]:
    """``row`` inserted before ``rows[index]``, taking its seq; every later seq
    and every reference to one (provenance, surface ranges, compaction ranges)
    moves up by one, so the rest of the log stays consistent."""
    at = next(r["seq"] for r in rows[index:] if "seq" in r)
    for r in rows:
        if "seq" not in r:
            continue
        r["seq"] = _shift(r["seq"], at)
        if "sourceEventSeqs" in r:
            r["sourceEventSeqs"] = [_shift(s, at) for s in r["sourceEventSeqs"]]
        for ranged in (r.get("surfaceOp"), r.get("data", {}).get("shadowedRange")):
            if isinstance(ranged, dict):
                ranged["start"], ranged["end"] = _shift(ranged["start"], at), _shift(ranged["end"], at)
        if isinstance(r.get("data", {}).get("shadowedSeqs"), list):
            r["data"]["shadowedSeqs"] = [_shift(s, at) for s in r["data"]["shadowedSeqs"]]
    rows.insert(index, {**row, "seq": at})
    return rows


def _edit_rows(rows: list[Row], edit: Callable[[list[Row]], list[Row] | None]) -> list[str]:
    rows = copy.deepcopy(rows)
    changed = edit(rows)
    return _lines(rows if changed is None else changed)


def _with_prune_records(rows: list[Row]) -> list[Row]:
    """DIA-18: a ``compaction/prune`` record immediately before each prune replacement."""
    for index in reversed([i for i, r in enumerate(rows) if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict)]):
        seq = rows[index]["surfaceOp"]["start"]
        _insert_row(rows, index, {"type": "compaction/prune", "time": rows[index]["time"], "data": {
            "shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq], "shadowedTokenCount": 1}})
    return rows


def _first_pruned(rows: list[Row]) -> Row:
    return next(r for r in rows if r["type"] == "tool/result" and isinstance(r.get("surfaceOp"), dict))


def _set_path(path: Sequence[str | int], value: Any, index: int) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[index]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _del_path(path: Sequence[str | int], index: int) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        target: Any = rows[index]
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _each(*edits: Callable[[list[Row]], list[Row] | None]) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        for edit in edits:
            edit(rows)

    return change


def _in_type(type_name: str, edit: Callable[[Row], None], nth: int = 0) -> Callable[[list[Row]], None]:
    def change(rows: list[Row]) -> None:
        edit(rows[_first(rows, type_name, nth)])

    return change


def _title(title: str) -> Row:
    return {"type": "session/title", "time": 0, "data": {"title": title}}


def _unbalanced_user_replace(rows: list[Row]) -> None:
    """SURF-12: a plugin ``user/message`` replacing the tool-call assistant message
    of turn 2 but not its tool result (an unbalanced range), before the last turn/end."""
    call = next(r for r in rows if r["type"] == "assistant/message"
                and any(b.get("type") == "tool-call" for b in r["data"]["content"]))["seq"]
    _insert_row(rows, len(rows) - 1, {"type": "user/message", "time": rows[-1]["time"], "data": {
        "content": text("condensed notes"), "source": {"kind": "plugin", "plugin": "notes"}},
        "sourceEventSeqs": [call], "surfaceOp": {"op": "replace", "start": call, "end": call}})


def _prefix_placeholders(rows: list[Row]) -> None:
    """LEG-8: the acp/web snapshot scrubber writes each prefix entry as ``"{{messagePrefix}}"``."""
    for row in rows:
        header = row["data"].get("header") if row["type"] == "request/header" else None
        if isinstance(header, dict) and "messagePrefix" in header:
            header["messagePrefix"] = ["{{messagePrefix}}"] * len(header["messagePrefix"])


def _second_header_from_first(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[list[Row]], None]:
    """The second ``request/header`` (a ``change``) becomes ``change(first header)``."""
    def edit(rows: list[Row]) -> None:
        first, second = (rows[_first(rows, "request/header", n)] for n in (0, 1))
        second["data"]["header"] = change(copy.deepcopy(first["data"]["header"]))

    return edit


def _orphan_start(index: int) -> Callable[[list[Row]], list[Row]]:
    def change(rows: list[Row]) -> list[Row]:
        return _insert_row(rows, index, {"type": "compaction/start", "time": 0, "data": {"compactionId": "orphan-1", "turn": None}})

    return change


# (id, rules exercised, source rows, edit, dialect, expected: None = valid, "valid|unknown", or the rule named)
RuleCheck = tuple[str, tuple[str, ...], Callable[[], list[Row]], Callable[[list[Row]], list[Row] | None], str | None, str | None]


def _gt(name: str) -> Callable[[], list[Row]]:
    return lambda: _rows(name)


def _real(source: str) -> Callable[[], list[Row]]:
    return lambda: _real_rows(source)


def _unchanged(rows: list[Row]) -> None:
    return None


RULE_CHECKS: Final[tuple[RuleCheck, ...]] = (
    # D08 reading: A55 logs migrate on load (LEG-9, DIA-13, DIA-14) and then fold as D08 shapes.
    ("d08/reads-a55-tool-roundtrip", ("LEG-9", "DIA-13", "DIA-10", "DIA-11"), _gt("b-prefix-idioms-tool-roundtrip"), _unchanged, "D08", None),
    ("d08/reads-a55-steering-and-reasoning", ("LEG-9", "DIA-13"), _gt("m-steering-empty-assistant-reasoning"), _unchanged, "D08", None),
    ("d08/reads-a55-coarse-aborted", ("LEG-9", "DIA-13", "DIA-14"), _gt("d-cancel-during-composition-then-recompose"), _unchanged, "D08", None),
    ("d08/compaction-shortened-header", ("DIA-2", "DIA-4", "DIA-7", "DIA-16", "DIA-19"), _d08_compaction_rows, _unchanged, None, None),
    ("d08/reads-a55-disposed", ("LEG-9", "DIA-14"), _gt("e-dispose-during-composition"), _unchanged, "D08", None),
    # The A55 model does not migrate: D08 shapes (message under data.message) are not A55 shapes.
    ("a55/does-not-migrate-d08", ("LEG-9", "DIA-10", "DER-1"), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"), _unchanged, "A55", "DER-1"),
    # DIA-18 / DIA-11: a tool-result prune in D08 is recorded by compaction/prune immediately before the replacement.
    ("d08/prune-without-record", ("DIA-18", "LEG-9"), _gt("j2-tool-result-prune"), _unchanged, "D08", "DIA-18"),
    ("d08/prune-with-record", ("DIA-18", "DIA-11", "DIA-13"), _gt("j2-tool-result-prune"), _with_prune_records, "D08", None),
    ("d08/prune-changes-is-error", ("DIA-11", "SURF-7"), _gt("j2-tool-result-prune"),
     lambda rows: _in_type("tool/result", lambda r: r["data"].__setitem__("isError", True), 1)(_with_prune_records(rows)), "D08", "SURF-7"),
    # DIA-2 / DIA-19: one compactionId on start, summary, end and the checkpoint source.
    ("d08/summary-other-compaction-id", ("DIA-2", "DIA-19"), _d08_compaction_rows, _set_path(["data", "compactionId"], "other-id", 21), None, "DIA-19"),
    ("d08/checkpoint-without-compaction-id", ("DIA-2", "DIA-19"), _d08_compaction_rows, _del_path(["data", "source", "compactionId"], 22), None, "DIA-19"),
    ("d08/empty-compaction-id", ("DIA-2", "DIA-19"), _d08_compaction_rows,
     _each(*(_set_path(["data", "compactionId"], "", i) for i in (20, 21, 23)), _set_path(["data", "source", "compactionId"], "", 22)), None, "DIA-19"),
    # DIA-3: a null owner (manual compaction) needs no open turn.
    ("d08/manual-compaction-inside-turn", ("DIA-3", "DIA-19"), _d08_compaction_rows, _set_path(["data", "turn"], None, 20), None, "DIA-19"),
    # DIA-4: the summary carries shadowedRange.
    ("d08/summary-without-shadowed-range", ("DIA-4", "CMP-25"), _d08_compaction_rows, _del_path(["data", "shadowedRange"], 21), None, "CMP-25"),
    # DIA-16: summary, checkpoint and end are adjacent.
    ("d08/event-between-summary-and-checkpoint", ("DIA-16",), _d08_compaction_rows, lambda rows: _insert_row(rows, 22, _title("x")), None, "DIA-16"),
    ("d08/event-between-checkpoint-and-end", ("DIA-16",), _d08_compaction_rows, lambda rows: _insert_row(rows, 23, _title("x")), None, "DIA-16"),
    # DIA-5: session/end-seed clears an unmatched compaction/start; without it the lock stays live.
    ("d08/end-seed-clears-orphan-start", ("DIA-5", "DIA-3"), _real(D08_CHILD), _orphan_start(2), None, None),
    ("d08/orphan-start-after-end-seed", ("DIA-5", "DIA-19"), _real(D08_CHILD), _orphan_start(3), None, "DIA-19"),
    # DIA-21: a session header with origin.
    ("d08/header-with-origin", ("DIA-21", "LOG-18"), _real(D08_CHILD), _unchanged, None, None),
    # CHK-7: a JSON value whose type is no row tag passes the decoder; event validation (LOG-3) rejects it.
    ("a55/not-a-row-tag", ("CHK-7", "LOG-3"), _gt("a-single-turn-no-prefix"),
     lambda rows: [*rows[:5], {"type": "text-chunk", "seq0": 5, "time0": 0, "data": {}}, *rows[5:]], None, "LOG-3"),
    # LEG-5: pre-provider logs are rejected (HDR-8).
    ("a55/header-config-model-only", ("LEG-5", "HDR-8"), _gt("a-single-turn-no-prefix"),
     _in_type("request/header", lambda r: r["data"]["header"].__setitem__("config", {"model": "mock-1"})), None, "HDR-8"),
    ("a55/assistant-without-provider", ("LEG-5", "HDR-8"), _gt("a-single-turn-no-prefix"),
     _in_type("assistant/message", lambda r: r["data"]["provenance"].pop("provider")), None, "HDR-8"),
    # LEG-10: synthetic fixtures are rejected, not repaired.
    ("a55/seq-hole", ("LEG-10", "LOG-1"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{**r, "seq": r["seq"] + (3 if i >= 5 else 0)} for i, r in enumerate(rows)], None, "LOG-1"),
    ("a55/starts-at-seq-1", ("LEG-10", "LOG-1"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{**r, "seq": r["seq"] + 1} for r in rows], None, "LOG-1"),
    ("a55/header-without-version", ("LEG-10", "LOG-17"), _gt("a-single-turn-no-prefix"),
     lambda rows: [{"type": "session", "id": "vector", "createdAt": 0}, *rows], None, "LOG-17"),
    # LOG-9: tool/call is a core type but not surface-eligible.
    ("a55/surface-op-on-tool-call", ("LOG-9", "SURF-2"), _gt("b-prefix-idioms-tool-roundtrip"),
     _in_type("tool/call", lambda r: r.__setitem__("surfaceOp", "append")), None, "SURF-2"),
    # SURF-9: eligibility (step 2) is checked before the replace range (step 4); the shape before the range.
    ("a55/ineligible-replace-with-bad-range", ("SURF-9", "SURF-2"), _gt("a-single-turn-no-prefix"),
     _in_type("step/start", lambda r: r.__setitem__("surfaceOp", {"op": "replace", "start": 50, "end": 40})), None, "SURF-2"),
    ("a55/bad-shape-with-bad-range", ("SURF-9", "SURF-3"), _gt("a-single-turn-no-prefix"),
     _in_type("assistant/message", lambda r: r.__setitem__("surfaceOp", {"op": "replace", "start": 50, "end": 40, "x": 1})), None, "SURF-3"),
    # SURF-12: the fold does not validate tool pairing; a user/message replace may shadow an unbalanced range.
    ("a55/user-replace-shadows-unbalanced-range", ("SURF-12", "SURF-6"), _gt("b-prefix-idioms-tool-roundtrip"), _unbalanced_user_replace, None, None),
    # LEG-8: messagePrefix placeholders are "N messages of unknown content", never a failure.
    ("a55/message-prefix-placeholders", ("LEG-8", "FMT-6"), _gt("b-prefix-idioms-tool-roundtrip"), _prefix_placeholders, None, "valid|unknown"),
    # DIA-8: a logged messagePrefix is dropped by D08 canonicalization, so a change header differing only there equals
    # the header in force (FMT-9(c)); DIA-9: adapterDefaults take part in D08 header equality.
    ("d08/change-header-differs-only-in-message-prefix", ("DIA-8", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     _second_header_from_first(lambda h: {**h, "messagePrefix": [message("another prefix")]}), "D08", "FMT-9"),
    ("d08/change-header-differs-only-in-adapter-defaults", ("DIA-9", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     # (adapterDefaults in its canonical place, DIA-8: right after config)
     _second_header_from_first(lambda h: {"config": h["config"], "adapterDefaults": {"maxTokens": True},
                                          **{k: v for k, v in h.items() if k != "config"}}), "D08", None),
    ("d08/change-header-equal-to-the-first", ("DIA-8", "FMT-9", "HDR-4"), _gt("g-header-change-system-and-tools"),
     _second_header_from_first(lambda h: h), "D08", "FMT-9"),
    # INV-2 (5): a request with no request/header in force cannot be reconstructed; the checker names FMT-9(g).
    ("a55/request-without-header", ("INV-2", "FMT-9"), _gt("a-single-turn-no-prefix"), _drop_type("request/header"), None, "FMT-9"),
    # HDR-1 / FMT-6: a header field that holds no placeholder must have its type (system is a string).
    ("a55/header-system-not-a-string", ("HDR-1", "FMT-6"), _gt("a-single-turn-no-prefix"),
     _in_type("request/header", lambda r: r["data"]["header"].__setitem__("system", 5)), None, "HDR-1"),
    # DIA-10: D08 messages carry their identity (message.id).
    ("d08/assistant-message-without-id", ("DIA-10",), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"),
     _in_type("assistant/message", lambda r: r["data"]["message"].pop("id")), None, "DIA-10"),
    # DIA-14: an aborted turn/end names who aborted (user, parent, hook, disposed).
    ("d08/aborted-turn-end-with-a-bogus-reason", ("DIA-14",), _real(f"611615650f/{SNAPSHOTS}/text-turn/session.jsonl"),
     _in_type("turn/end", lambda r: r["data"].__setitem__("reason", {"kind": "aborted", "reason": {"kind": "bogus"}})), None, "DIA-14"),
)


def rule_check_vectors() -> list[Vector]:
    """``check`` vectors for rules no loop or replay vector reaches: D08 reading
    (migrations, compaction brackets, prune records), legacy and synthetic logs,
    surface validation order.  Each expectation is reasoned from the rule text;
    generation re-verifies the model agrees."""
    model = InProcessAdapter()
    out: list[Vector] = []
    for name, rules, source, edit, dialect, expected in RULE_CHECKS:
        op: Op = {"op": "check", "log": _edit_rows(source(), edit)}
        if dialect is not None:
            op["dialect"] = dialect
        match expected:
            case None:
                pattern = exact_object({"verdict": eq("valid")})
            case "valid|unknown":
                pattern = exact_object({"verdict": one_of("valid", "unknown")})
            case rule:
                pattern = reject(rule)
        problems = match(pattern, model.call(op))
        if problems:
            raise FormatError(f"check/rule/{name}: the model disagrees: {problems[0]}")
        out.append(Vector(id=f"check/rule/{name}", rules=rules, initial={}, steps=(Step(op=op, expect=pattern),),
                          description=f"{name.replace('-', ' ')} ({', '.join(rules)})"))
    return out


# --------------------------------------------------------------------------- codec and session operations


def _chunk(seq: int, time: int, chunk: dict[str, Any], turn: int = 1, step: int = 1) -> Row:
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": turn, "step": step, "chunk": chunk}}


def _delta(index: int, t: str, kind: str = "text-delta") -> dict[str, Any]:
    return {"type": kind, "index": index, "text": t}


def _call_delta(index: int, call_id: str, args: str, name: str | None = None) -> dict[str, Any]:
    return {"type": "tool-call-delta", "index": index, "id": call_id, **({} if name is None else {"name": name}), "argumentsDelta": args}


def _pack_cases() -> list[tuple[str, tuple[str, ...], list[Row], list[Row]]]:
    """Hand-made chunk logs and the storage lines CHK-2/3/4 say the writer produces."""
    three = [_chunk(0, 100, _delta(0, "a")), _chunk(1, 105, _delta(0, "b")), _chunk(2, 103, _delta(0, "c"))]
    row = {"type": "text-chunks", "seq0": 0, "time0": 100, "data": {"turn": 1, "step": 1, "index": 0, "dt": [5, -2], "texts": ["a", "b", "c"]}}
    two = [_chunk(0, 1, _delta(1, "x")), _chunk(1, 2, _delta(1, "y")), _chunk(2, 2, {"type": "block-end", "index": 1, "block": {"type": "text", "text": "xy"}})]
    named = [_chunk(0, 120, _call_delta(2, "c1", "", "echo")), _chunk(1, 121, _call_delta(2, "c1", "{")),
             _chunk(2, 122, _call_delta(2, "c1", "}")), _chunk(3, 122, _call_delta(2, "c1", ""))]
    named_row = {"type": "tool-call-chunks", "seq0": 1, "time0": 121,
                 "data": {"turn": 1, "step": 1, "index": 2, "dt": [1, 0], "id": "c1", "args": ["{", "}", ""]}}
    extra = [_chunk(0, 5, _delta(3, "p", "reasoning-delta")), _chunk(1, 5, {**_delta(3, "q", "reasoning-delta"), "extra": 1}),
             _chunk(2, 5, _delta(3, "r", "reasoning-delta")), _chunk(3, 5, _delta(3, "s", "reasoning-delta"))]
    turns = [_chunk(0, 7, _delta(4, "1")), _chunk(1, 7, _delta(4, "2")), _chunk(2, 7, _delta(4, "3"), turn=2)]
    return [
        ("three-deltas", ("CHK-4", "CHK-3"), three, [row]),
        ("two-deltas-and-block-end", ("CHK-4",), two, two),
        ("name-presence-splits-run", ("CHK-3", "CHK-2"), named, [named[0], named_row]),
        ("extra-chunk-key-not-packable", ("CHK-2", "CHK-4"), extra, extra),
        ("turn-change-splits-run", ("CHK-3",), turns, turns),
    ]


def _expanded_lines(source: str) -> list[str]:
    """A real file's events one per line (rows expanded): the writer's input."""
    loaded = load_log_text("".join(line + "\n" for line in _real_lines(source)))
    assert not isinstance(loaded, LoadError), source
    return [serialize_event(e) for e in loaded.events]


def _repair_cut(name: str, type_name: str, nth: int = 0) -> list[str]:
    """A recorded log cut just after its ``nth`` event of ``type_name`` (a crash)."""
    rows = _rows(name)
    return _lines(rows[: _first(rows, type_name, nth) + 1])


def _usage_anchored_log() -> list[str]:
    """a-single-turn-no-prefix with provider usage larger than the estimate
    (1000 in + 10 out), so its assistant/message anchors a ``usage`` baseline (MTR-8)."""
    rows = _rows("a-single-turn-no-prefix")
    usage = {"inputTokens": 1000, "outputTokens": 10}
    for row in rows:
        if row["type"] == "assistant/message":
            row["data"]["usage"] = usage
        elif row["type"] == "assistant/chunk" and row["data"]["chunk"]["type"] == "usage":
            row["data"]["chunk"]["usage"] = usage
    return _lines(rows)


COMPACT: Final = {"thresholdRatio": {"$number": "0.1"}, "retainTokens": 10, "compactionRetries": 0, "contextWindow": 1000,
                  "summaries": [text("CHECKPOINT")] * 2, "instruction": "condense the conversation above"}
IDS: Final = [{"compactionId": "compaction-1", "messageId": "message-1"}, {"compactionId": "compaction-2", "messageId": "message-2"}]


def compact_vectors() -> list[Vector]:
    """compact-basic's entry points on a log (``compact``): where the automatic
    trigger may run (CMP-6 vs DIA-6), manual compaction (DIA-20), the region
    transaction's validation (CMP-13), and the D08 summarizer request (DIA-17)."""
    d08 = _d08_compaction_rows()
    between_steps = _lines(d08[: _first(d08, "step/end") + 1])
    inside_step = _lines(d08[: _first(d08, "step/start", 1) + 1])
    whole = _lines(d08)

    def compact(lines: list[str], trigger: str, dialect: str = "D08", **extra: Any) -> Op:
        return {"op": "compact", "log": lines, "dialect": dialect, "trigger": trigger, "compaction": COMPACT, "ids": IDS, **extra}

    out = [
        record("codec/compact/d08-pressure-before-step-start", ("DIA-6", "DIA-17", "DIA-2", "DIA-4", "DIA-16"),
               "D08 pressure compaction runs in pre-step, outside any step; the summarizer input carries no prefix and "
               "the instruction message is sourced from dsh-compaction-basic", {}, [compact(between_steps, "pressure")]),
        record("codec/compact/d08-pressure-inside-a-step", ("DIA-6",), "D08 pressure compaction never runs after step/start",
               {}, [compact(inside_step, "pressure")]),
        record("codec/compact/a55-pressure-outside-a-step", ("CMP-6", "DIA-6"),
               "A55 pressure compaction runs in post-step, inside the step: outside a step it is refused", {},
               [compact(_gt_lines("a-single-turn-no-prefix"), "pressure", "A55")]),
        record("codec/compact/d08-pressure-already-aborted", ("CMP-26",), "the automatic trigger skips when already aborted",
               {}, [compact(between_steps, "pressure", aborted=True)]),
        record("codec/compact/d08-manual-when-idle", ("DIA-20", "DIA-3"),
               "manual compaction on an idle session: owner turn null, retainTokens 0 (everything balanced is shadowed)",
               {}, [compact(whole, "manual")]),
        record("codec/compact/d08-manual-when-busy", ("DIA-20", "DIA-3"), "manual compaction inside an open turn is refused (busy)",
               {}, [compact(between_steps, "manual")]),
    ]
    b_rows = _rows("b-prefix-idioms-tool-roundtrip")
    open_turn = _lines(b_rows[: _first(b_rows, "step/end", 1) + 1])
    call_message = next(r["seq"] for r in b_rows if r["type"] == "assistant/message"
                        and any(c.get("type") == "tool-call" for c in r["data"]["content"]))
    result = _first_pruned_or_result(b_rows)
    first_user = b_rows[_first(b_rows, "user/message")]["seq"]
    regions = (
        ("start-not-on-surface", first_user + 1, result, "CMP-13"),
        ("start-after-end", result, first_user, "CMP-13"),
        ("end-splits-a-tool-pair", first_user, call_message, "CMP-13"),
        ("balanced-range-passes-validation", first_user, result, None),
    )
    for name, start, end, rule in regions:
        op = compact(open_turn, "region", "A55", region={"start": start, "end": end})
        if rule is not None and rule not in (rejection_rules(InProcessAdapter().call(op)) or []):
            raise FormatError(f"codec/compact/region-{name}: the model does not reject with {rule}")
        out.append(record(f"codec/compact/region-{name}", ("CMP-13",),
                          f"compactRegion({start}, {end}) on an open turn: {name.replace('-', ' ')}", {}, [op]))
    return out


def _first_pruned_or_result(rows: list[Row]) -> int:
    """The seq of the first tool/result (the end of the first tool pair)."""
    return int(rows[_first(rows, "tool/result")]["seq"])


TRIGGER: Final = {"kind": "injection", "source": {"kind": "plugin", "plugin": "titles"}}


def codec_vectors() -> list[Vector]:
    """Operations below the loop: the chunk-row writer (``pack``), crash repair
    (``repair``), out-of-band appends (``append-out-of-band``) and seed loading."""
    out: list[Vector] = []
    for name, rules, events, lines in _pack_cases():
        out.append(Vector(id=f"codec/pack/{name}", rules=rules, initial={},
                          description=f"the chunk-row writer on {name.replace('-', ' ')}",
                          steps=(Step(op={"op": "pack", "log": _lines(events)}, expect=exact_object({"lines": eq(lines)})),)))
    for source in (f"a55f148516/{SNAPSHOTS}/packed-chunks/session.jsonl", f"611615650f/{SNAPSHOTS}/packed-chunks/session.jsonl"):
        real = [to_plain(json.loads(line)) for line in _real_lines(source) if not line.startswith('{"type":"session",')]
        out.append(Vector(id=f"codec/pack/real/{source.split('/')[0]}", rules=("CHK-1", "CHK-2", "CHK-3", "CHK-4"), initial={},
                          description=f"packing the events of {source} gives the real file's lines (header excluded)",
                          steps=(Step(op={"op": "pack", "log": _expanded_lines(source)}, expect=exact_object({"lines": eq(real)})),)))
    repairs = (
        ("open-step", "a-single-turn-no-prefix", "assistant/chunk", 2),
        ("tool-call-not-started", "b-prefix-idioms-tool-roundtrip", "assistant/message", 1),
        ("tool-call-started", "b-prefix-idioms-tool-roundtrip", "tool/call", 0),
        ("between-steps", "b-prefix-idioms-tool-roundtrip", "step/end", 1),
        ("closed-log", "a-single-turn-no-prefix", "turn/end", 0),
    )
    for name, scenario, type_name, nth in repairs:
        out.append(record(f"codec/repair/{name}", ("LOG-14",), f"crash repair of {scenario} cut after {type_name} #{nth + 1}",
                          {}, [{"op": "repair", "log": _repair_cut(scenario, type_name, nth)}]))
    closed, open_turn = _gt_lines("a-single-turn-no-prefix"), _repair_cut("a-single-turn-no-prefix", "step/end")
    title = {"title": "a title"}
    out.append(record("codec/out-of-band/between-turns", ("LOG-16",),
                      "an out-of-band append with no open turn is wrapped in a synthetic turn", {},
                      [{"op": "append-out-of-band", "log": closed, "type": "session/title", "data": title, "trigger": TRIGGER}]))
    out.append(record("codec/out-of-band/inside-turn", ("LOG-16",), "an out-of-band append inside an open turn is a plain append", {},
                      [{"op": "append-out-of-band", "log": open_turn, "type": "session/title", "data": title, "trigger": TRIGGER}]))
    out.append(record("codec/out-of-band/surface-type", ("LOG-16",), "surface types never go out of band", {},
                      [{"op": "append-out-of-band", "log": closed, "type": "user/message",
                        "data": {"content": text("x"), "source": {"kind": "user"}}, "trigger": TRIGGER}]))
    # MTR-11 through measure(session, override): a provider-usage anchor survives an override that equals the
    # folded header (tools [] vs absent included) and is dropped for any canonical envelope difference.
    anchored = _usage_anchored_log()
    header = next(r for r in (json.loads(line) for line in anchored) if r["type"] == "request/header")["data"]["header"]
    overrides: tuple[tuple[str, dict[str, Any] | None], ...] = (
        ("no-override", None), ("same-header", header), ("empty-tools", {**header, "tools": []}),
        ("message-prefix", {**header, "messagePrefix": [message("a prefix")]}), ("system", {**header, "system": "another system"}),
        ("model", {**header, "config": {**header["config"], "model": "another-model"}}))
    for name, override in overrides:
        op: Op = {"op": "measure", "log": anchored}
        if override is not None:
            op["override"] = override
        out.append(record(f"codec/measure/{name}", ("MTR-11", "MTR-10", "MTR-8"),
                          f"measure a log whose last request anchored provider usage, override: {name}", {}, [op]))
    out += compact_vectors()
    bad_seed = list(closed)
    # One entry failing step (1) (a textual -0 in the line) and step (2) (the legacy header-delta type).
    bad_seed[3] = bad_seed[3].replace('"type":"request/header"', '"type":"request/header-delta"').replace('"time":', '"time":-0,"x":', 1)
    out.append(Vector(id="codec/seed/rejected-seed-leaves-the-session", rules=("LOG-5", "LOG-6", "LOG-4"), initial={"log": closed},
                      description="a seed entry failing the data snapshot (LOG-4) and the legacy check (LEG-1) is rejected by "
                                  "the first step (LOG-5); the rejected seed leaves the session unchanged (LOG-6)",
                      steps=(Step(op={"op": "init", "log": bad_seed}, expect=reject("LOG-4")),
                             Step(op={"op": "log"}, expect=exact_object({"log": events_pattern(json.loads(line) for line in closed)})))))
    return out


# --------------------------------------------------------------------------- hand-written loop scenarios


def loop_vectors() -> list[Vector]:
    from sessionspec.conformance.vector_scenarios import scenarios

    return [record(s.id, s.rules, s.description, s.initial, s.ops) for s in scenarios()]


# --------------------------------------------------------------------------- recorded random runs


RANDOM_RUNS: Final = 12


def random_trace(seed: int) -> tuple[Op, list[Op], tuple[str, ...]]:
    """A seeded random session in the operation language (deterministic in ``seed``):
    contributors, tool rounds with large results under compact-basic, request
    errors, cancels and disposals at random windows, resumes, forks and agent
    changes.  Returns the initial state, the operations and the rules they exercise."""
    import random

    rng = random.Random(seed)
    work = {"name": "work", "description": "does work", "parameters": {"type": "object", "properties": {}}}
    contributors = [contributor(f"<pfx {seed}.{i}>", idiom=rng.choice(["prepend", "append"])) for i in range(rng.randint(0, 2))]
    agent: dict[str, Any] = {"system": f"system {seed}", "tools": [ECHO_TOOL, work], "contributors": contributors}
    rules = {"LOOP-5", "LOOP-7", "LOOP-9", "WIRE-1", "PFX-2", "PFX-7"}
    if rng.random() < 0.5:
        agent["compaction"] = {"thresholdRatio": {"$number": "0.5"}, "retainTokens": 100, "maxTokens": 128,
                               "contextWindow": 1200, "instruction": "condense", "summaries": [text("CHECKPOINT")] * 20}
        rules |= {"CMP-6", "CMP-7", "CMP-11", "CMP-16"}
    ops: list[Op] = []
    windows = ["in-composition", "after-pre-step", "after-step-start", "after-stream", "before-chunk", "after-post-step"]
    for turn in range(rng.randint(3, 7)):
        roll = rng.random()
        if roll < 0.1:
            ops.append({"op": "resume"})
            rules |= {"PFX-1", "LOOP-1"}
        elif roll < 0.15:
            ops.append({"op": "fork"})
            rules |= {"LOG-15", "LOOP-2"}
        elif roll < 0.25:
            ops.append({"op": "configure", "agent": {"system": f"system {seed}.{turn}"}})
            rules |= {"HDR-4"}
        elif roll < 0.3:
            ops.append({"op": "dispose"})
            ops.append({"op": "resume"})
            rules |= {"LOOP-1"}
        replies: list[dict[str, Any]] = []
        for step in range(rng.randint(1, 4)):
            kind = rng.random()
            if kind < 0.45:
                size = rng.choice([20, 900, 1800])
                replies.append({"kind": "tool-calls", "text": "t", "usage": [10, 5], "toolCalls": [
                    {"callId": f"c{seed}-{turn}-{step}", "name": "work", "arguments": "{}", "result": "r" * size}]})
            elif kind < 0.55:
                replies.append({"kind": "error-thrown", "errorCode": rng.choice(["SERVER", "CONTEXT_WINDOW_EXCEEDED"]), "retry": True})
                rules |= {"LOOP-14"}
            elif kind < 0.6:
                replies.append({"kind": "empty"})
                rules |= {"DER-5"}
            else:
                replies.append(reply(f"answer {turn}.{step}"))
        replies.append(reply("done"))
        op: Op = {"op": "send", "prompt": {"content": text(f"prompt {turn}")}, "replies": replies}
        if rng.random() < 0.2:
            op["interrupt"] = {"window": rng.choice(windows), "kind": rng.choice(["cancel", "cancel", "dispose"]),
                               "step": rng.randint(1, 2), "chunk": 1}
            rules |= {"LOOP-15", "PFX-5"}
        ops.append(op)
    return {"agent": agent}, ops, tuple(sorted(rules))


def random_vectors() -> list[Vector]:
    """Recorded random runs: the model's answers to seeded random sessions."""
    out: list[Vector] = []
    for seed in range(RANDOM_RUNS):
        initial, ops, rules = random_trace(seed)
        out.append(record(f"random/{seed}", rules, f"a seeded random session (seed {seed})", initial, ops))
    return out


KILLERS: Final = Path(__file__).with_name("vector_killers.jsonl")


def shrunk_vectors() -> list[Vector]:
    """The shrunk divergences ``conform`` found against each mutant (sessionspec/conformance/vector_killers.jsonl,
    captured once from ``sessionspec conform --adapter "serve-model --mutant NAME"``),
    replayed as vectors with the model's answers as expectations."""
    out: list[Vector] = []
    for line in KILLERS.read_text(encoding="utf-8").splitlines():
        killer = json.loads(line)
        out.append(record(f"shrunk/{killer['mutant']}", (killer["rule"],),
                          f"the shrunk conform trace that kills the {killer['mutant']} mutant ({killer['rule']})",
                          killer["initial"], killer["trace"]))
    return out


# --------------------------------------------------------------------------- files


GROUPS: Final[tuple[tuple[str, Callable[[], list[Vector]]], ...]] = (
    ("check", lambda: check_vectors() + recorded_check_vectors() + rule_check_vectors()),
    ("codec", codec_vectors),
    ("groundtruth", lambda: groundtruth_vectors() + compaction_groundtruth_vectors()),
    ("loop", loop_vectors),
    ("random", random_vectors),
    ("replay", replay_vectors),
    ("shrunk", shrunk_vectors),
)


def schema() -> dict[str, Any]:
    return SCHEMA


def generate() -> dict[str, str]:
    """File name -> exact file text of a fresh generation."""
    files: dict[str, str] = {SCHEMA_FILE: file_text(schema())}
    digest = registry_digest()
    for group, build in GROUPS:
        vectors = build()
        files[f"{group}.json"] = file_text({"format": FORMAT, "registry": digest, "group": group,
                                            "vectors": [v.to_json() for v in vectors]})
    return files


def load_dir(directory: Path) -> list[dict[str, Any]]:
    """The vector files of ``directory`` (every ``*.json`` but the schema), validated."""
    files: list[dict[str, Any]] = []
    the_schema = schema()
    for path in sorted(directory.glob("*.json")):
        if path.name == SCHEMA_FILE:
            continue
        document = json.loads(path.read_text(encoding="utf-8"))
        problems = validate(the_schema, document)
        if problems:
            raise FormatError(f"{path}: {problems[0]}")
        files.append(document)
    return files


def vectors_by_rule(directory: Path = VECTORS_DIR) -> dict[str, tuple[str, ...]]:
    """Registered rule ID -> the IDs of the vectors that name it in their ``rules``
    (a drop-in for spec/coverage.py's text scan: only declared rules count)."""
    by_rule: dict[str, set[str]] = {}
    registered = rule_ids()
    for document in load_dir(directory) if directory.is_dir() else []:
        for vector in document["vectors"]:
            for rule_id in vector["rules"]:
                if rule_id in registered:
                    by_rule.setdefault(rule_id, set()).add(vector["id"])
    return {rule_id: tuple(sorted(ids)) for rule_id, ids in sorted(by_rule.items())}


def rules_with_vectors(directory: Path = VECTORS_DIR) -> frozenset[str]:
    """The registered rule IDs some committed vector names in its ``rules`` (for spec/coverage.py)."""
    return frozenset(vectors_by_rule(directory))


# --------------------------------------------------------------------------- running


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VectorResult:
    vector_id: str
    rules: tuple[str, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def run_vector(adapter: ProcessAdapter | InProcessAdapter, vector: Mapping[str, Any]) -> VectorResult:
    rules = tuple(vector["rules"])
    failures: list[str] = []
    try:
        first = adapter.call({"op": "init", **vector["initial"]})
        if "reject" in first:
            failures.append(f"init: rejected {first['reject']}")
        for index, step in enumerate(vector["steps"]):
            if failures:
                break
            response = adapter.call(step["op"])
            if "expect" in step:
                failures += [f"step {index} ({step['op']['op']}): {m}" for m in match(step["expect"], response)]
    except AdapterError as failed:
        failures.append(f"adapter: {failed}")
    return VectorResult(vector_id=vector["id"], rules=rules, failures=tuple(failures))


def run_vectors(files: Sequence[Mapping[str, Any]], adapter_command: str | None, *, stop_at_first: bool = False
                ) -> list[VectorResult]:
    """Run every vector of ``files`` against one adapter process (``None``: the model in-process)."""
    adapter: ProcessAdapter | InProcessAdapter = InProcessAdapter() if adapter_command is None else ProcessAdapter(adapter_command)
    results: list[VectorResult] = []
    try:
        for document in files:
            for vector in document["vectors"]:
                result = run_vector(adapter, vector)
                results.append(result)
                if stop_at_first and not result.passed:
                    return results
                if any(f.startswith("adapter:") for f in result.failures):
                    adapter.close()
                    adapter = InProcessAdapter() if adapter_command is None else ProcessAdapter(adapter_command)
    finally:
        adapter.close()
    return results


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    gen = sub.add_parser("generate", help="write the vectors (default: the committed vectors/ folder)")
    gen.add_argument("--out", default=None, help="output directory (default: vectors/)")
    gen.add_argument("--check", action="store_true", help="do not write; exit 1 if the directory differs from a fresh generation")
    runner = sub.add_parser("run", help="run a vector directory against an adapter command")
    runner.add_argument("directory", help="a directory of vector files")
    runner.add_argument("--adapter", default=None, metavar="CMD",
                        help="the adapter command (default: the model itself, in this process)")
    runner.add_argument("--verbose", "-v", action="store_true", help="list every vector, not only failures")


def run(args: argparse.Namespace) -> int:
    match args.action:
        case "generate":
            return _generate(Path(args.out) if args.out else VECTORS_DIR, args.check)
        case "run":
            return _run(Path(args.directory), args.adapter, args.verbose)
        case _:
            print("sessionspec vectors: choose an action: generate or run", file=sys.stderr)
            return 2


def _generate(directory: Path, check: bool) -> int:
    if not GROUNDTRUTH.is_dir():
        print(f"sessionspec vectors: generating needs a source checkout (no {GROUNDTRUTH})", file=sys.stderr)
        return 2
    files = generate()
    if check:
        stale = [name for name, body in files.items()
                 if not (directory / name).exists() or (directory / name).read_text(encoding="utf-8") != body]
        for name in stale:
            print(f"stale: {directory / name}")
        return 1 if stale else 0
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (directory / name).write_text(body, encoding="utf-8")
    count = sum(len(json.loads(body).get("vectors", [])) for body in files.values())
    print(f"wrote {len(files)} files, {count} vectors to {directory}")
    return 0


def _run(directory: Path, command: str | None, verbose: bool) -> int:
    if not directory.is_dir():
        print(f"sessionspec vectors: no such directory: {directory}", file=sys.stderr)
        return 2
    try:
        files = load_dir(directory)
    except (FormatError, json.JSONDecodeError) as bad:
        print(f"sessionspec vectors: {bad}", file=sys.stderr)
        return 2
    try:
        results = run_vectors(files, command)
    except AdapterError as failed:
        print(f"sessionspec vectors: {failed}", file=sys.stderr)
        return 2
    for r in results:
        if verbose or not r.passed:
            print(f"{'PASS' if r.passed else 'FAIL'} {r.vector_id} [{', '.join(r.rules)}]")
            for failure in r.failures[:5]:
                print(f"    {failure}")
    failures = sum(1 for r in results if not r.passed)
    print(f"{len(results) - failures}/{len(results)} vectors passed")
    return 1 if failures else 0
