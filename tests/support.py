"""Builders shared by several test modules (one place: a test module never imports another).

``Log`` writes small A55 logs event by event (seq = index); the summarisers stand in for the model
call of a compaction (CMP-17) with a fixed summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from model.compaction import SummarizerOutput, SummaryCall
from model.jsonval import ABSENT, freeze
from model.log import Event, make_event

# The bundled data: real logs (tests/data/real, from ../shared/corpus) and the real harness's ground truth.
DATA = Path(__file__).parent / "data"
REAL = DATA / "real"
GROUNDTRUTH = DATA / "groundtruth"


@dataclass
class Log:
    """A tiny A55 log builder (seq = index)."""

    events: list[Event] = field(default_factory=list)

    def add(self, type_name: str, data: object, **meta: object) -> int:
        seq = len(self.events)
        self.events.append(
            make_event(type_name, seq=seq, time=0, data=freeze(data),
                       source_event_seqs=freeze(meta["prov"]) if "prov" in meta else ABSENT,
                       surface_op=freeze(meta["op"]) if "op" in meta else ABSENT)
        )
        return seq

    def header(self, system: str = "sys", prefix: list[object] | None = None) -> int:
        h: dict[str, object] = {"config": {"provider": "p", "model": "m"}, "system": system}
        if prefix:
            h["messagePrefix"] = prefix
        return self.add("request/header", {"reason": "initial", "header": h})

    def user(self, text: str) -> int:
        return self.add("user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}, op="append")

    def assistant(self, turn: int, step: int, text: str = "", calls: tuple[str, ...] = ()) -> int:
        content: list[object] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool-call", "id": c, "name": "t", "arguments": "{}"} for c in calls]
        return self.add("assistant/message", {"turn": turn, "step": step, "content": content,
                                              "provenance": {"provider": "p", "model": "m"}}, op="append")

    def result(self, turn: int, step: int, call: str, text: str) -> int:
        return self.add("tool/result", {"turn": turn, "step": step, "callId": call,
                                        "content": [{"type": "text", "text": text}], "isError": False},
                        op="append", prov=[len(self.events) - 1])

    def tool_step(self, turn: int, step: int, text: str) -> None:
        self.add("step/start", {"turn": turn, "step": step})
        self.assistant(turn, step, calls=(f"c{step}",))
        self.add("tool/call", {"turn": turn, "step": step, "callId": f"c{step}", "name": "t", "arguments": "{}"})
        self.result(turn, step, f"c{step}", text)
        self.add("step/end", {"turn": turn, "step": step})


def summarizer_of(text: str) -> object:
    def summarize(call: SummaryCall) -> SummarizerOutput:
        return SummarizerOutput(summary=(freeze({"type": "text", "text": text}),), provider=call.provider,
                                model=call.model, max_tokens=call.max_tokens)
    return summarize


def short(call: SummaryCall) -> SummarizerOutput:
    return SummarizerOutput(summary=(freeze({"type": "text", "text": "S"}),), provider=call.provider, model=call.model)


def busy_log(steps: int = 4, size: int = 400) -> Log:
    log = Log()
    log.add("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    log.user("hello " * 50)
    log.header()
    for step in range(1, steps + 1):
        log.tool_step(1, step, "x" * size)
    return log
