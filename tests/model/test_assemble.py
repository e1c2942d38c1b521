"""The streamed tool-call assembly of MTR-9 (model/assemble.py): what the meter prices a streamed
assistant message by.  Expected values are read off the rule."""

from __future__ import annotations

from sessionspec.model.assemble import BlockAssembler
from sessionspec.model.jsonval import JsonObject, freeze


def assembled(*chunks: dict[str, object]) -> object:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.feed(freeze(chunk))
    return assembler.blocks()


def test_MTR_9_tool_call_deltas_set_the_id_set_a_non_empty_name_and_append_arguments() -> None:
    blocks = assembled(
        {"type": "tool-call-delta", "index": 0, "id": "c1", "name": "read", "argumentsDelta": '{"path"'},
        {"type": "tool-call-delta", "index": 0, "id": "c1", "name": "", "argumentsDelta": ':"a"}'},
    )
    assert blocks == (JsonObject((("type", "tool-call"), ("id", "c1"), ("name", "read"), ("arguments", '{"path":"a"}'))),)


def test_MTR_9_an_open_tool_call_without_id_defaults_to_call_index() -> None:
    blocks = assembled({"type": "tool-call-delta", "index": 3, "argumentsDelta": "{}"})
    assert blocks == (JsonObject((("type", "tool-call"), ("id", "call-3"), ("name", ""), ("arguments", "{}"))),)


# ---------------------------------------------------------------- issue 43: each decision of the assembler taken


def _fed(*chunks: dict[str, object]) -> object:
    from sessionspec.model.assemble import BlockAssembler

    assembler = BlockAssembler()
    for chunk in chunks:
        assert assembler.feed(freeze(chunk)) is None
    return assembler.blocks()


def test_MTR_9_a_block_opens_once_the_first_type_stays() -> None:
    """The harness opens a partial block only once (llm/src/assembler.ts ``push``, ``block-start``: ``if
    (!this.partials.has(chunk.index))``): a block-start after a delta, or a second one, keeps the first type."""
    assert _fed({"type": "text-delta", "index": 0, "text": "a"}, {"type": "block-start", "index": 0, "blockType": "reasoning"}) \
        == (freeze({"type": "text", "text": "a"}),)
    assert _fed({"type": "block-start", "index": 0, "blockType": "reasoning"}, {"type": "block-start", "index": 0, "blockType": "text"},
                {"type": "reasoning-delta", "index": 0, "text": "r"}) == (freeze({"type": "reasoning", "text": "r"}),)


def test_MTR_9_every_tool_call_delta_sets_the_id_a_missing_one_falls_back() -> None:
    """``partial.toolCallId = chunk.id`` on every delta; assembled ``toolCallId ?? CallId(`call-${index}`)``."""
    assert _fed({"type": "tool-call-delta", "index": 2, "id": "c1", "name": "echo", "argumentsDelta": "{"},
                {"type": "tool-call-delta", "index": 2, "argumentsDelta": "}"}) \
        == (freeze({"type": "tool-call", "id": "call-2", "name": "echo", "arguments": "{}"}),)


def test_MTR_9_stragglers_and_odd_chunks() -> None:
    """After the first block-end the block is final (stragglers ignored); usage and finish chunks carry no block;
    a delta whose text is not a string adds nothing; an open block of an unknown type cannot be assembled."""
    final = {"type": "text", "text": "closed"}
    assert _fed({"type": "block-start", "index": 0, "blockType": "text"}, {"type": "block-end", "index": 0, "block": final},
                {"type": "text-delta", "index": 0, "text": "late"}, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "x"}},
                {"type": "usage", "usage": {}}, {"type": "finish", "reason": {"kind": "stop"}}) == (freeze(final),)
    assert _fed({"type": "text-delta", "index": 0, "text": 5}, {"type": "tool-call-delta", "index": 1, "id": "c", "argumentsDelta": 7}) \
        == (freeze({"type": "text", "text": ""}), freeze({"type": "tool-call", "id": "c", "name": "", "arguments": ""}))
    assert isinstance(_fed({"type": "block-start", "index": 0, "blockType": "image"}), str)
    assert _fed({"type": "text-delta", "text": "no index"}) == (freeze({"type": "text", "text": "no index"}),)
    assert _fed({"type": "mystery", "index": 0}, {"type": "block-start", "index": 0, "blockType": "text"}) == (freeze({"type": "text", "text": ""}),)


def test_MTR_9_a_reasoning_delta_that_opens_its_block_makes_it_reasoning() -> None:
    """A delta with no block-start before it opens its block with the delta's type (assembler.ts ``push``:
    ``this.ensure(chunk.index, chunk.type === 'text-delta' ? 'text' : 'reasoning')``): a reasoning-delta first gives a
    reasoning block, a text-delta first a text block."""
    assert _fed({"type": "reasoning-delta", "index": 0, "text": "r"}) == (freeze({"type": "reasoning", "text": "r"}),)
    assert _fed({"type": "text-delta", "index": 0, "text": "t"}) == (freeze({"type": "text", "text": "t"}),)
