"""Summarization (CMP-16..CMP-21): the summarizer's input and request, and the framed summary.

The A55 definitions; D08's input and instruction message are overridden in
:mod:`model.compaction.d08` (DIA-17).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.records import CHECKPOINT_PREAMBLE, SUMMARY_CLOSE, SUMMARY_OPEN, SummarizationInput, SummaryCall
from sessionspec.model.derive import derive_nodes
from sessionspec.model.header import EpochHeader, prefix_messages
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get
from sessionspec.model.log import Event
from sessionspec.model.meter import estimate_message
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


@implements("CMP-16")
def summary_input(events: Sequence[Event], shadowed: Sequence[int], header: EpochHeader | Absent) -> SummarizationInput | Rejected:
    """CMP-16: "The summarization input MUST be `{system?: H.system, tools?: H.tools, messages:
    (H.messagePrefix or []) ++ [derived message of each shadowed node, in surface order, skipping no-message
    nodes]}` with `H = requestHeader()`."

    CMP-16: ``messages = (H.messagePrefix or []) ++ derived shadowed messages``
    (no-message nodes skipped: DER-4 over the shadowed nodes), with H's system and tools.

    pre: all(0 <= seq < len(events) for seq in shadowed)
    """
    derived = derive_nodes(shadowed, events)
    if isinstance(derived, Rejected):
        return derived
    return input_with_envelope(header, (*prefix_messages(header), *derived))


def input_with_envelope(header: EpochHeader | Absent, messages: tuple[Json, ...]) -> SummarizationInput:
    """The input with H's system and tools (absent when there is no header)."""
    if isinstance(header, EpochHeader):
        return SummarizationInput(system=header.system, tools=header.tools, messages=messages)
    return SummarizationInput(system=ABSENT, tools=ABSENT, messages=messages)


def instruction_message(instruction: str) -> JsonObject:
    """CMP-17: the instruction is a plain user message ``{role:"user", content:[text]}``."""
    block = JsonObject((("type", "text"), ("text", instruction)))
    return JsonObject((("role", "user"), ("content", (block,))))


@implements("CMP-17")
def summarizer_request_for(call: SummaryCall, final_message: JsonObject) -> JsonObject:
    """CMP-17: "The default summarizer MUST call the model once, outside the loop (unmarked, unfrozen, no
    events), with `{provider, model, messages: input.messages ++ [{role:"user", content:[{type:"text", text:
    COMPACTION_INSTRUCTION}]}], system?, tools?, maxTokens: policy.maxTokens, sessionId,
    purpose:"compaction", signal?}`."

    CMP-17: the default summarizer's one model call, in the real key order
    ``provider, model, messages, system?, tools?, maxTokens, purpose``; the
    instruction is the last message.  ``sessionId`` (not in the log) and the
    signal are omitted."""
    pairs: list[tuple[str, Json]] = [
        ("provider", call.provider),
        ("model", call.model),
        ("messages", (*call.input.messages, final_message)),
    ]
    if call.input.system is not ABSENT:
        pairs.append(("system", call.input.system))
    if call.input.tools is not ABSENT:
        pairs.append(("tools", call.input.tools))
    pairs.append(("maxTokens", call.max_tokens))
    pairs.append(("purpose", "compaction"))
    return JsonObject(pairs)


@implements("CMP-18")
def summary_text_blocks(summary: Sequence[Json]) -> tuple[Json, ...] | Rejected:
    """CMP-18: "Summarizer output MUST map: finish `error`/`aborted` → raise with the failure's code;
    `max-tokens` → raise "summarization truncated at the token cap (incomplete checkpoint)" code
    `MAX_TOKENS`; otherwise keep only `text` blocks; no block with non-whitespace text → raise
    "summarization produced no text summary content"."

    CMP-18: keep only ``text`` blocks; none with non-whitespace text rejects.
    """
    kept = tuple(b for b in summary if get(b, "type") == "text")
    if not any(isinstance(get(b, "text"), str) and str(get(b, "text")).strip() for b in kept):
        return Rejected(rule="CMP-18", reason="summarization produced no text summary content")
    return kept


@implements("CMP-20")
def frame_summary(summary: Sequence[Json]) -> tuple[Json, ...]:
    """CMP-20: "The framed summary MUST be `[{type:"text", text: PREAMBLE + "\\n\\n<compacted-summary>"}] ++
    summary ++ [{type:"text", text:"</compacted-summary>"}]` (Appendix A)."

    CMP-20: ``[PREAMBLE + "\\n\\n<compacted-summary>"] ++ summary ++ ["</compacted-summary>"]``.

    post: len(__return__) == len(summary) + 2
    post: __return__[1:-1] == tuple(summary)
    """
    head = JsonObject((("type", "text"), ("text", CHECKPOINT_PREAMBLE + "\n\n" + SUMMARY_OPEN)))
    tail = JsonObject((("type", "text"), ("text", SUMMARY_CLOSE)))
    return (head, *summary, tail)


@implements("CMP-21")
def check_summary_smaller(framed: Sequence[Json], shadowed_tokens: int) -> int | Rejected:
    """CMP-21: "(summary-smaller) `estimateMessage({role:"user", content: framed})` MUST be strictly less than
    `shadowedTokenCount`; else reject "summary is not smaller than the shadowed content (F estimated framed
    tokens >= S)"."

    CMP-21: ``estimateMessage({role:"user", content: framed}) < shadowedTokenCount``.

    post: isinstance(__return__, Rejected) or 0 <= __return__ < shadowed_tokens
    """
    tokens = estimate_message(JsonObject((("role", "user"), ("content", tuple(framed)))))
    if tokens >= shadowed_tokens:
        return Rejected(
            rule="CMP-21",
            reason=f"summary is not smaller than the shadowed content ({tokens} estimated framed tokens >= {shadowed_tokens})",
        )
    return tokens

