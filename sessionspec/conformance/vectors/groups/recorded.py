"""The vector groups recorded from the model: the hand-written ``loop`` scenarios, seeded
``random`` sessions, and the ``shrunk`` divergences ``conform`` found against each mutant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.vectors.build import ECHO_TOOL, Op, Vector, contributor, record, reply, text

# --------------------------------------------------------------------------- hand-written loop scenarios


def loop_vectors() -> list[Vector]:
    from sessionspec.conformance.vectors.groups.decisions import decision_vectors
    from sessionspec.conformance.vectors.groups.scenarios import scenarios

    # issue 43: the hand-written scenarios, then the decision search's sessions
    return [record(s.id, s.rules, s.description, s.initial, s.ops) for s in scenarios()] + decision_vectors("loop")


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
    """The shrunk divergences ``conform`` found against each mutant (sessionspec/conformance/vectors/groups/vector_killers.jsonl,
    captured once from ``sessionspec conform --adapter "serve-model --mutant NAME"``),
    replayed as vectors with the model's answers as expectations."""
    out: list[Vector] = []
    for line in KILLERS.read_text(encoding="utf-8").splitlines():
        killer = json.loads(line)
        out.append(record(f"shrunk/{killer['mutant']}", (killer["rule"],),
                          f"the shrunk conform trace that kills the {killer['mutant']} mutant ({killer['rule']})",
                          killer["initial"], killer["trace"]))
    return out
