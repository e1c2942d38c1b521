"""Synthetic, valid A55 session logs written by the loop model itself.

:func:`simulate` plays ``turns`` scripted turns through
:func:`sessionspec.fast.live.run_turn_live` (the turn of :func:`model.loop.run_turn`,
on a log kept open across turns), so every event passes the core surface validation as it is appended and
every request is the one the loop would send.  The shape is realistic: streamed
replies (many ``assistant/chunk`` events per reply), tool rounds (parallel calls,
several rounds per turn, large results), reasoning, a session prefix that drifts
on every resume (a new instance every ``resume_every`` turns), request-error
retries, continuation steering, system-prompt changes, cancels (also inside the
prefix waterfall) and, with ``compaction=True``, compact-basic and the prune
service mounted with a small context window: pressure compactions at post-step
(CMP-6), prunes (PRN-6) and overflow recovery with retry (CMP-7).

Deterministic in ``seed``; roughly linear in the log length: the log, its
derivation and header fold are kept running (no re-derivation per turn), and the
pressure check runs on an incremental token meter (MTR-5) so the full
``compactIfNeeded`` only runs when the threshold is reached.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from sessionspec.fast.live import open_log, run_turn_live
from sessionspec.fast.meter import metered_pressure_listener
from sessionspec.model.codec import serialize_event
from sessionspec.model.compaction import (
    CONTEXT_WINDOW_EXCEEDED,
    CompactConfig,
    SummarizerOutput,
    SummaryCall,
)
from sessionspec.model.jsonval import Json
from sessionspec.model.log import Event
from sessionspec.model.loop import (
    AgentConfig,
    CompactionPlugin,
    Hooks,
    Interrupt,
    InterruptKind,
    Prompt,
    Reply,
    ReplyKind,
    Steering,
    ToolCallSpec,
    TurnScript,
    Window,
    new_instance,
    overflow_listener,
    pressure_listener,
    text_content,
)
from sessionspec.model.prefix import Contributor, Idiom, prefix_message
from sessionspec.model.prune import PruneConfig
from sessionspec.model.rejected import Rejected
from sessionspec.planted.loop import Planted, planted
from sessionspec.simulate_meter import seeded_pressure_listener
from sessionspec.spec.groundtruth_agent import ECHO_TOOL, PERSONA

__all__ = ["ECHO_TOOL", "PERSONA", "simulate", "simulation_plugin", "to_jsonl"]



def to_jsonl(events: Sequence[Event]) -> str:
    """The log as JSONL text, byte-exact real key order (one event per line)."""
    return "".join(serialize_event(e) + "\n" for e in events)


WORDS: Final = ("the", "log", "request", "prefix", "surface", "tool", "result", "step", "turn", "model", "header",
                "session", "checkpoint", "summary", "context", "token", "stream", "chunk", "agent", "cache")
INSTRUCTION: Final = "Condense the conversation above into a structured checkpoint."


def _summarize(call: SummaryCall) -> SummarizerOutput:
    """A fake summarizer (CMP-18: the text comes from outside the model)."""
    text = f"CHECKPOINT: {len(call.input.messages)} messages condensed."
    return SummarizerOutput(summary=text_content(text), provider=call.provider, model=call.model,
                            max_tokens=call.max_tokens)


def simulation_plugin(context_window: int, prune: bool = True) -> CompactionPlugin:
    """compact-basic with threshold half the window and a retained tail of a tenth
    (CMP-3/CMP-4), plus the prune service for results over 1200 code points."""
    return CompactionPlugin(
        summarizer=_summarize, instruction=INSTRUCTION, context_window=context_window,
        config=CompactConfig(threshold_ratio=0.5, retain_tokens=context_window // 10, max_tokens=512),
        prune=PruneConfig(threshold_chars=1200, head_chars=600, tail_chars=200) if prune else None)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _pieces(rng: random.Random, text: str) -> tuple[str, ...]:
    """How a streaming adapter splits text: runs of 1 to 4 words per delta."""
    words = text.split(" ")
    pieces: list[str] = []
    while words:
        take = rng.randint(1, 4)
        chunk, words = words[:take], words[take:]
        pieces.append(" ".join(chunk) + (" " if words else ""))
    return tuple(pieces)


def _usage(rng: random.Random, metered: bool, output: int) -> tuple[int, int] | None:
    """Provider usage.  With compaction mounted the mock provider reports none,
    so the meter prices every request by its estimate (MTR-10) instead of
    anchoring on made-up input counts (MTR-8) that would fake the pressure."""
    return None if metered else (rng.randint(100, 5000), output)


def _text_reply(rng: random.Random, metered: bool, continue_with: str | None = None) -> Reply:
    text = " ".join(_sentence(rng, rng.randint(4, 14)) for _ in range(rng.randint(1, 4)))
    reasoning = _sentence(rng, rng.randint(5, 20)) if rng.random() < 0.2 else None
    return Reply(text=text, text_chunks=_pieces(rng, text), reasoning=reasoning,
                 usage=_usage(rng, metered, len(text) // 4), continue_with=continue_with)


def _tool_round(rng: random.Random, n: int, round_: int, system: str | None, metered: bool) -> Reply:
    calls = []
    for c in range(1 if rng.random() < 0.7 else 2):
        call_id = f"call-{n}" if round_ == 0 and c == 0 else f"call-{n}-{round_}-{c}"
        arg = rng.choice(WORDS)
        arguments = f'{{"text":"{arg}"}}'
        size = rng.choice((1, 1, 1, 8, 40)) if rng.random() < 0.5 else 1
        result = f"echo:{arg}" if size == 1 else " ".join(_sentence(rng, 12) for _ in range(size))
        calls.append(ToolCallSpec(call_id=call_id, name="echo", arguments=arguments, result=result,
                                  arguments_chunks=(arguments[:6], arguments[6:])))
    text = _sentence(rng, rng.randint(3, 8)) if rng.random() < 0.6 else ""
    return Reply(kind=ReplyKind.TOOL_CALLS, text=text, text_chunks=_pieces(rng, text) if text else None,
                 tool_calls=tuple(calls), usage=_usage(rng, metered, 20), system_after=system)


def _script(rng: random.Random, n: int, system: str, compaction: bool) -> TurnScript:
    prompt = Prompt(content=text_content(f"prompt {n}: " + _sentence(rng, rng.randint(3, 30))))
    roll = rng.random()
    if roll < 0.32:
        rounds = rng.choice((1, 1, 2, 3))
        replies = tuple(_tool_round(rng, n, r, f"{system}\n\nsection {n}.{r}" if rng.random() < 0.1 else None,
                                    compaction) for r in range(rounds))
        return TurnScript(prompt=prompt, replies=(*replies, _text_reply(rng, compaction)))
    if roll < 0.40:
        kind = rng.choice((ReplyKind.ERROR_THROWN, ReplyKind.ERROR_IN_BAND))
        error = Reply(kind=kind, retry=True, error_code="OVERLOADED", error_status=529)
        return TurnScript(prompt=prompt, replies=(error, _text_reply(rng, compaction)))
    if roll < 0.415 and compaction:
        overflow = Reply(kind=ReplyKind.ERROR_THROWN, error_code=CONTEXT_WINDOW_EXCEEDED,
                         error_message="prompt is too long")
        return TurnScript(prompt=prompt, replies=(overflow, _text_reply(rng, compaction)))
    if roll < 0.50:
        window = rng.choice((Window.AFTER_STEP_START, Window.AFTER_STREAM, Window.AFTER_PRE_STEP, Window.BEFORE_CHUNK,
                             Window.IN_COMPOSITION))
        return TurnScript(prompt=prompt, replies=(_text_reply(rng, compaction),),
                          interrupt=Interrupt(window=window, kind=InterruptKind.CANCEL, chunk=rng.randint(0, 3)))
    if roll < 0.52:
        # LOOP-11: the reply is cut at max-tokens; its tool call is dropped and never runs.
        cut = replace(_tool_round(rng, n, 0, None, compaction), max_tokens=True)
        return TurnScript(prompt=prompt, replies=(cut,))
    if roll < 0.56:
        steering = (Steering(content=text_content(_sentence(rng, 6))),)
        return TurnScript(prompt=prompt, steering=steering,
                          replies=(_text_reply(rng, compaction, continue_with="keep going"), _text_reply(rng, compaction)))
    return TurnScript(prompt=prompt, replies=(_text_reply(rng, compaction),))


def _agent(contributors: int, generation: int, system: str, tools: tuple[Json, ...]) -> AgentConfig:
    return AgentConfig(system=system, tools=tools, contributors=tuple(
        Contributor(idiom=Idiom.PREPEND if i % 2 == 0 else Idiom.APPEND,
                    content=(prefix_message(f"<pfx {i} gen {generation}>"),))
        for i in range(contributors)))


def simulate(seed: int, turns: int, *, contributors: int = 1, resume_every: int = 4, fault: Planted | None = None,
             compaction: bool = False, context_window: int = 4000, prune: bool = True,
             model_listener: bool = False) -> tuple[Event, ...]:
    """A realistic, valid A55 log of ``turns`` turns, deterministic in ``seed``.

    ``compaction=True`` mounts compact-basic (and the prune service unless
    ``prune=False``) with ``context_window`` tokens, so pressure compactions,
    re-compactions of earlier checkpoints, prunes and overflow recoveries happen
    regularly.  ``fault`` runs a deliberately broken loop (planted, mutant tests only).
    Compaction runs from the simulator's running meter
    (:func:`sessionspec.simulate_meter.seeded_pressure_listener`);
    ``model_listener=True`` runs the model's own :func:`model.loop.pressure_listener`
    instead, the definition the tests hold it to; a ``fault`` runs it behind
    :func:`sessionspec.fast.meter.metered_pressure_listener`, where the planted
    compactions are installed."""
    rng = random.Random(seed)
    live = open_log()
    assert not isinstance(live, Rejected)  # the empty log is valid
    hooks = Hooks()
    if compaction:
        plugin = simulation_plugin(context_window, prune)
        post_step = seeded_pressure_listener(plugin)
        if model_listener:
            post_step = pressure_listener(plugin)
        elif fault is not None:
            # A planted compaction is installed where the model's listener looks it up (pressure_compaction).
            post_step = metered_pressure_listener(plugin)
        hooks = Hooks(post_step=post_step, request_error=overflow_listener(plugin))
    generation = 0
    agent = _agent(contributors, generation, PERSONA, (ECHO_TOOL,))
    instance = new_instance()
    for n in range(turns):
        if n and resume_every and n % resume_every == 0:
            generation += 1
            agent, instance = _agent(contributors, generation, agent.system, agent.tools), new_instance()
        with planted(fault):
            outcome = run_turn_live(live, instance, agent, _script(rng, n, agent.system, compaction), hooks=hooks)
        # The model's own loop only writes valid logs; a Rejected here is a model bug.
        assert not isinstance(outcome, Rejected), outcome
        instance, agent = outcome.instance, outcome.agent
        if instance.disposed:
            instance = new_instance()
    return tuple(live.events)
