"""The loop's rules as the model decides them in a log (model/loop_log), against the loop that writes the log.

Both ways, over logs the loop simulator writes (``sessionspec.simulate``: tools, request errors and retries,
interruptions, max-tokens finishes, steering, compaction, resumed instances) and turns the loop plays on purpose
(``run_turn``: blocked prompts, prompt-prefix contexts, failures at each stage): every event is accepted, and each
change the rules forbid is refused by its rule.  The fold is the checker's (``audit_loop``: a LoopTrack over the
log, every step the loop's); D08, which the loop model does not write (DIA-12's OutOfScope), is judged on small logs
built here in the D08 loop's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.loop_audit import audit_loop
from sessionspec.model.jsonval import ABSENT, JsonObject, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.loop import (
    AgentConfig,
    Placement,
    Prompt,
    PromptContext,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    new_instance,
    run_turn,
    text_content,
)
from sessionspec.model.rejected import Rejected
from sessionspec.model.session import out_of_band_events
from sessionspec.simulate import ECHO_TOOL, PERSONA, simulate

AGENT = AgentConfig(system=PERSONA, tools=(ECHO_TOOL,))
CALLS = (ToolCallSpec(call_id="c1", name="echo", arguments='{"text":"a"}', result="a"),
         ToolCallSpec(call_id="c2", name="echo", arguments='{"text":"b"}', result="b"))


def judged(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> list[Rejected]:
    """The model's loop definitions folded over ``events``, every event live, as ``check`` folds them."""
    return audit_loop(events, dialect)


def rules(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> set[str]:
    return {finding.rule for finding in judged(events, dialect)}


def played(*scripts: TurnScript, agent: AgentConfig = AGENT) -> list[Event]:
    """The log of these turns, one instance."""
    log: tuple[Event, ...] = ()
    instance = new_instance()
    for script in scripts:
        outcome = run_turn(log, instance, agent, script)
        assert not isinstance(outcome, Rejected), outcome
        log, instance = outcome.log, outcome.instance
    return list(log)


def turn(text: str = "hi", *replies: Reply, **kw: object) -> TurnScript:
    return TurnScript(prompt=Prompt(content=text_content(text), **kw), replies=replies)  # type: ignore[arg-type]


def at(log: Sequence[Event], type_name: str, nth: int = 0, **data: object) -> int:
    found = [i for i, e in enumerate(log) if e.type == type_name and all(get(e.data, k) == v for k, v in data.items())]
    return found[nth]


def edited(log: Sequence[Event], index: int, edit: Callable[[dict[str, object]], None], **meta: object) -> list[Event]:
    data = thaw(log[index].data)
    assert isinstance(data, dict)
    edit(data)
    changed = list(log)
    changed[index] = replace(log[index], data=freeze(data), **meta)  # type: ignore[arg-type]
    return changed


def setting(key: str, value: object) -> Callable[[dict[str, object]], None]:
    def edit(data: dict[str, object]) -> None:
        data[key] = value
    return edit


def without(log: Sequence[Event], *indices: int) -> list[Event]:
    return [e for i, e in enumerate(log) if i not in indices]


def inserted(log: Sequence[Event], index: int, event: Event) -> list[Event]:
    return [*log[:index], event, *log[index:]]


# ------------------------------------------------------------------------------------------ what the loop writes


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_what_the_simulator_writes_is_accepted(seed: int, compaction: bool) -> None:
    log = simulate(seed, 12, compaction=compaction, context_window=3000)
    assert judged(log) == []


def test_what_the_loop_plays_on_purpose_is_accepted() -> None:
    prefixed = (PromptContext(content=text_content("ctx"), source=JsonObject((("kind", "plugin"),)), placement=Placement.PROMPT_PREFIX),
                PromptContext(content=text_content("sep"), source=JsonObject((("kind", "plugin"),))))
    log = played(
        turn("blocked", block_reason="no"),
        turn("prefixed", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS), Reply(text="done"), contexts=prefixed),
        turn("cut", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS, max_tokens=True)),
        turn("fails", Reply(kind=ReplyKind.ERROR_IN_BAND)),
        turn("retried", Reply(kind=ReplyKind.ERROR_THROWN, retry=True), Reply(text="ok")),
        turn("submit", submit_error="boom"),
        TurnScript(prompt=Prompt(content=text_content("pre")), pre_step_error="pre-step failed"),
        TurnScript(prompt=Prompt(content=text_content("steer")), steering=(Steering(content=text_content("s")),),
                   replies=(Reply(text="a", continue_with="more"), Reply(text="b"))),
        turn("empty", Reply(kind=ReplyKind.EMPTY)),
    )
    kinds = [get(get(e.data, "reason"), "kind") for e in log if e.type == "turn/end"]
    assert kinds == ["rejected", "completed", "max-tokens", "error", "completed", "error", "error", "completed", "completed"]
    assert judged(log) == []
    # LOG-16: an out-of-band append between turns: turn/start, one log-only event, turn/end completed.
    appended = out_of_band_events(log, "plugin/note", JsonObject((("n", 1),)), JsonObject((("kind", "plugin"),)))
    assert not isinstance(appended, Rejected)
    assert judged([*log, *appended]) == []


# ------------------------------------------------------------------------------------------ LOOP-3, P-LOOP-5


def test_a_blocked_prompt_has_one_outcome_and_zero_steps() -> None:
    log = played(turn("a"), turn("blocked", block_reason="no"), turn("b"))
    blocked, end = at(log, "prompt/blocked"), at(log, "turn/end", 1)
    assert rules(inserted(log, blocked + 1, log[blocked])) == {"LOOP-3"}  # a second prompt/blocked
    assert rules(edited(log, end, setting("reason", {"kind": "completed"}))) == {"LOOP-3"}
    assert rules(edited(log, end, setting("reason", {"kind": "rejected", "reason": "other"}))) == {"LOOP-3"}
    first_end = at(log, "turn/end", 0)
    assert rules(edited(log, first_end, setting("reason", {"kind": "rejected", "reason": "no"}))) == {"LOOP-3"}
    prompt = at(log, "user/message", 0)
    assert rules(inserted(log, blocked, log[prompt])) == {"LOOP-3"}  # a prompt before prompt/blocked
    assert rules(inserted(log, blocked + 1, log[prompt])) == {"LOOP-3"}  # a prompt in the blocked turn
    step_start = at(log, "step/start", 0)
    assert "LOOP-3" in rules(inserted(log, blocked + 1, log[step_start]))  # a step in the blocked turn


def test_a_step_of_a_message_turn_follows_its_prompt() -> None:
    log = played(turn("a"))
    assert rules(without(log, at(log, "user/message"))) == {"LOOP-3"}


# ------------------------------------------------------------------------------------------ LOOP-4


def test_a_prompt_with_prefix_contexts_is_their_blocks_the_delimiter_then_the_prompt() -> None:
    ctx = PromptContext(content=text_content("ctx"), source=JsonObject((("kind", "plugin"),)), placement=Placement.PROMPT_PREFIX)
    log = played(turn("hello", contexts=(ctx,)))
    prompt = at(log, "user/message")
    content = thaw(get(log[prompt].data, "content"))
    assert isinstance(content, list) and len(content) == 3
    assert rules(edited(log, prompt, setting("content", content[1:]))) == {"LOOP-4"}  # no context block (the boundary: none)
    assert rules(edited(log, prompt, setting("content", [content[0], {"type": "text", "text": "\n## Mine:\n"}, content[2]]))) == {"LOOP-4"}
    assert rules(edited(log, prompt, setting("content", [content[0], content[0], content[1], content[2]]))) == set()  # two blocks
    assert rules(edited(log, prompt, setting("content", [*content[:2], {"type": "text", "text": "changed"}]))) == {"LOOP-4"}

    def no_contexts(data: dict[str, object]) -> None:
        envelope = data["envelope"]
        assert isinstance(envelope, dict)
        envelope["prefixContexts"] = []
    assert rules(edited(log, prompt, no_contexts)) == {"LOOP-4"}


# ------------------------------------------------------------------------------------------ LOOP-5, LOOP-13


def test_steering_lies_between_steps_and_names_its_turn() -> None:
    log = played(TurnScript(prompt=Prompt(content=text_content("go")), replies=(Reply(text="a", continue_with="more"), Reply(text="b"))))
    steering = at(log, "steering/message")
    assert rules(edited(log, steering, setting("turn", 2))) == {"LOOP-13"}
    message = at(log, "assistant/message")
    assert rules(inserted(log, message, log[steering])) == {"LOOP-5"}  # inside the step, before its message
    tools = played(turn("t", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS), Reply(text="done")))
    result = at(tools, "tool/result", 1)
    steer = make_event("steering/message", seq=0, time=0, data=freeze({"turn": 1, "content": [{"type": "text", "text": "s"}], "source": {"kind": "user"}}),
                       surface_op="append")
    assert rules(inserted(tools, result, steer)) == {"LOOP-5"}  # before the step's last result
    assert rules(inserted(tools, result + 1, steer)) == set()  # after all results


# ------------------------------------------------------------------------------------------ LOOP-9, P-LOOP-1


def test_every_request_of_an_instance_follows_its_anchor() -> None:
    log = played(turn("a"), turn("b"))
    header = at(log, "request/header")
    assert rules(without(log, header)) == {"LOOP-9"}
    second_chunk_step = at(log, "assistant/chunk", -1)
    assert rules(inserted(log, second_chunk_step + 1, log[header])) == {"LOOP-9"}  # an anchor after this turn's request
    # a crash repair's interrupted end: a new instance, which anchors before its request
    end = at(log, "turn/end", 0)
    assert rules(edited(log, end, setting("reason", {"kind": "interrupted"}))) == {"LOOP-9"}


# ------------------------------------------------------------------------------------------ LOOP-10, LOOP-11


def test_a_request_error_records_no_message_and_a_success_records_one() -> None:
    failed = played(turn("f", Reply(kind=ReplyKind.ERROR_IN_BAND)))
    ok = played(turn("a", Reply(text="hey")))
    message = ok[at(ok, "assistant/message")]
    step_end = at(failed, "step/end")
    assert rules(inserted(failed, step_end, replace(message, data=freeze({**thaw(message.data), "usage": None})))) >= {"LOOP-10"}  # type: ignore[dict-item]
    index = at(ok, "assistant/message")
    assert rules(inserted(ok, index + 1, ok[index])) == {"LOOP-11"}  # a second message in the step
    assert rules([*ok[:index], replace(ok[index], source_event_seqs=ABSENT), *ok[index + 1:]]) == {"LOOP-11"}
    assert rules(edited(ok, index, setting("provenance", {"provider": "other", "model": "m"}))) == {"LOOP-11"}
    assert rules(edited(ok, index, setting("usage", {"inputTokens": 1, "outputTokens": 1}))) == {"LOOP-11"}
    assert rules(edited(ok, index, setting("usage", None))) == {"LOOP-11"}
    end = at(ok, "turn/end")
    assert rules(without(ok, index)) == {"LOOP-11", "LOOP-14"}  # the successful stream's message is missing
    assert rules(without(ok, index)[:end - 1] + [edited(ok, end, setting("reason", {"kind": "aborted"}))[end]]) == set()


def test_a_max_tokens_finish_drops_the_tool_calls_and_takes_precedence() -> None:
    cut = played(turn("c", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS, max_tokens=True)))
    end, message = at(cut, "turn/end"), at(cut, "assistant/message")
    assert rules(edited(cut, end, setting("reason", {"kind": "completed"}))) == {"LOG-11"}
    tools = played(turn("t", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS), Reply(text="done")))
    with_blocks = get(tools[at(tools, "assistant/message")].data, "content")
    assert rules(edited(cut, message, setting("content", thaw(with_blocks)))) == {"LOOP-11"}
    call = tools[at(tools, "tool/call")]
    assert rules(inserted(cut, message + 1, call)) == {"LOOP-11"}  # a tool run after the cut
    plain = played(turn("p"))
    assert rules(edited(plain, at(plain, "turn/end"), setting("reason", {"kind": "max-tokens"}))) == {"LOG-11"}


# ------------------------------------------------------------------------------------------ LOOP-12


def test_tool_calls_follow_their_blocks_and_results_keep_model_order() -> None:
    log = played(turn("t", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS), Reply(text="done")))
    call = at(log, "tool/call")
    assert rules(edited(log, call, setting("name", "other"))) == {"LOOP-12"}
    assert rules(edited(log, call, setting("callId", "zz"))) >= {"LOOP-12"}
    message = at(log, "assistant/message")
    assert rules(inserted(log, message, log[call])) >= {"LOOP-12"}  # a call before its message
    second_call = at(log, "tool/call", 1)
    assert rules(inserted(log, second_call + 2, log[call])) >= {"LOOP-12"}  # a third call for two blocks
    first, second = at(log, "tool/result", 0), at(log, "tool/result", 1)
    swapped = list(log)
    swapped[first], swapped[second] = log[second], log[first]
    assert rules(swapped) == {"LOOP-12"}
    context = make_event("user/message", seq=0, time=0, data=freeze({"content": [{"type": "text", "text": "late"}], "source": {"kind": "plugin"}}),
                         surface_op="append")
    assert rules(inserted(log, second, context)) == {"LOOP-12"}  # deferred context before the last result
    assert rules(inserted(log, second + 1, context)) == set()


# ------------------------------------------------------------------------------------------ LOOP-14, LOOP-16


def test_a_failed_step_ends_its_turn_in_error_or_is_retried() -> None:
    log = played(turn("f", Reply(kind=ReplyKind.ERROR_IN_BAND)))
    end = at(log, "turn/end")
    assert rules(edited(log, end, setting("reason", {"kind": "completed"}))) == {"LOOP-14", "LOG-16"} - {"LOG-16"} | {"LOOP-14"}
    for kind in ("aborted", "disposed", "interrupted"):
        assert "LOOP-14" not in rules(edited(log, end, setting("reason", {"kind": kind})))


@pytest.mark.parametrize(("script", "named", "allowed", "refused"), [
    (turn("f", Reply(kind=ReplyKind.ERROR_IN_BAND)), 1, (1, 2), (0, 3)),
    (turn("s", submit_error="boom"), 0, (0, 1), (2,)),
    (TurnScript(prompt=Prompt(content=text_content("p")), pre_step_error="x"), 1, (0, 1), (2,)),
])
def test_an_error_end_names_the_step_counter(script: TurnScript, named: int, allowed: tuple[int, ...], refused: tuple[int, ...]) -> None:
    log = played(script)
    end = at(log, "turn/end")
    assert get(get(log[end].data, "reason"), "step") == named
    for step in allowed:
        assert "LOOP-16" not in rules(edited(log, end, lambda data, s=step: data["reason"].__setitem__("step", s)))  # type: ignore[attr-defined,misc]
    for step in refused:
        assert "LOOP-16" in rules(edited(log, end, lambda data, s=step: data["reason"].__setitem__("step", s)))  # type: ignore[attr-defined,misc]


# ------------------------------------------------------------------------------------------ LOG-16


def test_a_stepless_turn_ends_completed_only_around_one_log_only_event() -> None:
    log = played(turn("a"))
    appended = out_of_band_events(log, "plugin/note", JsonObject((("n", 1),)), JsonObject((("kind", "plugin"),)))
    assert not isinstance(appended, Rejected)
    start, note, end = appended
    assert rules([*log, start, end]) == {"LOG-16"}  # no event
    assert rules([*log, start, note, note, end]) == {"LOG-16"}  # two
    surface = replace(note, surface_op="append")
    assert rules([*log, start, surface, end]) >= {"LOG-16"}


# ------------------------------------------------------------------------------------------ D08: DIA-12, DIA-15


def _d08(*events: tuple[str, dict[str, object]] | tuple[str, dict[str, object], str]) -> list[Event]:
    """The events at seqs 0, 1, ...; a message cites the step's chunks so far (LOOP-11)."""
    log: list[Event] = []
    for i, e in enumerate(events):
        chunks = tuple(c.seq for c in log[max((j for j, x in enumerate(log) if x.type == "step/start"), default=0):]
                       if c.type == "assistant/chunk")
        log.append(make_event(e[0], seq=i, time=i, data=freeze(e[1]), surface_op=e[2] if len(e) > 2 else ABSENT,  # type: ignore[misc]
                              source_event_seqs=chunks if e[0] == "assistant/message" else ABSENT))
    return log


USER = ("user/message", {"content": [{"type": "text", "text": "q"}], "source": {"kind": "user"}, "role": "user", "id": "u1"}, "append")
HEADER = ("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
CONTEXT = ("request/context", {"provider": "p", "model": "m"})


def _chunk(kind: str, **fields: object) -> tuple[str, dict[str, object]]:
    return ("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": kind, **fields}})


def _message(interrupted: bool = False, blocks: tuple[object, ...] = ({"type": "text", "text": "a"},)) -> tuple[str, dict[str, object], str]:
    data: dict[str, object] = {"turn": 1, "step": 1, "message": {"id": "m1", "role": "assistant", "content": list(blocks),
                                                                  "source": {"kind": "model", "provider": "p", "model": "m"}}}
    if interrupted:
        data["interrupted"] = True
    return ("assistant/message", data, "append")


def _d08_turn(*inside: tuple[str, dict[str, object]] | tuple[str, dict[str, object], str], end: str = "completed") -> list[Event]:
    return _d08(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), *inside,
                ("step/end", {"turn": 1, "step": 1}), ("turn/end", {"turn": 1, "reason": {"kind": end}}))


def test_d08_entering_messages_and_request_context_lie_before_dispatch() -> None:
    text, finish = _chunk("text-delta", index=0, text="a"), _chunk("finish", reason={"kind": "stop"})
    good = _d08_turn(USER, HEADER, CONTEXT, text, finish, _message())
    assert rules(good, Dialect.D08) == set()
    assert rules(_d08(("turn/start", {"turn": 1}), USER, *[(e.type, thaw(e.data), e.surface_op) for e in good[1:-1]],  # type: ignore[misc]
                      ("turn/end", {"turn": 1, "reason": {"kind": "completed"}})), Dialect.D08) == {"DIA-12"}
    late = [*good[:6], good[2], *good[6:]]  # an entering message after the first chunk
    assert rules(late, Dialect.D08) == {"DIA-12"}
    for where in (6, 7, 8):  # inside the attempt, after its finish, after its message
        assert rules([*good[:where], good[4], *good[where:]], Dialect.D08) == {"DIA-12"}
    # a failed attempt is retried in the step: its context and entering messages may follow (DIA-7)
    failed = _chunk("finish", reason={"kind": "error"})
    retried = [*good[:5], make_event("assistant/chunk", seq=0, time=0, data=freeze(failed[1])), good[2], good[4], *good[5:]]
    assert rules(retried, Dialect.D08) == set()
    # A55 has no such order: its prompt precedes step/start
    assert "DIA-12" not in rules(late, Dialect.A55)


def test_d08_a_cancelled_visible_stream_records_an_interrupted_message() -> None:
    text = _chunk("text-delta", index=0, text="a")
    cancelled = _d08_turn(USER, HEADER, text, end="aborted")
    assert rules(cancelled, Dialect.D08) == {"DIA-15"}
    recorded = _d08_turn(USER, HEADER, text, _message(interrupted=True), end="aborted")
    assert rules(recorded, Dialect.D08) == set()
    call = {"type": "tool-call", "id": "c", "name": "echo", "arguments": "{}"}
    kept = _d08_turn(USER, HEADER, text, _message(interrupted=True, blocks=({"type": "text", "text": "a"}, call)), end="aborted")
    assert rules(kept, Dialect.D08) == {"DIA-15"}
    invisible = _d08_turn(USER, HEADER, _chunk("text-delta", index=0, text=""), end="aborted")
    assert rules(invisible, Dialect.D08) == set()
    # a legacy turn the A55 loop wrote (DIA-13): its prompt before step/start, no DIA-15
    prompt = ("user/message", {**USER[1], "id": "legacy-message:s:1"}, "append")
    legacy = _d08(("turn/start", {"turn": 1}), prompt, ("step/start", {"turn": 1, "step": 1}), HEADER, text,
                  ("step/end", {"turn": 1, "step": 1}), ("turn/end", {"turn": 1, "reason": {"kind": "aborted"}}))
    assert rules(legacy, Dialect.D08) == set()


# ------------------------------------------------------------------------------------------ the other sides


def test_a_new_step_after_an_unrecorded_successful_stream_is_loop_11() -> None:
    log = played(TurnScript(prompt=Prompt(content=text_content("go")), replies=(Reply(text="a", continue_with="more"), Reply(text="b"))))
    first = at(log, "assistant/message", 0)
    assert rules(without(log, first)) == {"LOOP-11"}  # at the next step/start, which clears it


def test_what_the_loop_rules_leave_to_other_rules_is_not_theirs() -> None:
    failed = played(turn("f", Reply(kind=ReplyKind.ERROR_IN_BAND)))
    end = at(failed, "turn/end")
    assert rules(edited(failed, end, lambda data: data["reason"].__setitem__("step", "one"))) == set()  # type: ignore[attr-defined]  # LOG-11's shape
    tools = played(turn("t", Reply(kind=ReplyKind.TOOL_CALLS, text="t", tool_calls=CALLS), Reply(text="done")))
    result = at(tools, "tool/result", 0)
    assert rules(edited(tools, result, setting("callId", "zz"))) == set()  # an unknown call is LOG-13's
    # no header config in force: no provenance to compare (the header's own rules judge a missing header)
    plain = played(turn("p"))
    header = at(plain, "request/header")
    assert rules(edited(plain, header, lambda data: data["header"].__setitem__("config", 5))) == set()  # type: ignore[attr-defined]
    assert rules(edited(plain, header, lambda data: data["header"]["config"].__setitem__("provider", "{{provider}}"))) == set()  # type: ignore[index]
    assert rules(edited(plain, header, lambda data: data["header"]["config"].__setitem__("provider", "other"))) == {"LOOP-11"}  # type: ignore[index]


def test_the_rules_bind_the_turns_and_steps_the_loop_wrote() -> None:
    log = played(turn("a"))
    start, prompt = at(log, "turn/start"), at(log, "user/message")
    # a turn no message triggered has no prompt to put first (LOOP-3 binds message-triggered turns)
    other = edited(without(log, prompt), start, setting("trigger", {"kind": "schedule"}))
    assert rules(other) == set()
    # a turn/end with no open turn is the nesting companion's (LOG-13)
    assert rules([*log, log[at(log, "turn/end")]]) == set()
    # a step the session API wrote (no stream, no sourceEventSeqs: FMT-7 Writers) is not the loop's
    chunks = [i for i, e in enumerate(log) if e.type == "assistant/chunk"]
    message = at(log, "assistant/message")
    api = [replace(e, source_event_seqs=ABSENT) if i == message else e for i, e in enumerate(log) if i not in chunks]
    assert rules(api) == set()
    loop_step = [replace(e, source_event_seqs=ABSENT) if i == message else e for i, e in enumerate(log)]
    assert rules(loop_step) == {"LOOP-11"}
    # a prompt whose content is no list is LOG-12's
    ctx = PromptContext(content=text_content("ctx"), source=JsonObject((("kind", "plugin"),)), placement=Placement.PROMPT_PREFIX)
    prefixed = played(turn("hello", contexts=(ctx,)))
    assert rules(edited(prefixed, at(prefixed, "user/message"), setting("content", "text"))) == set()
