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
    """A text block whose text is a number is read by ``Array.from(7)``: no points, so its new text is empty and
    it is dropped (QF-16, compact-tool-result-prune/src/index.ts lines 85-101 at a55f148516); the image and the
    loose string (``block.type`` undefined) are not text and stay in place."""
    image = freeze({"type": "image", "data": "x" * 500})
    odd = freeze({"type": "text", "text": 7})
    blocks = (_text("a" * 60), image, odd, "loose", _text("b" * 60))
    assert content_chars(blocks) == 120
    out = prune_content(blocks, PruneConfig(threshold_chars=100, head_chars=20, tail_chars=20))
    assert _texts(out) == ["a" * 20 + M, image, "loose", "b" * 20]


@pytest.mark.parametrize("text", [7, 2.5, True, False, freeze({"k": "v"})])
def test_QF_16_a_text_that_reads_as_no_points_is_dropped_when_pruned(text: object) -> None:
    odd = freeze({"type": "text", "text": text})
    blocks = (odd, _text("c" * 190))
    assert content_chars(blocks) == 190
    out = prune_content(blocks, PruneConfig(threshold_chars=100, head_chars=10, tail_chars=10))
    assert _texts(out) == ["c" * 10 + M + "c" * 10]


def test_QF_16_an_array_text_is_read_element_by_element_and_joined_as_js_strings() -> None:
    """``Array.from(["ab", 1, null, true, [2, 3], {}])`` has six points; the kept ones are joined by ToString (null
    is "", an array its comma join, an object "[object Object]")."""
    odd = freeze({"type": "text", "text": ["ab", 1, None, True, [2, 3], {"k": 1}]})
    assert content_chars((odd,)) == 6
    kept = prune_content((odd, _text("e" * 200)), PruneConfig(threshold_chars=80, head_chars=6, tail_chars=3))
    assert _texts(kept) == ["ab1true2,3[object Object]", M + "eee"]
    out = prune_content((odd, _text("d" * 80)), PruneConfig(threshold_chars=60, head_chars=2, tail_chars=3))
    assert _texts(out) == ["ab1" + M, "ddd"]


@pytest.mark.parametrize(("blocks", "why"), [
    (None, "not iterable"), (3, "not iterable"), (freeze({"type": "text", "text": "x"}), "not iterable"),
    ((None,), "reading 'type'"), ((freeze({"type": "text", "text": None}),), "null or undefined"),
    ((freeze({"type": "text"}),), "null or undefined"), ((freeze({"type": "text", "text": {"length": 2}}),), "array-like"),
])
def test_QF_16_content_measureContent_throws_on_is_refused(blocks: object, why: str) -> None:
    """The harness's prune throws before measuring: the model refuses (PRN-2), whatever the threshold."""
    out = prune_content(blocks, PruneConfig(threshold_chars=10_000, head_chars=0, tail_chars=0))  # type: ignore[arg-type]
    assert isinstance(out, Rejected) and out.rule == "PRN-2" and why in out.reason, out


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
def test_PRN_2_content_that_is_not_a_list_counts_nothing(blocks: object) -> None:
    assert content_chars(blocks) == 0  # type: ignore[arg-type]


def test_PRN_2_a_string_content_is_walked_by_character_and_prunes_nothing() -> None:
    """``for (const block of "text")`` walks characters, whose ``type`` is undefined: nothing is text."""
    assert prune_content("t" * 500, PruneConfig(threshold_chars=1, head_chars=0, tail_chars=0)) is None


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
