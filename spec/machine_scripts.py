"""What the loop machine (``spec/machines.py``) feeds the loop: contributors, replies, a summarizer, compact-basic.

A :class:`ContributorSource` is a prefix contributor as the machine manages it (its content drifts by
version); :func:`replies_of` turns a drawn reply kind into the model replies of one turn; :func:`summarize`
stands in for the summarization model (CMP-18) and :func:`compaction_plugin` mounts compact-basic with a
small context window, so compactions happen regularly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hypothesis import strategies as st

from sessionspec.model.compaction import CompactConfig, SummarizerOutput, SummaryCall
from sessionspec.model.jsonval import Json, JsonObject, freeze
from sessionspec.model.loop import CompactionPlugin, InterruptKind, Reply, ReplyKind, ToolCallSpec, Window, text_content
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.prune import PruneConfig

SHOUT_TOOL: Final = freeze({"name": "shout", "description": "a second tool",
                            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}})


@dataclass(slots=True, kw_only=True)
class ContributorSource:
    """A contributor as the machine manages it: content drifts by version."""

    ident: int
    idiom: Idiom
    version: int = 0
    inject: bool = False
    mutate_after: bool = False
    lossy: bool = False
    scope: str | None = None

    def contributor(self) -> Contributor:
        inject = None
        if self.inject:
            inject = JsonObject((("content", text_content(f"injected by c{self.ident}")),
                                 ("source", JsonObject((("kind", "plugin"), ("plugin", f"c{self.ident}"))))))
        return Contributor(idiom=self.idiom, content=(prefix_message(f"<pfx c{self.ident} v{self.version}>"),),
                           inject=inject, mutate_after=self.mutate_after, lossy=self.lossy, scope=self.scope)


REPLY_KINDS: Final = st.sampled_from(["text", "reasoning", "empty", "tools", "continue", "inject"])
# What an agent/request listener may set (LOOP-7): any key, the seed's own included; "" fails the request.
LISTENER_VALUES: Final[dict[str, tuple[Json, ...]]] = {
    "provider": ("mock", "other-provider", ""), "model": ("mock-1", "other-model"), "reasoningEffort": ("low", "high"),
    "temperature": (0, 0.5, 1), "maxTokens": (64, 4096), "stop": (("\n",),), "topP": (0.9,)}
LISTENER_CHANGES: Final = st.lists(st.sampled_from(sorted(LISTENER_VALUES)), unique=True, max_size=4).flatmap(
    lambda keys: st.tuples(*(st.tuples(st.just(k), st.sampled_from(LISTENER_VALUES[k])) for k in keys))).map(JsonObject)
WINDOWS: Final = st.sampled_from(list(Window))
KINDS: Final = st.sampled_from(list(InterruptKind))


def replies_of(kind: str, turn: int) -> tuple[Reply, ...]:
    """The model's replies in turn ``turn`` for a drawn reply kind (:data:`REPLY_KINDS`)."""
    match kind:
        case "reasoning":
            return (Reply(text=f"answer {turn}", reasoning="thinking"),)
        case "empty":
            return (Reply(kind=ReplyKind.EMPTY),)
        case "tools":
            call = ToolCallSpec(call_id=f"call-{turn}", name="echo", arguments='{"text":"ping"}', result="echo:ping")
            return (Reply(kind=ReplyKind.TOOL_CALLS, text="let me echo", tool_calls=(call,)), Reply(text="done"))
        case "continue":
            return (Reply(text="first", continue_with="keep going"), Reply(text="second"))
        case "inject":
            inject = JsonObject((("content", text_content(f"request inject {turn}")),
                                 ("source", JsonObject((("kind", "plugin"), ("plugin", "req"))))))
            return (Reply(text="one", request_inject=inject, continue_with="again"), Reply(text="two"))
        case _:
            return (Reply(text=f"answer {turn}"),)


# A fake summarizer (CMP-18: the summary comes from outside the model): short,
# and naming how many messages it saw, so a re-summarisation is visible.
def summarize(call: SummaryCall) -> SummarizerOutput:
    text = f"summary of {len(call.input.messages)} messages"
    return SummarizerOutput(summary=text_content(text), provider=call.provider, model=call.model,
                            max_tokens=call.max_tokens)


INSTRUCTION: Final = "Condense the conversation above into a checkpoint."
BIG_PRUNE: Final = PruneConfig(threshold_chars=400, head_chars=100, tail_chars=50)


def compaction_plugin(window: int, prune: bool, ratio: float = 0.5) -> CompactionPlugin:
    """compact-basic with a small context window (threshold ``floor(window x ratio)``) so compactions happen
    regularly; at ratio 0.7 the retained budget is the default ratio (``floor(window x 0.16)``), so an odd
    window makes both budgets fractional."""
    config = (CompactConfig(threshold_ratio=0.5, retain_tokens=window // 8, max_tokens=128) if ratio == 0.5
              else CompactConfig(threshold_ratio=ratio, max_tokens=128))
    return CompactionPlugin(summarizer=summarize, instruction=INSTRUCTION, context_window=window, config=config,
                            prune=BIG_PRUNE if prune else None)
