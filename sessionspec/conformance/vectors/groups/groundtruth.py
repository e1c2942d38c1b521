"""The ``groundtruth`` and ``replay`` vector groups: the scenarios recorded from the real harness
(tests/data/groundtruth) as operations, their expected requests and logs taken from the real data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.vectors.build import (
    ECHO_TOOL,
    GROUNDTRUTH,
    Op,
    Step,
    Vector,
    contributor,
    echo,
    events_pattern,
    recorded_expectation,
    reply,
    send,
    text,
)
from sessionspec.conformance.vectors.format import (
    FormatError,
    PlainJson,
    any_value,
    array,
    eq,
    exact_object,
    some_fields,
)
from sessionspec.conformance.vectors.groups.data import Row, gt_lines, gt_rows

# --------------------------------------------------------------------------- ground truth (real data)


PERSONA: Final = "You are an AI agent powered by the DeepSeek Harness SDK.\n\nYou are the ground-truth test agent."


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
    real_log = [json.loads(line) for line in gt_lines(name, log_file)]
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
                                {"agent": identity("gt-k-child"), "log": gt_lines("k-fork-seeded-child", "session.parent.jsonl")[:24]},
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
                                 "log": gt_lines("q-seeded-log-without-header")[:6]},
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
    rows = gt_rows(name)
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
        header = next(json.loads(line) for line in gt_lines(name) if '"request/header"' in line)["data"]["header"]
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
            op: Op = {"op": "replay", "log": gt_lines(directory.name, file)}
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
