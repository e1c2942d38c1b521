"""The trace generator of ``sessionspec conform``: Hypothesis strategies over the adapter protocol's
operation language (docs/conformance.md section 3), as wide as issue 16 asks.

A trace is an initial agent and up to four turns, each optionally preceded by a change between turns.
It covers every interrupt window (all 14) with every abort kind (cancel, dispose, foreign); blocked and
throwing prompts with steering queued; continuation; reasoning; max-tokens; step-result errors; tool
errors with deferred context; system/tool changes between steps; scoped, throwing and lossy (also
empty) contributors; request configs; compact-basic with and without a tool-result prune; resume, fork
and dispose.  The weights are chosen so a 1,000-trace run visits every window and abort kind (the run
prints what it visited, sessionspec/conformance/conform/coverage.py), while the kinds the older
generator drew (composition cancels, tool rounds under compaction) keep their share: the mutant kill
table must stay all-killed with the default budget.

Only what the model and the protocol express is generated: the agent's provider and model are never
changed (an implementation whose agent options are fixed cannot), and a seed log is never given (the
vectors cover seeded sessions).
"""

from __future__ import annotations

from typing import Any, Final

from sessionspec.conformance.vectors.build import ECHO_TOOL, reply, text

Op = dict[str, Any]

WINDOWS: Final = ("after-turn-start", "after-prompt-submit", "after-assembly", "in-composition", "after-pre-step",
                  "after-step-start", "after-request", "after-prepare-call", "before-chunk", "after-stream",
                  "after-step-result", "after-post-step", "after-continuation", "after-turn-stop")
KINDS: Final = ("cancel", "dispose", "foreign")
WORK_TOOL: Final = {"name": "work", "description": "does work",
                    "parameters": {"type": "object", "properties": {"i": {"type": "number"}}}}
OTHER_AGENT: Final = "other-agent"


def message(t: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": text(t)}


def _contributor(idiom: str, label: str, inject: bool, mutate: bool, kind: str) -> dict[str, Any]:
    """A session-prefix listener (PFX-4): plain, throwing (PFX-12), lossy (Q-3, also with empty content),
    or scoped to this agent / another agent (PFX-4: another agent's listener is never called)."""
    c: dict[str, Any] = {"idiom": idiom, "content": [] if kind == "lossy-empty" else [message(f"<{label}>")]}
    if inject:
        c["inject"] = {"content": text(f"inj {label}"), "source": {"kind": "user"}}
    if mutate:
        c["mutateAfter"] = True
    if kind == "throws":
        c["throws"] = f"contributor {label} failed"
    if kind in ("lossy", "lossy-empty", "lossy-other"):
        c["lossy"] = True
    if kind in ("scoped-self",):
        c["scope"] = "agent"
    if kind in ("scoped-other", "lossy-other"):
        c["scope"] = OTHER_AGENT
    return c


def _tool_round(i: int, size: int, inject: bool, extra: str) -> dict[str, Any]:
    """A tool round (LOOP-7/12): small or large results, a request-time inject (LOOP-6), a tool error with
    deferred context (LOOP-12), or a system/tools change while the tools run (HDR-4)."""
    call: dict[str, Any] = {"callId": f"c{i}", "name": "work", "arguments": "{}", "result": "r" * size}
    r: dict[str, Any] = {"kind": "tool-calls", "text": "t", "usage": [10, 5], "toolCalls": [call]}
    if inject:
        r["requestInject"] = {"content": text("late"), "source": {"kind": "user"}}
    match extra:
        case "error-deferred":
            call["isError"] = True
            call["deferred"] = [{"content": text(f"deferred {i}"), "source": {"kind": "user"}}]
        case "deferred":
            call["deferred"] = [{"content": text(f"deferred {i}"), "source": {"kind": "user"}}]
        case "system-after":
            r["systemAfter"] = f"S-after-{i}"
        case "tools-after":
            r["toolsAfter"] = [ECHO_TOOL]
        case "two-calls":
            r["toolCalls"] = [call, {"callId": f"d{i}", "name": "work", "arguments": "{\"i\":1}", "result": "second"}]
    return r


def _special_reply(kind: str) -> dict[str, Any]:
    """The replies that exercise one behaviour each."""
    match kind:
        case "reasoning":
            return reply("reasoned", reasoning="think", textChunks=["reas", "oned"])
        case "max-tokens":
            return reply("cut", maxTokens=True)
        case "continue":
            return reply("more", continueWith="keep going")
        case "step-result-error":
            return reply("x", stepResultError="step-result listener failed")
        case "mutation-error":
            return reply("x", mutationError="request is immutable")
        case "in-band-retry":
            return {"kind": "error-in-band", "errorCode": "OVERLOADED", "retry": True}
        case "no-usage":
            return reply("u", usage=None)
    return {"kind": "error-thrown", "errorCode": "SERVER", "errorMessage": "server failed"}


def _weighted(st: Any, *choices: tuple[Any, int]) -> Any:
    """``one_of`` with integer weights.  Hypothesis drops a repeated strategy from ``one_of`` (it deduplicates
    its branches), so each extra share is a distinct (identity-mapped) copy."""
    return st.one_of(*(strategy if copy == 0 else strategy.map(_same) for strategy, weight in choices for copy in range(weight)))


def _same(value: Any) -> Any:
    return value


def interrupts() -> Any:
    """The strategy of an ``interrupt`` argument: any of the 14 windows, any abort kind (cancel twice as
    often), at step 1 (mostly) or 2, before chunk 0-3."""
    from hypothesis import strategies as st

    return st.builds(lambda w, k, step, chunk: {"window": w, "kind": k, "step": step, "chunk": chunk},
                     st.sampled_from(WINDOWS), st.sampled_from(KINDS + ("cancel",)), st.sampled_from([1, 1, 1, 2]),
                     st.integers(0, 3))


def strategies() -> Any:
    """The Hypothesis strategy of ``(initial, trace)`` (imported lazily: Hypothesis is only needed here)."""
    from hypothesis import strategies as st

    contributor_kind = st.sampled_from(["plain"] * 10 + ["throws", "lossy", "scoped-self", "scoped-other"]
                                       + ["lossy-empty", "lossy-other"] * 2)
    contributor = st.builds(_contributor, st.sampled_from(["prepend", "append"]), st.sampled_from(["p1", "p2", "p3"]),
                            st.booleans(), st.booleans(), contributor_kind)
    contributors = st.lists(contributor, min_size=0, max_size=2)
    prune = {"thresholdChars": 400, "headChars": 40, "tailChars": 40}
    compacting = st.builds(
        lambda summaries, pruning: {"thresholdRatio": {"$number": "0.5"}, "retainTokens": 100, "maxTokens": 256,
                                    "compactionRetries": 1, "contextWindow": 1000, "instruction": "condense",
                                    "summaries": [text(summary) for summary in summaries],
                                    **({"prune": prune} if pruning else {})},
        # Mostly short summaries; sometimes the first one is not smaller than its region (CMP-21).
        st.sampled_from([["CHECKPOINT"] * 8, ["CHECKPOINT"] * 8, ["x " * 1500] + ["CHECKPOINT"] * 7]),
        # A prune relieves the pressure that triggers compaction: one configuration in four.
        st.sampled_from([False, False, False, True]))
    compaction = _weighted(st, (st.none(), 1), (compacting, 2))
    tools = st.sampled_from([[], [ECHO_TOOL, WORK_TOOL]])
    request_config = st.sampled_from([None, None, None, {"temperature": {"$number": "0.7"}}, {"maxTokens": 512},
                                      {"temperature": {"$number": "0.25"}, "stop": ["END"]}])
    agent = st.builds(lambda system, tool_list, cs, cmp, rc: {"system": system, "tools": tool_list, "contributors": cs,
                                                              **({"compaction": cmp} if cmp else {}),
                                                              **({"requestConfig": rc} if rc else {})},
                      st.sampled_from(["S", "S2"]), tools, contributors, compaction, request_config)

    round_extra = st.sampled_from(["none"] * 3 + ["error-deferred", "deferred", "system-after", "tools-after", "two-calls"])
    # A tool result's size: mostly large (1,600 characters: a few rounds reach the compaction threshold), else any.
    # Both choices are always drawn, so the shrinker can turn "large" off and then shrink the size to the smallest
    # that still diverges (issue 45: a shrunk trace shows payloads no larger than they must be).
    result_size = st.builds(lambda size, large: 1600 if large else size, st.integers(10, 1600),
                            st.sampled_from([False, True, True]))
    a_reply = st.one_of(
        st.builds(lambda t: reply(t), st.sampled_from(["a", "bb"])),
        st.just({"kind": "empty"}),
        st.builds(_tool_round, st.integers(0, 9), result_size, st.booleans(), round_extra),
        st.just({"kind": "error-thrown", "errorCode": "SERVER", "retry": True}),
        st.just({"kind": "error-thrown", "errorCode": "CONTEXT_WINDOW_EXCEEDED"}),
        st.just({"kind": "error-in-band", "errorCode": "OVERLOADED"}),
        st.builds(_special_reply, st.sampled_from(["reasoning", "max-tokens", "continue", "step-result-error",
                                                   "mutation-error", "in-band-retry", "no-usage", "thrown"])),
    )
    # Composition cancels keep a double share (PFX-5, the older generator's strongest case).
    interrupt = interrupts()
    steering = st.lists(st.builds(lambda t: {"content": text(t)}, st.sampled_from(["steer", "also"])), min_size=1, max_size=2)
    prompt = st.one_of(
        st.builds(lambda p: {"content": text(p)}, st.sampled_from(["hi", "go on"])),
        st.builds(lambda p: {"content": text(p)}, st.sampled_from(["hi", "go on"])),
        st.builds(lambda p: {"content": text(p)}, st.sampled_from(["hi", "go on"])),
        st.just({"content": text("blocked"), "blockReason": "policy"}),
        st.just({"content": text("throws"), "submitError": "prompt-submit failed"}),
        st.builds(lambda placement: {"content": text("with context"), "contexts": [
            {"content": text("ctx"), "source": {"kind": "user"}, "placement": placement}]},
            st.sampled_from(["separate", "prompt-prefix"])),
    )

    def make_send(p: dict[str, Any], rs: list[dict[str, Any]], i: dict[str, Any] | None, s: list[dict[str, Any]] | None,
                  pre: bool) -> Op:
        op: Op = {"op": "send", "prompt": p, "replies": rs}
        if i is not None:
            op["interrupt"] = i
        if s:
            op["steering"] = s
        if pre:
            op["preStepError"] = "pre-step listener failed"
        return op

    any_send = st.builds(make_send, prompt, st.lists(a_reply, min_size=1, max_size=6), st.one_of(st.none(), interrupt),
                         _weighted(st, (st.none(), 3), (steering, 1)),
                         st.sampled_from([False] * 15 + [True]))
    # A long multi-step turn: enough tool output to reach the compaction threshold.
    heavy_send = st.builds(lambda n, size, last, i: {"op": "send", "prompt": {"content": text("work")},
                                                     "replies": [_tool_round(k, size, False, "none") for k in range(n)] + [last],
                                                     **({"interrupt": i} if i else {})},
                           st.integers(2, 4), result_size, a_reply, st.one_of(st.none(), st.none(), interrupt))
    # A turn cancelled inside the composition (PFX-5: nothing may be cached, the next turn composes again).
    composition_send = st.builds(lambda p, rs, k: {"op": "send", "prompt": {"content": text(p)}, "replies": rs,
                                                   "interrupt": {"window": "in-composition", "kind": k}},
                                 st.sampled_from(["hi", "go on"]), st.lists(a_reply, min_size=1, max_size=3),
                                 st.sampled_from(["cancel", "cancel", "foreign", "dispose"]))
    # The shapes where the harness and the old model parted (issue 16, classes 1, 3 and 5): a cancel right after
    # the step-result listener, an abort at after-turn-stop of a step that continues, a foreign abort with a
    # thrown request error (retried or not).
    focused_send = st.one_of(
        st.builds(lambda first, rs, k: {"op": "send", "prompt": {"content": text("hi")}, "replies": [first, *rs],
                                        "interrupt": {"window": "after-step-result", "kind": k}},
                  st.sampled_from([reply("a"), reply("bb", reasoning="r"), _tool_round(0, 10, False, "none")]),
                  st.lists(a_reply, min_size=0, max_size=2), st.sampled_from(["cancel", "cancel", "foreign", "dispose"])),
        st.builds(lambda n, last, k: {"op": "send", "prompt": {"content": text("work")},
                                      "replies": [_tool_round(i, 10, False, "none") for i in range(n)] + [last],
                                      "interrupt": {"window": "after-turn-stop", "kind": k}},
                  st.integers(1, 2), a_reply, st.sampled_from(["cancel", "cancel", "foreign", "dispose"])),
        st.builds(lambda retry, rest, w: {"op": "send", "prompt": {"content": text("hi")},
                                          "replies": [{"kind": "error-thrown", "errorCode": "SERVER", "retry": retry}, *rest],
                                          "interrupt": {"window": w, "kind": "foreign"}},
                  st.booleans(), st.lists(a_reply, min_size=0, max_size=2),
                  st.sampled_from(["after-stream", "after-stream", "before-chunk", "after-prepare-call"])),
        # Steering queued in a turn whose prompt is blocked or whose prompt-submit throws (class 2), re-queued as
        # turns of their own that take the next replies; an interruption that fires in one of them discards the rest
        # (issue 24).
        st.builds(lambda p, s, rs, i: {"op": "send", "prompt": p, "steering": s, "replies": rs,
                                       **({"interrupt": i} if i else {})},
                  st.sampled_from([{"content": text("blocked"), "blockReason": "policy"},
                                   {"content": text("throws"), "submitError": "prompt-submit failed"}]),
                  st.lists(st.builds(lambda t: {"content": text(t)}, st.sampled_from(["steer", "also", "third"])),
                           min_size=1, max_size=3),
                  st.lists(a_reply, min_size=1, max_size=3), st.one_of(st.none(), interrupt)),
    )
    # Two or three re-queued steering turns with an interruption that may fire in one of them (issue 24: it
    # discards the rest, QF-9; the replies run on across the turns).
    requeue_send = st.builds(lambda p, n, rs, i: {"op": "send", "prompt": p, "replies": rs, "interrupt": i,
                                                  "steering": [{"content": text(f"steer {k}")} for k in range(n)]},
                             st.sampled_from([{"content": text("blocked"), "blockReason": "policy"},
                                              {"content": text("throws"), "submitError": "prompt-submit failed"}]),
                             st.integers(2, 3), st.lists(a_reply, min_size=1, max_size=3), interrupt)
    send = _weighted(st, (any_send, 3), (heavy_send, 3), (composition_send, 1), (focused_send, 2), (requeue_send, 2))
    configure = st.one_of(
        st.builds(lambda cs: {"op": "configure", "agent": {"contributors": cs}}, contributors),
        st.builds(lambda t: {"op": "configure", "agent": {"tools": t}}, tools),
        st.just({"op": "configure", "agent": {"system": "S3"}}),
        st.builds(lambda rc: {"op": "configure", "agent": {"requestConfig": rc or {}}}, request_config),
    )
    # Every element of a trace is a turn, optionally preceded by a change between turns.
    between = _weighted(st, (st.none(), 2), (configure, 2), (st.just({"op": "resume"}), 1), (st.just({"op": "fork"}), 1),
                        (st.just({"op": "dispose"}), 1))
    # A disposed instance rejects the send that follows (LOOP-1), then is resumed, so the turns after it run.
    single = st.builds(lambda before, op: [op] if before is None else [before, op, {"op": "resume"}]
                       if before["op"] == "dispose" else [before, op], between, send)
    # A composition interrupted, then the next turn of the same instance: it must compose again (PFX-5).
    recompose = st.builds(lambda first, second: [first, second], composition_send,
                          _weighted(st, (composition_send, 1), (any_send, 1)))
    # A contributor of a kind where the harness showed the model wrong, configured beside another, then a resume (a
    # new instance composes, PFX-2: an instance that composed already would never call the new contributors) and
    # two turns: a throwing one with the first turn interrupted at in-composition (the throw ends the waterfall
    # before the window: nothing fires, the instance lives on), a lossy one scoped to another agent (never called,
    # QF-6), a lossy one with no message (nothing reaches the header, QF-10).
    def focused_contributor(c: dict[str, Any], idiom: str, kind: str, rs: list[dict[str, Any]], k: str,
                            second: Op) -> list[Op]:
        first: Op = {"op": "send", "prompt": {"content": text("hi")}, "replies": rs}
        if kind == "throws":
            first["interrupt"] = {"window": "in-composition", "kind": k}
        return [{"op": "configure", "agent": {"contributors": [c, _contributor(idiom, "t", False, False, kind)]}},
                {"op": "resume"}, first, second]

    contributor_focus = st.builds(focused_contributor, contributor, st.sampled_from(["prepend", "append"]),
                                  st.sampled_from(["throws", "lossy-other", "lossy-empty"]),
                                  st.lists(a_reply, min_size=1, max_size=2),
                                  st.sampled_from(["dispose", "dispose", "cancel", "foreign"]), any_send)
    turn = _weighted(st, (single, 5), (recompose, 1), (contributor_focus, 1))
    trace = st.builds(lambda turns: [op for t in turns for op in t], st.lists(turn, min_size=1, max_size=4))
    return st.tuples(st.builds(lambda a: {"agent": a}, agent), trace)
