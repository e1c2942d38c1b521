"""Kill tests for the survivors of issue 29's mutation sample (docs/quality.md): the streamed tool-call
assembly of MTR-9 and the packable-chunk test of CHK-2.  Expected values are read off the rules."""

from __future__ import annotations

from model.assemble import BlockAssembler
from model.codec import pack_chunk_runs
from model.jsonval import JsonObject, freeze
from model.log import make_event


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


def chunk_event(seq: int, **extra: object) -> object:
    data = freeze({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{seq}"}})
    return make_event("assistant/chunk", seq=seq, time=seq, data=data, **extra)  # type: ignore[arg-type]


def test_CHK_2_a_chunk_with_provenance_is_not_packable() -> None:
    """CHK-2: the envelope key set must be exactly {type, seq, time, data}; a chunk that cites sources is
    written verbatim, so a run of three packs only when none of them carries provenance."""
    plain = [chunk_event(i) for i in range(3)]
    assert len(pack_chunk_runs(plain)) == 1  # type: ignore[arg-type]
    cited = [chunk_event(0), chunk_event(1, source_event_seqs=(0,)), chunk_event(2)]
    assert len(pack_chunk_runs(cited)) == 3  # type: ignore[arg-type]
