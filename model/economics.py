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

The second half (:func:`compare_designs`) runs the session-prefix note's
alternatives as executable designs over the same generated workloads.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, assert_never, final

from model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, u16
from model.wire import Request

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
# machine.  tests/test_economics.py asserts the agreement.
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


# --------------------------------------------------------------------------- alternative designs


class Design(Enum):
    """The session-prefix note's design and its rejected alternatives."""

    FROZEN_PREFIX = "a"  # the design: composed once per loop instance, request-only
    # The design plus its routing rule for mid-session changes: a durable
    # context/message restating the new opener, appended once (paid once).
    FROZEN_PREFIX_NOTICE = "a+"
    SLOTS = "b"  # before/after slots recomputed every step
    DURABLE_OPENER = "c"  # inject() into history at session start
    SYSTEM_SECTION = "d"  # a section of the system prompt, re-assembled per step
    PER_TURN = "e"  # composed per turn instead of per instance


DESIGN_TITLES: Final = {
    Design.FROZEN_PREFIX: "(a) frozen session prefix",
    Design.FROZEN_PREFIX_NOTICE: "(a+) frozen prefix + durable notice",
    Design.SLOTS: "(b) before/after slots per step",
    Design.DURABLE_OPENER: "(c) durable opener in history",
    Design.SYSTEM_SECTION: "(d) system-prompt section",
    Design.PER_TURN: "(e) compose per turn",
}


class Workload(Enum):
    """When the opener's content changes."""

    NEVER = "never changes"
    AT_RESUME = "changes at resume"
    MID_SESSION = "changes mid-session"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A generated session: instances of turns of steps, with message sizes.

    ``opener_version(instance, turn)`` is the opener's current version at the
    start of that turn (the world the contributor reads).  ``after_chars`` is
    the size of design (b)'s per-step after-slot content (0: no after slot).
    """

    workload: Workload
    instances: int
    turns: int
    steps: int
    opener_chars: int
    system_chars: int
    message_chars: tuple[int, ...]  # sizes drawn in order for every appended history message
    after_chars: int
    change_turn: int  # MID_SESSION: the (0-based) turn of instance 0 from which the opener has version 1
    notice_chars: int  # design (a+): size of the durable change notice

    def opener_version(self, instance: int, turn: int) -> int:
        match self.workload:
            case Workload.NEVER:
                return 0
            case Workload.AT_RESUME:
                return instance
            case Workload.MID_SESSION:
                return 0 if instance == 0 and turn < self.change_turn else 1


def generate_scenario(workload: Workload, seed: int, *, instances: int = 2, turns: int = 3, steps: int = 3,
                      opener_chars: int = 8000, system_chars: int = 2000, after_chars: int = 800,
                      notice_chars: int | None = None) -> Scenario:
    """A deterministic scenario from ``seed`` (message sizes 40..2400 chars).
    The change notice defaults to a full restatement of the opener."""
    rng = random.Random(seed)
    count = instances * turns * (1 + steps)
    return Scenario(workload=workload, instances=instances, turns=turns, steps=steps, opener_chars=opener_chars,
                    system_chars=system_chars, message_chars=tuple(rng.randint(40, 2400) for _ in range(count)),
                    after_chars=after_chars, change_turn=max(1, turns // 2) if instances == 1 else turns - 1,
                    notice_chars=opener_chars if notice_chars is None else notice_chars)


def _filler(tag: str, chars: int) -> str:
    return ((tag + " ") * (chars // (len(tag) + 1) + 1))[:chars]


def _text_message(role: str, tag: str, chars: int) -> JsonObject:
    return JsonObject((("role", role), ("content", (JsonObject((("type", "text"), ("text", _filler(tag, chars)))),))))


def _opener(s: Scenario, version: int) -> JsonObject:
    return _text_message("user", f"<opener v{version}>", s.opener_chars)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DesignRequest:
    shape: RequestShape
    instance: int
    first_of_instance: bool
    opener_version: int | None  # the opener version this request carries (None: none)
    current_version: int  # the version the world has at this request
    header_changed: bool  # the request-only envelope changed inside the instance (a `change` header)


def design_requests(s: Scenario, design: Design) -> tuple[DesignRequest, ...]:
    """Every request the design sends for the scenario, in order.

    Each turn appends a user message; each step sends one request and then
    appends the assistant reply (history grows; no compaction).
    """
    base_system = "s" * s.system_chars
    tools: Json = (JsonObject((("name", "read"), ("description", "read a file"), ("parameters", JsonObject()))),)
    history: list[Json] = []
    sizes = iter(s.message_chars)
    out: list[DesignRequest] = []
    durable: int | None = None
    for instance in range(s.instances):
        frozen: int | None = None
        noticed: int | None = None
        envelope_key: str | None = None
        first = True
        for turn in range(s.turns):
            turn_version: int | None = None
            history.append(_text_message("user", f"u{instance}.{turn}", next(sizes)))
            for step in range(s.steps):
                current = s.opener_version(instance, turn)
                system: Json = base_system
                prefix: list[Json] = []
                after: list[Json] = []
                carried: int | None
                match design:
                    case Design.FROZEN_PREFIX:
                        if frozen is None:
                            frozen = current
                        carried = frozen
                        prefix = [_opener(s, frozen)]
                    case Design.FROZEN_PREFIX_NOTICE:
                        if frozen is None:
                            frozen = current
                        if current != (frozen if noticed is None else noticed):
                            noticed = current
                            history.append(_text_message("user", f"<opener changed: v{current}>", s.notice_chars))
                        carried = frozen if noticed is None else noticed
                        prefix = [_opener(s, frozen)]
                    case Design.SLOTS:
                        carried = current
                        prefix = [_opener(s, current)]
                        if s.after_chars > 0:
                            after = [_text_message("user", f"after {instance}.{turn}.{step}", s.after_chars)]
                    case Design.DURABLE_OPENER:
                        if durable is None:
                            durable = current
                            history.insert(0, _opener(s, durable))
                        carried = durable
                    case Design.SYSTEM_SECTION:
                        carried = current
                        system = base_system + "\n" + _filler(f"<opener v{current}>", s.opener_chars)
                    case Design.PER_TURN:
                        if turn_version is None:
                            turn_version = current
                        carried = turn_version
                        prefix = [_opener(s, turn_version)]
                shape = shape_of(route="mock/model", system=system, tools=tools, prefix=prefix, history=history, after=after)
                # The request-only envelope (system + prefix): a change inside
                # an instance is a `change` header (LOOP-9).
                key = js_stringify(system) + js_stringify(tuple(prefix))
                changed = envelope_key is not None and key != envelope_key
                envelope_key = key
                out.append(DesignRequest(shape=shape, instance=instance, first_of_instance=first, opener_version=carried,
                                         current_version=current, header_changed=changed))
                first = False
                history.append(_text_message("assistant", f"a{instance}.{turn}.{step}", next(sizes, 200)))
    return tuple(out)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DesignResult:
    design: Design
    workload: Workload
    requests: int
    input_tokens: int
    full_price_tokens: int
    cache_read_tokens: int
    resume_drift_tokens: int  # at resumed instances' first requests: previous request's tokens not reused
    header_changes: int  # `change` headers (request-only envelope changed inside an instance)
    stale_requests: int  # requests carrying an opener older than the world's current one
    after_tokens: int  # tokens of request-tail (after-slot) blocks, all full price


def evaluate_design(s: Scenario, design: Design, model: CacheModel = NEUTRAL) -> DesignResult:
    """Full-price vs cache-read tokens, resume drift, header changes and
    staleness of one design over one scenario under one cache model."""
    reqs = design_requests(s, design)
    costs = request_costs([r.shape for r in reqs], model)
    drift = 0
    for i, (r, c) in enumerate(zip(reqs, costs)):
        if r.first_of_instance and i > 0:
            previous = reqs[i - 1].shape
            reused = sum(b.tokens for b in previous.blocks[: c.shared_with_previous])
            drift += previous.tokens - reused
    t = totals(costs)
    return DesignResult(
        design=design, workload=s.workload, requests=t.requests, input_tokens=t.input_tokens,
        full_price_tokens=t.uncached_tokens, cache_read_tokens=t.cache_hit_tokens, resume_drift_tokens=drift,
        header_changes=sum(1 for r in reqs if r.header_changed),
        stale_requests=sum(1 for r in reqs if r.opener_version is not None and r.opener_version < r.current_version),
        after_tokens=sum(b.tokens for r in reqs for b in r.shape.blocks if b.kind is BlockKind.AFTER),
    )


def compare_designs(seeds: Sequence[int] = (1, 2, 3), model: CacheModel = NEUTRAL,
                    notice_chars: int | None = None) -> tuple[DesignResult, ...]:
    """Every design over every workload, summed over the generated scenarios
    of ``seeds`` (the same scenarios for every design)."""
    results: list[DesignResult] = []
    for workload in Workload:
        scenarios = [generate_scenario(workload, seed, notice_chars=notice_chars) for seed in seeds]
        for design in Design:
            parts = [evaluate_design(s, design, model) for s in scenarios]
            results.append(DesignResult(
                design=design, workload=workload,
                requests=sum(p.requests for p in parts), input_tokens=sum(p.input_tokens for p in parts),
                full_price_tokens=sum(p.full_price_tokens for p in parts),
                cache_read_tokens=sum(p.cache_read_tokens for p in parts),
                resume_drift_tokens=sum(p.resume_drift_tokens for p in parts),
                header_changes=sum(p.header_changes for p in parts),
                stale_requests=sum(p.stale_requests for p in parts),
                after_tokens=sum(p.after_tokens for p in parts),
            ))
    return tuple(results)


def effective_cost(r: DesignResult, model: CacheModel) -> float:
    """Input cost in full-price token units: full + read_price x cache reads."""
    return r.full_price_tokens + model.read_price * r.cache_read_tokens


def cost_ratio(a: float, b: float) -> float:
    return math.inf if b == 0 else a / b
