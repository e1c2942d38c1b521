"""Building blocks of the conformance vectors: the ``Vector``/``Step`` types, the operation
builders (``send``, ``reply``, ``echo``...), and the model's answers recorded as expectation patterns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from sessionspec.conformance.adapter.driver import InProcessAdapter
from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.vectors.format import (
    PlainJson,
    any_value,
    array,
    eq,
    exact_object,
    reject,
    rejection_rules,
    to_plain,
)
from sessionspec.conformance.vectors.shipped import SOURCE

ROOT: Final = Path(__file__).resolve().parents[3]
VECTORS_DIR: Final = SOURCE  # the checkout's vectors/, which `vectors generate` writes (shipped.py: what commands read)
GROUNDTRUTH: Final = ROOT / "tests" / "data" / "groundtruth"
SCHEMA_FILE: Final = "schema.json"

Op = dict[str, Any]

ECHO_TOOL: Final = {"name": "echo", "description": "echo back the text argument",
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}


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
