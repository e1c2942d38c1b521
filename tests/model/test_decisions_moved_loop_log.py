"""Decision outcomes of the loop's rules as a log shows them (model/loop_log/, moved into model/ by issue 44) no other
test took (issue 43 item 1): LOOP-3's blocked prompt, LOOP-4's prompt prefix, LOOP-5's steering, LOOP-11's one
message per step, LOOP-12's tool calls and deferred context, LOG-16's stepless turn and DIA-15's cancelled stream.

Each test builds the events whose decision is at stake and folds them as ``sessionspec check`` does
(``audit_loop``: every event live, with the model's definitions in the compiled twins' place: the
check runs the twins, tests/loop_definitions.py), or hands a definition the turn it judges, and asserts what the rule says.
"""

from __future__ import annotations

from typing import Any

from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop_log.dialect import new_track
from sessionspec.model.loop_log.track import StepTrack, TurnTrack
from sessionspec.model.loop_log.turn import cancelled_visible_stream, check_stepless_end
from tests.loop_definitions import audit_loop_by_definitions as audit_loop


def _log(*specs: tuple[Any, ...]) -> list[Event]:
    """Events numbered from 0: (type, data), (type, data, surfaceOp) or (type, data, surfaceOp, sourceEventSeqs)."""
    out: list[Event] = []
    for spec in specs:
        envelope: dict[str, Any] = {}
        if len(spec) > 2:
            envelope["surface_op"] = freeze(spec[2])
        if len(spec) > 3:
            envelope["source_event_seqs"] = freeze(spec[3])
        out.append(make_event(spec[0], seq=len(out), time=0, data=freeze(spec[1]), **envelope))
    return out


def _found(events: list[Event], dialect: Dialect = Dialect.A55) -> list[tuple[str, int | None]]:
    return [(f.rule, f.seq) for f in audit_loop(events, dialect)]


_TURN = ("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {}}})
_PROMPT = ("user/message", {"content": [], "source": {"kind": "user"}}, "append")
_HEADER = ("request/header", {"reason": "initial"})
_STEP = ("step/start", {"turn": 1, "step": 1})
_FINISH = ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}})


def _call_block(call_id: str) -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": "t", "arguments": "{}"}


def _message(*call_ids: str) -> tuple[Any, ...]:
    """The step's message as the loop appends it: citing the step's finish chunk (seq 4 in these logs)."""
    return ("assistant/message", {"turn": 1, "step": 1, "content": [_call_block(c) for c in call_ids]}, "append", [4])


def _tool_call(call_id: str) -> tuple[Any, ...]:
    return ("tool/call", {"turn": 1, "step": 1, "callId": call_id, "name": "t", "arguments": "{}"})


def _tool_result(call_id: str) -> tuple[Any, ...]:
    return ("tool/result", {"turn": 1, "step": 1, "callId": call_id, "content": []}, "append")


_OPENED = (_TURN, _PROMPT, _HEADER, _STEP, _FINISH)  # seqs 0..4


# ---------------------------------------------------------------- LOOP-11, LOOP-12: the step's message and its tools


def test_LOOP_12_a_tool_call_beyond_the_blocks_of_the_steps_latest_message() -> None:
    """LOOP-11: one message per step; LOOP-12: a tool call per tool-call block of "the content".  After a second
    message (refused) with no blocks, the step's calls already outnumber its blocks: a further call is refused."""
    events = _log(*_OPENED, _message("c1", "c2"), _tool_call("c1"), _tool_call("c2"), _message(), _tool_call("c3"))
    found = audit_loop(events, Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-11", 8), ("LOOP-12", 9)]
    assert found[1].reason == "tool/call beyond the 0 tool-call block(s) of the step's message"


def test_LOOP_11_a_session_API_step_may_hold_two_messages() -> None:
    """FMT-7 Writers: a step with messages but no chunk and no ``sourceEventSeqs`` is the session API's, which LOOP-11's
    one-message-per-step does not bind; the loop's step with the same two messages is refused."""
    api = ("assistant/message", {"turn": 1, "step": 1, "content": []}, "append")
    assert _found(_log(_TURN, _PROMPT, _HEADER, _STEP, api, api, ("step/end", {"turn": 1, "step": 1}))) == []
    assert _found(_log(*_OPENED, _message(), _message(), ("step/end", {"turn": 1, "step": 1}))) == [("LOOP-11", 6)]


def _usage_chunk(tokens: int) -> tuple[Any, ...]:
    return ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": {"inputTokens": tokens, "outputTokens": 1}}})


def _message_with(usage: Any, cites: list[int]) -> tuple[Any, ...]:
    data: dict[str, Any] = {"turn": 1, "step": 1, "content": []}
    if usage is not None:
        data["usage"] = {"inputTokens": usage, "outputTokens": 1}
    return ("assistant/message", data, "append", cites)


def test_LOOP_11_the_messages_usage_is_the_steps_last_usage_chunk_or_none_on_both_sides() -> None:
    """LOOP-11: the message carries "``usage`` the last usage chunk": with two usage chunks streamed, the last one's
    usage passes and the first one's, or none, is refused; with no usage chunk the message carries none."""
    streamed = (_TURN, _PROMPT, _HEADER, _STEP, _usage_chunk(1), _usage_chunk(2), _FINISH)  # seqs 0..6
    assert _found(_log(*streamed, _message_with(2, [4, 5, 6]))) == []
    assert _found(_log(*streamed, _message_with(1, [4, 5, 6]))) == [("LOOP-11", 7)]
    assert _found(_log(*streamed, _message_with(None, [4, 5, 6]))) == [("LOOP-11", 7)]
    assert _found(_log(*_OPENED, _message_with(None, [4]))) == []
    found = audit_loop(_log(*_OPENED, _message_with(1, [4])), Dialect.A55)
    assert [(f.rule, f.seq, f.reason) for f in found] == [("LOOP-11", 5, "usage differs from the step's last usage chunk")]


def test_LOOP_11_the_loops_message_cites_its_chunks_and_the_api_s_is_not_judged() -> None:
    """LOOP-11: the loop "always records its chunk seqs" (``sourceEventSeqs``); a step with no chunk and a message
    without them is the session API's (FMT-7 Writers), whose usage is its own."""
    uncited = ("assistant/message", {"turn": 1, "step": 1, "content": []}, "append")
    found = audit_loop(_log(*_OPENED, uncited), Dialect.A55)
    assert [(f.rule, f.seq, f.reason) for f in found] == [
        ("LOOP-11", 5, "assistant/message without sourceEventSeqs (the loop always records its chunk seqs)")]
    api = ("assistant/message", {"turn": 1, "step": 1, "content": [], "usage": {"inputTokens": 9, "outputTokens": 9}}, "append")
    assert _found(_log(_TURN, _PROMPT, _HEADER, _STEP, api, ("step/end", {"turn": 1, "step": 1}))) == []


def test_LOOP_12_context_deferred_after_the_results_is_named_by_its_first_message() -> None:
    """LOOP-12: "context that tools defer is appended after **all** results of the batch": a result after deferred
    context is refused, naming where the context began (its first message, not a later one)."""
    context = ("user/message", {"content": [], "source": {"kind": "user"}}, "append")
    events = _log(*_OPENED, _message("c1", "c2"), _tool_call("c1"), _tool_call("c2"), _tool_result("c1"), context, context,
                  _tool_result("c2"))
    found = audit_loop(events, Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-12", 11)]
    assert found[0].reason == "tool/result after deferred context (seq 9); context follows all results of the batch"


def test_LOOP_5_steering_after_every_result_is_in_its_place() -> None:
    """LOOP-5/LOOP-13: inside a step, steering follows the message "and all its results": with the results in (one
    more than the calls: the unknown one is LOG-13's), it is in place; before the last result it is not."""
    steering = ("steering/message", {"turn": 1, "content": []})
    done = _log(*_OPENED, _message("c1"), _tool_call("c1"), _tool_result("c1"), _tool_result("c9"), steering)
    assert _found(done) == []
    early = _log(*_OPENED, _message("c1"), _tool_call("c1"), steering)
    assert _found(early) == [("LOOP-5", 7)]


# ---------------------------------------------------------------- LOOP-3: a blocked prompt


def test_LOOP_3_a_checkpoint_is_not_a_prompt_of_the_blocked_turn() -> None:
    """LOOP-3: a blocked turn has no prompt; a compaction checkpoint's ``user/message`` is not the loop's (CMP-2), so
    it is no prompt of the turn; a user-sourced one is."""
    blocked = ("prompt/blocked", {"turn": 1, "reason": "r"})
    end = ("turn/end", {"turn": 1, "reason": {"kind": "rejected", "reason": "r"}})
    checkpoint = ("user/message", {"content": [], "source": {"kind": "plugin", "plugin": "compact"}}, "append")
    assert _found(_log(_TURN, blocked, checkpoint, end)) == []
    assert _found(_log(_TURN, blocked, _PROMPT, end)) == [("LOOP-3", 2)]


def test_LOOP_3_a_prompt_blocked_after_a_step_is_refused() -> None:
    """LOOP-3: the prologue has one outcome before any step ("block ... The turn has zero steps"): a
    ``prompt/blocked`` after a step of the turn (here an injection turn, which needs no prompt) is refused."""
    injected = ("turn/start", {"turn": 1, "trigger": {"kind": "injection", "source": {}}})
    events = _log(injected, _HEADER, _STEP, ("step/end", {"turn": 1, "step": 1}), ("prompt/blocked", {"turn": 1, "reason": "r"}))
    found = audit_loop(events, Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-3", 4)]
    assert found[0].reason.startswith("prompt/blocked after the turn's prompt was allowed")


# ---------------------------------------------------------------- LOOP-4: the prompt prefix


def _enveloped(content: Any, display: Any, contexts: Any) -> tuple[Any, ...]:
    data = {"content": content, "source": {"kind": "user"}, "envelope": {"displayContent": display, "prefixContexts": contexts}}
    return ("user/message", data, "append")


_TEXT = {"type": "text", "text": "p"}


def test_LOOP_4_a_content_shorter_than_the_display_and_delimiter_is_no_prefixed_prompt() -> None:
    """LOOP-4: the logged content is the contexts' blocks (at least one), the delimiter, then ``displayContent``: a
    content no longer than the display leaves no room for them."""
    found = audit_loop(_log(_TURN, _enveloped([_TEXT], [_TEXT, _TEXT], [{"source": "s"}])), Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-4", 1)]
    assert found[0].reason.startswith("user/message with prefix contexts is not context blocks")


def test_LOOP_4_an_envelope_whose_contexts_are_no_list_names_no_context() -> None:
    """The loop writes an envelope only with prompt-prefix contexts: contexts that are no list name none."""
    found = audit_loop(_log(_TURN, _enveloped([_TEXT, _TEXT, _TEXT], [_TEXT], "s")), Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-4", 1)]
    assert found[0].reason.startswith("user/message envelope names no prefix context")


def test_LOOP_4_a_display_that_is_no_list_is_left_to_LOG_12() -> None:
    """"A content or display that is no list is LOG-12's": LOOP-4 has nothing to compare."""
    assert _found(_log(_TURN, _enveloped([_TEXT, _TEXT, _TEXT], "p", [{"source": "s"}]))) == []


# ---------------------------------------------------------------- LOG-16, DIA-15: what a turn's end is judged on


def test_LOG_16_a_stepless_turn_with_its_prompt_is_no_out_of_band_append() -> None:
    """LOG-16's out-of-band append holds one log-only event; a loop turn that took its prompt runs a step (or ends
    rejected, aborted, in error), so a stepless turn with a prompt ending completed is refused, whatever it holds."""
    track = new_track(Dialect.A55)
    (end,) = _log(("turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    t = TurnTrack(number=1, trigger="message")
    t.inner = 1
    check_stepless_end(track, t, end, "completed")
    assert track.found == []
    t.prompt = True
    check_stepless_end(track, t, end, "completed")
    assert [(f.rule, f.seq) for f in track.found] == [("LOG-16", 0)]


def test_DIA_15_a_session_API_step_is_no_cancelled_stream() -> None:
    """DIA-15 binds the D08 loop's cancelled stream; a step the session API wrote (FMT-7 Writers) is not the loop's,
    so its visible attempt without a message leaves nothing for the turn's end to refuse."""
    track = new_track(Dialect.D08)
    (step_end,) = _log(("step/end", {"turn": 1, "step": 1}))
    t = TurnTrack(number=1, trigger="message")
    api = StepTrack(turn=1, step=1, api=True)
    api.attempt_visible = True
    cancelled_visible_stream(track, t, api, step_end)
    assert t.cancelled_visible is None
    loop = StepTrack(turn=1, step=1)
    loop.attempt_visible = True
    cancelled_visible_stream(track, t, loop, step_end)
    assert t.cancelled_visible == 0


# ---------------------------------------------------------------- outcomes the check's twins take in its place


def test_LOOP_12_a_session_API_step_is_not_held_to_its_message_s_tool_calls() -> None:
    """FMT-7 Writers: a step with no chunk and no ``sourceEventSeqs`` is the session API's; LOOP-12 binds the loop's
    tool calls and results to the step's message, not the API's: calls and results beyond its blocks pass, and the
    same events in the loop's step (its message citing the finish chunk) are refused."""
    api_message = ("assistant/message", {"turn": 1, "step": 1, "content": []}, "append")
    api = _log(_TURN, _PROMPT, _HEADER, _STEP, api_message, _tool_call("c1"), _tool_result("c1"),
               ("step/end", {"turn": 1, "step": 1}))
    assert _found(api) == []
    loop = _log(*_OPENED, _message(), _tool_call("c1"), _tool_result("c1"), ("step/end", {"turn": 1, "step": 1}))
    assert ("LOOP-12", 6) in _found(loop)


def test_LOOP_12_context_after_the_second_result_is_in_its_place() -> None:
    """LOOP-12: context the tools defer follows **all** results: after the results of both calls (the last one's
    block index 1), a context message is in place; a result after it (of a call the message does not name, which
    is LOG-13's, so model order has nothing to say) is refused, naming the context's seq."""
    context = ("user/message", {"content": [], "source": {"kind": "user"}}, "append")
    batch = (*_OPENED, _message("c1", "c2"), _tool_call("c1"), _tool_call("c2"), _tool_result("c1"), _tool_result("c2"), context)
    assert _found(_log(*batch)) == []
    found = audit_loop(_log(*batch, _tool_result("c9")), Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == [("LOOP-12", 11)] and "deferred context (seq 10)" in found[0].reason


def test_LOG_11_a_step_after_a_max_tokens_step_leaves_the_turn_ended_by_max_tokens() -> None:
    """LOG-11: a ``max-tokens`` finish ends the turn ``{kind:"max-tokens"}``; a turn whose first step finished so
    keeps it after a later step that did not, so a ``completed`` end is refused."""
    first = ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "max-tokens"}}})
    message = ("assistant/message", {"turn": 1, "step": 1, "content": []}, "append", [4])
    second = [("step/start", {"turn": 1, "step": 2}),
              ("assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}),
              ("assistant/message", {"turn": 1, "step": 2, "content": []}, "append", [8]),
              ("step/end", {"turn": 1, "step": 2})]
    steps = (_TURN, _PROMPT, _HEADER, _STEP, first, message, ("step/end", {"turn": 1, "step": 1}), *second)
    assert _found(_log(*steps, ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}))) == [("LOG-11", 11)]
    assert _found(_log(*steps, ("turn/end", {"turn": 1, "reason": {"kind": "max-tokens"}}))) == []
