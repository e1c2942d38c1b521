"""What a ``conform`` run exercised: the interrupt windows and abort kinds its traces used, the turn shapes
and contributor kinds, and the rules the model's answers show were reached.

Counted from what the adapter answered (issue 45, part 2): an operation counts once the adapter answered it
(ok or a rejection), never for being generated; a trace counts once its ``init`` was answered.  A rule counts
as exercised when an answered operation carried the feature that triggers it *and* the model's answer to it
shows its effect (an event type, an end reason); a feature alone (an interrupt at a window the turn never
reached) counts for the window tally only.  This is a report of the run, not a proof.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.conform.traces import KINDS, WINDOWS

# Event types of the model's answers -> the rule that writes them.
EVENT_RULES: Final = {
    "turn/start": "LOOP-2", "user/message": "LOOP-3", "prompt/blocked": "LOOP-3", "step/start": "LOOP-5",
    "request/header": "LOOP-9", "assistant/chunk": "LOOP-10", "assistant/message": "LOOP-11", "tool/call": "LOOP-7",
    "tool/result": "LOOP-7", "steering/message": "LOOP-13", "turn/end": "LOOP-17", "compact/start": "CMP-15",
    "compact/summary": "CMP-22", "compact/end": "CMP-23",
}
# turn/end reason kinds -> rule.
END_RULES: Final = {"aborted": "LOOP-15", "disposed": "LOOP-15", "error": "LOOP-14", "rejected": "LOOP-3",
                    "max-tokens": "LOG-11", "completed": "LOOP-17"}


def _features(op: Mapping[str, Any]) -> set[str]:
    """The turn shapes and contributor kinds an operation carries (names as printed in the report)."""
    out: set[str] = set()
    if op.get("op") != "send":
        if op.get("op") in ("resume", "fork", "dispose"):
            out.add(str(op["op"]))
        agent = op.get("agent")
        if isinstance(agent, Mapping):
            out |= {f"configure-{k}" for k in agent}
        return out
    prompt = op.get("prompt", {})
    if "blockReason" in prompt:
        out.add("blocked-prompt" + ("+steering" if op.get("steering") else ""))
    if "submitError" in prompt:
        out.add("throwing-prompt" + ("+steering" if op.get("steering") else ""))
    if prompt.get("contexts"):
        out.add("prompt-context")
    if op.get("steering"):
        out.add("steering")
    if op.get("preStepError"):
        out.add("pre-step-error")
    for r in op.get("replies", []):
        for key, name in (("reasoning", "reasoning"), ("maxTokens", "max-tokens"), ("continueWith", "continuation"),
                          ("stepResultError", "step-result-error"), ("mutationError", "mutation-error"),
                          ("requestInject", "request-inject"), ("systemAfter", "system-change-between-steps"),
                          ("toolsAfter", "tools-change-between-steps")):
            if r.get(key):
                out.add(name)
        kind = r.get("kind", "text")
        if kind in ("error-thrown", "error-in-band"):
            out.add(f"{kind}" + ("-retry" if r.get("retry") else ""))
        for call in r.get("toolCalls", []):
            out.add("tool-round")
            if call.get("isError") and call.get("deferred"):
                out.add("tool-error+deferred")
    return out


def _agent_features(agent: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    for c in agent.get("contributors", []):
        kind = "throwing" if "throws" in c else "lossy" if c.get("lossy") else "plain"
        if c.get("lossy") and not c.get("content"):
            kind = "lossy-empty"
        scope = "" if "scope" not in c else ("-scoped-self" if c["scope"] == "agent" else "-scoped-other")
        out.add(f"contributor-{kind}{scope}")
    compaction = agent.get("compaction")
    if isinstance(compaction, Mapping):
        out.add("compaction+prune" if "prune" in compaction else "compaction")
    if agent.get("requestConfig"):
        out.add("request-config")
    return out


@dataclass(slots=True)
class Coverage:
    """Tallies over the traces of one run (generation phase only)."""

    traces: int = 0
    windows: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)
    rule_unknown: int = 0  # rejections that agreed in verdict but named no rule (sessionspec-adapter/2)

    def add_trace(self, initial: Mapping[str, Any], trace: Sequence[Mapping[str, Any]]) -> None:
        """A whole trace, as if every operation had been answered."""
        self.add_operation({"op": "init", **initial})
        for op in trace:
            self.add_operation(op)

    def add_operation(self, op: Mapping[str, Any]) -> None:
        """An operation the adapter answered (an ``init`` starts a trace)."""
        if op.get("op") == "init":
            self.traces += 1
            self.features.update(_agent_features(op.get("agent", {})))
            return
        self.features.update(_features(op))
        agent = op.get("agent")
        if isinstance(agent, Mapping):
            self.features.update(_agent_features(agent))
        interrupt = op.get("interrupt")
        if isinstance(interrupt, Mapping):
            window, kind = str(interrupt.get("window")), str(interrupt.get("kind", "cancel"))
            self.windows[window] += 1
            self.kinds[kind] += 1
            self.pairs[(window, kind)] += 1

    def add_answer(self, op: Mapping[str, Any], expected: Response, actual: Response | None = None) -> None:
        """The rules the model's answer to ``op`` shows were reached (and a rejection the adapter gave that
        names no rule, agreeing in verdict only)."""
        self.rules.update(answer_rules(op, expected))
        reject = expected.get("reject")
        got = actual.get("reject") if actual is not None else None
        if isinstance(reject, dict) and isinstance(got, dict) and not got.get("rules"):
            self.rule_unknown += 1

    def report(self) -> str:
        """The end-of-run report (printed by ``conform``)."""
        lines = [f"coverage of what the adapter answered, in the {self.traces} traces it started:"]
        missing = [w for w in WINDOWS if not self.windows[w]]
        lines.append(f"  interrupt windows: {len(WINDOWS) - len(missing)}/{len(WINDOWS)}"
                     + (f" (not visited: {', '.join(missing)})" if missing else ""))
        missing_kinds = [k for k in KINDS if not self.kinds[k]]
        lines.append(f"  abort kinds: {len(KINDS) - len(missing_kinds)}/{len(KINDS)} "
                     + ", ".join(f"{k} {self.kinds[k]}" for k in KINDS))
        pairs = sum(1 for w in WINDOWS for k in KINDS if self.pairs[(w, k)])
        lines.append(f"  window x kind pairs: {pairs}/{len(WINDOWS) * len(KINDS)}")
        lines.append("  turn shapes and contributors: "
                     + (", ".join(f"{f} {n}" for f, n in sorted(self.features.items())) or "none"))
        lines.append(f"  rules exercised ({len(self.rules)}): " + (", ".join(sorted(self.rules, key=_rule_key)) or "none"))
        if self.rule_unknown:
            lines.append(f"  rejections agreeing in verdict but naming no rule: {self.rule_unknown}")
        return "\n".join(lines)


def answer_rules(op: Mapping[str, Any], expected: Response) -> set[str]:
    """The rules the model's answer ``expected`` to ``op`` shows were reached: the event types and end reasons
    it holds, the rules a rejection names, and the features ``op`` carried whose effect shows."""
    rules: set[str] = set()
    events = expected.get("appended")
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict):
            continue
        kind = str(event.get("type"))
        if kind in EVENT_RULES:
            rules.add(EVENT_RULES[kind])
        data = event.get("data")
        reason = data.get("reason") if isinstance(data, dict) else None
        if kind == "turn/end" and isinstance(reason, dict) and str(reason.get("kind")) in END_RULES:
            rules.add(END_RULES[str(reason.get("kind"))])
        if isinstance(event.get("surfaceOp"), dict):
            rules.add("SURF-8")
        header = data.get("header") if isinstance(data, dict) else None
        if kind == "request/header" and isinstance(data, dict) and isinstance(header, dict):
            if "messagePrefix" in header:
                rules.add("PFX-7")
            if data.get("reason") == "change":
                rules.add("HDR-4")
    if isinstance(expected.get("summaries"), list) and expected["summaries"]:
        rules.add("CMP-16")
    reject = expected.get("reject")
    named = reject.get("rules") if isinstance(reject, dict) else None
    if isinstance(named, list):
        rules |= {r for r in named if isinstance(r, str)}
    features = _features(op)
    for feature, rule in (("steering", "LOOP-13"), ("continuation", "LOOP-13"), ("request-inject", "LOOP-6"),
                          ("mutation-error", "WIRE-3"), ("tool-error+deferred", "LOOP-12"), ("fork", "LOG-15"),
                          ("resume", "PFX-1")):
        if feature in features:
            rules.add(rule)
    return rules | _effects(op, events if isinstance(events, list) else [], expected)


def _effects(op: Mapping[str, Any], events: list[Any], expected: Response) -> set[str]:
    """Rules whose effect shows in the model's answer to a ``send`` (the feature was there and it mattered)."""
    if op.get("op") != "send":
        return set()
    out: set[str] = set()
    typed = [e for e in events if isinstance(e, dict)]
    reasons = [e.get("data", {}).get("reason") for e in typed if e.get("type") == "turn/end"]
    messages = {str(r.get("message")) for r in reasons if isinstance(r, dict) and r.get("kind") == "error"}
    kinds = {str(r.get("kind")) for r in reasons if isinstance(r, dict)}
    interrupt = op.get("interrupt")
    window = interrupt.get("window") if isinstance(interrupt, Mapping) else None
    if window == "in-composition" and kinds & {"aborted", "disposed"}:
        out.add("PFX-5")
    if "turn interrupted" in messages:
        out.add("LOOP-15")  # a foreign abort reason
    if any(m.startswith("contributor ") for m in messages):
        out.add("PFX-12")
    if any("JSON" in m or "lossless" in m for m in messages):
        out.add("PFX-13")
    if "step-result listener failed" in messages:
        out.add("LOOP-11")
    if "request is immutable" in messages:
        out.add("WIRE-3")
    if any(isinstance(e.get("surfaceOp"), dict) and e.get("type") == "tool/result" for e in typed):
        out.add("PRN-4")
    if any(e.get("type") == "compact/start" for e in typed):
        out.add("CMP-6")
    requests = expected.get("requests")
    if isinstance(requests, list) and any(isinstance(r, dict) and ({"temperature", "maxTokens", "stop"} & set(r))
                                          for r in requests):
        out.add("LOOP-8")
    agent_ids = json.dumps(op)
    if "inj " in json.dumps(typed) and "inj " not in agent_ids:
        out.add("PFX-8")
    return out


def _rule_key(rule: str) -> tuple[str, int]:
    prefix, _, number = rule.rpartition("-")
    return (prefix, int(number) if number.isdigit() else 0)
