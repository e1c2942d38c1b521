"""Log-skeleton contracts: the checker's one-pass reconstruction against the definition.

A :class:`Skeleton` is a frozen dataclass of Enums, bools and optional step
slots; :func:`build` turns it into a valid A55 log with the strategies' log
builder (``spec.log_builder.LogBuilder``), which also records, independently
of the model, which steps are requests and what the surface nodes are.

- :func:`request_points_agree`: ``sessionspec.fast.request_points.request_points`` (one pass,
  incremental derivation) finds exactly the request steps the builder wrote at
  or after ``first_live_seq``, and each point's request equals
  ``rebuild_request_at`` (fresh derivation, header fold at the first chunk, or
  at the step's end without a chunk: HDR-9).
- :func:`surface_folds`: ``model.surface.fold_surface`` returns the builder's
  nodes and counts every replace; under CrossHair its own postconditions are
  checked on these logs too (strict callee contracts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import sessionspec.fast.request_points
import sessionspec.model.reconstruct
import sessionspec.model.surface
from sessionspec import model
from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import JsonObject, js_stringify, obj
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import request_to_json
from sessionspec.spec.log_builder import LogBuilder

# The padding of a long step: about 500 tokens (MTR-1), over a 1,000-character prune threshold.
LONG = " " + "lorem ipsum " * 160


class HeaderChoice(Enum):
    SAME = "same header"
    CHANGE_SYSTEM = "change the system prompt"
    CHANGE_MODEL = "change the model"


class StepEnd(Enum):
    TEXT = "a text reply"
    TOOL_CALL = "a tool call and its result"
    REQUEST_ERROR = "a request error before any chunk, retried"
    INTERRUPTED = "interrupted before any chunk (not a request)"


@dataclass(frozen=True, slots=True)
class StepSkel:
    header: HeaderChoice
    end: StepEnd
    prune: bool  # prune the latest tool result after the step (a content-only replace)
    compact: bool  # compact the oldest node (a range replace with a checkpoint)
    steering: bool  # a steering message before the step
    # A long tool result (or answer): enough tokens for a compaction to shrink, over the prune threshold.
    long: bool = False


@dataclass(frozen=True, slots=True)
class Skeleton:
    s1: StepSkel
    s2: StepSkel | None
    s3: StepSkel | None
    new_turn_before_2: bool
    new_turn_before_3: bool
    seed_first_turn: bool  # the first turn is a seed (first_live_seq after its turn/end)


@dataclass(slots=True)
class Built:
    log: tuple[Event, ...]
    first_live_seq: int
    request_steps: list[int] = field(default_factory=list)  # step/start seqs the builder wrote as requests
    nodes: tuple[int, ...] = ()
    replaces: int = 0


def _header(choice: HeaderChoice, index: int) -> EpochHeader:
    system = f"system {index}" if choice is HeaderChoice.CHANGE_SYSTEM else "system"
    model_name = f"model-{index}" if choice is HeaderChoice.CHANGE_MODEL else "model-0"
    return EpochHeader(config=obj((("provider", "mock"), ("model", model_name))), system=system)


def build(sk: Skeleton) -> Built:
    b = LogBuilder()
    b.turn_start()
    b.user_message("hello")
    built = Built(log=(), first_live_seq=0)
    steps = [(sk.s1, False), (sk.s2, sk.new_turn_before_2), (sk.s3, sk.new_turn_before_3)]
    current = _header(sk.s1.header, 0)
    replaces = 0
    for index, (step, new_turn) in enumerate(steps):
        if step is None:
            continue
        if new_turn and index > 0:
            b.turn_end()
            if sk.seed_first_turn and built.first_live_seq == 0:
                built.first_live_seq = len(b.events)
            b.turn_start()
            b.user_message(f"prompt {index}")
        if step.steering:
            b.steering(f"steer {index}")
        start = b.step_start()
        if index == 0:
            b.request_header(current, "initial")
        elif step.header is not HeaderChoice.SAME:
            current = _header(step.header, index)
            b.request_header(current, "change")
        match step.end:
            case StepEnd.TEXT:
                answer = f"answer {index}" + (LONG if step.long else "")
                seqs = b.chunks([answer])
                b.assistant_message((JsonObject((("type", "text"), ("text", answer))),), seqs)
            case StepEnd.TOOL_CALL:
                call_id = f"call-{index}"
                seqs = b.chunks(["{}"])
                block = JsonObject((("type", "tool-call"), ("id", call_id), ("name", "read"), ("arguments", "{}")))
                b.assistant_message((block,), seqs)
                b.tool_result(call_id, b.tool_call(call_id, "read"), f"result {index}" + (LONG if step.long else ""))
            case StepEnd.REQUEST_ERROR | StepEnd.INTERRUPTED:
                pass
        if step.prune and b.tool_result_nodes():
            b.prune(b.tool_result_nodes()[-1], "[pruned]")
            replaces += 1
        if step.compact and len(b.nodes) >= 2:
            b.compact_head(1, "summary")
            replaces += 1
        b.step_end()
        if step.end is StepEnd.INTERRUPTED:
            b.turn_end("aborted")
            b.turn_start()
            b.user_message(f"again {index}")
        elif step.end is StepEnd.REQUEST_ERROR:
            # LOOP-14: a retried request error: the turn goes on with a new step (always: a closing text step).
            b.step_start()
            seqs = b.chunks(["retried"])
            b.assistant_message((JsonObject((("type", "text"), ("text", "retried"))),), seqs)
            b.step_end()
            built.request_steps.append(start)
            start = len(b.events) - 4  # the retry's step/start
        built.request_steps.append(start)
        if step.end is StepEnd.INTERRUPTED:
            built.request_steps.pop()
    b.turn_end()
    built.log = b.log()
    built.nodes = tuple(b.nodes)
    built.replaces = replaces
    built.request_steps = [s for s in built.request_steps if s >= built.first_live_seq]
    return built


def _cut_at_step_end(log: tuple[Event, ...], start: int) -> list[Event]:
    """HDR-9: without a chunk the header is the fold at the step's ``step/end``."""
    for event in log[start:]:
        if event.type == "step/end":
            return list(log[: event.seq + 1])
    return list(log)


def agree(built: Built) -> str | None:
    points = sessionspec.fast.request_points.request_points(built.log, first_live_seq=built.first_live_seq)
    if isinstance(points, Rejected):
        return f"request_points rejects a valid log: {points}"
    found = [p.step_start_seq for p in points]
    if found != built.request_steps:
        return f"request_points finds requests at {found}, the log has them at {built.request_steps}"
    for p in points:
        request = p.request()
        events = list(built.log) if p.first_chunk_seq is not None else _cut_at_step_end(built.log, p.step_start_seq)
        rebuilt = model.reconstruct.rebuild_request_at(events, p.step_start_seq, p.first_chunk_seq)
        if request is None or isinstance(rebuilt, Rejected):
            return f"the request at seq {p.step_start_seq} cannot be rebuilt: {rebuilt}"
        if js_stringify(request_to_json(request)) != js_stringify(request_to_json(rebuilt)):
            return f"request_points and rebuild_request_at differ at seq {p.step_start_seq}"
    return None


def folds(built: Built) -> str | None:
    fold = model.surface.fold_surface(built.log)
    if isinstance(fold, Rejected):
        return f"fold_surface rejects a valid log: {fold}"
    if fold.state.nodes != built.nodes:
        return f"fold_surface nodes {fold.state.nodes} != the log's {built.nodes}"
    if fold.state.replace_generation != built.replaces:
        return f"fold_surface counts {fold.state.replace_generation} replaces, the log has {built.replaces}"
    return None


# --------------------------------------------------------------------------- the contracts (CrossHair targets)


def request_points_agree(sk: Skeleton) -> str | None:
    """P-INV-1 for the checker (INV-7, HDR-9): request_points == rebuild_request_at on every request.

    post: __return__ is None
    """
    return agree(build(sk))


def surface_folds(sk: Skeleton) -> str | None:
    """SURF-10: fold_surface returns the surface the log builds and counts every replace.

    post: __return__ is None
    """
    return folds(build(sk))
