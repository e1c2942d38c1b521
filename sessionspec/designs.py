"""The session-prefix note's alternative designs, executable (issue 8).

Each :class:`Design` turns one generated :class:`Scenario` (a workload of
instances, turns and steps) into the requests it would send; the cache
economics of :mod:`sessionspec.economics` then price them, so the designs are
compared on the same workloads and the same provider cache models
(:func:`compare_designs`, ``sessionspec economics``, docs/economics.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, final

from sessionspec.economics import NEUTRAL, BlockKind, CacheModel, RequestShape, request_costs, shape_of, totals
from sessionspec.model.jsonval import Json, JsonObject, js_stringify

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
