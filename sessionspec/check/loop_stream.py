"""The open step of the loop audit (:mod:`sessionspec.check.loop_audit`): its start, its end, and
the attempt its chunks stream (the request it makes, LOOP-9), a chunk at a time or a packed row's
chunks at once (:class:`ChunkRun`)."""

from __future__ import annotations

from typing import Final

from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.loop_state import LoopState as _Loop
from sessionspec.check.loop_state import StepState as _Step
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Event

FAILED_FINISHES: Final = frozenset({"error", "aborted"})
_OBJECT: Final = JsonObject


def _kind(v: Json | Absent) -> Json | Absent:
    return get(get(v, "reason"), "kind")


def step_start(s: _Loop, event: Event) -> None:
    t = s.turn
    if t is not None:
        t.steps += 1
        number = get(event.data, "step")
        t.last_step = number if isinstance(number, int) and not isinstance(number, bool) else t.last_step + 1
        t.failed_step = None
        if t.unrecorded is not None:
            s.report("LOOP-11", event, f"a new step after a successful stream that recorded no assistant/message (step/end at seq {t.unrecorded}); only an interruption stops the recording")
            t.unrecorded = None
        if t.blocked is not None:
            s.report("LOOP-3", event, f"a step in the turn of a blocked prompt (seq {t.blocked.seq}); a blocked turn has zero steps")
        elif t.trigger == "message" and not t.prompt and s.dialect is A55:
            s.report("LOOP-3", event, "a step in a message-triggered turn with no user/message (the allowed prompt is appended before any step)")
    s.step = _Step(turn=get(event.data, "turn"), step=get(event.data, "step"), api=s.step_api)


def step_end(s: _Loop, event: Event) -> None:
    st, t = s.step, s.turn
    if st is not None and t is not None:
        t.failed_step = None if st.message else event.seq
        t.max_tokens = t.max_tokens or st.max_tokens
        # LOOP-10/11: a finish other than error/aborted is a successful stream, whose message is recorded
        # unless the interruption checkpoint after the stream stops the turn.
        succeeded = st.finish is not ABSENT and st.finish not in FAILED_FINISHES
        if s.dialect is A55 and succeeded and not st.message:
            t.unrecorded = event.seq
        if s.dialect is D08 and st.attempt_visible and not st.message and not st.api:
            t.cancelled_visible = event.seq
    s.step = None


@audits("LOOP-9")
def _requested(s: _Loop, st: _Step, event: Event) -> None:
    """LOOP-9: every request of an instance follows the instance's anchor
    (``initial``/``resume``, written before the first chunk).  ``event`` is a chunk of the step."""
    if not st.requested:
        st.requested = True
        if s.turn is not None:
            s.turn.requested = True
        if not s.anchored:
            s.report("LOOP-9", event, "request of a loop instance that wrote no initial/resume anchor (a new instance starts at the live start and after a crash repair)")


def chunk(s: _Loop, event: Event) -> None:
    """A chunk of the open step: its request (LOOP-9) and the attempt it streams."""
    st = s.step
    if st is None:
        return
    _requested(s, st, event)
    # The fields read in place: this runs at every chunk, where a call per read was most of its cost.
    fields = event.data
    data = fields.get("chunk", ABSENT) if type(fields) is _OBJECT else ABSENT
    kind = data.get("type", ABSENT) if type(data) is _OBJECT else ABSENT
    st.streaming = kind != "finish"
    match kind:
        case "usage":
            st.attempt_usage = get(data, "usage")
        case "text-delta" | "reasoning-delta" if type(data) is _OBJECT and bool(data.get("text", ABSENT)):  # (ABSENT is true, as get gives it)
            st.attempt_visible = True
        case "finish":
            st.attempt_visible = False
            st.finish = _kind(data)
            st.failed_attempt = st.failed_attempt or st.finish == "error"
            if s.dialect is D08 and st.finish == "error":
                st.attempt_usage = ABSENT  # DIA-7: the retry is a new attempt
        case _:
            pass


def chunk_run(s: _Loop, run: ChunkRun) -> None:
    """:func:`chunk` of each of a packed row's deltas: the first is the request's (LOOP-9), each
    streams, and a non-empty text or reasoning delta makes the attempt visible."""
    st = s.step
    if st is None:
        return
    _requested(s, st, run.members[0])
    st.streaming = True
    if run.kind != "tool-call-delta" and run.any_text():
        st.attempt_visible = True
