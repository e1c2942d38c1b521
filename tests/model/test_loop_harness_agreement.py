"""Five loop behaviours where the running harness (a55f148516) showed the model
wrong (issue 16; quirks QF-3..QF-7 in spec/quirks_found.md).  Each expected log
is read off the corrected rule text (LOOP-3, LOOP-11, LOOP-13, LOOP-14,
LOOP-15, PFX-4, PFX-13), and each test also runs the planted variant with the
OLD behaviour and shows that the assertion tells them apart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    LOSSY_HEADER_MESSAGE,
    AgentConfig,
    ErrorAction,
    ErrorDecision,
    Hooks,
    Interrupt,
    InterruptKind,
    Prompt,
    Reply,
    ReplyKind,
    RequestErrorContext,
    Steering,
    ToolCallSpec,
    TurnOutcome,
    TurnScript,
    Window,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.rejected import Rejected
from sessionspec.planted.loop import Planted, planted
from sessionspec.simulate import PERSONA

PFX = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<pfx>"),))
AGENT = AgentConfig(system=PERSONA, contributors=(PFX,))
USER = freeze({"kind": "user"})
ECHO_CALL = ToolCallSpec(call_id="c1", name="echo", arguments='{"text":"x"}', result="echo:x")


def _run(script: TurnScript, agent: AgentConfig = AGENT, log: tuple[Event, ...] = (),
         fault: Planted | None = None) -> TurnOutcome:
    with planted(fault):
        out = run_turn(log, new_instance(), agent, script)
    assert not isinstance(out, Rejected), out
    return out


def _types(events: tuple[Event, ...]) -> list[str]:
    return [e.type for e in events]


def _reasons(events: tuple[Event, ...]) -> list[str]:
    reasons = [get(e.data, "reason") for e in events if e.type == "turn/end"]
    return [js_stringify(r) for r in reasons if isinstance(r, JsonObject)]


# --------------------------------------------------------------------------- 1. LOOP-11 / LOOP-15


def test_LOOP_11_cancel_after_step_result_records_an_empty_assistant_message() -> None:
    """LOOP-11 + LOOP-15 (QF-3): the checkpoint after ``agent/step-result`` is
    inside the try whose catch records the assistant message, so a cancel there
    appends ``assistant/message {content: [], usage}`` citing every chunk, then
    ``step/end`` and ``turn/end {aborted}``; no tool runs."""
    reply = Reply(kind=ReplyKind.TOOL_CALLS, text="ok", tool_calls=(ECHO_CALL,), usage=(7, 3))
    script = TurnScript(prompt=Prompt(content=text_content("hi")), replies=(reply, Reply(text="never")),
                        interrupt=Interrupt(window=Window.AFTER_STEP_RESULT))
    out = _run(script)
    chunks = [e.seq for e in out.log if e.type == "assistant/chunk"]
    assert _types(out.log) == ["turn/start", "user/message", "step/start", "request/header",
                               *["assistant/chunk"] * len(chunks), "assistant/message", "step/end", "turn/end"]
    message = out.log[-3]
    assert get(message.data, "content") == ()
    assert get(message.data, "usage") == freeze({"inputTokens": 7, "outputTokens": 3})
    assert get(message.data, "provenance") == freeze({"provider": "mock", "model": "mock-1"})
    assert message.source_event_seqs == tuple(chunks) and message.surface_op == "append"
    assert _reasons(out.log) == ['{"kind":"aborted"}']
    # The old model wrote no message at all.
    old = _run(script, fault=Planted.STEP_RESULT_CANCEL_DROPS_MESSAGE)
    assert "assistant/message" not in _types(old.log)


def test_LOOP_11_dispose_after_step_result_records_it_too_and_ends_disposed() -> None:
    script = TurnScript(prompt=Prompt(content=text_content("hi")), replies=(Reply(text="ok"),),
                        interrupt=Interrupt(window=Window.AFTER_STEP_RESULT, kind=InterruptKind.DISPOSE))
    out = _run(script)
    assert _types(out.log)[-3:] == ["assistant/message", "step/end", "turn/end"]
    assert get(out.log[-3].data, "content") == ()
    assert _reasons(out.log) == ['{"kind":"disposed"}'] and out.instance.disposed


# --------------------------------------------------------------------------- 2. LOOP-3 / LOOP-13


def _steered(prompt: Prompt) -> TurnScript:
    return TurnScript(prompt=prompt, steering=(Steering(content=text_content("steer me")),),
                      replies=(Reply(text="answer"),))


def test_LOOP_3_steering_of_a_blocked_turn_runs_as_the_next_message_turn() -> None:
    """LOOP-3 (QF-4): the blocked turn has zero steps, so its queued steering is
    never drained; it goes back on the queue and is claimed as the next
    message-triggered turn: ``turn/start {turn: 2, trigger:{kind:"message",
    source}}``, its content as the ``user/message``, then a normal step."""
    out = _run(_steered(Prompt(content=text_content("hi"), block_reason="policy")))
    types = _types(out.log)
    assert types[:3] == ["turn/start", "prompt/blocked", "turn/end"]
    assert types[3:7] == ["turn/start", "user/message", "step/start", "request/header"]
    assert types[-3:] == ["assistant/message", "step/end", "turn/end"]
    assert "steering/message" not in types
    second = out.log[3]
    assert get(second.data, "turn") == 2
    assert get(second.data, "trigger") == freeze({"kind": "message", "source": {"kind": "user"}})
    assert get(out.log[4].data, "content") == text_content("steer me")
    assert _reasons(out.log) == ['{"kind":"rejected","reason":"policy"}', '{"kind":"completed"}']
    # One request: the prefix, then the steering as the user's message.
    assert len(out.requests) == 1 and out.turn == 2
    assert [js_stringify(m) for m in out.requests[0].request.messages] == [
        js_stringify(prefix_message("<pfx>")), js_stringify(JsonObject((("role", "user"),
                                                                         ("content", text_content("steer me")))))]
    # The old model dropped the steering: one turn, no request.
    old = _run(_steered(Prompt(content=text_content("hi"), block_reason="policy")),
               fault=Planted.DROP_REQUEUED_STEERING)
    assert _types(old.log) == ["turn/start", "prompt/blocked", "turn/end"] and old.requests == ()


def test_LOOP_3_steering_of_a_turn_whose_prompt_submit_throws_runs_next() -> None:
    """LOOP-3 + LOOP-16 (QF-4): prompt-submit throws (``{kind:"error", step: 0}``,
    Q-4); the queued steering then runs as turn 2."""
    out = _run(_steered(Prompt(content=text_content("hi"), submit_error="submit threw")))
    types = _types(out.log)
    assert types[:2] == ["turn/start", "turn/end"] and types[2:4] == ["turn/start", "user/message"]
    assert _reasons(out.log) == ['{"kind":"error","step":0,"message":"submit threw"}', '{"kind":"completed"}']
    assert get(out.log[3].data, "content") == text_content("steer me")


# --------------------------------------------------------------------------- 3. LOOP-13 / LOOP-15


def test_LOOP_13_turn_stop_checkpoint_runs_after_a_continuing_step() -> None:
    """LOOP-13 (5)-(6) + LOOP-15 (QF-5): ``agent/turn-stop`` and its checkpoint run
    after every step, so a cancel there after a tool step ends the turn
    ``aborted`` after that step's ``step/end``; step 2 never starts."""
    script = TurnScript(prompt=Prompt(content=text_content("hi")),
                        replies=(Reply(kind=ReplyKind.TOOL_CALLS, text="", tool_calls=(ECHO_CALL,)), Reply(text="two")),
                        interrupt=Interrupt(window=Window.AFTER_TURN_STOP, step=1))
    out = _run(script)
    types = _types(out.log)
    assert types.count("step/start") == 1 and types[-4:] == ["tool/call", "tool/result", "step/end", "turn/end"]
    assert _reasons(out.log) == ['{"kind":"aborted"}'] and len(out.requests) == 1
    old = _run(script, fault=Planted.TURN_STOP_ONLY_WHEN_STOPPING)
    assert _types(old.log).count("step/start") == 2 and _reasons(old.log) == ['{"kind":"completed"}']


# --------------------------------------------------------------------------- 4. PFX-4 / PFX-13


def test_PFX_13_lossy_contributor_of_another_agent_is_never_called() -> None:
    """PFX-4 + PFX-13 / Q-3 (QF-6): a lossy listener scoped to another agent is
    not dispatched, so its value never reaches the cache and the header append
    succeeds; the same listener scoped to this agent makes it fail."""
    theirs = Contributor(idiom=Idiom.APPEND, content=(prefix_message("<theirs>"),), lossy=True, scope="other")
    agent = replace(AGENT, contributors=(PFX, theirs), agent_id="me")
    script = TurnScript(prompt=Prompt(content=text_content("hi")), replies=(Reply(text="a"),))
    out = _run(script, agent)
    assert "request/header" in _types(out.log) and _reasons(out.log) == ['{"kind":"completed"}']
    assert not out.instance.prefix_lossy
    mine = _run(script, replace(agent, contributors=(PFX, replace(theirs, scope="me"))))
    assert "request/header" not in _types(mine.log)
    assert get(mine.end_reason, "message") == LOSSY_HEADER_MESSAGE
    old = _run(script, agent, fault=Planted.LOSSY_OVER_ALL_CONTRIBUTORS)
    assert get(old.end_reason, "message") == LOSSY_HEADER_MESSAGE


# --------------------------------------------------------------------------- 5. LOOP-14 / LOOP-15 / Q-30


def _thrown(retry: bool, kind: InterruptKind = InterruptKind.FOREIGN) -> TurnScript:
    error = Reply(kind=ReplyKind.ERROR_THROWN, error_code="SERVER", error_message="boom", retry=retry)
    return TurnScript(prompt=Prompt(content=text_content("hi")), replies=(error, Reply(text="never")),
                      interrupt=Interrupt(window=Window.AFTER_STREAM, kind=kind))


def test_LOOP_14_foreign_abort_with_a_thrown_request_error_ends_with_the_failure() -> None:
    """LOOP-10 + LOOP-14 (QF-7, settles Q-30): a thrown stream has no after-stream
    checkpoint; the request-error path ignores a foreign abort reason, so the
    default decision fails the turn with the provider failure."""
    out = _run(_thrown(retry=False))
    assert _types(out.log) == ["turn/start", "user/message", "step/start", "request/header", "step/end", "turn/end"]
    assert _reasons(out.log) == ['{"kind":"error","step":1,"failure":{"message":"boom","code":"SERVER"}}']
    old = _run(_thrown(retry=False), fault=Planted.THROWN_STREAM_CHECKPOINT)
    assert _reasons(old.log) == ['{"kind":"error","step":1,"message":"turn interrupted"}']


@pytest.mark.parametrize("interrupted", [True, False])
def test_LOOP_14_the_request_error_listeners_see_a_foreign_abort(interrupted: bool) -> None:
    """LOOP-14 (3): "The listeners see whether the signal is aborted."  A foreign abort does not end the turn on
    this path (QF-7), so the ``agent/request-error`` waterfall runs with ``aborted`` true; without the abort, false."""
    seen: list[bool] = []

    def on_error(events: object, ctx: RequestErrorContext) -> ErrorDecision:
        seen.append(ctx.aborted)
        return ErrorDecision(action=ErrorAction.FAIL)

    script = _thrown(retry=False)
    if not interrupted:
        script = replace(script, interrupt=None)
    out = run_turn((), new_instance(), AGENT, script, hooks=Hooks(request_error=on_error))
    assert not isinstance(out, Rejected)
    assert seen == [interrupted]


def test_LOOP_14_foreign_abort_with_retry_ends_turn_interrupted_at_step_2() -> None:
    """With retry, step 2 begins (LOOP-5 (1)); its first checkpoint (after
    assembly) observes the foreign abort: ``{kind:"error", step: 2, message:
    "turn interrupted"}`` and no second ``step/start``."""
    out = _run(_thrown(retry=True))
    assert _types(out.log) == ["turn/start", "user/message", "step/start", "request/header", "step/end", "turn/end"]
    assert _reasons(out.log) == ['{"kind":"error","step":2,"message":"turn interrupted"}']


def test_LOOP_14_a_cancel_with_a_thrown_request_error_still_ends_aborted() -> None:
    """LOOP-14 (2): an agent interrupt ends the turn on the request-error path
    right after ``step/end``, before any listener decides (the log is the one a
    checkpoint would have written)."""
    out = _run(_thrown(retry=True, kind=InterruptKind.CANCEL))
    assert _types(out.log)[-2:] == ["step/end", "turn/end"] and _reasons(out.log) == ['{"kind":"aborted"}']


# --------------------------------------------------------------------------- issue 24: the second run against the harness


def _requeued(interrupt: Interrupt | None = None) -> TurnScript:
    """A blocked prompt with three steering items queued: they run as turns 2, 3 and 4 (QF-4)."""
    items = tuple(Steering(content=text_content(f"steer {i}")) for i in (1, 2, 3))
    return TurnScript(prompt=Prompt(content=text_content("hi"), block_reason="policy"), steering=items,
                      replies=(Reply(text="first"), Reply(text="second"), Reply(text="third")), interrupt=interrupt)


def _answers(events: tuple[Event, ...]) -> list[str]:
    """The text of every assistant message, in log order."""
    texts: list[str] = []
    for e in events:
        if e.type == "assistant/message":
            for block in get(e.data, "content"):  # type: ignore[union-attr]
                assert isinstance(block, JsonObject)
                texts.append(str(get(block, "text")))
    return texts


@pytest.mark.parametrize("kind", list(InterruptKind), ids=lambda k: k.name.lower())
def test_LOOP_3_an_interruption_in_a_requeued_turn_discards_the_items_still_queued(kind: InterruptKind) -> None:
    """QF-9: the interruption fires in turn 2 (the first re-queued item) at the
    after-assembly checkpoint of its step 1.  ``cancel()`` -- a user cancel or a
    foreign abort reason -- clears the inbox, and a disposed agent runs no further
    turn, so items 2 and 3 never run; the turn ends as LOOP-15 says for the kind."""
    out = _run(_requeued(Interrupt(window=Window.AFTER_ASSEMBLY, kind=kind)))
    assert _types(out.log).count("turn/start") == 2 and out.requests == ()
    ended = {InterruptKind.CANCEL: '{"kind":"aborted"}', InterruptKind.DISPOSE: '{"kind":"disposed"}',
             InterruptKind.FOREIGN: '{"kind":"error","step":1,"message":"turn interrupted"}'}[kind]
    assert _reasons(out.log) == ['{"kind":"rejected","reason":"policy"}', ended]
    assert out.instance.disposed is (kind is InterruptKind.DISPOSE)
    # The old model ran every item, the interruption re-armed in each.
    old = _run(_requeued(Interrupt(window=Window.AFTER_ASSEMBLY, kind=kind)),
               fault=Planted.REQUEUED_TURNS_OUTLIVE_INTERRUPT)
    assert _reasons(old.log)[1:] == [ended] * 3


def test_LOOP_3_an_interruption_not_yet_fired_carries_into_the_requeued_turn() -> None:
    """The blocked turn has no step, so a step-1 window is first passed in turn 2;
    the items after it are then discarded (QF-9) while turn 2's own chunks and
    step are closed as LOOP-15/LOOP-17 say."""
    out = _run(_requeued(Interrupt(window=Window.AFTER_STREAM)))
    assert _types(out.log).count("turn/start") == 2 and len(out.requests) == 1
    assert _reasons(out.log)[1:] == ['{"kind":"aborted"}'] and _types(out.log)[-2:] == ["step/end", "turn/end"]


def test_LOOP_3_requeued_turns_of_one_send_take_the_next_replies() -> None:
    """docs/conformance.md 3.2: replies answer the send's requests in order, so
    turns 2, 3 and 4 are answered "first", "second", "third" (an ``agent/request``
    listener takes the next reply for each request)."""
    out = _run(_requeued())
    assert _answers(out.log) == ["first", "second", "third"] and len(out.requests) == 3
    old = _run(_requeued(), fault=Planted.REPLIES_RESTART_PER_REQUEUED_TURN)
    assert _answers(old.log) == ["first", "first", "first"]


@pytest.mark.parametrize("kind", list(InterruptKind), ids=lambda k: k.name.lower())
def test_PFX_12_a_throwing_contributor_ends_the_waterfall_before_the_in_composition_window(kind: InterruptKind) -> None:
    """PFX-12 + PFX-5 (docs/conformance.md, the in-composition window): the window
    is the waterfall's innermost point; a throwing contributor ends the chain
    before it, so the interruption never fires there.  The turn ends in error, the
    instance is not disposed and a later send runs (not LOOP-1)."""
    thrower = Contributor(idiom=Idiom.PREPEND, content=(prefix_message("<t>"),), throws="contributor threw")
    agent = replace(AGENT, contributors=(PFX, thrower))
    script = TurnScript(prompt=Prompt(content=text_content("hi")), replies=(Reply(text="a"),),
                        interrupt=Interrupt(window=Window.IN_COMPOSITION, kind=kind))
    out = _run(script, agent)
    assert _reasons(out.log) == ['{"kind":"error","step":1,"message":"contributor threw"}']
    assert not out.instance.disposed and out.compositions == 0 and not out.interrupted_composition
    again = run_turn(out.log, out.instance, replace(agent, contributors=(PFX,)),
                     TurnScript(prompt=Prompt(content=text_content("again")), replies=(Reply(text="b"),)))
    assert not isinstance(again, Rejected) and _reasons(again.log)[-1] == '{"kind":"completed"}'
    old = _run(script, agent, fault=Planted.THROW_PASSES_COMPOSITION_WINDOW)
    assert old.instance.disposed is (kind is InterruptKind.DISPOSE)


def test_PFX_13_a_lossy_contributor_that_returns_no_message_cannot_fail_the_header() -> None:
    """PFX-13 (QF-10): the header carries only the prefix's messages, and none when
    the prefix is empty (loop.ts ``runStep``: ``messagePrefix`` only when the
    prefix is non-empty), so a lossy contributor that returns no message puts no
    non-JSON value into the header: the append succeeds, alone or beside another
    contributor."""
    empty_lossy = Contributor(idiom=Idiom.APPEND, content=(), lossy=True)
    script = TurnScript(prompt=Prompt(content=text_content("hi")), replies=(Reply(text="a"),))
    alone = _run(script, replace(AGENT, contributors=(empty_lossy,)))
    header = next(e for e in alone.log if e.type == "request/header")
    assert get(get(header.data, "header"), "messagePrefix") is ABSENT
    assert _reasons(alone.log) == ['{"kind":"completed"}'] and not alone.instance.prefix_lossy
    beside = _run(script, replace(AGENT, contributors=(PFX, empty_lossy)))
    header = next(e for e in beside.log if e.type == "request/header")
    assert get(get(header.data, "header"), "messagePrefix") == (prefix_message("<pfx>"),)
    assert _reasons(beside.log) == ['{"kind":"completed"}']
    old = _run(script, replace(AGENT, contributors=(PFX, empty_lossy)), fault=Planted.LOSSY_WITHOUT_MESSAGES)
    assert get(old.end_reason, "message") == LOSSY_HEADER_MESSAGE
