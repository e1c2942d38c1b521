"""Hypothesis strategies for the model's types (well-formed A55 logs only).

Public API (import from ``spec.strategies``):

- :func:`json_values` — any value of the JSON domain (``model.jsonval.Json``):
  immutable, ordered, finite floats other than ``-0.0``;
- :func:`texts` — short strings (ASCII and some non-BMP text);
- :func:`configs`, :func:`headers`, :func:`canonical_headers` — ``LlmCallConfig``
  objects and :class:`~model.header.EpochHeader` values (``headers`` may carry
  empty optional fields; ``canonical_headers`` never do);
- :func:`surface_ops` — the logged ``surfaceOp`` values (``"append"`` or
  ``{op:"replace", start, end}``);
- :func:`well_formed_logs` — a whole A55 session log (``tuple[Event, ...]``)
  built by :class:`LogBuilder` smart constructors, so every log is accepted by
  ``model.seed.validate_seed``, the surface fold and the LOG-13 companion;
- :func:`log_only_events` — plugin events to interleave (no surface metadata).

``st.from_type(EpochHeader)`` gives :func:`canonical_headers` once this module
is imported.

The generated logs cover: turns with several steps; text chunks and an
``assistant/message`` citing its chunk seqs (SURF-13); empty assistant content
(DER-5); tool calls with ``tool/call`` + ``tool/result`` citing ``[callSeq]``;
``request/header`` snapshots inside the step, before the first chunk, written
iff the canonical header changed (LOOP-9 shape: ``initial`` then ``change``),
with and without system/tools/messagePrefix; steering messages; log-only plugin
events; tool-result prunes (single-node, content-only, citing ``[seq]``,
SURF-7/PRN-4); and compaction-like ``user/message`` replaces over a head range
(citing ``[startSeq, summarySeq, *shadowed]``, SURF-13).  All text is short so
examples stay fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Final, final

from hypothesis import strategies as st

from model.header import EpochHeader, canonical, header_eq, header_to_json
from model.jsonval import ABSENT, Absent, Json, JsonObject, obj
from model.log import Event, make_event

# --------------------------------------------------------------------------- JSON values

_KEYS: Final = st.sampled_from(["a", "b", "type", "text", "k", "é", "𝄞", ""])


@cache
def texts(max_size: int = 8) -> st.SearchStrategy[str]:
    """Short text: mostly ASCII letters, sometimes non-ASCII (incl. non-BMP)."""
    return st.text(alphabet=st.sampled_from("abcxyz 🙂é\n\"\\"), max_size=max_size)


@cache
def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    # Strategies are built once: Hypothesis validates each new strategy object,
    # which dominated generation time when built inside composite draws.
    return st.integers(low, high)


def _finite_floats() -> st.SearchStrategy[Json]:
    # The JSON domain has no -0.0, NaN or infinities (LOG-4); integral floats
    # are ints in JS, and the parser reads them as ints, so avoid them too.
    return st.floats(allow_nan=False, allow_infinity=False, width=64).filter(
        lambda x: not x.is_integer()
    )


def json_scalars() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
        _finite_floats(),
        texts(),
    )


@cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Json]:
    """Any JSON-domain value: None, bool, int, finite non-integral float, str,
    tuples and JsonObjects (unique keys, insertion order kept)."""
    return st.recursive(
        json_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=4).map(tuple),
            st.lists(st.tuples(_KEYS, children), max_size=4, unique_by=lambda kv: kv[0]).map(obj),
        ),
        max_leaves=max_leaves,
    )


# --------------------------------------------------------------------------- headers

PROVIDERS: Final = ("mock", "deepseek-official")
MODELS: Final = ("mock-1", "deepseek-v4-flash")


def _config(provider: str, model: str, optional: tuple[tuple[str, Json], ...]) -> JsonObject:
    return obj((("provider", provider), ("model", model), *optional))


@cache
def configs() -> st.SearchStrategy[JsonObject]:
    """An ``LlmCallConfig`` in the logged key order (HDR-1), non-empty provider/model."""
    optional: list[st.SearchStrategy[tuple[tuple[str, Json], ...]]] = [
        st.one_of(st.just(()), st.sampled_from(("low", "high")).map(lambda v: (("reasoningEffort", v),))),
        st.one_of(st.just(()), st.sampled_from((0, 0.5, 1)).map(lambda v: (("temperature", v),))),
        st.one_of(st.just(()), st.sampled_from((256, 1024)).map(lambda v: (("maxTokens", v),))),
        st.one_of(st.just(()), st.lists(st.sampled_from(("END", "\n\n")), max_size=2).map(lambda v: (("stop", tuple(v)),))),
    ]
    return st.builds(
        _config,
        st.sampled_from(PROVIDERS),
        st.sampled_from(MODELS),
        st.tuples(*optional).map(lambda parts: tuple(pair for part in parts for pair in part)),
    )


def _text_block(text: str) -> JsonObject:
    return obj((("type", "text"), ("text", text)))


def _tool_schema(name: str, description: str) -> JsonObject:
    parameters = obj((("type", "object"), ("properties", obj())))
    return obj((("name", name), ("description", description), ("parameters", parameters)))


@cache
def tool_schemas() -> st.SearchStrategy[JsonObject]:
    """``ToolSchema {name, description, parameters}`` (HDR-1)."""
    return st.builds(
        _tool_schema,
        st.sampled_from(("read", "write", "dump")),
        st.sampled_from(("reads", "writes", "")),
    )


@cache
def prefix_messages() -> st.SearchStrategy[JsonObject]:
    return st.builds(
        lambda role, text: obj((("role", role), ("content", (_text_block(text),)))),
        st.sampled_from(("user", "assistant")),
        texts(),
    )


@cache
def headers() -> st.SearchStrategy[EpochHeader]:
    """A raw ``EpochHeader``: optional fields may be absent, empty or populated."""
    absent: st.SearchStrategy[Absent] = st.just(ABSENT)
    return st.builds(
        lambda config, system, tools, prefix: EpochHeader(config=config, system=system, tools=tools, message_prefix=prefix),
        configs(),
        st.one_of(absent, st.just(""), st.sampled_from(("You are an agent.", "Sys 🙂"))),
        st.one_of(absent, st.lists(tool_schemas(), max_size=3).map(tuple)),
        st.one_of(absent, st.lists(prefix_messages(), max_size=2).map(tuple)),
    )


@cache
def canonical_headers() -> st.SearchStrategy[EpochHeader]:
    """Canonical A55 headers (HDR-2): empty optional fields are absent."""
    return headers().map(canonical)


# --------------------------------------------------------------------------- surface ops


def replace_op(start: int, end: int) -> JsonObject:
    """The logged replace marker ``{op:"replace", start, end}`` (SURF-3)."""
    return obj((("op", "replace"), ("start", start), ("end", end)))


def surface_ops(max_seq: int = 50) -> st.SearchStrategy[Json]:
    """Valid ``surfaceOp`` values (SURF-3); whether a replace range exists is
    the surface's business (SURF-5)."""
    seqs = st.integers(min_value=0, max_value=max_seq)
    return st.one_of(st.just("append"), st.builds(replace_op, seqs, seqs))


# --------------------------------------------------------------------------- log builder

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
        pairs: list[tuple[str, Json]] = [("content", (_text_block(text),)), ("source", USER_SOURCE)]
        if meta:
            envelope = obj((("displayContent", "shown"), ("prefixContexts", ())))
            pairs += [("envelope", envelope), ("meta", obj((("k", 1),)))]
        return self._add("user/message", obj(pairs), op="append")

    def steering(self, text: str) -> int:
        data = obj((("turn", self.turn), ("content", (_text_block(text),)), ("source", USER_SOURCE)))
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
                ("content", (_text_block(text),)),
                ("isError", is_error),
            )
        )
        return self._add("tool/result", data, op="append", prov=(call_seq,))

    def prune(self, target: int, text: str) -> int:
        """A tool-result prune: single-node, content-only replace citing
        ``[target]`` (SURF-7, PRN-4)."""
        original = self.events[target].data
        assert isinstance(original, JsonObject)
        data = obj((k, (_text_block(text),) if k == "content" else v) for k, v in original.items())
        return self._add("tool/result", data, op=replace_op(target, target), prov=(target,))

    def compact_head(self, count: int, summary: str) -> int:
        """A compaction-like bracket: ``compact/start``, ``compact/summary``, a
        checkpoint ``user/message`` replacing the first ``count`` nodes
        (citing ``[startSeq, summarySeq, *shadowed]``, SURF-13), ``compact/end``."""
        shadowed = tuple(self.nodes[:count])
        start_seq = self._add("compact/start", obj((("reason", "pressure"),)))
        summary_seq = self._add("compact/summary", obj((("text", summary),)))
        data = obj((("content", (_text_block(summary),)), ("source", COMPACT_SOURCE)))
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


@cache
def log_only_events() -> st.SearchStrategy[tuple[str, Json]]:
    """(type, data) of plugin events that stay off the surface (LOG-10)."""
    return st.one_of(
        st.builds(lambda t: ("session/title", obj((("title", t), ("messageSeqs", ()), ("source", USER_SOURCE)))), texts()),
        st.builds(lambda n: ("llm/retry", obj((("attempt", n),))), st.integers(min_value=1, max_value=3)),
        st.builds(lambda d: ("plugin/event", d), json_values(max_leaves=4)),
        st.just(("todo/write", obj((("todos", ()),)))),
    )


_PIECES: Final = st.lists(texts(4), max_size=3)
_BOOLS: Final = st.booleans()


@st.composite
def _step(draw: st.DrawFn, b: LogBuilder, headers_on: bool, step_headers: st.SearchStrategy[EpochHeader]) -> None:
    b.step_start()
    if headers_on:
        candidate = draw(step_headers) if b.header is ABSENT or draw(_ints(0, 3)) == 0 else b.header
        assert isinstance(candidate, EpochHeader)
        # Written iff no header yet ("initial") or the canonical header changed ("change").
        if b.header is ABSENT:
            b.request_header(candidate, "initial")
        elif not header_eq(canonical(candidate), b.header):
            b.request_header(candidate, "change")
    pieces = draw(_PIECES)
    chunk_seqs = b.chunks(pieces)
    n_calls = draw(_ints(0, 2))
    content: list[Json] = []
    if pieces and draw(_ints(0, 5)) != 0:
        content.append(_text_block("".join(pieces)))
    call_ids = [f"call-{b.turn}-{b.step}-{k}" for k in range(n_calls)]
    for call_id in call_ids:
        content.append(obj((("type", "tool-call"), ("id", call_id), ("name", "read"), ("arguments", "{}"))))
    b.assistant_message(tuple(content), chunk_seqs)
    for call_id in call_ids:
        call_seq = b.tool_call(call_id, "read")
        b.tool_result(call_id, call_seq, draw(texts()), is_error=draw(_BOOLS))
    if draw(_ints(0, 3)) == 0:
        kind, data = draw(log_only_events())
        b.plugin_event(kind, data)
    if b.tool_result_nodes() and draw(_ints(0, 3)) == 0:
        b.prune(draw(st.sampled_from(b.tool_result_nodes())), draw(texts(3)))
    if len(b.nodes) >= 2 and draw(_ints(0, 4)) == 0:
        b.compact_head(draw(_ints(1, len(b.nodes) - 1)), draw(texts()))
    b.step_end()


@st.composite
def well_formed_logs(
    draw: st.DrawFn,
    *,
    max_turns: int = 3,
    max_steps: int = 3,
    headers_on: bool | None = None,
    step_headers: st.SearchStrategy[EpochHeader] | None = None,
) -> tuple[Event, ...]:
    """A well-formed A55 log of up to ``max_turns`` completed turns.

    ``headers_on`` forces (True) or forbids (False) ``request/header`` events;
    by default most logs have them.  ``step_headers`` is the strategy for the
    headers the steps route (default :func:`headers`, written canonical).
    """
    b = LogBuilder()
    on = draw(_ints(0, 4)) != 0 if headers_on is None else headers_on
    hdrs = headers() if step_headers is None else step_headers
    for _ in range(draw(_ints(1, max_turns))):
        b.turn_start()
        b.user_message(draw(texts()), meta=draw(_BOOLS))
        for _ in range(draw(_ints(1, max_steps))):
            if draw(_ints(0, 5)) == 0:
                b.steering(draw(texts()))
            draw(_step(b, on, hdrs))
        b.turn_end()
    return b.log()


st.register_type_strategy(EpochHeader, canonical_headers())


__all__ = [
    "COMPACT_SOURCE",
    "LogBuilder",
    "USER_SOURCE",
    "canonical_headers",
    "configs",
    "headers",
    "json_scalars",
    "json_values",
    "log_only_events",
    "prefix_messages",
    "replace_op",
    "surface_ops",
    "texts",
    "tool_schemas",
    "well_formed_logs",
]
