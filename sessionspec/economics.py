"""Cache economics of a request sequence (issue 8).

A request is read as a list of *blocks* in the order providers cache them:
``tools?``, ``system?``, then every message (the session prefix first, then
the derived history; WIRE-2, PFX-11).  A block is priced with the token
estimate of the meter (MTR-1..4) and compared whole (JSONEQ, key order
sensitive): a block is cached or not, partial-block matches are not credited,
which makes every hit figure here a lower bound of what a provider could
report.

A :class:`CacheModel` states a provider's documented cache rules as parameters
(minimum cacheable length, granularity, what counts as a hit); the presets cite
the documentation in ``docs/economics.md``.  The cache holds every earlier
request of the sequence (no TTL, no eviction, one routing key): the model
measures what the *request shapes* allow, not what a busy provider delivers.

The session-prefix note's alternatives, run as executable designs over the
same generated workloads, are in :mod:`sessionspec.designs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, assert_never, final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, u16
from sessionspec.model.wire import Request

# --------------------------------------------------------------------------- meter

CHARS_PER_TOKEN: Final = 4
BLOCK_OVERHEAD: Final = 4
ROLE_OVERHEAD: Final = 4


def ceil4(n: int) -> int:
    """§0.4 ``ceil4(n) = ceil(n / CHARS_PER_TOKEN)``."""
    return -(-n // CHARS_PER_TOKEN)


def _text(v: Json | Absent) -> str:
    return v if isinstance(v, str) else ""


# NOTE: these estimates MUST agree with ``model.meter`` (MTR-2..4), the one
# registered implementation of those rules; they are repeated here (and not
# registered) only so economics does not depend on the meter's replay state
# machine.  tests/replay/test_economics.py asserts the agreement.
def estimate_content(content: Json) -> int:
    """MTR-2 ``price(blocks)``: text/reasoning ``ceil4(U16(text)) + 4``;
    tool-call ``ceil4(U16(name)) + ceil4(U16(arguments)) + 4``; tool-result
    ``price(content) + 4``; any other block ``4 + ceil4(U16(JS(block)))``.
    A string content is one text block (the JS meter prices a bare string the
    same way)."""
    if isinstance(content, str):
        return ceil4(u16(content)) + BLOCK_OVERHEAD
    if not isinstance(content, tuple):  # absent or malformed content prices 0
        return 0
    total = 0
    for block in content:
        kind = get(block, "type")
        if kind in ("text", "reasoning"):
            total += ceil4(u16(_text(get(block, "text")))) + BLOCK_OVERHEAD
        elif kind == "tool-call":
            # A non-string name/arguments prices as "" (the JS length would be NaN; no real log has one).
            total += ceil4(u16(_text(get(block, "name")))) + ceil4(u16(_text(get(block, "arguments")))) + BLOCK_OVERHEAD
        elif kind == "tool-result":
            inner = get(block, "content")
            total += (0 if inner is ABSENT else estimate_content(inner)) + BLOCK_OVERHEAD
        else:
            total += BLOCK_OVERHEAD + ceil4(u16(js_stringify(block)))
    return total


def estimate_message(message: Json) -> int:
    """MTR-3 ``estimateMessage(m) = price(m.content) + 4`` (role ignored)."""
    content = get(message, "content")
    return (0 if content is ABSENT else estimate_content(content)) + ROLE_OVERHEAD


def estimate_system(system: Json) -> int:
    """MTR-4, system part: ``ceil4(U16(system)) + 4``."""
    return ceil4(u16(system if isinstance(system, str) else js_stringify(system))) + BLOCK_OVERHEAD


def estimate_tools(tools: Json) -> int:
    """MTR-4, tools part: ``ceil4(U16(JS(tools))) + 4``."""
    return ceil4(u16(js_stringify(tools))) + BLOCK_OVERHEAD


# --------------------------------------------------------------------------- blocks


class BlockKind(Enum):
    TOOLS = "tools"
    SYSTEM = "system"
    PREFIX = "prefix"
    HISTORY = "history"
    AFTER = "after"  # only the alternative design (b) has request-tail blocks


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One cacheable unit of a request: its kind, position, JS text and price."""

    kind: BlockKind
    index: int
    key: str
    tokens: int

    def label(self) -> str:
        match self.kind:
            case BlockKind.TOOLS | BlockKind.SYSTEM:
                return str(self.kind.value)
            case BlockKind.PREFIX | BlockKind.HISTORY | BlockKind.AFTER:
                return f"{self.kind.value} message {self.index}"
            case _:
                assert_never(self.kind)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestShape:
    """A request as the cache sees it: a routing key and its blocks."""

    route: str
    blocks: tuple[Block, ...]

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)


def shape_of(
    *,
    route: str,
    system: Json | Absent,
    tools: Json | Absent,
    prefix: Sequence[Json],
    history: Sequence[Json],
    after: Sequence[Json] = (),
) -> RequestShape:
    """Blocks in provider cache order: tools, system, prefix, history, after."""
    blocks: list[Block] = []
    if tools is not ABSENT:
        blocks.append(Block(kind=BlockKind.TOOLS, index=0, key="T" + js_stringify(tools), tokens=estimate_tools(tools)))
    if system is not ABSENT:
        blocks.append(Block(kind=BlockKind.SYSTEM, index=0, key="S" + js_stringify(system), tokens=estimate_system(system)))
    for kind, messages in ((BlockKind.PREFIX, prefix), (BlockKind.HISTORY, history), (BlockKind.AFTER, after)):
        for i, m in enumerate(messages):
            blocks.append(Block(kind=kind, index=i, key="M" + js_stringify(m), tokens=estimate_message(m)))
    return RequestShape(route=route, blocks=tuple(blocks))


def shape_of_request(request: Request, prefix_length: int) -> RequestShape:
    """A reconstructed loop request; the first ``prefix_length`` messages are the
    session prefix.  Provider, model and the call config form the routing key:
    a different model never reads another model's cache."""
    route = js_stringify(
        JsonObject(
            (k, v)
            for k, v in (
                ("provider", request.provider),
                ("model", request.model),
                ("reasoningEffort", request.reasoning_effort),
            )
            if v is not ABSENT
        )
    )
    messages = request.messages
    return shape_of(
        route=route,
        system=request.system,
        tools=request.tools,
        prefix=messages[:prefix_length],
        history=messages[prefix_length:],
    )


def shared_blocks(a: RequestShape, b: RequestShape) -> int:
    """The number of leading blocks ``a`` and ``b`` share (0 across routes)."""
    if a.route != b.route:
        return 0
    n = 0
    for x, y in zip(a.blocks, b.blocks):
        if x.key != y.key:
            break
        n += 1
    return n


# --------------------------------------------------------------------------- cache models


class HitRule(Enum):
    """What counts as a cache hit."""

    # Any leading run of blocks shared with an earlier request (OpenAI, neutral).
    LONGEST_PREFIX = "longest-prefix"
    # Only a whole earlier request's input (a cache breakpoint / unit at the
    # end of each request) is reusable (Anthropic with a breakpoint on the
    # last block).
    REQUEST_UNIT = "request-unit"
    # Request units plus the common prefix of two requests, persisted when the
    # provider detects it (DeepSeek "cache prefix units").
    PREFIX_UNIT = "prefix-unit"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheModel:
    """A provider's prompt-cache rules as parameters (see docs/economics.md)."""

    name: str
    min_cacheable: int
    granularity: int
    hit: HitRule
    read_price: float  # cache-read price as a fraction of the full input price
    source: str


NEUTRAL: Final = CacheModel(name="neutral", min_cacheable=0, granularity=1, hit=HitRule.LONGEST_PREFIX, read_price=0.1,
                            source="no provider: every shared leading block is a hit")
OPENAI: Final = CacheModel(name="openai", min_cacheable=1024, granularity=128, hit=HitRule.LONGEST_PREFIX, read_price=0.1,
                           source="OpenAI Prompt Caching: automatic for prompts of 1024 tokens or more, hits in increments of 128 tokens")
ANTHROPIC: Final = CacheModel(name="anthropic", min_cacheable=1024, granularity=1, hit=HitRule.REQUEST_UNIT, read_price=0.1,
                              source="Anthropic prompt caching: prefix up to a cache_control breakpoint; minimum 1024 tokens "
                                     "(Sonnet/Opus; other models 512-4096); cache reads 0.1x")
DEEPSEEK: Final = CacheModel(name="deepseek", min_cacheable=0, granularity=1, hit=HitRule.PREFIX_UNIT, read_price=0.1,
                             source="DeepSeek context caching on disk: a hit must fully match a cache prefix unit "
                                    "(end of each request's input, detected common prefixes)")
PRESETS: Final = {m.name: m for m in (NEUTRAL, OPENAI, ANTHROPIC, DEEPSEEK)}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestCost:
    """Economics of one request against the cache of all earlier ones."""

    index: int
    input_tokens: int
    cache_hit_tokens: int
    shared_with_previous: int  # leading blocks shared with the previous request
    first_difference: str | None  # the first block of this request that differs from the previous one; None: append-extension
    previous_covered: bool  # the whole previous request is a leading part of this one

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cache_hit_tokens


@final
@dataclass(slots=True, kw_only=True)
class _Cache:
    """The units an earlier request left (as block-key tuples, per route)."""

    model: CacheModel
    units: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)
    seen: list[RequestShape] = field(default_factory=list)

    def hit_blocks(self, shape: RequestShape) -> int:
        keys = tuple(b.key for b in shape.blocks)
        match self.model.hit:
            case HitRule.LONGEST_PREFIX:
                return max((shared_blocks(s, shape) for s in self.seen), default=0)
            case HitRule.REQUEST_UNIT | HitRule.PREFIX_UNIT:
                units = self.units.get(shape.route, set())
                return max((len(u) for u in units if keys[: len(u)] == u), default=0)

    def add(self, shape: RequestShape) -> None:
        keys = tuple(b.key for b in shape.blocks)
        units = self.units.setdefault(shape.route, set())
        if self.model.hit is HitRule.PREFIX_UNIT:
            # Common-prefix detection: persist the longest prefix shared with
            # any earlier request as a unit of its own.
            best = max((shared_blocks(s, shape) for s in self.seen), default=0)
            if best > 0:
                units.add(keys[:best])
        units.add(keys)
        # A breakpoint also sits in front of any request-tail slot, so the
        # part before it stays reusable (the most a harness could get).
        tail = next((i for i, b in enumerate(shape.blocks) if b.kind is BlockKind.AFTER), None)
        if tail is not None and tail > 0:
            units.add(keys[:tail])
        self.seen.append(shape)


def metered_hit(model: CacheModel, shared_tokens: int) -> int:
    """A provider's meter over a shared leading part: nothing below the minimum
    cacheable length, else rounded down to the granularity."""
    if shared_tokens < max(model.min_cacheable, 1):
        return 0
    return shared_tokens - shared_tokens % max(model.granularity, 1)


def request_costs(shapes: Sequence[RequestShape], model: CacheModel = NEUTRAL) -> tuple[RequestCost, ...]:
    """Per request: input tokens, cache-hit tokens (the model's meter), and the
    first block that differs from the previous request (drift attribution)."""
    cache = _Cache(model=model)
    out: list[RequestCost] = []
    previous: RequestShape | None = None
    for i, shape in enumerate(shapes):
        hit = cache.hit_blocks(shape)
        hit_tokens = metered_hit(model, sum(b.tokens for b in shape.blocks[:hit]))
        shared = shared_blocks(previous, shape) if previous is not None else 0
        first: str | None = None
        covered = False
        if previous is not None:
            covered = shared == len(previous.blocks)
            if previous.route != shape.route:
                first = "route (provider/model)"
            elif covered:
                first = None  # an append-extension: nothing of the previous request differs
            elif shared < len(shape.blocks):
                first = shape.blocks[shared].label()
            elif shared < len(previous.blocks):
                first = f"(request shorter: {previous.blocks[shared].label()} dropped)"
        out.append(RequestCost(index=i, input_tokens=shape.tokens, cache_hit_tokens=hit_tokens,
                               shared_with_previous=shared, first_difference=first, previous_covered=covered))
        cache.add(shape)
        previous = shape
    return tuple(out)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    requests: int
    input_tokens: int
    cache_hit_tokens: int

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cache_hit_tokens


def totals(costs: Sequence[RequestCost]) -> Totals:
    return Totals(requests=len(costs), input_tokens=sum(c.input_tokens for c in costs),
                  cache_hit_tokens=sum(c.cache_hit_tokens for c in costs))
