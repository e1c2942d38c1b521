"""Tool pairing and the retention walk (CMP-10, CMP-11, CMP-12): which head range a compaction replaces."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.compaction.records import Range
from sessionspec.model.derive import project
from sessionspec.model.jsonval import get
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements


def tool_call_delta(event: Event, dialect: Dialect) -> int:
    """CMP-10's counter step: an assistant message adds its tool-call blocks, a
    tool result subtracts one, every other node adds 0.  The blocks are read
    from the derived message (DER-1), so both dialects share this definition."""
    match event.type:
        case "assistant/message":
            message = project(event, dialect)
            content = get(message, "content") if message is not None and not isinstance(message, Rejected) else None
            if not isinstance(content, tuple):
                return 0
            return sum(1 for b in content if get(b, "type") == "tool-call")
        case "tool/result":
            return -1
        case _:
            return 0


@implements("CMP-10")
def balanced_cuts(nodes: Sequence[int], events: Sequence[Event], dialect: Dialect = Dialect.A55) -> tuple[bool, ...] | Rejected:
    """CMP-10: "Tool-pairing balance MUST be a counter over surface order: `delta(assistant/message) = number
    of tool-call blocks in its content`, `delta(tool/result) = −1` (original or replacement), `delta(other)
    = 0` (user, steering, checkpoint, text-only or empty assistant)."

    CMP-10: a counter over surface order (assistant +#tool-calls, tool/result
    −1, others 0); ``balanced[0] = True``, ``balanced[i+1]`` iff the running sum
    after node i is 0; a negative sum is a corrupt surface.  Call ids are not
    matched (Q-8)."""
    balanced = [True]
    running = 0
    for seq in nodes:
        running += tool_call_delta(events[seq], dialect)
        if running < 0:
            return Rejected(rule="CMP-10", seq=seq, reason="corrupt surface: more tool results than tool calls")
        balanced.append(running == 0)
    return tuple(balanced)


@implements("CMP-12")
def select_range(
    priced: Sequence[tuple[int, int]],
    nodes: Sequence[int],
    events: Sequence[Event],
    retain_tokens: int,
    dialect: Dialect = Dialect.A55,
) -> Range | None | Rejected:
    """CMP-12: "Automatic ranges MUST be head-anchored (start = current surface head, which may be an earlier
    checkpoint → re-compaction merges it), turn-agnostic (turn and user-message boundaries do not constrain
    the cut), and over surface nodes only."

    CMP-11: walk from the tail accumulating tokens until ``>= retain``
    (the retained tail has at least one node); round the cut head-ward while it
    is unbalanced; ``keep == 0`` -> none; else ``{nodes[0], nodes[keep-1]}``.
    CMP-12: head-anchored, turn-agnostic, surface nodes only.  The walk itself
    is :func:`retention_cut` (CMP-11)."""
    if [seq for seq, _ in priced] != list(nodes):
        return Rejected(rule="CMP-11", reason="token-meter surface does not match")
    if not nodes:
        return None
    balanced = balanced_cuts(nodes, events, dialect)
    if isinstance(balanced, Rejected):
        return balanced
    keep = retention_cut(tuple(tokens for _, tokens in priced), balanced, retain_tokens)
    if keep == 0:
        return None
    return Range(start=nodes[0], end=nodes[keep - 1])


@implements("CMP-11")
def retention_cut(tokens: Sequence[int], balanced: Sequence[bool], retain_tokens: int) -> int:
    """CMP-11: "(retention walk) Given the measurement's priced nodes `P` (which MUST equal the current surface
    seq-for-seq, else reject "token-meter surface does not match") and `retainTokens R`: empty → none; walk
    from the last node toward the head accumulating tokens, setting `keep = i` at each node and stopping as
    soon as the sum `>= R` (so the retained tail has at least one node, even for `R = 0` or a 0-token last
    node); `keep == 0` → none; then while `keep > 0` and the cut before node `keep` is unbalanced, `keep -=
    1` (round head-ward, retaining more); `keep == 0` → none; else the range is `{start: nodes[0], end:
    nodes[keep−1]}`."

    CMP-11, the retention walk on prices alone: the index of the first
    retained node (0: nothing to compact).  Walk from the tail accumulating
    tokens until ``>= retain`` (at least one node is retained), then move the
    cut head-ward while it is unbalanced.

    pre: len(balanced) == len(tokens) + 1
    pre: all(t >= 0 for t in tokens)
    post: 0 <= __return__ < max(len(tokens), 1)
    post: __return__ == 0 or balanced[__return__]
    post: __return__ == 0 or sum(tokens[__return__:]) >= retain_tokens
    """
    total = 0
    keep = len(tokens) - 1
    for i in range(len(tokens) - 1, -1, -1):
        keep = i
        total += tokens[i]
        if total >= retain_tokens:
            break
    if keep <= 0:
        return 0
    while keep > 0 and not balanced[keep]:
        keep -= 1
    return keep

