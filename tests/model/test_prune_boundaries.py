"""PRN-1/PRN-2/PRN-3 at their boundaries (issue 43): block edges exactly at the head and at the cut, blocks removed
whole, blocks that are not text, totals at the threshold and one over, configurations at the edge of their bound.

Expected values from the rule text: PRN-3 "none when total <= thresholdChars; else remove code points [head, total -
tail) of the concatenated text, inserting the marker in the first text block that overlaps the removed span; empty
text blocks are dropped, non-text blocks stay in place"; PRN-2 "code points summed over text blocks only"; PRN-1
"threshold > 0, head/tail >= 0, headChars + CP(PRUNE_MARKER) + tailChars <= thresholdChars".
"""

from __future__ import annotations

import pytest

from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.prune import PRUNE_MARKER, PruneConfig, check_prune_config, content_chars, prune_content
from sessionspec.model.rejected import FailureKind, Rejected

M = PRUNE_MARKER
assert len(M) == 39


def _text(t: str) -> JsonObject:
    return JsonObject((("type", "text"), ("text", t)))


def _texts(blocks: object) -> list[object]:
    assert isinstance(blocks, tuple)
    return [b.get("text") if isinstance(b, JsonObject) and b.get("type") == "text" and isinstance(b.get("text"), str) else b for b in blocks]


def test_PRN_3_a_block_ending_exactly_at_the_head_keeps_whole_and_the_marker_goes_to_the_next() -> None:
    """Blocks [0,50) and [50,100), head 50: the first block ends at the head (it does not overlap the removed span)."""
    a, b = "a" * 50, "b" * 50
    out = prune_content((_text(a), _text(b)), PruneConfig(threshold_chars=99, head_chars=50, tail_chars=10))
    assert _texts(out) == [a, M + "b" * 10]


def test_PRN_3_a_block_starting_exactly_at_the_cut_keeps_whole_and_a_block_inside_the_span_is_dropped() -> None:
    """Blocks [0,50), [50,100), [100,150), head 10, tail 50: the cut is at 100, the third block's start."""
    a, b, c = "a" * 50, "b" * 50, "c" * 50
    out = prune_content((_text(a), _text(b), _text(c)), PruneConfig(threshold_chars=99, head_chars=10, tail_chars=50))
    assert _texts(out) == ["a" * 10 + M, c]


def test_PRN_3_non_text_blocks_stay_in_place_and_count_nothing() -> None:
    image = freeze({"type": "image", "data": "x" * 500})
    odd = freeze({"type": "text", "text": 7})  # a text block whose text is not a string: not text (PRN-2)
    blocks = (_text("a" * 60), image, odd, "loose", _text("b" * 60))
    assert content_chars(blocks) == 120
    out = prune_content(blocks, PruneConfig(threshold_chars=100, head_chars=20, tail_chars=20))
    assert _texts(out) == ["a" * 20 + M, image, odd, "loose", "b" * 20]


@pytest.mark.parametrize(("size", "pruned"), [(100, False), (101, True), (99, False)])
def test_PRN_3_none_at_the_threshold_pruned_one_over(size: int, pruned: bool) -> None:
    out = prune_content((_text("x" * size),), PruneConfig(threshold_chars=100, head_chars=30, tail_chars=30))
    assert (out is not None) is pruned
    if pruned:
        assert _texts(out) == ["x" * 30 + M + "x" * 30]


def test_PRN_3_a_head_of_zero_puts_the_marker_first() -> None:
    out = prune_content((_text("y" * 80),), PruneConfig(threshold_chars=60, head_chars=0, tail_chars=21))
    assert _texts(out) == [M + "y" * 21]


@pytest.mark.parametrize("blocks", [None, "text", 3, freeze({"type": "text", "text": "x"})])
def test_PRN_2_content_that_is_not_a_list_counts_nothing_and_prunes_nothing(blocks: object) -> None:
    assert content_chars(blocks) == 0  # type: ignore[arg-type]
    assert prune_content(blocks, PruneConfig(threshold_chars=1, head_chars=0, tail_chars=0)) is None  # type: ignore[arg-type]


def test_PRN_3_an_unchecked_configuration_over_its_bound_is_a_bug_not_a_longer_result() -> None:
    """head + marker + tail over the threshold (PRN-1 refuses it): the result would exceed the threshold, so the
    model reports a BUG rejection rather than returning it."""
    out = prune_content((_text("z" * 200),), PruneConfig(threshold_chars=50, head_chars=30, tail_chars=30))
    assert isinstance(out, Rejected) and out.rule == "PRN-3" and out.kind is FailureKind.BUG


@pytest.mark.parametrize(("threshold", "head", "tail", "ok"), [
    (1, 0, 0, False),  # 39 > 1
    (39, 0, 0, True), (40, 1, 0, True), (40, 0, 1, True), (40, 1, 1, False),  # the bound, equal and one over
    (0, 0, 0, False), (-1, 0, 0, False), (100, -1, 0, False), (100, 0, -1, False),
])
def test_PRN_1_the_bounds(threshold: int, head: int, tail: int, ok: bool) -> None:
    config = PruneConfig(threshold_chars=threshold, head_chars=head, tail_chars=tail)
    assert (check_prune_config(config) is config) is ok
