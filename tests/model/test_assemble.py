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
