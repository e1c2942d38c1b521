"""The chunks of one packed storage row, taken by the check as one (issue 26).

CHK-6: "Expansion MUST produce, for member `k`, `{type:"assistant/chunk", seq: seq0 + k, time:
time0 + Σ dt[0..k−1], data:{turn, step, chunk}}` with chunk `{type:"text-delta"|"reasoning-delta",
index, text}` or `{type:"tool-call-delta", index, id, name?, argumentsDelta}`."

So the members of a row differ only in ``seq`` (consecutive), ``time`` and their text; they share the
turn, the step, the chunk kind, its ``index`` (and ``id``, ``name``), carry no ``surfaceOp`` and no
``sourceEventSeqs``, and sit on one line.  Most of what the audits do with a chunk depends on
those shared fields alone, so a fold that declares it (``TAKES_RUNS``) takes a row's chunks in one
step instead of one step each; the members are :func:`model.codec.expand_row`'s events, the
definition, and every other reader takes them one by one.  ``tests/check/test_chunk_runs.py`` holds
the report of the runs equal to the report of the members.
"""

from __future__ import annotations

from typing import ClassVar, final

from sessionspec.model.jsonval import Json, JsonObject
from sessionspec.model.log import Event


@final
class ChunkRun:
    """A packed row's ``assistant/chunk`` events, in order (at least one)."""

    __slots__ = ("members", "seq", "count", "chunk")

    type: ClassVar[str] = "assistant/chunk"

    def __init__(self, members: tuple[Event, ...]) -> None:
        first = members[0]
        data = first.data
        assert isinstance(data, JsonObject)
        chunk = data["chunk"]
        assert isinstance(chunk, JsonObject)
        self.members = members
        self.seq = first.seq
        self.count = len(members)
        # The first member's chunk: its kind, index, id and name are every member's (CHK-6).
        self.chunk: JsonObject = chunk

    @property
    def last(self) -> int:
        """The seq of the last member."""
        return self.seq + self.count - 1

    @property
    def kind(self) -> Json:
        """The chunk kind every member has (``text-delta``, ``reasoning-delta`` or ``tool-call-delta``)."""
        return self.chunk["type"]

    def any_text(self) -> bool:
        """Whether some member's delta is a non-empty string (``text`` or ``argumentsDelta``)."""
        key = "argumentsDelta" if self.kind == "tool-call-delta" else "text"
        for member in self.members:
            data = member.data
            assert isinstance(data, JsonObject)
            chunk = data["chunk"]
            assert isinstance(chunk, JsonObject)
            if chunk[key]:
                return True
        return False

    def __repr__(self) -> str:
        return f"ChunkRun(seq={self.seq}, count={self.count}, kind={self.kind!r})"
