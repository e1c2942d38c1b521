"""Hypothesis strategies for well-formed A55 session logs.

- :func:`well_formed_logs` — a whole A55 session log (``tuple[Event, ...]``) built by
  :class:`~spec.log_builder.LogBuilder` smart constructors, so every log is accepted by
  ``model.seed.validate_seed``, the surface fold and the LOG-13 companion;
- :func:`log_only_events` — plugin events to interleave (no surface metadata);
- :func:`surface_ops` — the logged ``surfaceOp`` values (``"append"`` or ``{op:"replace", start, end}``).

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

from functools import cache
from typing import Final

from hypothesis import strategies as st

from sessionspec.model.header import EpochHeader, canonical, header_eq
from sessionspec.model.jsonval import ABSENT, Json, obj
from sessionspec.model.log import Event
from sessionspec.model.loop import text_content
from sessionspec.spec.header_strategies import headers
from sessionspec.spec.json_strategies import json_values, texts
from sessionspec.spec.log_builder import USER_SOURCE, LogBuilder, replace_op


def surface_ops(max_seq: int = 50) -> st.SearchStrategy[Json]:
    """Valid ``surfaceOp`` values (SURF-3); whether a replace range exists is
    the surface's business (SURF-5)."""
    seqs = st.integers(min_value=0, max_value=max_seq)
    return st.one_of(st.just("append"), st.builds(replace_op, seqs, seqs))


@cache
def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    # Strategies are built once: Hypothesis validates each new strategy object,
    # which dominated generation time when built inside composite draws.
    return st.integers(low, high)


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
        content.extend(text_content("".join(pieces)))
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
