"""The compaction audit's fast answers (sessionspec/fast/compaction.py) equal their definitions in model/:
the priced surface (MTR-7) and CMP-10's counter; the shared projection (DER-1) and header (HDR-1)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.logfile import LineReader, read_path
from sessionspec.fast.compaction import AuditSurface, message_price
from sessionspec.fast.derivation import header_of, project_node, projected
from sessionspec.generate import write_log
from sessionspec.model.compaction.retention import balanced_cuts, tool_call_delta
from sessionspec.model.derive import project
from sessionspec.model.header import header_of_event
from sessionspec.model.jsonval import Json, JsonObject, obj
from sessionspec.model.log import Dialect, Event, log_view, make_event
from sessionspec.model.meter import PricedSurface, estimate_message
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import plan_surface_event
from sessionspec.spec.json_strategies import json_values
from sessionspec.spec.log_strategies import well_formed_logs


@cache
def _log(events: int, seed: int) -> tuple[Event, ...]:
    out = io.StringIO()
    write_log(out, events, seed)
    return tuple(event for event, _ in LineReader("log.jsonl").events(io.BytesIO(out.getvalue().encode())))


def _same_surface(events: Sequence[Event], dialect: Dialect) -> Counter[str]:
    """The audit's surface against the model's priced surface and CMP-10 counter, after every event;
    what was compared (every range's split, rejections)."""
    seen: Counter[str] = Counter()
    model, fast = PricedSurface(dialect=dialect), AuditSurface(dialect)
    for index, event in enumerate(events):
        before = log_view(events, index)
        plan = plan_surface_event(fast.seqs, event, before, dialect)
        folded = model.fold(event, before)
        committed = plan if plan is None or isinstance(plan, Rejected) else fast.commit(event, plan)
        assert committed == folded
        if folded is not None:
            seen["rejected"] += 1
            return seen
        assert fast.seqs == model.seqs
        assert fast.prices == [node.tokens for node in model.nodes]
        assert fast.steps == [tool_call_delta(events[seq], dialect) for seq in fast.seqs]
        balanced = balanced_cuts(fast.seqs, events, dialect)
        if not isinstance(balanced, Rejected):
            assert tuple(fast.balanced()) == balanced  # the cuts CMP-12's range decision reads
        for i in range(len(fast.seqs)):
            for j in range(i, len(fast.seqs)):
                assert fast.range_tokens(i, j) == model.range_tokens(i, j)
                split = fast.splits(i, j)
                if isinstance(balanced, Rejected):
                    assert split == balanced
                    seen["corrupt"] += 1
                else:
                    assert split == (not (balanced[i] and balanced[j + 1]))
                    seen[f"split {split}"] += 1
    return seen


@settings(max_examples=30, deadline=None)
@given(events=st.integers(20, 300), seed=st.integers(0, 2**10), dialect=st.sampled_from(Dialect))
def test_the_audit_surface_is_the_priced_surface_and_the_counter_on_generated_logs(events: int, seed: int, dialect: Dialect) -> None:
    _same_surface(_log(events, seed), dialect)


@given(well_formed_logs(), st.sampled_from(Dialect))
def test_the_audit_surface_is_the_priced_surface_and_the_counter_on_drawn_logs(events: tuple[Event, ...], dialect: Dialect) -> None:
    """Drawn logs: replaces, results without calls (a corrupt counter), projections rejected."""
    _same_surface(events, dialect)


@settings(max_examples=25, deadline=None)
@given(events=st.integers(20, 400), seed=st.integers(0, 2**10), dialect=st.sampled_from(Dialect))
def test_the_shared_answers_are_the_definitions(events: int, seed: int, dialect: Dialect) -> None:
    """Asked twice of an event (the answer kept), or of another dialect: the model's projection
    (DER-1) and header (HDR-1)."""
    other = Dialect.D08 if dialect is Dialect.A55 else Dialect.A55
    for event in _log(events, seed):
        for shared, definition in ((projected, project), (header_of, header_of_event)):
            assert shared(event, dialect) == definition(event, dialect)
            assert shared(event, dialect) == definition(event, dialect)
            assert shared(event, other) == definition(event, other)


# ---------------------------------------------------------------- the node projection and its price

# U16 counts an astral character twice: "😀" * 3 is 3 characters, 6 UTF-16 units, 2 tokens.
_TEXTS = st.sampled_from(["", "abc", "abcd", "abcde", "é", "😀x", "😀" * 3, "a" * 9]) | st.text(max_size=6)
_BLOCKS = st.one_of(
    st.builds(lambda kind, text: obj([("type", kind), ("text", text)]), st.sampled_from(["text", "reasoning"]), _TEXTS | json_values(3)),
    st.builds(lambda name, arguments: obj([("type", "tool-call"), ("id", "c"), ("name", name), ("arguments", arguments)]),
              _TEXTS | json_values(2), _TEXTS | json_values(2)),
    st.builds(lambda content: obj([("type", "tool-result"), ("content", content)]), _TEXTS | st.lists(json_values(3), max_size=2).map(tuple)),
    st.builds(lambda kind: obj([("type", kind)]), st.sampled_from(["text", "tool-call", "image", 3])),
    st.builds(lambda kind, text: obj([("type", kind), ("text", text), ("name", text), ("arguments", text)]),
              st.sampled_from(["image", "tool-result", "Text", None]), _TEXTS),
    json_values(4),
)


@given(st.one_of(st.lists(_BLOCKS, max_size=4).map(tuple), _TEXTS, json_values(4)), st.booleans())
def test_a_message_is_priced_as_the_model_prices_it(content: Json, has_content: bool) -> None:
    """MTR-2/MTR-3 on any content: blocks of each kind with ASCII, non-ASCII (U16 counts an astral
    character twice) and non-string texts, other blocks, a string or non-array content, or none."""
    message = obj([("role", "user"), ("content", content)] if has_content else [("role", "user")])
    assert message_price(message) == estimate_message(message)


_BLOCK_TEXTS: list[Json] = ["", "abc", "abcde", "é" * 5, "😀" * 3, None, 7, ("a",), obj([("a", 1)])]


def test_every_block_kind_and_text_is_priced_as_the_model_prices_it() -> None:
    """MTR-2 block by block, exhaustively: each kind MTR-2 names (and others, and a non-string type)
    with every pairing of ASCII, non-ASCII, astral and non-string ``text``, ``name`` and ``arguments``."""
    for kind in ["text", "reasoning", "tool-call", "tool-result", "image", "Text", None, 3]:
        for first in _BLOCK_TEXTS:
            for second in _BLOCK_TEXTS:
                block = obj([("type", kind), ("text", first), ("name", first), ("arguments", second), ("content", second)])
                for content in ((block,), (block, block), "😀" + str(first)):
                    message = obj([("role", "assistant"), ("content", content)])
                    assert message_price(message) == estimate_message(message), block


_DATA_KEYS = ["content", "callId", "isError", "provenance", "usage"]


@given(st.sampled_from(["user/message", "steering/message", "assistant/message", "tool/result", "step/start", "x/y"]),
       st.dictionaries(st.sampled_from(_DATA_KEYS), st.sampled_from([(), ("a",), "t", None, False]) | json_values(2), max_size=5),
       st.booleans(), st.sampled_from(Dialect))
def test_any_node_is_projected_as_the_model_projects_it(type_name: str, data: dict[str, Json], as_object: bool, dialect: Dialect) -> None:
    """DER-1 on any surface node: each projected type (and others) with any subset of the fields the
    projection reads, empty and non-empty content, non-object data, both dialects."""
    event = make_event(type_name, seq=3, time=0, data=obj(data.items()) if as_object else tuple(data))
    assert project_node(event, dialect) == project(event, dialect)


def test_every_real_node_is_projected_and_priced_as_the_model_does() -> None:
    nodes = 0
    for path in sorted((Path(__file__).parents[1] / "data").rglob("*.jsonl")):
        for event in read_path(str(path)).events:
            for dialect in Dialect:
                message = project_node(event, dialect)
                assert message == project(event, dialect), (path, event.seq)
                if isinstance(message, JsonObject):
                    nodes += 1
                    assert message_price(message) == estimate_message(message), (path, event.seq)
    assert nodes > 500
