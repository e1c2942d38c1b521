"""The token meter (MTR): the real characters/4 heuristic and its replay fold.

Prices count UTF-16 code units (``U16``, RULES §0.4), never code points.  The
meter is a fold over the whole log (MTR-5); a usage anchor lets provider usage
of the latest request replace the heuristic when the envelope is unchanged
(MTR-8, MTR-10).  The request envelope (system, tools, messagePrefix) is priced
only through the latest logged header (MTR-4), never as surface nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, final

from sessionspec.model.assemble import BlockAssembler
from sessionspec.model.derive import project
from sessionspec.model.header import EpochHeader, header_of_event, opt_header_eq
from sessionspec.model.jsonval import ABSENT, Absent, Json, get, js_stringify, u16
from sessionspec.model.log import Dialect, Event, log_view
from sessionspec.model.provenance import cited_stream
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.surface import SurfacePlan, plan_surface_event, splice

CHARS_PER_TOKEN: Final = 4
BLOCK_OVERHEAD: Final = 4
ROLE_OVERHEAD: Final = 4


@implements("MTR-1")
def ceil4(n: int) -> int:
    """MTR-1: "The constants MUST be `CHARS_PER_TOKEN = 4`, `BLOCK_OVERHEAD = 4`, `ROLE_OVERHEAD = 4`; all
    lengths are `U16` (§0.4)."  ``ceil(n / CHARS_PER_TOKEN)`` for a non-negative length.

    pre: n >= 0
    post: CHARS_PER_TOKEN * (__return__ - 1) < n <= CHARS_PER_TOKEN * __return__
    """
    return -(-n // CHARS_PER_TOKEN)


def _text_len(v: Json | Absent) -> int:
    # A non-string text is priced as the empty string: the JS length of a
    # missing field would be NaN, which no real log carries.
    return u16(v) if isinstance(v, str) else 0


@implements("MTR-2")
def price(blocks: Json | Absent) -> int:
    """MTR-2: "`price(blocks)` MUST be the sum over blocks of: `text`/`reasoning` → `ceil4(U16(text)) + 4`;
    `tool-call` → `ceil4(U16(name)) + ceil4(U16(arguments)) + 4`; `tool-result` → `price(block.content) +
    4`; any other block → `4 + ceil4(U16(JS(block)))`."  A string content (legacy shorthand) is
    priced as one text block.

    post: __return__ >= 0
    post: not isinstance(blocks, str) or __return__ == ceil4(u16(blocks)) + BLOCK_OVERHEAD
    post: isinstance(blocks, (str, tuple)) or __return__ == 0
    """
    if isinstance(blocks, str):
        return ceil4(u16(blocks)) + BLOCK_OVERHEAD
    if not isinstance(blocks, tuple):
        return 0
    total = 0
    for block in blocks:
        kind = get(block, "type")
        if kind in ("text", "reasoning"):
            total += ceil4(_text_len(get(block, "text"))) + BLOCK_OVERHEAD
        elif kind == "tool-call":
            total += ceil4(_text_len(get(block, "name"))) + ceil4(_text_len(get(block, "arguments"))) + BLOCK_OVERHEAD
        elif kind == "tool-result":
            total += price(get(block, "content")) + BLOCK_OVERHEAD
        else:
            total += BLOCK_OVERHEAD + ceil4(u16(js_stringify(block)))
    return total


@implements("MTR-3")
def estimate_message(message: Json) -> int:
    """MTR-3: "`estimateMessage(m)` MUST equal `price(m.content) + 4` (the role is ignored)."

    post: __return__ >= ROLE_OVERHEAD
    """
    return price(get(message, "content")) + ROLE_OVERHEAD


@implements("MTR-4")
def estimate_header(header: EpochHeader | Absent, dialect: Dialect = Dialect.A55) -> int:
    """MTR-4: "`estimateHeader(h)` MUST be `0` for an absent header, else `Σ estimateMessage(p) for p in
    h.messagePrefix or []` + (`ceil4(U16(h.system)) + 4` if `system` present) + (`ceil4(U16(JS(h.tools))) +
    4` if `tools` present and non-empty)."  Config is never priced.  DIA-9: D08 prices system and tools
    only (its canonical header has no prefix anyway).

    post: __return__ >= 0
    post: header is not ABSENT or __return__ == 0
    post: header is ABSENT or not isinstance(header.system, str) or __return__ >= ceil4(u16(header.system)) + BLOCK_OVERHEAD
    """
    if header is ABSENT:
        return 0
    total = 0
    if dialect is Dialect.A55 and isinstance(header.message_prefix, tuple):
        total += sum(estimate_message(m) for m in header.message_prefix)
    if isinstance(header.system, str):
        total += ceil4(u16(header.system)) + BLOCK_OVERHEAD
    tools = header.tools
    if tools is not ABSENT and not (isinstance(tools, tuple) and not tools):
        total += ceil4(u16(js_stringify(tools))) + BLOCK_OVERHEAD
    return total


@implements("MTR-7")
def node_price(event: Event, dialect: Dialect = Dialect.A55) -> int | Rejected:
    """MTR-7: "Every surface event MUST be priced as `estimateMessage(derive(event))`, or `0` when it derives
    no message; append pushes `{seq, tokens}` (`surfaceTokens += tokens`); replace locates the positional
    range on the meter's own node list (invalid → reject "replace at seq … has invalid current range"),
    splices in `{seq, tokens}` and adds `tokens − Σ removed`." """
    message = project(event, dialect)
    if isinstance(message, Rejected):
        return message
    return 0 if message is None else estimate_message(message)


class BaselineKind(Enum):
    NONE = "none"
    ESTIMATED = "estimated"
    USAGE = "usage"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    kind: BaselineKind
    tokens: int
    usage: Json | Absent = ABSENT


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PricedNode:
    seq: int
    tokens: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Anchor:
    """MTR-8: the latest request anchor (only one is kept)."""

    header: EpochHeader | Absent
    surface_tokens: int
    baseline: Baseline


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    """MTR-10: the detached result of ``measure``."""

    log_revision: int
    baseline: Baseline
    surface_delta_tokens: int
    total_tokens: int
    surface_tokens: int
    nodes: tuple[PricedNode, ...]
    header: EpochHeader | Absent


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _StepStart:
    turn: Json | Absent
    step: Json | Absent
    surface_tokens: int


@final
@dataclass(slots=True)
class PricedSurface:
    """The priced surface (MTR-7): the surface nodes in order, each priced
    ``estimateMessage(derive(event))``, and their sum ``surfaceTokens``.

    The one priced-surface fold: the meter, compaction, the compaction audit and the generator all
    keep theirs with this class.  It checks nothing but SURF (no step structure, MTR-6: that is the
    meter's), so it also serves session-mode logs (Q-16).  ``seqs`` mirrors ``nodes`` so planning an
    event never rebuilds a list."""

    dialect: Dialect = Dialect.A55
    seqs: list[int] = field(default_factory=list)
    nodes: list[PricedNode] = field(default_factory=list)
    tokens: int = 0

    def plan(self, event: Event, events: Sequence[Event]) -> SurfacePlan | None | Rejected:
        """SURF-9 for ``event`` after ``events`` (the log before it), on these nodes."""
        return plan_surface_event(self.seqs, event, events, self.dialect)

    def commit(self, plan: SurfacePlan, tokens: int) -> None:
        """MTR-7: append pushes ``{seq, tokens}``; replace splices it in (SURF-8)
        and adds ``tokens - Σ removed``."""
        node = PricedNode(seq=plan.seq, tokens=tokens)
        splice(self.seqs, plan, plan.seq)
        removed = splice(self.nodes, plan, node)
        self.tokens += tokens - sum(n.tokens for n in removed)

    def fold(self, event: Event, events: Sequence[Event]) -> Rejected | None:
        """One event: plan, price, commit; on rejection nothing changes."""
        plan = self.plan(event, events)
        if plan is None or isinstance(plan, Rejected):
            return plan
        tokens = node_price(event, self.dialect)
        if isinstance(tokens, Rejected):
            return tokens
        self.commit(plan, tokens)
        return None

    def range_tokens(self, start_idx: int, end_idx: int) -> int:
        """The priced total of ``nodes[start_idx..end_idx]`` (CMP-15's shadowed token count)."""
        return sum(n.tokens for n in self.nodes[start_idx : end_idx + 1])


@final
@dataclass(slots=True)
class MeterState:
    """MTR-5: ``{consumed, header, nodes, surfaceTokens, stepStart, anchor}``;
    ``nodes`` and ``surfaceTokens`` are the priced surface's."""

    dialect: Dialect = Dialect.A55
    consumed: int = 0
    header: EpochHeader | Absent = ABSENT
    surface: PricedSurface = field(default_factory=PricedSurface)
    step_start: _StepStart | None = None
    anchor: Anchor | None = None

    def __post_init__(self) -> None:
        self.surface.dialect = self.dialect

    @property
    def nodes(self) -> list[PricedNode]:
        return self.surface.nodes

    @property
    def surface_tokens(self) -> int:
        return self.surface.tokens


def _bad(rule: str, event: Event, why: str) -> Rejected:
    return Rejected(rule=rule, seq=event.seq, reason=f"token meter: {event.type} {why}")


@implements("MTR-9")
def provider_output_price(event: Event, surface_price: int, events: Sequence[Event]) -> int | Rejected:
    """MTR-9: "Provider-output price: `sourceEventSeqs` absent → `t` (the durable price); else every cited seq
    MUST be `< event.seq`, unique, an `assistant/chunk` of the same turn and step (else reject); feed the
    chunks in citation order to the stream assembler; no blocks → 0, else `price(blocks) + 4`."  The cited
    chunks are :func:`sessionspec.model.provenance.cited_stream`'s (the part ``check`` decides in a log)."""
    if event.source_event_seqs is ABSENT:
        return surface_price
    chunks = cited_stream(event, events.__getitem__)
    if isinstance(chunks, Rejected):
        return chunks
    assembler = BlockAssembler()
    for chunk_event in chunks:
        bad = assembler.feed(get(chunk_event.data, "chunk"))
        if bad is not None:
            return _bad("MTR-9", event, bad)
    blocks = assembler.blocks()
    if isinstance(blocks, str):
        return _bad("MTR-9", event, blocks)
    return 0 if not blocks else price(blocks) + ROLE_OVERHEAD


def _usage_tokens(usage: Json) -> int | None:
    """MTR-8: ``inputTokens + cacheRead + cacheWrite + outputTokens`` (reasoning never added)."""
    total = 0
    for key, required in (("inputTokens", True), ("cacheReadTokens", False), ("cacheWriteTokens", False), ("outputTokens", True)):
        value = get(usage, key)
        if value is ABSENT and not required:
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        total += int(value)
    return total


@implements("MTR-5", "MTR-6", "MTR-8")
def fold_meter_event(state: MeterState, event: Event, events: Sequence[Event]) -> Rejected | None:
    """MTR-5: "The meter MUST be a replay fold per session over the whole log with state `{consumed, header,
    nodes:[{seq,tokens}], surfaceTokens, stepStart, anchor}`, advanced to the tail on every read,
    transactional per event (a malformed event raises and stays unconsumed; state unchanged)."
    MTR-8: "At an `assistant/message` the anchor MUST be replaced: let `H` = the meter's current header and
    `t` = the message's surface price."
    MTR-6: "The fold MUST handle these events as follows: `request/header` → `header =
    canonical(data.header)`; `step/start` → reject if a step is open, else `stepStart = {turn, step,
    surfaceTokens: current}`; `step/end` → reject unless it matches the open step, then clear;
    `assistant/message` → reject unless inside the matching open step (MTR-8)."  ``events`` is the log
    before ``event``."""
    dialect = state.dialect
    plan = state.surface.plan(event, events)
    if isinstance(plan, Rejected):
        return Rejected(rule="MTR-7", seq=event.seq, reason=f"token meter: {plan.reason}", kind=plan.kind)
    tokens = 0
    if plan is not None:
        priced = node_price(event, dialect)
        if isinstance(priced, Rejected):
            return priced
        tokens = priced
    header = state.header
    step_start = state.step_start
    anchor = state.anchor
    turn, step = get(event.data, "turn"), get(event.data, "step")
    if event.type == "request/header":
        read = header_of_event(event, dialect)
        if isinstance(read, Rejected):
            return read
        header = read
    elif event.type == "step/start":
        if step_start is not None:
            return _bad("MTR-6", event, "while a step is open")
        step_start = _StepStart(turn=turn, step=step, surface_tokens=state.surface_tokens)
    elif event.type == "step/end":
        if step_start is None or step_start.turn != turn or step_start.step != step:
            return _bad("MTR-6", event, "does not match the open step")
        step_start = None
    elif event.type == "assistant/message":
        if step_start is None or step_start.turn != turn or step_start.step != step:
            return _bad("MTR-6", event, "outside its open step")
        usage = get(event.data, "usage")
        provider = _usage_tokens(usage) if usage is not ABSENT else None
        if usage is not ABSENT and provider is None:
            return _bad("MTR-8", event, "has malformed usage")
        if provider is not None and header is not ABSENT:
            out = provider_output_price(event, tokens, events)
            if isinstance(out, Rejected):
                return out
            anchor_surface = step_start.surface_tokens + out
            est = estimate_header(header, dialect) + anchor_surface
            baseline = (
                Baseline(kind=BaselineKind.USAGE, tokens=provider, usage=usage)
                if provider >= est
                else Baseline(kind=BaselineKind.ESTIMATED, tokens=est)
            )
        else:
            anchor_surface = step_start.surface_tokens + tokens
            baseline = Baseline(kind=BaselineKind.ESTIMATED, tokens=estimate_header(header, dialect) + anchor_surface)
        anchor = Anchor(header=header, surface_tokens=anchor_surface, baseline=baseline)
    # Commit (nothing above mutated the state).
    if plan is not None:
        state.surface.commit(plan, tokens)
    state.header, state.step_start, state.anchor = header, step_start, anchor
    state.consumed += 1
    return None


def meter_state(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> MeterState | Rejected:
    """MTR-5: the replay fold over the whole log."""
    state = MeterState(dialect=dialect)
    for index, event in enumerate(events):
        bad = fold_meter_event(state, event, log_view(events, index))
        if bad is not None:
            return bad
    return state


@implements("MTR-10")
def measure_state(state: MeterState, override: EpochHeader | Absent = ABSENT) -> Measurement:
    """MTR-10: "`measure(session, override=ABSENT)` MUST use `header = canonical(override)` if given else the
    folded header."  Then the anchor baseline plus the signed surface delta when the anchor's header
    equals the effective header; ``none`` for a headerless empty-priced surface (Q-23); else the full
    estimate.  An override never changes nodes."""
    header = state.header if override is ABSENT else override
    anchor = state.anchor
    if anchor is not None and opt_header_eq(anchor.header, header, state.dialect):
        baseline = anchor.baseline
        delta = state.surface_tokens - anchor.surface_tokens
    elif header is ABSENT and state.surface_tokens == 0:
        baseline, delta = Baseline(kind=BaselineKind.NONE, tokens=0), 0
    else:
        baseline = Baseline(kind=BaselineKind.ESTIMATED, tokens=estimate_header(header, state.dialect) + state.surface_tokens)
        delta = 0
    return Measurement(
        log_revision=state.consumed,
        baseline=baseline,
        surface_delta_tokens=delta,
        total_tokens=max(0, baseline.tokens + delta),
        surface_tokens=state.surface_tokens,
        nodes=tuple(state.nodes),
        header=header,
    )


def measure(
    events: Sequence[Event], dialect: Dialect = Dialect.A55, override: EpochHeader | Absent = ABSENT
) -> Measurement | Rejected:
    """``measure(session, override?)`` over a whole log (MTR-5, MTR-10)."""
    state = meter_state(events, dialect)
    if isinstance(state, Rejected):
        return state
    return measure_state(state, override)
