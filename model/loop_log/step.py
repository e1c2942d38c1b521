"""The loop's step as a log shows it, decided event by event: the attempt its chunks stream, the message it
records (LOOP-10, LOOP-11), its tools (LOOP-12), the prompt and contexts that enter the turn (LOOP-3, LOOP-4) and,
in D08, where they and ``request/context`` lie in the step (DIA-12) and what a cancelled stream records (DIA-15).

The loop that writes these events is ``sessionspec.model.loop.streaming`` (``stream``, ``record_assistant``,
``run_tools``) and ``sessionspec.model.loop.turn`` (``prologue``, ``prompt_message_data``).  A step the session
API wrote (FMT-7 Writers, ``StepTrack.api``) is not the loop's: its message and tools are not judged here.
"""

from __future__ import annotations

from sessionspec.model.compaction import is_checkpoint_source
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, deep_eq, get, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.loop_log.track import FAILED_FINISHES, LoopTrack, StepTrack, ToolBlock, same, show
from sessionspec.model.loop_records import message_provenance, prefixed_content
from sessionspec.model.message_shape import result_call_id
from sessionspec.model.placeholder import is_placeholder
from sessionspec.model.rules import decides


def take_chunk(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """An ``assistant/chunk`` of the open step: the attempt it streams (its last usage, its finish, whether it
    showed text or reasoning).  The step's first chunk is its request (the caller runs :func:`~sessionspec.model.
    loop_log.turn.take_request` first).  A failed attempt may be retried in the step (D08, DIA-7: the overlay's
    ``attempt_failed``).  The checker runs its compiled twin, ``sessionspec.fast.loop_log.take_chunk``."""
    data = get(event.data, "chunk")
    kind = get(data, "type")
    st.streaming = kind != "finish"
    match kind:
        case "usage":
            st.attempt_usage = get(data, "usage")
        case "text-delta" | "reasoning-delta" if get(data, "text"):  # a delta without text shows some (ABSENT is true)
            st.attempt_visible = True
        case "finish":
            st.attempt_visible = False
            st.finish = get(get(data, "reason"), "kind")
            if st.finish == "error":
                st.failed_attempt = True
                track.shapes.attempt_failed(st)
        case _:
            pass


def take_deltas(st: StepTrack, visible: bool) -> None:
    """A packed row's deltas (CHK-6) at once: each streams, and ``visible`` when one is a non-empty text or
    reasoning delta (:func:`take_chunk` of each)."""
    st.streaming = True
    if visible:
        st.attempt_visible = True


def usage_retried(st: StepTrack) -> None:
    """DIA-7: the retry is a new attempt, whose usage is its own."""
    st.attempt_usage = ABSENT


def attempt_kept(st: StepTrack) -> None:
    """A55: a failed attempt is a request error (LOOP-14): the step ends, nothing is retried in it."""


@decides("LOOP-11", "LOOP-10", "DIA-15")
def record_message(track: LoopTrack, event: Event) -> None:
    """An ``assistant/message`` append of the open step.  LOOP-11: one message per step (FMT-8), carrying
    ``sourceEventSeqs``, its provenance from the header config (:func:`~sessionspec.model.loop_records.
    message_provenance`), ``usage`` the last usage chunk, and on a ``max-tokens`` finish no tool-call blocks.
    LOOP-10: a request error records no message (the overlay's ``failed_finish_message``).  DIA-15: an
    interrupted message keeps its text/reasoning prefix only."""
    st = track.step
    if st is None:
        return
    if st.message and not st.api:
        track.report("LOOP-11", event, "second assistant/message in one step (the loop records one message per step, FMT-8)")
    st.message = True
    shapes = track.shapes
    if st.api:
        st.blocks = tool_blocks(shapes.message.content(event.data))
        return
    interrupted = get(event.data, "interrupted") is True
    shapes.failed_finish_message(track, st, event)
    if event.source_event_seqs is ABSENT:
        track.report("LOOP-11", event, "assistant/message without sourceEventSeqs (the loop always records its chunk seqs)")
    check_provenance(track, event)
    usage = get(event.data, "usage")
    if not interrupted and not (usage is ABSENT and st.attempt_usage is ABSENT) and (
        usage is ABSENT or st.attempt_usage is ABSENT or not deep_eq(usage, st.attempt_usage)
    ):
        track.report("LOOP-11", event, "usage differs from the step's last usage chunk")
    blocks = tool_blocks(shapes.message.content(event.data))
    if interrupted and blocks:
        track.report("DIA-15", event, "interrupted assistant/message keeps tool-call blocks (a cancelled stream keeps its text/reasoning prefix only)")
    if st.finish == "max-tokens":
        st.max_tokens = True
        if blocks:
            track.report("LOOP-11", event, "assistant/message keeps tool-call blocks after a max-tokens finish (they are dropped)")
        blocks = []
    st.blocks = blocks


def take_config(track: LoopTrack, config: Json | Absent) -> None:
    """A ``request/header``'s config (also a seed's: the header in force): the provenance a message requested with
    it records (:func:`~sessionspec.model.loop_records.message_provenance`), taken once per header."""
    if isinstance(config, JsonObject):
        provenance = message_provenance(config)
        track.routed = (get(provenance, "provider"), get(provenance, "model"))
    else:
        track.routed = None


def check_provenance(track: LoopTrack, event: Event) -> None:
    """LOOP-11's "``provenance`` comes from the header config" (a placeholder in the config hides it, FMT-6)."""
    routed = track.routed
    if routed is None:
        return
    provider, model = track.shapes.message.route(event.data)
    if same(provider, routed[0]) and same(model, routed[1]) or any(is_placeholder(v) for v in routed):
        return
    track.report("LOOP-11", event, f"provenance {provider}/{model} differs from the routed header {routed[0]}/{routed[1]}")


@decides("LOOP-10")
def check_no_message_after_failure(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """LOOP-10 (A55): a finish ``error``/``aborted`` is a request error, and "A request error produces no
    ``assistant/message``"."""
    if st.finish in FAILED_FINISHES:
        track.report("LOOP-10", event, f"assistant/message after an in-band {js_stringify(st.finish)} finish (a request error writes no message)")


def message_after_retry(track: LoopTrack, st: StepTrack, event: Event) -> None:
    """DIA-7 (D08): a failed attempt is retried inside the step; the retry's message follows it."""


def tool_blocks(content: Json | Absent) -> list[ToolBlock]:
    """``(id, name, arguments)`` of each ``tool-call`` block, in content order (LOOP-12's "each ``tool-call``
    block in the content")."""
    if not isinstance(content, tuple):
        return []
    return [(get(b, "id"), get(b, "name"), get(b, "arguments")) for b in content if get(b, "type") == "tool-call"]


@decides("LOOP-12", "LOOP-11")
def take_tool_call(track: LoopTrack, event: Event) -> None:
    """LOOP-12: "For each ``tool-call`` block in the content, the loop MUST append ``tool/call {turn, step, callId,
    name, arguments}``": after the message, in block order, with the block's id, name and arguments.  LOOP-11:
    after a ``max-tokens`` finish no tools run."""
    st = track.step
    if st is None or st.api:
        return
    if not st.message:
        track.report("LOOP-12", event, "tool/call before its step's assistant/message")
        return
    if st.max_tokens:
        track.report("LOOP-11", event, "tool run after a max-tokens finish (no tools run)")
        return
    if st.calls >= len(st.blocks):
        track.report("LOOP-12", event, f"tool/call beyond the {len(st.blocks)} tool-call block(s) of the step's message")
        return
    call_id, name, arguments = st.blocks[st.calls]
    st.calls += 1
    data = event.data
    for key, want in (("callId", call_id), ("name", name), ("arguments", arguments)):
        if not same(get(data, key), want):
            track.report("LOOP-12", event, f"tool/call {key} {show(get(data, key))} differs from tool-call block {st.calls} ({show(want)})")
            return


@decides("LOOP-12")
def take_tool_result(track: LoopTrack, event: Event) -> None:
    """LOOP-12: "Results keep model order; context that tools defer is appended after **all** results of the
    batch" (a ``tool/result`` append; the call it answers is :func:`sessionspec.model.message_shape.result_call_id`)."""
    st = track.step
    if st is None or st.api:
        return
    if st.context_after_results is not None:
        track.report("LOOP-12", event, f"tool/result after deferred context (seq {st.context_after_results}); context follows all results of the batch")
        st.context_after_results = None
    call_id = result_call_id(event, track.shapes.dialect)
    st.results += 1
    index = next((i for i, (cid, _, _) in enumerate(st.blocks) if same(cid, call_id)), None)
    if index is None:
        return  # an unknown call is LOG-13's finding
    if index <= st.last_result:
        track.report("LOOP-12", event, f"tool/result for block {index + 1} after the result for block {st.last_result + 1} (results keep model order)")
    st.last_result = max(st.last_result, index)


@decides("LOOP-3", "P-LOOP-5")
def take_user_message(track: LoopTrack, event: Event) -> None:
    """A ``user/message`` append (a compaction checkpoint is not the loop's).  Outside a step it is the turn's
    prompt or one of its contexts, which a blocked turn has none of (LOOP-3: "The turn has zero steps"); inside
    a step after its results it is context the tools deferred (LOOP-12).  What else it must respect is the
    dialect's (the overlay's ``entering_message``: LOOP-4; D08: DIA-12)."""
    if is_checkpoint_source(get(event.data, "source")):
        return
    t, st = track.turn, track.step
    if t is not None and st is None:
        if t.blocked is not None:
            track.report("LOOP-3", event, f"user/message in the turn of a blocked prompt (seq {t.blocked.seq})")
        t.prompt = True
        t.legacy = t.legacy or str(get(event.data, "id")).startswith("legacy-message:")
    if st is not None and st.last_result >= 0:
        st.context_after_results = st.context_after_results or event.seq
    track.shapes.entering_message(track, event)


@decides("LOOP-4")
def check_prompt_prefix(track: LoopTrack, event: Event) -> None:
    """LOOP-4: "When there are contexts with placement ``prompt-prefix``, the logged prompt MUST be built as
    follows:" the logged ``content`` is :func:`sessionspec.model.loop_records.prefixed_content` (as the loop's
    ``prompt_message_data`` builds it) of the contexts' blocks, those before the delimiter (at least one), and the
    prompt ``displayContent``.  The loop writes an envelope only with such contexts.  A content or display that is
    no list is LOG-12's."""
    envelope = get(event.data, "envelope")
    if envelope is ABSENT:
        return
    content, display, contexts = get(event.data, "content"), get(envelope, "displayContent"), get(envelope, "prefixContexts")
    if not (isinstance(contexts, tuple) and contexts):
        track.report("LOOP-4", event, "user/message envelope names no prefix context (the loop writes an envelope only with one)")
        return
    if not isinstance(content, tuple) or not isinstance(display, tuple):
        return
    # How the blocks are split among the contexts is not logged: their concatenation is.
    cut = len(content) - len(display) - 1
    if cut <= 0 or not same(prefixed_content((content[:cut],), display), content):
        track.report("LOOP-4", event, "user/message with prefix contexts is not context blocks, the delimiter block, then displayContent")


@decides("DIA-12")
def check_entering_placement(track: LoopTrack, event: Event) -> None:
    """DIA-12: "``step/start`` → the entering ``user/message``s (claimed batch, folded contexts) → header /
    ``request/context`` if changed → dispatch": no entering message outside a step (a legacy A55 turn, migrated
    on load with a legacy id, keeps its prompt before ``step/start``), nor inside a step after its attempt's
    first chunk, unless that attempt failed (a retry, DIA-7)."""
    t, st = track.turn, track.step
    if t is not None and st is None and not t.legacy:
        track.report("DIA-12", event, "user/message in a turn outside a step (the D08 loop appends the entering messages after step/start)")
    if st is not None and st.requested and not st.failed_attempt:
        track.report("DIA-12", event, "user/message inside a step after its first chunk (D08 appends the entering messages before dispatch)")


@decides("DIA-12")
def check_request_context(track: LoopTrack, event: Event) -> None:
    """DIA-12: "header / ``request/context`` if changed → dispatch": before an attempt, never inside one, nor
    after the step's successful one (only a failed attempt is retried, DIA-7)."""
    st = track.step
    if st is not None and (st.streaming or (st.finish is not ABSENT and st.finish not in FAILED_FINISHES)):
        track.report("DIA-12", event, "request/context inside or after the step's streamed attempt (it is written before dispatch)")


def no_request_context(track: LoopTrack, event: Event) -> None:
    """A55 writes no ``request/context``."""
