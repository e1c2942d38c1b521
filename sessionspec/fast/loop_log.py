"""The step a chunk streams, :func:`sessionspec.model.loop_log.step.take_chunk`, and the loop's per-step events
(:func:`~sessionspec.model.loop_log.turn.open_turn`, ``open_step``, ``take_request``, ``close_step``,
``close_turn``, :func:`~sessionspec.model.loop_log.step.record_message`, ``take_user_message``, ``take_tool_call``,
``take_tool_result``, ``take_config``) for the checker's one pass: the same state and findings,
computed by a module the compiled wheel compiles (issue 44).

A chunk is the log's most common event and the loop fold takes every one; a step's start, end and message come at
every step: compiled, a call into the interpreted model for each would cost more than the reading itself.  So the
fold runs these.  Each answers the common case itself (an A55 step whose events the loop wrote) and hands every
other case, before changing anything, to the definition, so a finding is always the definition's.
``tests/fast/test_fast_loop_log.py`` holds them equal to the definitions, field for field of the track and finding
for finding, on the logs the loop simulator writes, the real logs and single changes of their events, both dialects.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.loop_log import step as step_definitions
from sessionspec.model.loop_log import turn as turn_definitions
from sessionspec.model.loop_log.dialect import A55 as A55_SHAPES
from sessionspec.model.loop_log.track import FAILED_FINISHES, LoopTrack, StepTrack, ToolBlock, TurnTrack

_OBJECT: Final = JsonObject
_A55: Final = A55_SHAPES
_FAILED: Final = FAILED_FINISHES
_STOP_KIND: Final = turn_definitions.STOP_KIND


def take_chunk(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.take_chunk`."""
    fields = event.data
    data = fields.get("chunk", ABSENT) if type(fields) is _OBJECT else ABSENT
    kind = data.get("type", ABSENT) if type(data) is _OBJECT else ABSENT
    st.streaming = kind != "finish"
    if kind == "usage":
        st.attempt_usage = get(data, "usage")
    elif kind == "text-delta" or kind == "reasoning-delta":
        if type(data) is _OBJECT and bool(data.get("text", ABSENT)):
            st.attempt_visible = True
    elif kind == "finish":
        st.attempt_visible = False
        st.finish = get(get(data, "reason"), "kind")
        if st.finish == "error":
            st.failed_attempt = True
            track.shapes.attempt_failed(st)


def open_turn(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.turn.open_turn`."""
    data = event.data
    track.turn = TurnTrack(number=get(data, "turn"), trigger=get(get(data, "trigger"), "kind"))
    track.step = None


def open_step(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.turn.open_step`: answered here for a step of an open A55 turn that follows
    no unrecorded stream nor a blocked prompt, and has its prompt when the turn's trigger is a message."""
    t = track.turn
    if t is not None and (t.unrecorded is not None or t.blocked is not None or track.shapes is not _A55
                          or (t.trigger == "message" and not t.prompt)):
        turn_definitions.open_step(track, event)
        return
    data = event.data
    step = get(data, "step")
    if t is not None:
        t.steps += 1
        t.last_step = step if type(step) is int else t.last_step + 1
        t.failed_step = None
    track.step = StepTrack(turn=get(data, "turn"), step=step, api=track.step_api)


def close_step(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.turn.close_step`, with A55's ``step_closed`` (``unrecorded_stream``)."""
    st, t = track.step, track.turn
    if st is not None and t is not None:
        if track.shapes is not _A55:
            turn_definitions.close_step(track, event)
            return
        t.failed_step = None if st.message else event.seq
        t.max_tokens = t.max_tokens or st.max_tokens
        finish = st.finish
        if finish is not ABSENT and finish not in _FAILED and not st.message:
            t.unrecorded = event.seq
    track.step = None


def _surely_deep_eq(a: Json | Absent, b: Json | Absent) -> bool:
    """True only where ``model.jsonval.deep_eq`` plainly is (the same object; strings, integers, floats of one type
    equal; objects and arrays of such, key order ignored); False leaves the answer to the definition."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is _OBJECT:
        assert isinstance(a, JsonObject) and isinstance(b, JsonObject)
        return a.keys() == b.keys() and all(_surely_deep_eq(v, b[k]) for k, v in a.items())
    if kind is tuple:
        assert isinstance(a, tuple) and isinstance(b, tuple)
        return len(a) == len(b) and all(_surely_deep_eq(x, y) for x, y in zip(a, b, strict=True))
    if kind is str or kind is int or kind is float:
        return a == b
    return False


def _tool_blocks(content: Json | Absent) -> list[ToolBlock]:
    """:func:`sessionspec.model.loop_log.step.tool_blocks`."""
    if type(content) is not tuple:
        return []
    assert isinstance(content, tuple)
    return [(b.get("id", ABSENT), b.get("name", ABSENT), b.get("arguments", ABSENT))
            for b in content if type(b) is _OBJECT and b.get("type", ABSENT) == "tool-call"]


def record_message(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.record_message`: answered here for the open A55 step's first
    message, with its chunk seqs, not interrupted, after no failed or max-tokens finish, routed as the header says,
    with the step's last usage (or none on either side); anything else is the definition's."""
    st = track.step
    if st is None:
        return
    data = event.data
    if type(data) is not _OBJECT or st.message or st.api or track.shapes is not _A55 or event.source_event_seqs is ABSENT:
        step_definitions.record_message(track, event)
        return
    finish = st.finish
    routed = track.routed
    if finish == "max-tokens" or finish in _FAILED or data.get("interrupted", ABSENT) is True:
        step_definitions.record_message(track, event)
        return
    if routed is not None:
        provenance = data.get("provenance", ABSENT)
        provider = provenance.get("provider", ABSENT) if type(provenance) is _OBJECT else ABSENT
        model = provenance.get("model", ABSENT) if type(provenance) is _OBJECT else ABSENT
        if not (type(provider) is str and provider == routed[0] and type(model) is str and model == routed[1]):
            step_definitions.record_message(track, event)
            return
    usage = data.get("usage", ABSENT)
    attempt_usage = st.attempt_usage
    if not (usage is ABSENT and attempt_usage is ABSENT) and not _surely_deep_eq(usage, attempt_usage):
        step_definitions.record_message(track, event)
        return
    st.message = True
    st.blocks = _tool_blocks(data.get("content", ABSENT))


def take_user_message(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.take_user_message`: answered here for an A55 message without an
    envelope (LOOP-4 reads only one with prompt-prefix contexts) outside a blocked turn."""
    data = event.data
    t, st = track.turn, track.step
    if type(data) is not _OBJECT or track.shapes is not _A55 or data.get("envelope", ABSENT) is not ABSENT or (
            t is not None and t.blocked is not None):
        step_definitions.take_user_message(track, event)
        return
    source = data.get("source", ABSENT)
    if type(source) is _OBJECT and source.get("kind", ABSENT) == "plugin" and source.get("plugin", ABSENT) == "compact":
        return  # a compaction checkpoint (CMP-2) is not the loop's
    if t is not None and st is None:
        t.prompt = True
        t.legacy = t.legacy or str(data.get("id", ABSENT)).startswith("legacy-message:")
    if st is not None and st.last_result >= 0:
        st.context_after_results = st.context_after_results or event.seq


def take_request(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.turn.take_request`: answered here for an anchored instance."""
    if not track.anchored:
        turn_definitions.take_request(track, st, event)
        return
    st.requested = True
    if track.turn is not None:
        track.turn.requested = True


def close_turn(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.turn.close_turn`: answered here for an A55 turn with steps, no blocked
    prompt, no failed or unrecorded last step, that ends neither rejected nor in error, as LOG-11's precedence says."""
    t = track.turn
    data = event.data
    reason = data.get("reason", ABSENT) if type(data) is _OBJECT else ABSENT
    kind = reason.get("kind", ABSENT) if type(reason) is _OBJECT else ABSENT
    if t is not None and (track.shapes is not _A55 or t.blocked is not None or t.unrecorded is not None
                          or t.failed_step is not None or t.steps == 0 or kind == "rejected" or kind == "error"
                          or not (kind == _STOP_KIND[t.max_tokens] or kind != _STOP_KIND[not t.max_tokens])):
        turn_definitions.close_turn(track, event)
        return
    if kind == "interrupted":
        track.anchored = False
    track.turn, track.step = None, None


def take_tool_call(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.take_tool_call`: answered here for the next call of the step's
    message, after no max-tokens finish, whose id, name and arguments are its block's."""
    st = track.step
    if st is None or st.api:
        return
    data = event.data
    if not st.message or st.max_tokens or st.calls >= len(st.blocks) or type(data) is not _OBJECT:
        step_definitions.take_tool_call(track, event)
        return
    call_id, name, arguments = st.blocks[st.calls]
    if (same_json(data.get("callId", ABSENT), call_id) and same_json(data.get("name", ABSENT), name)
            and same_json(data.get("arguments", ABSENT), arguments)):
        st.calls += 1
    else:
        step_definitions.take_tool_call(track, event)


def take_tool_result(track: LoopTrack, event: Event) -> None:
    """:func:`sessionspec.model.loop_log.step.take_tool_result`: answered here for an A55 result with a string
    ``callId`` after no deferred context, in model order (or of a call no block names, LOG-13's)."""
    st = track.step
    if st is None or st.api:
        return
    data = event.data
    call_id = data.get("callId", ABSENT) if type(data) is _OBJECT else ABSENT
    if st.context_after_results is not None or track.shapes is not _A55 or type(call_id) is not str:
        step_definitions.take_tool_result(track, event)
        return
    index = -1
    for i, (cid, _, _) in enumerate(st.blocks):
        if type(cid) is not str:
            step_definitions.take_tool_result(track, event)
            return
        if cid == call_id:
            index = i
            break
    if 0 <= index <= st.last_result:
        step_definitions.take_tool_result(track, event)
        return
    st.results += 1
    if index >= 0:
        st.last_result = index


def take_config(track: LoopTrack, config: Json | Absent) -> None:
    """:func:`sessionspec.model.loop_log.step.take_config` (the provider and model of
    :func:`~sessionspec.model.loop_records.message_provenance`, each ABSENT when the config has none)."""
    track.routed = (config.get("provider", ABSENT), config.get("model", ABSENT)) if type(config) is _OBJECT else None
