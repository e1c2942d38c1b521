"""Fast answers to what the compaction audit asks of the surface nodes (issue 26), each equal to its
definition in ``model/`` (``tests/fast/test_fast_compaction.py`` ties them): the definition is still
asked wherever the fast test cannot prove the answer.

- MTR-7's priced surface and CMP-10's counter: :class:`AuditSurface`, each node priced and stepped
  once, from the projection the request points also take (:func:`sessionspec.fast.derivation.projected`).
"""

from __future__ import annotations

from itertools import accumulate

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.derivation import projected
from sessionspec.fast.jsonget import get
from sessionspec.fast.surface import splice
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.meter import BLOCK_OVERHEAD, CHARS_PER_TOKEN, ROLE_OVERHEAD, price
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan


class AuditSurface:
    """The priced surface (MTR-7, :class:`model.meter.PricedSurface`) as the compaction audit reads it:
    per node its seq, its price and its CMP-10 counter step, three lists spliced by the one splice
    (SURF-8), a node priced and stepped from one projection (DER-1, shared with the request points'
    derivation: :func:`projected`), so a summary sums the steps instead of projecting the surface again."""

    __slots__ = ("dialect", "seqs", "prices", "steps")

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.seqs: list[int] = []
        self.prices: list[int] = []
        self.steps: list[int] = []

    def commit(self, event: Event, plan: SurfacePlan) -> Rejected | None:
        """MTR-7: "Every surface event MUST be priced as `estimateMessage(derive(event))`, or `0` when it
        derives no message; append pushes `{seq, tokens}`; replace ... splices in `{seq, tokens}`" (the
        definition: :func:`model.meter.node_price`, :meth:`model.meter.PricedSurface.commit`); a
        projection's rejection is the price's, and nothing changes."""
        message = projected(event, self.dialect)
        if isinstance(message, Rejected):
            return message
        splice(self.seqs, plan, plan.seq)
        splice(self.prices, plan, 0 if message is None else message_price(message))
        splice(self.steps, plan, counter_step(event, message))
        return None

    def range_tokens(self, start_idx: int, end_idx: int) -> int:
        """The priced total of nodes ``start_idx..end_idx`` (CMP-15's shadowed token count)."""
        return sum(self.prices[start_idx : end_idx + 1])

    def splits(self, start_idx: int, end_idx: int) -> bool | Rejected:
        """CMP-10: "Tool-pairing balance MUST be a counter over surface order" (the definition:
        :func:`model.compaction.retention.balanced_cuts`, ``balanced[0]`` True and ``balanced[k+1]`` iff
        the sum after node ``k`` is 0): does the range ``start_idx..end_idx`` split a pair, i.e. is a
        cut at either edge unbalanced?  A negative sum is a corrupt surface (its first node named)."""
        sums = list(accumulate(self.steps))
        if sums and min(sums) < 0:
            first = next(k for k, running in enumerate(sums) if running < 0)
            return Rejected(rule="CMP-10", seq=self.seqs[first], reason="corrupt surface: more tool results than tool calls")
        return not ((start_idx == 0 or sums[start_idx - 1] == 0) and sums[end_idx] == 0)

    def balanced(self) -> list[bool]:
        """:func:`model.compaction.retention.balanced_cuts` from the counter steps: ``balanced[0]`` True,
        ``balanced[k+1]`` iff the running sum after node ``k`` is 0 (asked after :meth:`splits` found the
        surface not corrupt)."""
        return [True, *(running == 0 for running in accumulate(self.steps))]


def message_price(message: JsonObject) -> int:
    """:func:`model.meter.estimate_message` (MTR-3: "`estimateMessage(m)` MUST equal `price(m.content) +
    4`"), MTR-2's price of a text, reasoning or tool-call block taken here (``ceil4(U16(text)) + 4``;
    ``ceil4(U16(name)) + ceil4(U16(arguments)) + 4``, a non-string priced as the empty string) for
    ASCII strings, whose U16 length is ``len``; any other content or block is priced by
    :func:`model.meter.price` itself."""
    content = message.get("content", ABSENT)
    if type(content) is not tuple:
        return price(content) + ROLE_OVERHEAD
    total = ROLE_OVERHEAD
    for block in content:
        total += _block_price(block) if type(block) is JsonObject else price((block,))
    return total


def _block_price(block: JsonObject) -> int:
    kind = block.get("type")
    if kind == "text" or kind == "reasoning":
        text = block.get("text")
        if type(text) is str and text.isascii():
            return _tokens(len(text)) + BLOCK_OVERHEAD
    elif kind == "tool-call":
        name, arguments = block.get("name"), block.get("arguments")
        if type(name) is str and name.isascii() and type(arguments) is str and arguments.isascii():
            return _tokens(len(name)) + _tokens(len(arguments)) + BLOCK_OVERHEAD
    return price((block,))


def _tokens(length: int) -> int:
    """MTR-1's ``ceil4``: ``ceil(length / CHARS_PER_TOKEN)``."""
    return -(-length // CHARS_PER_TOKEN)


def counter_step(event: Event, message: JsonObject | None) -> int:
    """CMP-10's counter step of a node (the definition: :func:`model.compaction.retention.tool_call_delta`)
    from its projection ``message``: an assistant message adds its tool-call blocks, a tool result
    subtracts one, every other node adds 0."""
    if event.type == "tool/result":
        return -1
    if event.type != "assistant/message" or message is None:
        return 0
    content = get(message, "content")
    return sum(1 for block in content if get(block, "type") == "tool-call") if isinstance(content, tuple) else 0
