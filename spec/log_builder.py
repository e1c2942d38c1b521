"""Smart constructors for well-formed A55 logs (:class:`LogBuilder`), the strategies' and the tests' builder.

Each method appends one event the way the harness writes it (seq, time, provenance, ``surfaceOp``) and keeps
the surface in step, so a replace (:func:`replace_op`) always names current endpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, final

from sessionspec.model.header import EpochHeader, canonical, header_to_json
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, obj
from sessionspec.model.log import Event, make_event
from sessionspec.model.loop import text_content


def replace_op(start: int, end: int) -> JsonObject:
    """The logged replace marker ``{op:"replace", start, end}`` (SURF-3)."""
    return obj((("op", "replace"), ("start", start), ("end", end)))


USER_SOURCE: Final = obj((("kind", "user"),))
COMPACT_SOURCE: Final = obj((("kind", "plugin"), ("plugin", "compact")))


@final
@dataclass(slots=True)
class LogBuilder:
    """Smart constructors for a well-formed A55 log.

    Each method appends correctly numbered events (``seq == len(events)``)
    with the provenance the harness writes, and keeps the surface ``nodes``
    in step so replaces always name current endpoints.  Not thread-safe and
    not part of the model: a test helper.
    """

    events: list[Event] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    time: int = 1_000
    turn: int = 0
    step: int = 0
    header: EpochHeader | Absent = ABSENT
    header_fresh: bool = False

    def _add(
        self, type_name: str, data: Json, *, op: Json | Absent = ABSENT, prov: Json | Absent = ABSENT
    ) -> int:
        seq = len(self.events)
        self.events.append(make_event(type_name, seq=seq, time=self.time, data=data, source_event_seqs=prov, surface_op=op))
        self.time += 1
        if op == "append":
            self.nodes.append(seq)
        elif isinstance(op, JsonObject):
            start, end = self.nodes.index(op["start"]), self.nodes.index(op["end"])  # type: ignore[arg-type]
            self.nodes[start : end + 1] = [seq]
        return seq

    # -- turns and steps (LOG-9, LOG-13) -------------------------------------
    def turn_start(self) -> int:
        self.turn += 1
        self.step = 0
        trigger = obj((("kind", "message"), ("source", USER_SOURCE)))
        return self._add("turn/start", obj((("turn", self.turn), ("trigger", trigger))))

    def turn_end(self, kind: str = "completed") -> int:
        return self._add("turn/end", obj((("turn", self.turn), ("reason", obj((("kind", kind),))))))

    def step_start(self) -> int:
        self.step += 1
        return self._add("step/start", obj((("turn", self.turn), ("step", self.step))))

    def step_end(self) -> int:
        return self._add("step/end", obj((("turn", self.turn), ("step", self.step))))

    # -- surface events ---------------------------------------------------------
    def user_message(self, text: str, meta: bool = False) -> int:
        pairs: list[tuple[str, Json]] = [("content", text_content(text)), ("source", USER_SOURCE)]
        if meta:
            envelope = obj((("displayContent", "shown"), ("prefixContexts", ())))
            pairs += [("envelope", envelope), ("meta", obj((("k", 1),)))]
        return self._add("user/message", obj(pairs), op="append")

    def steering(self, text: str) -> int:
        data = obj((("turn", self.turn), ("content", text_content(text)), ("source", USER_SOURCE)))
        return self._add("steering/message", data, op="append")

    def request_header(self, header: EpochHeader, reason: str) -> int:
        """A ``request/header {header, reason}`` with the header canonical (HDR-7)."""
        self.header = canonical(header)
        data = obj((("header", header_to_json(self.header)), ("reason", reason)))
        return self._add("request/header", data)

    def chunks(self, texts_: Sequence[str]) -> list[int]:
        seqs: list[int] = []
        for text in texts_:
            chunk = obj((("type", "text-delta"), ("index", 0), ("text", text)))
            seqs.append(self._add("assistant/chunk", obj((("turn", self.turn), ("step", self.step), ("chunk", chunk)))))
        return seqs

    def assistant_message(self, content: tuple[Json, ...], chunk_seqs: Sequence[int]) -> int:
        """``assistant/message`` citing its own chunk seqs in order (SURF-13)."""
        provenance = obj((("provider", "mock"), ("model", "mock-1")))
        data = obj((("turn", self.turn), ("step", self.step), ("content", content), ("provenance", provenance)))
        return self._add("assistant/message", data, op="append", prov=tuple(chunk_seqs))

    def tool_call(self, call_id: str, name: str) -> int:
        data = obj((("turn", self.turn), ("step", self.step), ("callId", call_id), ("name", name), ("arguments", "{}")))
        return self._add("tool/call", data)

    def tool_result(self, call_id: str, call_seq: int, text: str, is_error: bool = False) -> int:
        """``tool/result`` citing ``[callSeq]`` (SURF-13)."""
        data = obj(
            (
                ("turn", self.turn),
                ("step", self.step),
                ("callId", call_id),
                ("content", text_content(text)),
                ("isError", is_error),
            )
        )
        return self._add("tool/result", data, op="append", prov=(call_seq,))

    def prune(self, target: int, text: str) -> int:
        """A tool-result prune: single-node, content-only replace citing
        ``[target]`` (SURF-7, PRN-4)."""
        original = self.events[target].data
        assert isinstance(original, JsonObject)
        data = obj((k, text_content(text) if k == "content" else v) for k, v in original.items())
        return self._add("tool/result", data, op=replace_op(target, target), prov=(target,))

    def compact_head(self, count: int, summary: str) -> int:
        """A compaction-like bracket: ``compact/start``, ``compact/summary``, a
        checkpoint ``user/message`` replacing the first ``count`` nodes
        (citing ``[startSeq, summarySeq, *shadowed]``, SURF-13), ``compact/end``."""
        shadowed = tuple(self.nodes[:count])
        start_seq = self._add("compact/start", obj((("reason", "pressure"),)))
        summary_seq = self._add("compact/summary", obj((("text", summary),)))
        data = obj((("content", text_content(summary)), ("source", COMPACT_SOURCE)))
        checkpoint = self._add(
            "user/message",
            data,
            op=replace_op(shadowed[0], shadowed[-1]),
            prov=(start_seq, summary_seq, *shadowed),
        )
        self._add("compact/end", obj((("ok", True),)))
        return checkpoint

    def plugin_event(self, type_name: str, data: Json) -> int:
        """A log-only plugin event (LOG-10): no surface metadata."""
        return self._add(type_name, data)

    def tool_result_nodes(self) -> list[int]:
        return [s for s in self.nodes if self.events[s].type == "tool/result"]

    def log(self) -> tuple[Event, ...]:
        return tuple(self.events)
