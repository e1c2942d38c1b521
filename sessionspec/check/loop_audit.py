"""The loop's own rules, audited as one fold over the log (LOOP-3..LOOP-14, LOG-11).

No request is rebuilt: the state is the open turn (its trigger, prompt,
blocked prompt, failed step, max-tokens finish), the open step (its chunks
of the current attempt, last usage and finish chunks, the tool-call blocks of
its message and how many of them were called and answered) and one flag per
loop instance (has it anchored a header yet).  Memory is bounded by the open
step; time is linear in the log.

Only live events are judged (seq >= firstLiveSeq): the seed was written
elsewhere and is judged there.  Instances are visible in a log at its live
start and after a crash repair (``turn/end {interrupted}``, LOG-14: the
repair runs on a cold load, so a new instance follows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.check.api_steps import ApiStepJudge
from sessionspec.check.audits import audits
from sessionspec.check.chunk_run import ChunkRun
from sessionspec.check.event_fields import message_content, message_route, result_call_id, show, tool_blocks
from sessionspec.check.fold_loop import run_alone
from sessionspec.check.folds import AuditFold
from sessionspec.check.loop_state import LoopState as _Loop
from sessionspec.check.loop_state import TurnState as _Turn
from sessionspec.check.loop_stream import FAILED_FINISHES, chunk, chunk_run, step_end, step_start
from sessionspec.check.prompt_prefix import check_prefix_contexts
from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get, is_placeholder
from sessionspec.model.compaction import is_checkpoint_source
from sessionspec.model.jsonval import Absent, Json, JsonObject, deep_eq, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan

# LOOP-14/LOOP-15: after a failed request the turn ends in one of these, or retries.
FAILED_TURN_ENDS: Final = frozenset({"error", "aborted", "disposed", "interrupted"})


def _is_append(event: Event) -> bool:
    return event.surface_op == "append"


def _turn_start(s: _Loop, event: Event) -> None:
    s.turn = _Turn(number=get(event.data, "turn"), trigger=get(get(event.data, "trigger"), "kind"))
    s.step = None


@audits("LOOP-3", "LOOP-14", "LOG-11", "LOOP-9", "LOG-16")
def _turn_end(s: _Loop, event: Event) -> None:
    """LOOP-3 (a blocked prompt ends ``rejected`` with its reason, and only
    it does), LOOP-14 (a failed request ends the turn in error or an
    interruption, else retries), LOG-11 (``max-tokens`` takes precedence over
    ``completed`` only), LOOP-9 (after a crash repair a new instance runs),
    LOG-16 (a stepless turn ends ``completed`` only as an out-of-band append:
    ``turn/start``, one log-only event, ``turn/end``; a loop turn either runs a
    step after its prompt, or ends rejected, aborted or in error)."""
    t = s.turn
    reason = get(event.data, "reason")
    kind = get(reason, "kind")
    if t is not None:
        if t.blocked is not None:
            if kind != "rejected":
                s.report("LOOP-3", event, f"the turn of a blocked prompt (seq {t.blocked.seq}) ends {show(kind)}, not rejected")
            elif not same_json(get(reason, "reason"), get(t.blocked.data, "reason")):
                s.report("LOOP-3", event, f"rejected reason differs from the prompt/blocked reason at seq {t.blocked.seq}")
        elif kind == "rejected":
            s.report("LOOP-3", event, "turn ends rejected without a prompt/blocked")
        if t.unrecorded is not None and kind not in FAILED_TURN_ENDS:
            # an interruption after the stream, or a failing append of the message itself (a turn error)
            s.report("LOOP-11", event, f"turn ends {show(kind)} after a successful stream that recorded no assistant/message (step/end at seq {t.unrecorded}); only an interruption or a failed append stops the recording")
        if t.failed_step is not None and kind not in FAILED_TURN_ENDS:
            s.report("LOOP-14", event, f"turn ends {show(kind)} right after a failed step (step/end at seq {t.failed_step}); a request error ends the turn in error or retries")
        if kind == "completed" and t.steps == 0 and s.dialect is A55 and (t.inner != 1 or t.inner_surface or t.prompt):
            s.report("LOG-16", event, f"a turn with no step ends completed but holds {t.inner} event(s) (only an out-of-band append, one log-only event, closes a stepless turn completed)")
        if kind == "aborted" and t.cancelled_visible is not None and not t.legacy:
            s.report("DIA-15", event, f"the turn is cancelled after a stream with visible text that recorded no assistant/message "
                                      f"(step/end at seq {t.cancelled_visible}); a cancelled stream records {{interrupted: true}}")
        if kind == "error" and s.dialect is A55:
            _error_step(s, event, t, get(reason, "step"))
        if kind == "completed" and t.max_tokens:
            s.report("LOG-11", event, "turn ends completed after a max-tokens finish (max-tokens takes precedence over completed)")
        if kind == "max-tokens" and not t.max_tokens:
            s.report("LOG-11", event, "turn ends max-tokens with no step that finished max-tokens")
    if kind == "interrupted":
        s.anchored = False
    s.turn, s.step = None, None


@audits("LOOP-16")
def _error_step(s: _Loop, event: Event, t: _Turn, step: Json | Absent) -> None:
    """LOOP-16: an error ends the turn with "``step: <current step counter>``":
    the last started step, or the pending next one for a composition,
    assembly or pre-step failure (Q-4), or ``0`` for a prompt-submit failure
    (no step yet)."""
    allowed = {t.last_step, t.last_step + 1} if t.steps else {0, 1}
    if isinstance(step, int) and not isinstance(step, bool) and step not in allowed:
        s.report("LOOP-16", event, f"error turn/end names step {step}; the step counter is {t.last_step} (or {t.last_step + 1} pending)")


@audits("LOOP-3")
def _prompt_blocked(s: _Loop, t: _Turn, event: Event) -> None:
    """LOOP-3: the prologue ends in one of two outcomes, once: "block: append ``prompt/blocked``
    and end the turn with ``{kind:"rejected", reason}``. The turn has zero steps"; so a blocked
    turn holds one ``prompt/blocked``, before any prompt or step."""
    if t.blocked is not None:
        s.report("LOOP-3", event, f"second prompt/blocked in one turn (first at seq {t.blocked.seq}); a blocked prompt ends its turn")
    elif t.prompt or t.steps:
        s.report("LOOP-3", event, "prompt/blocked after the turn's prompt was allowed (the prologue has one outcome: block or allow)")
    t.blocked = t.blocked or event


@audits("LOOP-10", "LOOP-11", "DIA-15")
def _assistant_message(s: _Loop, event: Event) -> None:
    """LOOP-10: a finish ``error``/``aborted`` is a request error, which
    "produces no ``assistant/message``" (A55; D08 retries in the step, DIA-7).
    LOOP-11: the message carries ``sourceEventSeqs``, its provenance comes
    from the header config, ``usage`` is the last usage chunk, and on a
    ``max-tokens`` finish tool-call blocks are dropped and no tools run."""
    st = s.step
    if st is None:
        return
    if st.message and not st.api:
        # FMT-8: one loop attempt per A55 step (D08: a retry follows only a failed attempt, which
        # writes no message, DIA-7); LOOP-11: its one message cites the step's chunks.
        s.report("LOOP-11", event, "second assistant/message in one step (the loop records one message per step, FMT-8)")
    st.message = True
    if st.api:
        st.blocks = tool_blocks(message_content(event, s.dialect))
        return
    interrupted = get(event.data, "interrupted") is True
    if s.dialect is A55 and st.finish in FAILED_FINISHES:
        s.report("LOOP-10", event, f"assistant/message after an in-band {js_stringify(st.finish)} finish (a request error writes no message)")
    if event.source_event_seqs is ABSENT:
        s.report("LOOP-11", event, "assistant/message without sourceEventSeqs (the loop always records its chunk seqs)")
    provider, model = message_route(event, s.dialect)
    routed = (get(s.config, "provider"), get(s.config, "model"))
    if isinstance(s.config, JsonObject) and not any(is_placeholder(v) for v in routed) and (provider, model) != routed:
        s.report("LOOP-11", event, f"provenance {provider}/{model} differs from the routed header {routed[0]}/{routed[1]}")
    usage = get(event.data, "usage")
    if not interrupted and not (usage is ABSENT and st.attempt_usage is ABSENT) and (
        usage is ABSENT or st.attempt_usage is ABSENT or not deep_eq(usage, st.attempt_usage)
    ):
        s.report("LOOP-11", event, "usage differs from the step's last usage chunk")
    blocks = tool_blocks(message_content(event, s.dialect))
    if interrupted and blocks:
        s.report("DIA-15", event, "interrupted assistant/message keeps tool-call blocks (a cancelled stream keeps its text/reasoning prefix only)")
    if st.finish == "max-tokens":
        st.max_tokens = True
        if blocks:
            s.report("LOOP-11", event, "assistant/message keeps tool-call blocks after a max-tokens finish (they are dropped)")
        blocks = []
    st.blocks = blocks


@audits("LOOP-11", "LOOP-12")
def _tool_call(s: _Loop, event: Event) -> None:
    """LOOP-12: "For each ``tool-call`` block in the content, the loop MUST
    append ``tool/call {turn, step, callId, name, arguments}``" -- after the
    message, in block order, with the block's id, name and arguments."""
    st = s.step
    if st is None or st.api:
        return
    if not st.message:
        s.report("LOOP-12", event, "tool/call before its step's assistant/message")
        return
    if st.max_tokens:
        s.report("LOOP-11", event, "tool run after a max-tokens finish (no tools run)")
        return
    if st.calls >= len(st.blocks):
        s.report("LOOP-12", event, f"tool/call beyond the {len(st.blocks)} tool-call block(s) of the step's message")
        return
    call_id, name, arguments = st.blocks[st.calls]
    st.calls += 1
    data = event.data
    for key, want in (("callId", call_id), ("name", name), ("arguments", arguments)):
        if not same_json(get(data, key), want):
            s.report("LOOP-12", event, f"tool/call {key} {show(get(data, key))} differs from tool-call block {st.calls} ({show(want)})")
            return


@audits("LOOP-12")
def _tool_result(s: _Loop, event: Event) -> None:
    """LOOP-12: "Results keep model order; context that tools defer is
    appended after **all** results of the batch"."""
    st = s.step
    if st is None or st.api or not _is_append(event):
        return
    if st.context_after_results is not None:
        s.report("LOOP-12", event, f"tool/result after deferred context (seq {st.context_after_results}); context follows all results of the batch")
        st.context_after_results = None
    call_id = result_call_id(event, s.dialect)
    st.results += 1
    index = next((i for i, (cid, _, _) in enumerate(st.blocks) if same_json(cid, call_id)), None)
    if index is None:
        return  # an unknown call is LOG-13's finding
    if index <= st.last_result:
        s.report("LOOP-12", event, f"tool/result for block {index + 1} after the result for block {st.last_result + 1} (results keep model order)")
    st.last_result = max(st.last_result, index)


@audits("DIA-12")
def _user_message(s: _Loop, event: Event) -> None:
    t, st = s.turn, s.step
    if not _is_append(event) or is_checkpoint_source(get(event.data, "source")):
        return
    if t is not None and st is None:
        if t.blocked is not None:
            s.report("LOOP-3", event, f"user/message in the turn of a blocked prompt (seq {t.blocked.seq})")
        t.prompt = True
        t.legacy = t.legacy or str(get(event.data, "id")).startswith("legacy-message:")
        if s.dialect is D08 and not t.legacy:
            # DIA-12: turn/start, the inbox claim, ..., step/start, then the entering user/messages (a legacy
            # A55 turn, migrated on load with a legacy id, keeps its prompt before step/start).
            s.report("DIA-12", event, "user/message in a turn outside a step (the D08 loop appends the entering messages after step/start)")
    if st is not None and st.last_result >= 0:
        st.context_after_results = st.context_after_results or event.seq
    if st is not None and s.dialect is D08 and st.requested and not st.failed_attempt:
        # DIA-12: step/start, then the entering user/messages, then the header, then dispatch.
        s.report("DIA-12", event, "user/message inside a step after its first chunk (D08 appends the entering messages before dispatch)")
    if s.dialect is A55:
        flaw = check_prefix_contexts(event)
        if flaw is not None:
            s.found.append(flaw)


@audits("LOOP-13", "LOOP-5")
def _steering(s: _Loop, event: Event) -> None:
    """LOOP-13: the drain appends ``steering/message {turn, ...}`` for the
    turn it runs in.  LOOP-5/LOOP-13: it drains before assembly (before
    ``step/start``) and "after the stream and tools", so inside a step a
    steering message follows the step's message and all its results."""
    st = s.step
    if st is not None and (not st.message or st.results < st.calls):
        s.report("LOOP-5", event, "steering/message inside a step before its assistant/message and tool results (the drain runs before step/start or after the tools)")
    if s.turn is not None and not same_json(get(event.data, "turn"), s.turn.number):
        s.report("LOOP-13", event, f"steering/message names turn {show(get(event.data, 'turn'))}, but turn {show(s.turn.number)} is open")


@audits("LOOP-9")
def _header(s: _Loop, event: Event) -> None:
    """LOOP-9: the first header of an instance is its anchor, written before
    its first request; within a turn the instance cannot change, so an
    anchor after a request of the same turn is a second anchor."""
    reason = get(event.data, "reason")
    if reason in ("initial", "resume"):
        if s.turn is not None and s.turn.requested:
            s.report("LOOP-9", event, f"{reason} anchor after this turn already sent a request (one anchor per loop instance, before its first request)")
        s.anchored = True


class LoopAudit(AuditFold):
    """The loop rules a log shows, one fold (module docstring).  Which steps the session API
    wrote (FMT-7 Writers) is known only at their end: a step's events are held until its
    judge decides it (:class:`ApiStepJudge`), then folded in order."""

    def __init__(self, before: Sequence[Event], dialect: Dialect, first_live_seq: int) -> None:
        super().__init__(before, dialect, first_live_seq)
        self.state = _Loop(dialect=dialect)
        self.judge = ApiStepJudge()

    def step(self, event: Event, plan: SurfacePlan | None) -> None:
        judge = self.judge
        if judge.pending is None and event.type != "step/start":
            self._fold(event)
            return
        for taken in judge.take(event):
            self._fold(taken)

    TAKES_RUNS = True

    def step_run(self, run: ChunkRun) -> None:
        """:meth:`step` of each chunk of a packed row, at once once the step is judged (no
        held events) and the run is live: a chunk is no turn/step boundary and carries no
        surfaceOp, so each only counts as the turn's inner event and streams (:func:`chunk_run`)."""
        if self.judge.pending is not None or run.seq < self.first_live_seq:
            for event in run.members:
                self.step(event, None)
            return
        s = self.state
        if s.turn is not None:
            s.turn.inner += run.count
        chunk_run(s, run)

    def _fold(self, event: Event) -> None:
        s = self.state
        kind = event.type  # read once (compiled, each read of an event's field is a generic attribute read)
        if kind == "step/start":
            s.step_api = self.judge.api
        if kind == "request/header":
            s.config = get(get(event.data, "header"), "config")
        if event.seq < self.first_live_seq:
            return
        if s.turn is not None and kind not in ("turn/start", "turn/end"):
            s.turn.inner += 1
            s.turn.inner_surface = s.turn.inner_surface or event.surface_op is not ABSENT
        match kind:
            case "turn/start":
                _turn_start(s, event)
            case "turn/end":
                _turn_end(s, event)
            case "step/start":
                step_start(s, event)
            case "step/end":
                step_end(s, event)
            case "prompt/blocked" if s.turn is not None:
                _prompt_blocked(s, s.turn, event)
            case "user/message":
                _user_message(s, event)
            case "steering/message":
                _steering(s, event)
            case "assistant/chunk":
                chunk(s, event)
            case "assistant/message" if _is_append(event):
                _assistant_message(s, event)
            case "tool/call":
                _tool_call(s, event)
            case "tool/result":
                _tool_result(s, event)
            case "request/header":
                _header(s, event)
            case "request/context" if s.step is not None and s.dialect is D08 and (
                s.step.streaming or (s.step.finish is not ABSENT and s.step.finish not in FAILED_FINISHES)
            ):
                # DIA-12: "header / request/context if changed -> dispatch": before an attempt, never inside
                # one, nor after the step's successful one (only a failed attempt is retried, DIA-7).
                s.report("DIA-12", event, "request/context inside or after the step's streamed attempt (it is written before dispatch)")
            case _:
                pass

    def finish(self) -> list[Rejected]:
        for taken in self.judge.finish():
            self._fold(taken)
        return self.state.found


audits("LOOP-3", "LOOP-4", "LOOP-5", "LOOP-9", "LOOP-10", "LOOP-11", "LOOP-12", "LOOP-13", "LOOP-14", "LOOP-16", "LOG-11", "DIA-15", "P-LOOP-1", "P-LOOP-5")(LoopAudit)


def audit_loop(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> list[Rejected]:
    """:class:`LoopAudit` run alone."""
    return run_alone(LoopAudit, events, dialect, first_live_seq)
