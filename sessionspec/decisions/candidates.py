"""Candidate traces for the decision vectors (issue 43 item 3): seeded, wide, and tuned to boundaries.

Each candidate is ``(initial, ops)`` in the adapter protocol's operation language (docs/conformance.md
section 3).  :func:`loop_trace` draws sessions wider than the older generators: several steering items, an
``agent/request`` listener that sets any key (the seed's too), fractional budgets, prune configurations at
their edge, tool results of exactly ``thresholdChars`` and one off, tools that change.  :func:`boundary_trace`
takes the log a loop trace writes and calls compact-basic on it (``compact``) with the context window chosen
so the pressure threshold ``floor(cw x 0.5)`` lands on the measured total, one off, or between floor and
ceiling; and with a retained-tokens ratio whose product with the window is a tail sum of the surface plus a
half (``floor`` keeps that tail, a ceiling would keep one node more).  :func:`measure_trace` and
:func:`check_trace` put the same logs, as they are or edited, through ``measure`` and ``check``.
"""

from __future__ import annotations

import json
import random
from typing import Any, Final

from sessionspec.conformance.vectors.build import ECHO_TOOL, text
from sessionspec.model.meter import measure_state, meter_state
from sessionspec.model.rejected import Rejected
from sessionspec.replay import LoadError, load_log_text

Op = dict[str, Any]
WORK_TOOL: Final = {"name": "work", "description": "does work", "parameters": {"type": "object", "properties": {"i": {"type": "number"}}}}
WORK_TOOL_EDITED: Final = {"name": "work", "description": "does the work, carefully", "parameters": {"type": "object", "properties": {}}}
LISTENER: Final[dict[str, tuple[Any, ...]]] = {
    "provider": ("mock", "other-provider"), "model": ("mock-1", "other-model"), "reasoningEffort": ("low", "high"),
    "temperature": ({"$number": "0.5"}, 0, 1), "maxTokens": (64, 4096), "stop": (["END"],), "topP": ({"$number": "0.9"},)}
WINDOWS: Final = ("after-turn-start", "after-prompt-submit", "after-assembly", "in-composition", "after-pre-step",
                  "after-step-start", "after-request", "after-prepare-call", "before-chunk", "after-stream",
                  "after-step-result", "after-post-step", "after-continuation", "after-turn-stop")


def _number(value: float) -> Any:
    return value if float(value).is_integer() else {"$number": repr(value)}


def _contributor(rng: random.Random, i: int) -> dict[str, Any]:
    c: dict[str, Any] = {"idiom": rng.choice(["prepend", "append"]),
                         "content": [{"role": "user", "content": text(f"<pfx {i}>")}]}
    roll = rng.random()
    if roll < 0.15:
        c["inject"] = {"content": text(f"inject {i}"), "source": {"kind": "plugin", "plugin": f"p{i}"}}
    elif roll < 0.2:
        c["scope"] = rng.choice(["agent", "other-agent"])
    elif roll < 0.24:
        c["mutateAfter"] = True
    elif roll < 0.27:
        c["throws"] = "contributor exploded"
    elif roll < 0.3:
        c["lossy"] = True
    return c


def _compaction(rng: random.Random) -> dict[str, Any]:
    window = rng.choice([700, 701, 1000, 1203, 1600, 2400])
    spec: dict[str, Any] = {"contextWindow": window, "maxTokens": rng.choice([64, 256]), "instruction": "condense",
                            "summaries": [text("CHECKPOINT")] * 12}
    ratio = rng.choice([0.5, 0.5, 0.7, None])
    if ratio is not None:
        spec["thresholdRatio"] = _number(ratio)
    retain = rng.random()
    if retain < 0.4:
        spec["retainTokens"] = rng.choice([0, 50, 100, window // 8])
    elif retain < 0.6 and (ratio or 0.8) > 0.3:
        spec["retainRatio"] = _number(rng.choice([0.1, 0.16, 0.25]))
    if rng.random() < 0.4:
        spec["compactionRetries"] = rng.choice([0, 2])
    if rng.random() < 0.3:
        spec["maxOverflowRetries"] = rng.choice([0, 2])
    if rng.random() < 0.1:
        spec["auto"] = False
    if rng.random() < 0.4:
        spec["prune"] = rng.choice([{"thresholdChars": 400, "headChars": 40, "tailChars": 40},
                                    {"thresholdChars": 200, "headChars": 100, "tailChars": 61},  # head + marker + tail == threshold
                                    {"thresholdChars": 300, "headChars": 0, "tailChars": 0}])
    if rng.random() < 0.1:
        spec["summaries"] = [text("x " * 900)] + [text("CHECKPOINT")] * 11  # not smaller than its region (CMP-21)
    return spec


def _reply(rng: random.Random, turn: int, step: int, prune_at: int | None) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.35:
        size = rng.choice([10, 300, 1600] + ([prune_at - 1, prune_at, prune_at + 1] * 2 if prune_at else []))
        calls: list[dict[str, Any]] = [{"callId": f"c{turn}-{step}-{k}", "name": rng.choice(["echo", "work"]), "arguments": "{}",
                  "result": (f"r{turn}.{step} " * size)[:size]} for k in range(rng.choice([1, 1, 2]))]
        r: dict[str, Any] = {"kind": "tool-calls", "text": rng.choice(["", "calling"]), "toolCalls": calls}
        if rng.random() < 0.1:
            r["toolsAfter"] = [ECHO_TOOL]
        if rng.random() < 0.1:
            r["systemAfter"] = "S after"
        if rng.random() < 0.1:
            calls[0]["deferred"] = [{"content": text(f"deferred {turn}"), "source": {"kind": "plugin", "plugin": "tool"}}]
        if rng.random() < 0.08:
            calls[0]["isError"] = True
        if rng.random() < 0.05:
            r["usage"] = None
        return r
    if roll < 0.45:
        error: dict[str, Any] = {"kind": "error-thrown", "errorCode": rng.choice(["SERVER", "CONTEXT_WINDOW_EXCEEDED"]), "retry": rng.random() < 0.5}
        if rng.random() < 0.3:
            error["errorStatus"] = rng.choice([429, 500])
        return error
    if roll < 0.5:
        return {"kind": "error-in-band", "errorCode": "OVERLOADED", "retry": rng.random() < 0.5}
    if roll < 0.55:
        return {"kind": "empty"}
    r = {"kind": "text", "text": f"answer {turn}.{step}"}
    extra = rng.random()
    if extra < 0.15:
        r["reasoning"] = "thinking"
    elif extra < 0.25:
        r["continueWith"] = "keep going"
    elif extra < 0.3:
        r["maxTokens"] = True
    elif extra < 0.35:
        r["requestInject"] = {"content": text(f"late {turn}"), "source": {"kind": "user"}}
    elif extra < 0.4:
        r["textChunks"] = [f"ans{turn}", f".{step}"]
    elif extra < 0.43:
        r["stepResultError"] = "step-result threw"
    elif extra < 0.46:
        r["mutationError"] = "request is read-only"
    elif extra < 0.48:
        r["usage"] = None
    elif extra < 0.5:
        r["text"] = ""
    return r


def _send(rng: random.Random, turn: int, prune_at: int | None) -> Op:
    prompt: dict[str, Any] = {"content": text(f"prompt {turn}")}
    roll = rng.random()
    if roll < 0.08:
        prompt["blockReason"] = "policy"
    elif roll < 0.12:
        prompt["submitError"] = "prompt-submit failed"
    elif roll < 0.25:
        prompt["contexts"] = [{"content": text(f"ctx {turn}.{k}"), "source": {"kind": "user"},
                               "placement": rng.choice(["separate", "prompt-prefix"])} for k in range(rng.choice([1, 2]))]
    op: Op = {"op": "send", "prompt": prompt,
              "replies": [_reply(rng, turn, s, prune_at) for s in range(rng.randint(1, 4))] + [{"kind": "text", "text": f"done {turn}"}]}
    if rng.random() < 0.35:
        op["steering"] = [{"content": text(f"steer {turn}.{k}")} for k in range(rng.randint(1, 4))]
    if rng.random() < 0.12:
        op["interrupt"] = {"window": rng.choice(WINDOWS), "kind": rng.choice(["cancel", "cancel", "dispose", "foreign"]),
                           "step": rng.choice([1, 1, 2]), "chunk": rng.randint(0, 2)}
    if rng.random() < 0.03:
        op["preStepError"] = "pre-step listener failed"
    return op


def loop_trace(rng: random.Random) -> tuple[dict[str, Any], list[Op]]:
    """A seeded loop session: an agent, then 1-5 sends with changes between them."""
    agent: dict[str, Any] = {"system": rng.choice(["S", "S2"]), "tools": rng.choice([[], [ECHO_TOOL], [ECHO_TOOL, WORK_TOOL]]),
                             "contributors": [_contributor(rng, i) for i in range(rng.choice([0, 0, 1, 2, 3]))]}
    if rng.random() < 0.35:
        keys = rng.sample(sorted(LISTENER), rng.randint(1, 3))
        agent["requestConfig"] = {k: rng.choice(LISTENER[k]) for k in keys}
    prune_at = None
    if rng.random() < 0.6:
        agent["compaction"] = _compaction(rng)
        prune_at = agent["compaction"].get("prune", {}).get("thresholdChars")
    ops: list[Op] = []
    for turn in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.06:
            ops.append({"op": "resume"})
        elif roll < 0.1 and ops:
            ops.append({"op": "fork"})
        elif roll < 0.2:
            change = rng.choice([{"system": f"S{turn}"}, {"tools": rng.choice([[], [WORK_TOOL_EDITED, ECHO_TOOL], [WORK_TOOL]])},
                                 {"requestConfig": {k: rng.choice(LISTENER[k]) for k in rng.sample(sorted(LISTENER), 2)}},
                                 {"contributors": [_contributor(rng, 9)]}])
            ops.append({"op": "configure", "agent": change})
        elif roll < 0.23:
            ops += [{"op": "dispose"}, {"op": "resume"}]
        ops.append(_send(rng, turn, prune_at))
    return {"agent": agent}, ops


def model_log(initial: dict[str, Any], ops: list[Op]) -> list[str]:
    """The log the model writes for a trace, as the writer's JSONL lines (canonical key order, LOG-12)."""
    from sessionspec.conformance.adapter.session import ModelSession
    from sessionspec.model.codec import serialize_event

    session = ModelSession()
    try:
        session.handle({"op": "init", **initial})
        for op in ops:
            session.handle(op)
    except Exception:  # noqa: BLE001 - a malformed candidate has no log worth using
        return []
    return [serialize_event(e) for e in session.log]


def boundary_trace(rng: random.Random, lines: list[str]) -> tuple[dict[str, Any], list[Op]] | None:
    """compact-basic on ``lines`` (a model log) with the pressure threshold or the retained budget on a boundary.

    Pressure compaction runs inside a step, before its ``step/end`` (CMP-6): the log is cut before its last one."""
    ends = [i for i, line in enumerate(lines) if '"type":"step/end"' in line]
    if not ends:
        return None
    lines = lines[:ends[-1]]
    loaded = load_log_text("".join(line + "\n" for line in lines))
    if isinstance(loaded, LoadError) or not loaded.events:
        return None
    state = meter_state(loaded.events)
    if isinstance(state, Rejected):
        return None
    measured = measure_state(state)
    total, nodes = measured.total_tokens, [n.tokens for n in measured.nodes]
    if total < 8 or len(nodes) < 2:
        return None
    compaction: dict[str, Any] = {"thresholdRatio": {"$number": "0.5"}, "instruction": "condense", "maxTokens": 256,
                                  "summaries": [text("CHECKPOINT")] * 4}
    kind = rng.choice(["threshold", "threshold", "retain"])
    if kind == "threshold":
        compaction["contextWindow"] = 2 * total + rng.choice([-2, -1, 0, 1, 2])
        compaction["retainTokens"] = rng.choice([0, total // 4, nodes[-1]])
    else:
        compaction["contextWindow"] = 2 * total  # the threshold is the total: compact-basic acts
        tail = sum(nodes[rng.randint(1, len(nodes) - 1):])
        if not 0 < tail < total:
            return None
        compaction["retainRatio"] = {"$number": repr((tail + 0.5) / (2 * total))}
    if rng.random() < 0.3:
        compaction["prune"] = {"thresholdChars": 400, "headChars": 40, "tailChars": 40}
    return {}, [{"op": "compact", "trigger": "pressure", "log": lines, "compaction": compaction}]


def measure_trace(rng: random.Random, lines: list[str]) -> tuple[dict[str, Any], list[Op]]:
    op: Op = {"op": "measure", "log": lines}
    if rng.random() < 0.5:
        op["override"] = {"config": {"provider": "mock", "model": "mock-1"}, "system": rng.choice(["S", "another system"]),
                          "tools": [ECHO_TOOL] if rng.random() < 0.5 else []}
    return {}, [op]


def _edit(rng: random.Random, value: Any) -> Any:
    """One value of a JSON tree replaced, removed or retyped, at a random place."""
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        roll = rng.random()
        out = dict(value)
        if roll < 0.2:
            del out[key]
        elif roll < 0.6:
            out[key] = _edit(rng, value[key])
        else:
            out[key] = rng.choice([None, -1, 0, 1.5, "", "x", [], {}, True, 2**53])
        return out
    if isinstance(value, list) and value:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        out_list[i] = _edit(rng, out_list[i]) if rng.random() < 0.7 else rng.choice([None, 0, "", {}])
        return out_list
    return rng.choice([None, -1, 0, 1.5, "", "x", [], {}, True, 2**53])


def check_trace(rng: random.Random, lines: list[str]) -> tuple[dict[str, Any], list[Op]]:
    """``check`` on a model log with one line edited (a value replaced, removed or retyped), dropped, or duplicated."""
    edited = list(lines)
    i = rng.randrange(len(edited))
    roll = rng.random()
    if roll < 0.7:
        edited[i] = json.dumps(_edit(rng, json.loads(edited[i])), separators=(",", ":"), ensure_ascii=False)
    elif roll < 0.85:
        del edited[i]
    else:
        edited.insert(i, edited[i])
    return {}, [{"op": "check", "log": edited}]

