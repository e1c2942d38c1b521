"""Hand-written loop scenarios for ``vectors/loop.json``: one behaviour each,
named by the rule it exercises.  The expected answers are recorded from the
model when the vectors are generated (sessionspec/conformance/vectors/command.py ``record``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, final

from sessionspec.conformance.vectors.build import ECHO_TOOL, Op, contributor, echo, message, reply, send, text


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    id: str
    rules: tuple[str, ...]
    description: str
    initial: Op
    ops: tuple[Op, ...]


SYSTEM: Final = "You are the vector test agent."


def agent(*contributors: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"system": SYSTEM, "contributors": list(contributors), **extra}


def _s(sid: str, rules: str, description: str, initial: Op, *ops: Op) -> Scenario:
    return Scenario(id=f"loop/{sid}", rules=tuple(rules.split()), description=description, initial=initial, ops=ops)


P: Final = contributor("<pfx>")


def _interrupt_scenarios() -> list[Scenario]:
    """LOOP-15: one cancel per checkpoint window, then a normal turn."""
    out = []
    windows = ("after-turn-start", "after-prompt-submit", "after-assembly", "in-composition", "after-pre-step",
               "after-step-start", "after-request", "after-prepare-call", "before-chunk", "after-stream",
               "after-step-result", "after-post-step", "after-continuation", "after-turn-stop")
    for window in windows:
        interrupt: dict[str, Any] = {"window": window}
        if window == "before-chunk":
            interrupt["chunk"] = 2
        out.append(_s(f"cancel/{window}", "LOOP-15 LOOP-17 PFX-5",
                      f"a cancel observed at the {window} checkpoint ends the turn aborted; the next turn runs normally",
                      {"agent": agent(P)},
                      send("first", reply("one"), interrupt=interrupt),
                      send("second", reply("two"))))
    out.append(_s("dispose/after-stream", "LOOP-15 LOOP-1",
                  "a dispose ends the turn disposed and the instance refuses further turns",
                  {"agent": agent(P)},
                  send("first", reply("one"), interrupt={"window": "after-stream", "kind": "dispose"}),
                  send("second", reply("two"))))
    out.append(_s("foreign-abort", "LOOP-15",
                  "an abort whose reason is not an agent interrupt ends the turn with an error naming the step (Q-30)",
                  {"agent": agent(P)},
                  send("first", reply("one"), interrupt={"window": "after-step-start", "kind": "foreign"})))
    return out


WORK_TOOL: Final = {"name": "work", "description": "does work", "parameters": {"type": "object", "properties": {"i": {"type": "number"}}}}


def work(i: int, size: int = 800) -> dict[str, Any]:
    """A tool round whose result is ``size`` characters (pressure for compaction)."""
    arguments = f'{{"i":{i}}}'
    return {"kind": "tool-calls", "text": f"step {i}", "textChunks": [f"step {i}"], "usage": [10, 5], "toolCalls": [
        {"callId": f"call-{i}", "name": "work", "arguments": arguments, "result": f"result {i}: " + "lorem ipsum " * (size // 12)}]}


def compacting(summary: str, **config: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"thresholdRatio": {"$number": "0.5"}, "retainTokens": 250, "maxTokens": 256, "compactionRetries": 1,
                            "contextWindow": 2000, "summaries": [text(summary)] * 4, "instruction": "condense the above"}
    return agent(P, tools=[WORK_TOOL], compaction={**base, **config})


def _compaction_scenarios() -> list[Scenario]:
    short = "CHECKPOINT: done so far."
    return [
        _s("compaction/pressure", "CMP-1 CMP-2 CMP-6 CMP-8 CMP-10 CMP-11 CMP-12 CMP-15 CMP-16 CMP-17 CMP-19 CMP-20 CMP-22 CMP-24 PFX-9",
           "post-step pressure compaction replaces a balanced head range by a checkpoint; the prefix stays beside history",
           {"agent": compacting(short)},
           send("work a lot", *(work(i) for i in range(6)), reply("all done")), send("more?", reply("no"))),
        _s("compaction/summary-not-smaller", "CMP-21 CMP-23",
           "a summary that is not smaller than the region it shadows fails the transaction: start … end{error}, nothing replaced",
           {"agent": compacting("a summary far too long to fit " * 200)},
           send("work a lot", *(work(i) for i in range(5)), reply("all done"))),
        _s("compaction/empty-summary", "CMP-18 CMP-23",
           "a summary without text content fails the transaction",
           {"agent": compacting("   ")},
           send("work a lot", *(work(i) for i in range(5)), reply("all done"))),
        _s("compaction/overflow-retry", "CMP-7 CMP-9 LOOP-14",
           "a CONTEXT_WINDOW_EXCEEDED failure compacts between the failed step and its retry",
           {"agent": compacting(short, thresholdRatio=1, retainTokens=30, compactionRetries=0, contextWindow=1000000000)},
           send("long question " * 40, reply("long answer " * 40)),
           send("next", {"kind": "error-thrown", "errorCode": "CONTEXT_WINDOW_EXCEEDED"}, reply("recovered"))),
        _s("compaction/cancel-during-tools", "CMP-26 CMP-6",
           "a cancel landing while the tools of the step that reaches the pressure threshold run (compaction/pressure "
           "compacts at that step) is visible to post-step: the trigger skips, no bracket, the turn ends aborted",
           {"agent": compacting(short)},
           send("work a lot", *(work(i) for i in range(6)), reply("all done"), interrupt={"window": "after-post-step", "step": 5})),
        _s("compaction/overflow-aborted-no-retry", "CMP-26 CMP-7",
           "a CONTEXT_WINDOW_EXCEEDED failure whose turn is already aborted is not compacted or retried",
           {"agent": compacting(short, thresholdRatio=1, retainTokens=30, compactionRetries=0, contextWindow=1000000000)},
           send("long question " * 40, reply("long answer " * 40)),
           send("next", {"kind": "error-thrown", "errorCode": "CONTEXT_WINDOW_EXCEEDED"}, reply("recovered"),
                interrupt={"window": "after-stream", "step": 1})),
        _s("compaction/other-error-not-recovered", "CMP-7",
           "a request error other than CONTEXT_WINDOW_EXCEEDED is not recovered by compaction",
           {"agent": compacting(short, thresholdRatio=1, retainTokens=30, compactionRetries=0, contextWindow=1000000000)},
           send("long question " * 40, reply("long answer " * 40)),
           send("next", {"kind": "error-thrown", "errorCode": "RATE_LIMIT"}, reply("recovered"))),
        _s("compaction/prune", "PRN-2 PRN-3 PRN-4 PRN-5 PRN-6 SURF-7",
           "pressure first prunes large tool results (head + marker + tail), replacing them in place",
           {"agent": compacting(short, thresholdRatio={"$number": "0.25"}, retainTokens=100, contextWindow=800,
                                prune={"thresholdChars": 200, "headChars": 60, "tailChars": 30})},
           send("dump", work(0, 900), reply("dumped")), send("thanks", reply("welcome"))),
    ]


def scenarios() -> list[Scenario]:
    out: list[Scenario] = [
        _s("prefix/compose-once", "PFX-2 PFX-7 PFX-11 WIRE-2 INV-6",
           "the prefix is composed once per instance and leads every request after the system slot",
           {"agent": agent(P)},
           send("one", reply("a")), send("two", echo("c1", "x", "calling"), reply("b"))),
        _s("prefix/empty-composition", "PFX-10 PFX-3",
           "an empty composition leaves messagePrefix out of every header",
           {"agent": agent({"idiom": "prepend", "content": []})},
           send("one", reply("a")), send("two", reply("b"))),
        _s("prefix/idioms", "PFX-4 PFX-3",
           "prepend/append contributors run as a waterfall in registration order, innermost first",
           {"agent": agent(contributor("A"), contributor("B", idiom="append"), contributor("C"))},
           send("one", reply("a"))),
        _s("prefix/inject", "PFX-8",
           "an inject() during composition joins the current boundary as history",
           {"agent": agent(contributor("I", inject={"content": text("injected"), "source": {"kind": "plugin", "plugin": "p"}}))},
           send("one", reply("a")), send("two", reply("b"))),
        _s("prefix/recompose-after-cancel", "PFX-5 PFX-2",
           "a composition interrupted before the cache write is discarded; the next turn composes again",
           {"agent": agent(contributor("stale"))},
           send("one", interrupt={"window": "in-composition"}),
           {"op": "configure", "agent": {"contributors": [contributor("fresh")]}},
           send("two", reply("b")), send("three", reply("c"))),
        _s("prefix/throw", "PFX-12 LOOP-16",
           "a throwing contributor fails the turn; the cache stays NOT_COMPOSED",
           {"agent": agent(P, {"idiom": "prepend", "content": [], "throws": "boom"})},
           send("one"),
           {"op": "configure", "agent": {"contributors": [P]}},
           send("two", reply("b"))),
        _s("prefix/no-compose-blocked", "PFX-14 LOOP-3",
           "a blocked prompt and a prompt-submit failure end the turn before the composition point",
           {"agent": agent(contributor("first"))},
           {"op": "send", "prompt": {"content": text("blocked"), "blockReason": "no"}},
           {"op": "send", "prompt": {"content": text("fails"), "submitError": "submit failed"}},
           {"op": "configure", "agent": {"contributors": [contributor("second")]}},
           send("ok", reply("b"))),
        _s("prefix/resume-recomposes", "PFX-1 LOOP-1 LOOP-9",
           "a new instance (resume) composes again and writes a resume header",
           {"agent": agent(contributor("gen 1"))},
           send("one", reply("a")),
           {"op": "configure", "agent": {"contributors": [contributor("gen 2")]}},
           send("two", reply("b")),
           {"op": "resume"},
           send("three", reply("c"))),
        _s("prefix/deep-copy", "PFX-6",
           "a contributor that edits its returned objects after composition cannot change the cached prefix",
           {"agent": agent(contributor("mutable", mutateAfter=True))},
           send("one", reply("a")), send("two", reply("b")), send("three", reply("c"))),
        _s("prefix/anchor-later", "PFX-16",
           "a composition cached before any header is anchored is sent by the next turn",
           {"agent": agent(contributor("cached in turn 1"))},
           send("one", interrupt={"window": "after-pre-step"}),
           {"op": "configure", "agent": {"contributors": [contributor("would be turn 2")]}},
           send("two", reply("b"))),
        _s("prefix/lossy", "PFX-13",
           "composition does not validate content; a non-JSON prefix value fails the header append (Q-3)",
           {"agent": agent(contributor("lossy", lossy=True))},
           send("one", reply("a")), send("two", reply("b"))),
        _s("prefix/same-in-instance", "PFX-15 LOOP-9 HDR-4",
           "a change header within the instance carries the same messagePrefix",
           {"agent": agent(P)},
           send("one", dict(echo("c1", "x"), systemAfter=SYSTEM + " (changed)"), reply("a")),
           send("two", reply("b"))),
        _s("turn/turn-numbers", "LOOP-2 LOG-15",
           "turn numbers continue from the last turn/start of the log (a fork seed)",
           {"agent": agent(P)},
           send("one", reply("a")), {"op": "fork"}, send("two", reply("b"))),
        _s("turn/prompt-prefix-context", "LOOP-4 LOOP-3 LOG-12 DER-3 DER-8",
           "prompt-prefix contexts are logged before the delimiter and the prompt, with an envelope; separate ones follow",
           {"agent": agent(P)},
           {"op": "send", "prompt": {"content": text("the ask"), "contexts": [
               {"content": text("ctx A"), "source": {"kind": "plugin", "plugin": "a"}, "placement": "prompt-prefix",
                "meta": {"m": 1}},
               {"content": text("ctx B"), "source": {"kind": "plugin", "plugin": "b"}, "placement": "separate"}]},
            "replies": [reply("done")]}),
        _s("turn/steering", "LOOP-13",
           "queued steering is logged before the step and drains after it, continuing the turn",
           {"agent": agent(P)},
           send("one", reply("a"), reply("b"), steering=[{"content": text("steer 1")}]),
           send("two", reply("c", continueWith="go on"), reply("d"))),
        _s("turn/request-inject", "LOOP-6 WIRE-5",
           "an inject() during agent/request joins the next request, not the current one",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", dict(echo("c1", "x"), requestInject={"content": text("late"), "source": {"kind": "user"}}), reply("b"))),
        _s("turn/request-error-fails", "LOOP-14 LOOP-17",
           "a request error with the default decision closes the step and fails the turn",
           {"agent": agent(P)},
           send("one", {"kind": "error-thrown", "errorCode": "SERVER"}), send("two", reply("b"))),
        _s("turn/request-error-retry", "LOOP-14 PFX-7",
           "a retried request error starts a new numbered step without recomposing",
           {"agent": agent(P)},
           send("one", {"kind": "error-in-band", "errorCode": "OVERLOADED", "errorStatus": 529, "retry": True}, reply("b"))),
        _s("turn/pre-step-error", "LOOP-16",
           "a failure after composition and before step/start ends the turn with an error",
           {"agent": agent(P)},
           send("one", preStepError="pre-step failed"), send("two", reply("b"))),
        _s("turn/request-config", "LOOP-8 HDR-3",
           "the agent/request listener's config lands in the header; a resumed instance re-seeds from the options",
           {"agent": agent(P, requestConfig={"temperature": {"$number": "0.5"}, "maxTokens": 100, "reasoningEffort": "high"})},
           send("one", reply("a")),
           {"op": "resume"},
           {"op": "configure", "agent": {"requestConfig": {}}},
           send("two", reply("b"))),
        _s("turn/missing-model", "LOOP-16",
           "a request without provider/model fails the turn",
           {"agent": agent(P, model="")},
           send("one", reply("a"))),
        _s("header/empty-tools", "HDR-2 WIRE-1",
           "an empty tools list is left out of the canonical header and the request",
           {"agent": agent(P, tools=[])},
           send("one", reply("a")), send("two", reply("b"))),
        _s("header/tools-change", "LOOP-9 HDR-4",
           "registering a tool between turns writes a change header; an unchanged header is not rewritten",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", reply("a")), send("two", reply("b")),
           {"op": "configure", "agent": {"tools": []}},
           send("three", reply("c")), send("four", reply("d"))),
        _s("der/empty-assistant", "DER-4 DER-5 DER-6 LOOP-12",
           "an empty assistant message stays on the surface but produces no message",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", {"kind": "empty"}), send("two", echo("c1", "x", "calling"), reply("b"))),
        _s("der/reasoning-and-tool-error", "DER-1 DER-2 LOOP-10 LOOP-11",
           "reasoning blocks and an error tool result are projected as the rules say",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", {"kind": "tool-calls", "text": "", "reasoning": "hmm", "toolCalls": [
               {"callId": "c1", "name": "echo", "arguments": "{}", "result": "bad", "isError": True}]}, reply("b"))),
        _s("turn/disposed-instance", "LOOP-1",
           "a disposed instance refuses turns; a resumed one runs",
           {"agent": agent(P)},
           send("one", reply("a")), {"op": "dispose"}, send("two", reply("b")), {"op": "resume"}, send("three", reply("c"))),
        _s("turn/max-tokens", "LOOP-11",
           "a max-tokens finish drops the tool-call blocks and runs no tools; the turn ends max-tokens",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", dict(echo("c1", "x", "cut"), maxTokens=True)), send("two", reply("b"))),
        _s("turn/step-result-throws", "LOOP-11 LOOP-17",
           "an agent/step-result listener that throws records an empty assistant message and fails the turn",
           {"agent": agent(P)},
           send("one", reply("a", stepResultError="step-result threw")), send("two", reply("b"))),
        _s("wire/request-is-immutable", "WIRE-3",
           "a stream listener that mutates the request gets the runtime's immutability error in its step",
           {"agent": agent(P)},
           send("one", reply("a", mutationError="Cannot assign to read only property")), send("two", reply("b"))),
        _s("derive/messages-are-immutable", "DER-9 WIRE-3",
           "without a prefix the request's first message is a derived history message: the listener's mutation of it "
           "fails the step, and the next turn's request shows the history unchanged",
           {"agent": agent()},
           send("one", reply("a", mutationError="Cannot assign to read only property")), send("two", reply("b"))),
        _s("turn/deferred-context", "LOOP-12",
           "context a tool defers is appended after all results of the batch",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("one", {"kind": "tool-calls", "text": "", "toolCalls": [
               {"callId": "c1", "name": "echo", "arguments": "{}", "result": "r1",
                "deferred": [{"content": text("deferred by c1"), "source": {"kind": "plugin", "plugin": "tool"}}]},
               {"callId": "c2", "name": "echo", "arguments": "{}", "result": "r2"}]}, reply("b"))),
        _s("prefix/scoped-listeners", "PFX-4",
           "session-prefix listeners scoped to another agent are never dispatched; global and own-scoped ones are",
           {"agent": agent(contributor("global"), contributor("mine", scope="me"), contributor("theirs", scope="other"),
                           agentId="me")},
           send("one", reply("a"))),
        _s("wire/system-role-prefix", "PFX-11 WIRE-2 PFX-13",
           "prefix messages keep their role (a system-role prefix message stays a message)",
           {"agent": agent(contributor("sys", role="system"), {"idiom": "append", "content": [message("tail", "assistant")]})},
           send("one", reply("a"))),
    ]
    out += _interrupt_scenarios()
    out += _compaction_scenarios()
    out += _harness_agreement_scenarios()
    return out


def _harness_agreement_scenarios() -> list[Scenario]:
    """Issue 16: the five loop behaviours the running harness showed the model
    wrong (QF-3..QF-7), one vector each (two for the foreign abort)."""
    steer = [{"content": text("steer me")}]
    thrown = {"kind": "error-thrown", "errorCode": "SERVER", "errorMessage": "boom"}
    return [
        _s("harness/cancel-after-step-result-records-empty-message", "LOOP-11 LOOP-15",
           "a cancel at the checkpoint after agent/step-result records an empty assistant message (usage kept) "
           "before step/end; the turn ends aborted (QF-3)",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("first", echo("c1", "x", "calling"), reply("never"), interrupt={"window": "after-step-result"}),
           send("second", reply("two"))),
        _s("harness/blocked-prompt-requeues-steering", "LOOP-3 LOOP-13",
           "steering queued for a turn whose prompt is blocked is re-queued and runs as the next message turn (QF-4)",
           {"agent": agent(P)},
           {"op": "send", "prompt": {"content": text("first"), "blockReason": "policy"}, "steering": steer,
            "replies": [reply("answer")]}),
        _s("harness/throwing-prompt-submit-requeues-steering", "LOOP-3 LOOP-16",
           "steering queued for a turn whose prompt-submit throws is re-queued and runs as the next message turn (QF-4)",
           {"agent": agent(P)},
           {"op": "send", "prompt": {"content": text("first"), "submitError": "submit threw"}, "steering": steer,
            "replies": [reply("answer")]}),
        _s("harness/turn-stop-checkpoint-on-a-continuing-step", "LOOP-13 LOOP-15",
           "agent/turn-stop and its checkpoint run after every step: a cancel there after a tool step ends the turn "
           "aborted before step 2 (QF-5)",
           {"agent": agent(P, tools=[ECHO_TOOL])},
           send("first", echo("c1", "x"), reply("never"), interrupt={"window": "after-turn-stop", "step": 1}),
           send("second", reply("two"))),
        _s("harness/lossy-contributor-of-another-agent", "PFX-13 PFX-4",
           "a lossy session-prefix listener scoped to another agent is never called, so the header append succeeds (QF-6)",
           {"agent": agent(P, contributor("theirs", lossy=True, scope="other"), agentId="me")},
           send("one", reply("a")), send("two", reply("b"))),
        _s("harness/foreign-abort-with-thrown-error", "LOOP-14 LOOP-10 LOOP-15",
           "a foreign abort on a thrown stream: no after-stream checkpoint, the request-error path ignores the foreign "
           "reason, the turn ends with the provider failure (QF-7, Q-30)",
           {"agent": agent(P)},
           send("first", thrown, interrupt={"window": "after-stream", "kind": "foreign"})),
        _s("harness/foreign-abort-with-thrown-error-retry", "LOOP-14 LOOP-15",
           "with retry, the foreign abort ends the turn \"turn interrupted\" at step 2 (QF-7, Q-30)",
           {"agent": agent(P)},
           send("first", dict(thrown, retry=True), reply("never"), interrupt={"window": "after-stream", "kind": "foreign"})),
        *_requeue_and_composition_scenarios(),
    ]


def _requeue_and_composition_scenarios() -> list[Scenario]:
    """Issue 24: the second run against the harness (QF-9, QF-10, in-order replies, the in-composition window)."""
    blocked = {"content": text("first"), "blockReason": "policy"}
    steer = [{"content": text(f"steer {i}")} for i in (1, 2, 3)]
    replies = [reply("r1"), reply("r2"), reply("r3")]
    thrower = contributor("<t>", throws="contributor threw")
    return [
        *(_s(f"harness/{kind}-in-a-requeued-turn-discards-the-queue", "LOOP-3 LOOP-15",
             f"{named} that fires in the first re-queued steering turn discards the items still queued: cancel() clears "
             "the inbox, a disposed agent runs no turn (QF-9)",
             {"agent": agent(P)},
             {"op": "send", "prompt": blocked, "steering": steer, "replies": replies,
              "interrupt": {"window": "after-request", "kind": kind}},
             send("next", reply("n")))
          for kind, named in (("cancel", "a cancel"), ("foreign", "a foreign abort"), ("dispose", "a dispose"))),
        _s("harness/requeued-turns-take-the-next-replies", "LOOP-3",
           "the re-queued steering turns of one send are answered by the next scripted replies, in order",
           {"agent": agent(P)},
           {"op": "send", "prompt": blocked, "steering": steer, "replies": replies}),
        _s("harness/throwing-contributor-never-reaches-the-in-composition-window", "PFX-12 PFX-5",
           "a throwing contributor ends the waterfall before its innermost point: a dispose at in-composition does not "
           "fire, the turn ends in error and the instance lives on",
           {"agent": agent(P, thrower)},
           send("first", reply("never"), interrupt={"window": "in-composition", "kind": "dispose"}),
           {"op": "configure", "agent": {"contributors": [P]}},
           send("second", reply("two"))),
        _s("harness/lossy-contributor-without-messages", "PFX-13 PFX-10",
           "a lossy contributor that returns no message puts nothing into the header: the append succeeds, alone and "
           "beside another contributor (QF-10)",
           {"agent": agent({"idiom": "append", "content": [], "lossy": True})},
           send("one", reply("a")),
           {"op": "resume"},
           {"op": "configure", "agent": {"contributors": [P, {"idiom": "append", "content": [], "lossy": True}]}},
           send("two", reply("b"))),
        # Issue 29: the instances the vectors lacked.
        _s("harness/contributor-prefix-holds-at-the-third-step", "PFX-7 PFX-2 LOOP-5",
           "one composition serves every step of the instance: the third step's request starts with the same prefix",
           {"agent": agent(P, tools=[WORK_TOOL])},
           send("go", work(1, 60), work(2, 60), reply("done"))),
        _s("compaction/prune-over-a-replaced-result", "PRN-5 PRN-3 SURF-7",
           "a later pressure pass prunes the new large result and leaves the result it already replaced as it is",
           {"agent": compacting("CHECKPOINT: done so far.", thresholdRatio={"$number": "0.25"}, retainTokens=100, contextWindow=800,
                                prune={"thresholdChars": 200, "headChars": 60, "tailChars": 30})},
           send("dump", work(0, 900), reply("dumped")), send("again", work(1, 900), reply("dumped again"))),
        # The cache and composition count are not in the answer (docs/conformance.md, in-composition): the inject
        # shows the attempt (PFX-8), the changed contributor that the resumed instance composes its own.
        _s("harness/dispose-in-composition-then-resume-recomposes", "PFX-5 PFX-8 LOOP-15 LOOP-1 PFX-2",
           "a dispose inside the composition: the inject stays, the turn ends disposed with no step, header or request; "
           "the instance refuses a turn; the resumed instance composes its own contributors once, its requests carry them",
           {"agent": agent(contributor("<pfx 1>", inject=_inject(1)))},
           send("go", reply("never"), interrupt={"window": "in-composition", "kind": "dispose"}),
           send("refused", reply("never")),
           {"op": "configure", "agent": {"contributors": [contributor("<pfx 2>", inject=_inject(2))]}},
           {"op": "resume"},
           send("again", reply("a")),
           send("more", reply("b"))),
    ]


def _inject(instance: int) -> dict[str, Any]:
    return {"content": text(f"injected while instance {instance} composes"), "source": {"kind": "plugin", "plugin": "composer"}}
