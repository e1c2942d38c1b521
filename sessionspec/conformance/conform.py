"""``sessionspec conform --adapter CMD``: differential random testing.

Hypothesis generates operation traces (an initial agent, then ``send``,
``configure``, ``resume``, ``dispose``, ``fork`` operations in the adapter
protocol's language, sessionspec/conformance/adapter.py); each trace runs against the model
in-process (the oracle) and against the implementation behind ``CMD``.  Every
answer of the implementation must match the model's, compared as the vectors
compare (sessionspec/conformance/vectors.py ``recorded_expectation``: exact canonical JSON except
event times and the wording of errors).  The first divergence is shrunk by
Hypothesis and reported as a replayable trace (a one-vector ``sessionspec-vectors/1``
file: ``sessionspec vectors run``) with the rule ID the divergence maps to.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from sessionspec.conformance.adapter import ModelSession
from sessionspec.conformance.driver import InProcessAdapter, ProcessAdapter
from sessionspec.conformance.protocol import AdapterError, Response
from sessionspec.conformance.vector_format import FORMAT, PlainJson, file_text, match, rejection_rules
from sessionspec.conformance.vectors import ECHO_TOOL, Step, Vector, recorded_expectation, reply, text

HELP: Final = "drive an adapter with generated operation traces and report the first divergence from the model"

Op = dict[str, Any]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """The first (shrunk) divergence: the trace up to the diverging operation."""

    initial: Op
    trace: tuple[Op, ...]
    index: int  # the diverging operation (into trace)
    mismatches: tuple[str, ...]
    expected: Response
    actual: Response
    rule: str

    def vector(self) -> Vector:
        """A replayable vector: the model's answers as expectations."""
        reference = InProcessAdapter()
        reference.call({"op": "init", **self.initial})
        steps = tuple(Step(op=op, expect=recorded_expectation(reference.call(op))) for op in self.trace)
        return Vector(id="conform/divergence", rules=(self.rule,), description=f"diverged at operation {self.index}: "
                      + "; ".join(self.mismatches[:3]), initial=self.initial, steps=steps)


class _Diverged(Exception):
    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.rule)
        self.divergence = divergence


# --------------------------------------------------------------------------- which rule a divergence breaks


_EVENT_RULES: Final = {
    "request/header": "LOOP-9",
    "user/message": "LOOP-3",
    "steering/message": "LOOP-13",
    "assistant/chunk": "LOOP-10",
    "assistant/message": "LOOP-11",
    "tool/call": "LOOP-7",
    "tool/result": "LOOP-7",
    "step/start": "LOOP-5",
    "step/end": "LOOP-5",
    "turn/start": "LOOP-2",
    "turn/end": "LOOP-17",
    "prompt/blocked": "LOOP-3",
    "compact/start": "CMP-15",
    "compact/summary": "CMP-22",
    "compact/end": "CMP-23",
}


def _index(path: str, key: str) -> int | None:
    found = re.match(rf"\$\.{key}\[(\d+)\]", path)
    return int(found.group(1)) if found else None


def _events(response: Response, key: str = "appended") -> list[dict[str, Any]]:
    value = response.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def divergence_rule(expected: Response, actual: Response, mismatches: Sequence[str]) -> str:
    """Map the first mismatch to the rule it breaks (best effort, deterministic).

    A rejection on one side names its rule (or LOOP-1 for a refused turn); a
    differing event maps by its type (a header to LOOP-9; to PFX-15 when its
    ``messagePrefix`` differs, HDR-2 when its tools/system differ, CMP-24 when it
    sits inside a compaction; a surface replace to CMP-22 or PRN-4; an
    extra user message carrying the prefix to PFX-9); a differing request maps
    by field (the prefix part of ``messages`` to PFX-11, the history part to
    LOOP-6 or, with an empty assistant message, DER-5; ``tools``/``system`` to
    HDR-2, other fields to LOOP-8); a differing
    summarizer request to CMP-16."""
    # Prefer a mismatch that names an element over a length difference.
    indexed = [m for m in mismatches if re.match(r"\$\.\w+\[\d+\]", m)]
    first = indexed[0] if indexed else (mismatches[0] if mismatches else "$")
    for side in (actual, expected):
        rules = rejection_rules(side)
        if rules:
            return rules[0]
    if first.startswith(("$.appended", "$.log")):
        key = "appended" if first.startswith("$.appended") else "log"
        index = _index(first, key)
        mine, theirs = _events(expected, key), _events(actual, key)
        position = index if index is not None else min(len(mine), len(theirs))
        if index is None:
            # Different lengths: the first position where the types differ.
            position = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a.get("type") != b.get("type")), position)
        got = (theirs + [{}] * (position + 1))[position]
        want = (mine + [{}] * (position + 1))[position]
        # Where the event types differ, an extra header or history message the
        # implementation wrote is the telling one; otherwise what it failed to write.
        event = got if not want or got.get("type") in ("request/header", "user/message") else want
        kind = str(event.get("type", ""))
        if kind == "request/header":
            bracket = [e.get("type") for e in theirs[:position] if e.get("type") in ("compact/start", "compact/end")]
            if bracket and bracket[-1] == "compact/start":
                return "CMP-24"  # a header written inside a compaction
            if re.search(r"\.header(\.messagePrefix\b|: unexpected keys .*\bmessagePrefix\b)", first):
                return "PFX-15"
            if re.search(r"\.header(\.(tools|system)\b|: unexpected keys .*\b(tools|system)\b)", first):
                return "HDR-2"
            return "LOOP-9"
        if kind == "user/message" and isinstance(event.get("surfaceOp"), dict):
            return "CMP-22"
        if kind == "tool/result" and isinstance(event.get("surfaceOp"), dict):
            return "PRN-4"
        if kind == "user/message":
            # A prefix message written as history (PFX-9), else a composition
            # that ran when it should not have, or did not run when it should (PFX-2).
            prefix = [m.get("content") for m in _prefix_of(mine + theirs)]
            data = event.get("data")
            return "PFX-9" if isinstance(data, dict) and data.get("content") in prefix else "PFX-2"
        return _EVENT_RULES.get(kind, "LOOP-5")
    if first.startswith("$.requests"):
        if ".messages" in first or "expected" in first:
            index = _index(first, "requests")
            if index is not None and _prefix_differs(expected, actual, index):
                return "PFX-11"
            if index is not None and _has_empty_assistant(actual, index):
                return "DER-5"
            return "LOOP-6"
        if ".tools" in first or ".system" in first:
            return "HDR-2"
        return "LOOP-8"
    if first.startswith("$.summaries"):
        return "CMP-16"
    return "LOOP-5"


def _has_empty_assistant(response: Response, index: int) -> bool:
    """Whether request ``index`` carries an assistant message with empty content (DER-5 forbids it)."""
    requests = response.get("requests")
    request = requests[index] if isinstance(requests, list) and index < len(requests) else None
    messages = request.get("messages") if isinstance(request, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") == [] for m in messages)


def _prefix_of(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messagePrefix of the first header among ``events`` that has one."""
    for event in events:
        header = event.get("data", {}).get("header") if event.get("type") == "request/header" else None
        if isinstance(header, dict) and isinstance(header.get("messagePrefix"), list):
            return [m for m in header["messagePrefix"] if isinstance(m, dict)]
    return []


def _prefix_differs(expected: Response, actual: Response, index: int) -> bool:
    """Whether the leading messages that the expected request shares with its
    header's prefix differ (a prefix placed elsewhere or lost)."""
    prefixes = [e for e in _events(expected) if e.get("type") == "request/header"]
    prefix = prefixes[-1]["data"]["header"].get("messagePrefix", []) if prefixes else []
    mine, theirs = expected.get("requests"), actual.get("requests")
    if not prefix or not isinstance(mine, list) or not isinstance(theirs, list) or index >= min(len(mine), len(theirs)):
        return False
    request = theirs[index]
    got = request.get("messages") if isinstance(request, dict) else None
    return not isinstance(got, list) or got[: len(prefix)] != prefix


# --------------------------------------------------------------------------- generated traces


def _strategies() -> Any:
    """The Hypothesis strategy of ``(initial, trace)`` (imported lazily: Hypothesis is only needed here)."""
    from hypothesis import strategies as st

    work_tool = {"name": "work", "description": "does work", "parameters": {"type": "object", "properties": {"i": {"type": "number"}}}}

    def message(t: str, role: str = "user") -> dict[str, Any]:
        return {"role": role, "content": text(t)}

    contributor = st.builds(
        lambda idiom, label, inject, mutate: {"idiom": idiom, "content": [message(f"<{label}>")],
                                              **({"inject": {"content": text(f"inj {label}"), "source": {"kind": "user"}}} if inject else {}),
                                              **({"mutateAfter": True} if mutate else {})},
        st.sampled_from(["prepend", "append"]), st.sampled_from(["p1", "p2", "p3"]),
        st.booleans(), st.booleans())
    contributors = st.lists(contributor, min_size=0, max_size=2)
    compacting = st.builds(
        lambda summaries: {"thresholdRatio": {"$number": "0.5"}, "retainTokens": 100, "maxTokens": 256,
                           "compactionRetries": 1, "contextWindow": 1000, "instruction": "condense",
                           "summaries": [text(summary) for summary in summaries]},
        # Mostly short summaries; sometimes the first one is not smaller than its region (CMP-21).
        st.sampled_from([["CHECKPOINT"] * 8, ["CHECKPOINT"] * 8, ["x " * 1500] + ["CHECKPOINT"] * 7]))
    compaction = st.one_of(st.none(), compacting, compacting)
    tools = st.sampled_from([[], [ECHO_TOOL, work_tool]])
    agent = st.builds(lambda system, tool_list, cs, cmp: {"system": system, "tools": tool_list, "contributors": cs,
                                                          **({"compaction": cmp} if cmp else {})},
                      st.sampled_from(["S", "S2"]), tools, contributors, compaction)

    def tool_round(i: int, size: int, inject: bool) -> dict[str, Any]:
        r: dict[str, Any] = {"kind": "tool-calls", "text": "t", "usage": [10, 5], "toolCalls": [
            {"callId": f"c{i}", "name": "work", "arguments": "{}", "result": "r" * size}]}
        if inject:
            r["requestInject"] = {"content": text("late"), "source": {"kind": "user"}}
        return r

    a_reply = st.one_of(
        st.builds(lambda t: reply(t), st.sampled_from(["a", "bb"])),
        st.just({"kind": "empty"}),
        st.builds(tool_round, st.integers(0, 9), st.sampled_from([10, 1600, 1600]), st.booleans()),
        st.just({"kind": "error-thrown", "errorCode": "SERVER", "retry": True}),
        st.just({"kind": "error-thrown", "errorCode": "CONTEXT_WINDOW_EXCEEDED"}),
        st.just({"kind": "error-in-band", "errorCode": "OVERLOADED"}),
    )
    windows = ["in-composition", "in-composition", "in-composition", "after-pre-step", "after-step-start", "after-stream", "after-turn-start"]
    interrupt = st.one_of(st.none(), st.builds(lambda w, k: {"window": w, "kind": k}, st.sampled_from(windows),
                                               st.sampled_from(["cancel", "cancel", "cancel", "dispose"])))
    any_send = st.builds(lambda p, rs, i: {"op": "send", "prompt": {"content": text(p)}, "replies": rs,
                                           **({"interrupt": i} if i else {})},
                         st.sampled_from(["hi", "go on"]), st.lists(a_reply, min_size=1, max_size=6), interrupt)
    # A long multi-step turn: enough tool output to reach the compaction threshold.
    heavy_send = st.builds(lambda n, last: {"op": "send", "prompt": {"content": text("work")},
                                            "replies": [tool_round(i, 1600, False) for i in range(n)] + [last]},
                           st.integers(2, 4), a_reply)
    send = st.one_of(any_send, any_send, heavy_send)
    configure = st.builds(lambda key, value: {"op": "configure", "agent": {key: value}},
                          st.just("contributors"), contributors) | st.builds(
        lambda t: {"op": "configure", "agent": {"tools": t}}, tools) | st.just({"op": "configure", "agent": {"system": "S3"}})
    # Every element of a trace is a turn, optionally preceded by a change between turns.
    between = st.one_of(st.none(), st.none(), configure, configure, st.just({"op": "resume"}), st.just({"op": "fork"}),
                        st.just({"op": "dispose"}))
    turn = st.builds(lambda before, op: [op] if before is None else [before, op], between, send)
    trace = st.builds(lambda turns: [op for t in turns for op in t], st.lists(turn, min_size=1, max_size=4))
    return st.tuples(st.builds(lambda a: {"agent": a}, agent), trace)


def compare_trace(target: ProcessAdapter | InProcessAdapter, initial: Op, trace: Sequence[Op]) -> Divergence | None:
    """Run one trace on the model and on ``target``; the first diverging answer, or None."""
    reference = InProcessAdapter(ModelSession())
    ops: list[Op] = [{"op": "init", **initial}, *trace, {"op": "log"}]
    for index, op in enumerate(ops):
        expected = reference.call(op)
        actual = target.call(op)
        mismatches = match(recorded_expectation(expected), actual)
        if mismatches:
            shown = list(trace) if index > len(trace) else list(trace[: max(index, 0)])
            if op["op"] == "log":
                shown.append(op)
            return Divergence(initial=initial, trace=tuple(shown), index=max(index - 1, 0),
                              mismatches=tuple(mismatches), expected=expected, actual=actual,
                              rule=divergence_rule(expected, actual, mismatches))
    return None


def run_conform(command: str | None, *, examples: int = 40, seed: int | None = None) -> Divergence | None:
    """Drive ``command`` (None: the model in-process) with ``examples`` traces;
    the shrunk first divergence, or None when every trace agreed."""
    from hypothesis import HealthCheck, Phase, given, settings

    target: ProcessAdapter | InProcessAdapter = InProcessAdapter() if command is None else ProcessAdapter(command)
    try:
        # Fail fast, before any search, on an adapter that does not speak the protocol.
        target.call({"op": "hello"})
    except AdapterError:
        target.close()
        raise
    found: list[Divergence] = []

    @settings(max_examples=examples, database=None, deadline=None, derandomize=seed is None, print_blob=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink))
    @given(_strategies())
    def trace_agrees(case: tuple[Op, list[Op]]) -> None:
        initial, trace = case
        divergence = compare_trace(target, initial, trace)
        if divergence is not None:
            found.append(divergence)
            raise _Diverged(divergence)

    try:
        if seed is not None:
            from hypothesis import seed as hypothesis_seed

            hypothesis_seed(seed)(trace_agrees)()
        else:
            trace_agrees()
    except _Diverged as diverged:
        return diverged.divergence
    except AdapterError:
        raise
    finally:
        target.close()
    return found[-1] if found else None


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", required=True, metavar="CMD", help="the adapter command to test")
    parser.add_argument("--examples", type=int, default=200, help="generated traces (default 200)")
    parser.add_argument("--seed", type=int, default=None, help="a random seed (default: derandomized, reproducible)")
    parser.add_argument("--out", default=None, help="write the shrunk divergence as a replayable vector file here")


def run(args: argparse.Namespace) -> int:
    if args.examples < 1:
        print("sessionspec conform: --examples must be at least 1", file=sys.stderr)
        return 2
    try:
        divergence = run_conform(args.adapter, examples=args.examples, seed=args.seed)
    except ModuleNotFoundError as missing:
        print(f"sessionspec conform: needs the {missing.name} package (pip install hypothesis)", file=sys.stderr)
        return 2
    except AdapterError as failed:
        print(f"sessionspec conform: {failed}", file=sys.stderr)
        return 2
    if divergence is None:
        print(f"no divergence in {args.examples} generated traces")
        return 0
    print(f"DIVERGENCE ({divergence.rule}) at operation {divergence.index} of a {len(divergence.trace)}-operation trace")
    for line in divergence.mismatches[:8]:
        print(f"    {line}")
    print("trace:")
    print("    " + json.dumps({"op": "init", **divergence.initial}, sort_keys=True, ensure_ascii=False))
    for op in divergence.trace:
        print("    " + json.dumps(op, sort_keys=True, ensure_ascii=False))
    if args.out:
        document: Mapping[str, PlainJson] = {"format": FORMAT, "registry": _digest(), "group": "conform",
                                             "vectors": [divergence.vector().to_json()]}
        Path(args.out).write_text(file_text(document), encoding="utf-8")
        print(f"replay with: sessionspec vectors run {Path(args.out).parent} --adapter {args.adapter!r}")
    return 1


def _digest() -> str:
    from spec.registry import registry_digest

    return registry_digest()
