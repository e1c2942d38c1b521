"""The loop's turns and steps as a log shows them, decided event by event: a blocked prompt (LOOP-3, P-LOOP-5),
what ends a turn after a failed step or an unrecorded stream (LOOP-14, LOOP-11), LOG-11's precedence, the
instance's anchor before its requests (LOOP-9, P-LOOP-1) and where steering lies (LOOP-5, LOOP-13).

The loop that writes these events is :mod:`sessionspec.model.loop` (``run_turn``); each function here decides,
for one event, whether that loop could have written it after the log so far (:class:`~sessionspec.model.loop_log.
track.LoopTrack`).  Only live events are judged (a fork's seed was judged where it was written): whoever folds
the log calls these for the live ones.
"""

from __future__ import annotations

from typing import Final

from sessionspec.model.jsonval import ABSENT, Absent, Json, get
from sessionspec.model.log import Event, json_int
from sessionspec.model.loop_log.track import FAILED_FINISHES, LoopTrack, StepTrack, TurnTrack, same, show
from sessionspec.model.loop_records import stop_reason
from sessionspec.model.rules import decides

# LOOP-14/LOOP-15: after a failed request the turn ends in one of these (the repair's ``interrupted``, LOG-14),
# or the step is retried.
FAILED_TURN_ENDS: Final = frozenset({"error", "aborted", "disposed", "interrupted"})
# The end of a turn that stops after a step, by whether a step finished max-tokens (:func:`sessionspec.model.
# loop_records.stop_reason`, asked once).
STOP_KIND: Final = {max_tokens: get(stop_reason(max_tokens), "kind") for max_tokens in (False, True)}


def open_turn(track: LoopTrack, event: Event) -> None:
    """``turn/start``: a turn opens with its number and trigger, no step yet."""
    track.turn = TurnTrack(number=get(event.data, "turn"), trigger=get(get(event.data, "trigger"), "kind"))
    track.step = None


@decides("LOOP-3", "P-LOOP-5")
def check_blocked_end(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent, reason: Json | Absent) -> None:
    """LOOP-3's block outcome: ``prompt/blocked`` and "end the turn with ``{kind:"rejected", reason}``" (the
    blocked prompt's reason), and only a blocked prompt ends a turn ``rejected``."""
    if t.blocked is not None:
        if kind != "rejected":
            track.report("LOOP-3", event, f"the turn of a blocked prompt (seq {t.blocked.seq}) ends {show(kind)}, not rejected")
        elif not same(get(reason, "reason"), get(t.blocked.data, "reason")):
            track.report("LOOP-3", event, f"rejected reason differs from the prompt/blocked reason at seq {t.blocked.seq}")
    elif kind == "rejected":
        track.report("LOOP-3", event, "turn ends rejected without a prompt/blocked")


@decides("LOOP-11")
def check_unrecorded_end(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent) -> None:
    """LOOP-11: a successful stream's message is recorded; a turn that ends after a successful stream that recorded
    none ends by an interruption (after the stream) or a failed append of the message itself (a turn error)."""
    if t.unrecorded is not None and kind not in FAILED_TURN_ENDS:
        track.report("LOOP-11", event, f"turn ends {show(kind)} after a successful stream that recorded no assistant/message (step/end at seq {t.unrecorded}); only an interruption or a failed append stops the recording")


@decides("LOOP-14")
def check_failed_step_end(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent) -> None:
    """LOOP-14: after a request error the turn is retried in a new step, ends in error (``fail``), or is
    interrupted: a turn that ends right after a failed step ends in one of :data:`FAILED_TURN_ENDS`."""
    if t.failed_step is not None and kind not in FAILED_TURN_ENDS:
        track.report("LOOP-14", event, f"turn ends {show(kind)} right after a failed step (step/end at seq {t.failed_step}); a request error ends the turn in error or retries")


@decides("LOG-16")
def check_stepless_end(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent) -> None:
    """LOG-16's synthetic turn: ``turn/start``, one log-only event, ``turn/end {kind:"completed"}``.  A loop turn
    runs a step after its prompt, or ends rejected, aborted or in error, so a stepless turn that ends completed
    is an out-of-band append's."""
    if kind == "completed" and t.steps == 0 and (t.inner != 1 or t.inner_surface or t.prompt):
        track.report("LOG-16", event, f"a turn with no step ends completed but holds {t.inner} event(s) (only an out-of-band append, one log-only event, closes a stepless turn completed)")


@decides("LOOP-16")
def check_error_step(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent, step: Json | Absent) -> None:
    """LOOP-16's ``step: <current step counter>``: the last started step, or the pending next one for a
    composition, assembly or pre-step failure, or ``0`` for a prompt-submit failure (no step yet, Q-4)."""
    if kind != "error":
        return
    allowed = {t.last_step, t.last_step + 1} if t.steps else {0, 1}
    number = json_int(step)
    if number is not None and number not in allowed:
        track.report("LOOP-16", event, f"error turn/end names step {number}; the step counter is {t.last_step} (or {t.last_step + 1} pending)")


@decides("DIA-15")
def check_cancelled_end(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent) -> None:
    """DIA-15: "A cancelled stream with visible text/reasoning MUST append ``assistant/message {…, interrupted:
    true}``": a turn cancelled after such a stream that recorded no message is refused (a legacy A55 turn keeps
    the A55 loop's ways, DIA-13)."""
    if kind == "aborted" and t.cancelled_visible is not None and not t.legacy:
        track.report("DIA-15", event, f"the turn is cancelled after a stream with visible text that recorded no assistant/message "
                                      f"(step/end at seq {t.cancelled_visible}); a cancelled stream records {{interrupted: true}}")


@decides("LOG-11")
def check_stop_precedence(track: LoopTrack, t: TurnTrack, event: Event, kind: Json | Absent) -> None:
    """LOG-11's "max-tokens takes precedence over completed only": a turn that stops after its steps ends as
    :func:`sessionspec.model.loop_records.stop_reason` says for whether a step finished ``max-tokens``."""
    if kind == STOP_KIND[t.max_tokens] or kind != STOP_KIND[not t.max_tokens]:
        return
    if kind == "completed":
        track.report("LOG-11", event, "turn ends completed after a max-tokens finish (max-tokens takes precedence over completed)")
    else:
        track.report("LOG-11", event, "turn ends max-tokens with no step that finished max-tokens")


@decides("LOOP-9")
def close_turn(track: LoopTrack, event: Event) -> None:
    """``turn/end``: the open turn's end is judged (the checks above, in that order, a dialect's by
    :class:`~sessionspec.model.loop_log.track.LoopShapes`), and the turn closes.  LOOP-9: after a crash repair's
    ``interrupted`` end a new instance runs (the repair runs on a cold load), which anchors anew."""
    t = track.turn
    reason = get(event.data, "reason")
    kind = get(reason, "kind")
    if t is not None:
        check_blocked_end(track, t, event, kind, reason)
        check_unrecorded_end(track, t, event, kind)
        check_failed_step_end(track, t, event, kind)
        track.shapes.turn_closed(track, t, event, kind, reason)
        check_stop_precedence(track, t, event, kind)
    if kind == "interrupted":
        track.anchored = False
    track.turn, track.step = None, None


@decides("LOOP-3", "P-LOOP-5")
def block_prompt(track: LoopTrack, t: TurnTrack, event: Event) -> None:
    """LOOP-3: the prologue ends in one of two outcomes, once: "block: append ``prompt/blocked`` ... The turn has
    zero steps"; so a blocked turn holds one ``prompt/blocked``, before any prompt or step."""
    if t.blocked is not None:
        track.report("LOOP-3", event, f"second prompt/blocked in one turn (first at seq {t.blocked.seq}); a blocked prompt ends its turn")
    elif t.prompt or t.steps:
        track.report("LOOP-3", event, "prompt/blocked after the turn's prompt was allowed (the prologue has one outcome: block or allow)")
    t.blocked = t.blocked or event


@decides("LOOP-3", "P-LOOP-5")
def check_prompt_before_step(track: LoopTrack, t: TurnTrack, event: Event) -> None:
    """LOOP-3's allow outcome: the prompt is appended as a ``user/message`` before any step of a message-triggered
    turn."""
    if t.trigger == "message" and not t.prompt:
        track.report("LOOP-3", event, "a step in a message-triggered turn with no user/message (the allowed prompt is appended before any step)")


@decides("LOOP-11", "LOOP-3", "P-LOOP-5")
def open_step(track: LoopTrack, event: Event) -> None:
    """``step/start``: the turn's step counter moves on (LOOP-16 names it).  LOOP-11: no new step follows a
    successful stream whose message was not recorded; LOOP-3: a blocked turn has zero steps, and an allowed one
    has its prompt first."""
    t = track.turn
    if t is not None:
        t.steps += 1
        number = json_int(get(event.data, "step"))
        t.last_step = number if number is not None else t.last_step + 1
        t.failed_step = None
        if t.unrecorded is not None:
            track.report("LOOP-11", event, f"a new step after a successful stream that recorded no assistant/message (step/end at seq {t.unrecorded}); only an interruption stops the recording")
            t.unrecorded = None
        if t.blocked is not None:
            track.report("LOOP-3", event, f"a step in the turn of a blocked prompt (seq {t.blocked.seq}); a blocked turn has zero steps")
        else:
            track.shapes.prompt_before_step(track, t, event)
    track.step = StepTrack(turn=get(event.data, "turn"), step=get(event.data, "step"), api=track.step_api)


def close_step(track: LoopTrack, event: Event) -> None:
    """``step/end``: what the step leaves its turn: a failed step (no message, LOOP-14), a ``max-tokens`` finish
    (LOG-11), and what the dialect judges at the turn's end (A55: an unrecorded successful stream, LOOP-11; D08:
    a cancelled visible stream, DIA-15)."""
    st, t = track.step, track.turn
    if st is not None and t is not None:
        t.failed_step = None if st.message else event.seq
        t.max_tokens = t.max_tokens or st.max_tokens
        track.shapes.step_closed(track, t, st, event)
    track.step = None


def unrecorded_stream(track: LoopTrack, t: TurnTrack, st: StepTrack, event: Event) -> None:
    """LOOP-10/11 (A55): a finish other than ``error``/``aborted`` is a successful stream, whose message is
    recorded unless the interruption checkpoint after the stream stops the turn."""
    if st.finish is not ABSENT and st.finish not in FAILED_FINISHES and not st.message:
        t.unrecorded = event.seq


def cancelled_visible_stream(track: LoopTrack, t: TurnTrack, st: StepTrack, event: Event) -> None:
    """DIA-15 (D08): a step whose attempt streamed visible text and recorded no message (a cancelled stream)."""
    if st.attempt_visible and not st.message and not st.api:
        t.cancelled_visible = event.seq


@decides("LOOP-9", "P-LOOP-1")
def take_request(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """LOOP-9: the first header of an instance is always written, before its first request: every request of an
    instance follows its anchor (``initial``/``resume``).  ``event`` is the step's first chunk (its request)."""
    st.requested = True
    if track.turn is not None:
        track.turn.requested = True
    if not track.anchored:
        track.report("LOOP-9", event, "request of a loop instance that wrote no initial/resume anchor (a new instance starts at the live start and after a crash repair)")


@decides("LOOP-9", "P-LOOP-1")
def take_anchor(track: LoopTrack, event: Event) -> None:
    """LOOP-9: the first header of an instance is its anchor, written before its first request; within a turn the
    instance cannot change, so an anchor after a request of the same turn is a second anchor."""
    reason = get(event.data, "reason")
    if reason in ("initial", "resume"):
        if track.turn is not None and track.turn.requested:
            track.report("LOOP-9", event, f"{reason} anchor after this turn already sent a request (one anchor per loop instance, before its first request)")
        track.anchored = True


@decides("LOOP-13", "LOOP-5")
def take_steering(track: LoopTrack, event: Event) -> None:
    """LOOP-13: the drain appends ``steering/message {turn, ...}`` for the turn it runs in.  LOOP-5/LOOP-13: it
    drains before assembly (before ``step/start``) and "after the stream and tools", so inside a step a steering
    message follows the step's message and all its results."""
    st = track.step
    if st is not None and (not st.message or st.results < st.calls):
        track.report("LOOP-5", event, "steering/message inside a step before its assistant/message and tool results (the drain runs before step/start or after the tools)")
    if track.turn is not None and not same(get(event.data, "turn"), track.turn.number):
        track.report("LOOP-13", event, f"steering/message names turn {show(get(event.data, 'turn'))}, but turn {show(track.turn.number)} is open")
