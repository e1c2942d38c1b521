"""Assembling an assistant message's blocks from its stream chunks (MTR-9's ``BlockAssembler``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify


@final
@dataclass(slots=True)
class _OpenBlock:
    block_type: Json | Absent
    text: str = ""
    call_id: Json = None  # null: assemble ``call-<index>`` (the harness's ``toolCallId ?? CallId(...)``)
    name: str = ""
    arguments: str = ""
    final: Json | Absent = ABSENT


@final
@dataclass(slots=True)
class BlockAssembler:
    """The stream assembler semantics MTR-9 prices (the harness's ``BlockAssembler``):
    chunks fed in citation order, then the assembled blocks."""

    order: list[str] = field(default_factory=list)
    open: dict[str, _OpenBlock] = field(default_factory=dict)

    def _slot(self, index: Json | Absent) -> _OpenBlock:
        key = js_stringify(index if index is not ABSENT else None)
        if key not in self.open:
            self.order.append(key)
            self.open[key] = _OpenBlock(block_type=ABSENT)
        return self.open[key]

    def feed(self, chunk: Json | Absent) -> str | None:
        kind = get(chunk, "type")
        if kind in ("usage", "finish"):
            return None
        slot = self._slot(get(chunk, "index"))
        if slot.final is not ABSENT:
            return None  # the first block-end is authoritative
        match kind:
            case "block-start":
                # The harness opens a block only once (``assembler.ts`` ``push``: ``if (!this.partials.has(index))``):
                # a block-start after a delta or another block-start of the index keeps the first type.
                if slot.block_type is ABSENT:
                    slot.block_type = get(chunk, "blockType")
            case "text-delta" | "reasoning-delta":
                text = get(chunk, "text")
                slot.text += text if isinstance(text, str) else ""
                if slot.block_type is ABSENT:
                    slot.block_type = "text" if kind == "text-delta" else "reasoning"
            case "tool-call-delta":
                call_id, name, delta = get(chunk, "id"), get(chunk, "name"), get(chunk, "argumentsDelta")
                # Every delta sets the id (``partial.toolCallId = chunk.id``), a missing one too.
                slot.call_id = None if call_id is ABSENT else call_id
                if isinstance(name, str) and name:
                    slot.name = name
                slot.arguments += delta if isinstance(delta, str) else ""
                if slot.block_type is ABSENT:
                    slot.block_type = "tool-call"
            case "block-end":
                block = get(chunk, "block")
                slot.final = block if block is not ABSENT else None
            case _:
                return None
        return None

    def blocks(self) -> tuple[Json, ...] | str:
        out: list[Json] = []
        for key in self.order:
            slot = self.open[key]
            if slot.final is not ABSENT:
                out.append(slot.final)
                continue
            match slot.block_type:
                case "text" | "reasoning":
                    out.append(JsonObject((("type", slot.block_type), ("text", slot.text))))
                case "tool-call":
                    call_id = slot.call_id if slot.call_id is not None else f"call-{key}"
                    out.append(
                        JsonObject(
                            (("type", "tool-call"), ("id", call_id), ("name", slot.name), ("arguments", slot.arguments))
                        )
                    )
                case _:
                    return f"cannot assemble an open block of type {slot.block_type!r}"
        return tuple(out)
