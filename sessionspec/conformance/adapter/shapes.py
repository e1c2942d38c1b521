"""The shapes of the operation language an adapter may declare, one table (issue 45, part 1).

A *shape* is the smallest part of an operation the kit can generate or leave out on its own: a reply
kind, a prompt kind, an agent option, a contributor kind, an interrupt window or abort kind.  An
adapter declares the shapes it implements in ``hello`` (``features``, capabilities.py); every vector
that carries another shape is skipped and ``conform`` generates none; an ``unsupported`` answer whose
words name a shape of the refused operation removes only that shape (:func:`named_by`).

What every adapter must implement is not a shape: a plain prompt, a ``text`` reply (with its chunking,
usage or none), an agent's system prompt and tools, a ``cancel``.

Names are flat, or ``family/member``: ``interrupts/after-stream``, ``contributors/throwing``.  A
declared family covers each of its members, and a declared member covers its family's name (declaring
``interrupts/after-stream`` declares interrupts, at that window only) -- :func:`covered`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

from sessionspec.conformance.adapter.decode import INTERRUPT_KINDS, WINDOWS

Op = dict[str, Any]


@final
@dataclass(frozen=True, slots=True)
class Shape:
    """One declarable shape: its name, what carries it in the operation language, the rule it exercises,
    and the words an ``unsupported`` answer may name it by (besides its name)."""

    name: str
    what: str
    rule: str
    keys: tuple[str, ...] = ()

    @property
    def family(self) -> str | None:
        return self.name.split("/", 1)[0] if "/" in self.name else None


def _window_shape(window: str) -> Shape:
    return Shape(f"interrupts/{window}", f"an interrupt at window `{window}` (`send.interrupt.window`)", "LOOP-15", (window,))


SHAPES: Final[tuple[Shape, ...]] = (
    # the session and the agent
    Shape("persistence", "init with a seed log (a session loaded from storage, `initial.log`)", "LOG-8", ("log", "seed")),
    Shape("provider-model", "an agent `provider` or `model` set (init or configure)", "LOOP-8", ("provider", "model")),
    Shape("request-config", "an agent `requestConfig` (an `agent/request` listener's config)", "LOOP-8",
          ("requestConfig", "request-config")),
    Shape("contributors", "session-prefix contributors in the agent (`contributors`, plain)", "PFX-4",
          ("contributor", "contributors")),
    Shape("contributors/throwing", "a contributor that throws (`throws`)", "PFX-12", ("throws", "throwing")),
    Shape("contributors/inject", "a contributor that injects while composing (`inject`)", "PFX-8", ("inject",)),
    Shape("contributors/mutate-after", "a contributor that edits what it returned (`mutateAfter`)", "PFX-6",
          ("mutateAfter", "mutate-after")),
    Shape("contributors/lossy", "a contributor whose value is not lossless JSON (`lossy`)", "PFX-13", ("lossy",)),
    Shape("contributors/scoped", "a contributor scoped to an agent (`scope`)", "PFX-4", ("scope", "scoped")),
    Shape("compaction", "compact-basic mounted in the agent (`compaction`)", "CMP-6", ("compaction",)),
    Shape("prune", "the tool-result prune of compact-basic (`compaction.prune`)", "PRN-4", ("prune",)),
    # the prompt and the turn
    Shape("prompt-blocked", "a prompt a prompt-submit listener blocks (`prompt.blockReason`)", "LOOP-3",
          ("blockReason", "blocked")),
    Shape("prompt-submit-error", "a prompt-submit listener that throws (`prompt.submitError`)", "LOOP-3",
          ("submitError",)),
    Shape("prompt-context", "prompt contexts (`prompt.contexts`)", "LOOP-4", ("contexts", "context")),
    Shape("pre-step-error", "a pre-step listener that throws (`send.preStepError`)", "LOOP-16", ("preStepError",)),
    Shape("steering", "steering messages queued while a turn runs (`send.steering`)", "LOOP-13", ("steering",)),
    # the replies
    Shape("tool-calls", "a reply with tool calls (`kind: \"tool-calls\"`, `toolCalls`)", "LOOP-12",
          ("tool-calls", "toolCalls")),
    Shape("tool-error", "a tool call whose result is an error (`toolCalls[].isError`)", "LOOP-12", ("isError",)),
    Shape("deferred-context", "context a tool defers (`toolCalls[].deferred`)", "LOOP-12", ("deferred",)),
    Shape("reply-empty", "a reply with no content (`kind: \"empty\"`)", "DER-5", ("empty",)),
    Shape("reply-error-thrown", "a request error the stream throws (`kind: \"error-thrown\"`)", "LOOP-14",
          ("error-thrown",)),
    Shape("reply-error-in-band", "a request error in the stream's finish chunk (`kind: \"error-in-band\"`)", "LOOP-14",
          ("error-in-band",)),
    Shape("request-retry", "a request error the request-error listener retries (`retry: true`)", "LOOP-14", ("retry",)),
    Shape("reasoning", "a reasoning block (`reasoning`)", "LOOP-11", ("reasoning",)),
    Shape("max-tokens", "a stream that finishes max-tokens (`maxTokens: true`)", "LOG-11", ("maxTokens", "max-tokens")),
    Shape("continuation", "a turn-continuation reason (`continueWith`)", "LOOP-13", ("continueWith", "continuation")),
    Shape("request-inject", "an inject() during agent/request (`requestInject`)", "LOOP-6", ("requestInject",)),
    Shape("step-result-error", "an agent/step-result listener that throws (`stepResultError`)", "LOOP-11",
          ("stepResultError",)),
    Shape("request-mutation", "a stream listener that mutates the request (`mutationError`)", "WIRE-3",
          ("mutationError", "mutation")),
    Shape("change-between-steps", "the system prompt or tools changed while the tools run (`systemAfter`, `toolsAfter`)",
          "LOOP-9", ("systemAfter", "toolsAfter")),
    # interrupts: a window each, and the abort kinds besides cancel
    Shape("interrupts", "an interrupt fired inside a turn (`send.interrupt`): every window and kind", "LOOP-15",
          ("interrupt", "interrupts")),
    *(_window_shape(window) for window in WINDOWS),
    *(Shape(f"interrupts/{kind}", f"an interrupt of kind `{kind}` (`send.interrupt.kind`)", "LOOP-15", (kind,))
      for kind in INTERRUPT_KINDS if kind != "cancel"),
    # the layers below the loop
    Shape("D08", "the later dialect 611615650f (`dialect: \"D08\"` in check or compact)", "DIA-1", ("D08",)),
)

BY_NAME: Final[Mapping[str, Shape]] = {s.name: s for s in SHAPES}


def covered(name: str, declared: Iterable[str]) -> bool:
    """Whether a declaration covers shape ``name``: it names it, its family, or (for a family) one of
    its members."""
    every = set(declared)
    family = name.split("/", 1)[0]
    return name in every or ("/" in name and family in every) or any(d.startswith(name + "/") for d in every)


# --------------------------------------------------------------------------- which shapes an operation carries


def _agents(op: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    agent = op.get("agent")
    return [agent] if isinstance(agent, Mapping) else []


def agent_shapes(agent: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    if "provider" in agent or "model" in agent:
        out.add("provider-model")
    if agent.get("requestConfig"):
        out.add("request-config")
    contributors = agent.get("contributors") or []
    if contributors:
        out.add("contributors")
    for c in contributors if isinstance(contributors, list) else []:
        if not isinstance(c, Mapping):
            continue
        for key, name in (("throws", "throwing"), ("inject", "inject"), ("mutateAfter", "mutate-after"),
                          ("lossy", "lossy"), ("scope", "scoped")):
            if c.get(key):
                out.add(f"contributors/{name}")
    compaction = agent.get("compaction")
    if compaction is not None:
        out.add("compaction")
        if isinstance(compaction, Mapping) and compaction.get("prune") is not None:
            out.add("prune")
    return out


_REPLY_KINDS: Final = {"empty": "reply-empty", "error-thrown": "reply-error-thrown", "error-in-band": "reply-error-in-band"}
_REPLY_KEYS: Final = (("retry", "request-retry"), ("reasoning", "reasoning"), ("maxTokens", "max-tokens"),
                      ("continueWith", "continuation"), ("requestInject", "request-inject"),
                      ("stepResultError", "step-result-error"), ("mutationError", "request-mutation"),
                      ("systemAfter", "change-between-steps"), ("toolsAfter", "change-between-steps"))


def reply_shapes(reply: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    kind = reply.get("kind", "text")
    if kind in _REPLY_KINDS:
        out.add(_REPLY_KINDS[kind])
    calls = reply.get("toolCalls") or []
    if kind == "tool-calls" or calls:
        out.add("tool-calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, Mapping) and call.get("isError"):
            out.add("tool-error")
        if isinstance(call, Mapping) and call.get("deferred"):
            out.add("deferred-context")
    out |= {name for key, name in _REPLY_KEYS if reply.get(key) not in (None, False)}
    return out


def op_shapes(op: Mapping[str, Any]) -> set[str]:
    """Every shape operation ``op`` carries (its agent's, its prompt's, its replies', its interrupt's)."""
    out: set[str] = set()
    for agent in _agents(op):
        out |= agent_shapes(agent)
    if op.get("op") == "init" and op.get("log"):
        out.add("persistence")
    if op.get("dialect") == "D08":
        out.add("D08")
    if op.get("op") != "send":
        return out
    prompt = op.get("prompt")
    if isinstance(prompt, Mapping):
        out |= {name for key, name in (("blockReason", "prompt-blocked"), ("submitError", "prompt-submit-error"),
                                       ("contexts", "prompt-context")) if prompt.get(key)}
    if op.get("preStepError") is not None:
        out.add("pre-step-error")
    if op.get("steering"):
        out.add("steering")
    interrupt = op.get("interrupt")
    if isinstance(interrupt, Mapping):
        out.add(f"interrupts/{interrupt.get('window')}")
        if interrupt.get("kind", "cancel") != "cancel":
            out.add(f"interrupts/{interrupt.get('kind')}")
    for reply in op.get("replies") or []:
        if isinstance(reply, Mapping):
            out |= reply_shapes(reply)
    return out


# --------------------------------------------------------------------------- leaving a shape out


def _agent_without(agent: Mapping[str, Any], shape: str) -> dict[str, Any]:
    out = dict(agent)
    match shape:
        case "provider-model":
            out.pop("provider", None)
            out.pop("model", None)
        case "request-config":
            out.pop("requestConfig", None)
        case "contributors":
            out.pop("contributors", None)
        case "compaction":
            out.pop("compaction", None)
        case "prune" if isinstance(out.get("compaction"), Mapping):
            out["compaction"] = {k: v for k, v in out["compaction"].items() if k != "prune"}
        case _ if shape.startswith("contributors/") and isinstance(out.get("contributors"), list):
            out["contributors"] = _contributors_without(out["contributors"], shape.removeprefix("contributors/"))
    return out


_CONTRIBUTOR_KEYS: Final = {"throwing": "throws", "inject": "inject", "mutate-after": "mutateAfter", "lossy": "lossy"}


def _contributors_without(contributors: list[Any], kind: str) -> list[Any]:
    """The contributors with kind ``kind`` left out: a scoped contributor is dropped (unscoped it would run
    for every agent), the other kinds lose the key that makes them that kind."""
    if kind == "scoped":
        return [c for c in contributors if not (isinstance(c, Mapping) and c.get("scope"))]
    key = _CONTRIBUTOR_KEYS[kind]
    return [{k: v for k, v in c.items() if k != key} if isinstance(c, Mapping) else c for c in contributors]


def _reply_without(reply: Mapping[str, Any], shape: str) -> dict[str, Any]:
    out = dict(reply)
    kind = out.get("kind", "text")
    if _REPLY_KINDS.get(kind) == shape or (shape == "tool-calls" and (kind == "tool-calls" or out.get("toolCalls"))):
        # The reply becomes a plain text reply (its text kept when it had one).
        return {"kind": "text", "text": out.get("text") or "ok",
                **({"textChunks": out["textChunks"]} if out.get("text") and "textChunks" in out else {})}
    if shape in ("tool-error", "deferred-context") and isinstance(out.get("toolCalls"), list):
        key = "isError" if shape == "tool-error" else "deferred"
        out["toolCalls"] = [{k: v for k, v in c.items() if k != key} if isinstance(c, Mapping) else c for c in out["toolCalls"]]
    for key, name in _REPLY_KEYS:
        if name == shape:
            out.pop(key, None)
    return out


def without(op: Mapping[str, Any], shape: str) -> Op:
    """Operation ``op`` with ``shape`` left out, still a valid operation: a key removed, a reply made a
    plain text reply, an interrupt removed."""
    out = dict(op)
    if isinstance(out.get("agent"), Mapping):
        out["agent"] = _agent_without(out["agent"], shape)
    if shape == "persistence":
        out.pop("log", None)
    if out.get("op") != "send":
        return out
    prompt = out.get("prompt")
    keys = {"prompt-blocked": "blockReason", "prompt-submit-error": "submitError", "prompt-context": "contexts"}
    if shape in keys and isinstance(prompt, Mapping):
        out["prompt"] = {k: v for k, v in prompt.items() if k != keys[shape]}
    if shape == "pre-step-error":
        out.pop("preStepError", None)
    if shape == "steering":
        out.pop("steering", None)
    if shape.startswith("interrupts/") and shape in op_shapes({"op": "send", "interrupt": out.get("interrupt")}):
        out.pop("interrupt", None)
    if isinstance(out.get("replies"), list):
        out["replies"] = [_reply_without(r, shape) if isinstance(r, Mapping) else r for r in out["replies"]]
    return out


def restrict(op: Mapping[str, Any], keeps: Callable[[str], bool]) -> Op:
    """``op`` with every shape ``keeps`` refuses left out (repeated: leaving one out may change the others)."""
    out = dict(op)
    while True:
        dropped = sorted(s for s in op_shapes(out) if not keeps(s))
        if not dropped:
            return out
        out = without(out, dropped[0])


# --------------------------------------------------------------------------- an adapter's words


_WORD: Final = re.compile(r"[A-Za-z0-9_/.-]+")


def named_by(words: str, candidates: Iterable[str]) -> list[str]:
    """The shapes among ``candidates`` that an ``unsupported`` answer's ``words`` name: by the shape's name
    or one of its keys, as a whole word (``unsupported: reply kind error-thrown`` names
    ``reply-error-thrown``), case-insensitively; words that name a family (``interrupts``) name the family."""
    found = {w.strip(".").lower() for w in _WORD.findall(words)}
    every = set(candidates)
    every |= {name.split("/", 1)[0] for name in every if "/" in name}  # a family names all its members
    out: set[str] = set()
    for name in every:
        shape = BY_NAME.get(name)
        keys = {name, *(shape.keys if shape is not None else ())}
        if any(k.lower() in found for k in keys):
            out.add(name)
    return sorted(n for n in out if "/" not in n or n.split("/", 1)[0] not in out)


def table_markdown() -> str:
    """The table docs/conformance.md shows (a test keeps the two equal)."""
    rows = ["| feature | what carries it | rule |", "|---|---|---|"]
    rows += [f"| `{s.name}` | {s.what} | {s.rule} |" for s in SHAPES]
    return "\n".join(rows)


__all__ = ["BY_NAME", "SHAPES", "Shape", "agent_shapes", "covered", "named_by", "op_shapes", "reply_shapes", "restrict",
           "table_markdown", "without"]
