"""Decision outcomes of the prune check, the seed's checks and the writers (model/prune_check.py, model/seed_log.py,
model/writers.py, moved into model/ by issue 44) no other test took (issue 43 item 1): PRN-3/PRN-4's replacement,
DIA-5's end-seed, FMT-11's fork child, and FMT-7's writers of a turn.

Each test builds the events whose decision is at stake and asserts what the rule says of them.
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionspec.model.jsonval import JsonObject, freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.prune import PRUNE_MARKER, PruneConfig
from sessionspec.model.prune_check import PruneWatch, check_prune_replacement, inferred_prune_config
from sessionspec.model.rejected import Rejected
from sessionspec.model.seed_log import check_end_seed, check_fork_child
from sessionspec.model.writers import A55_WRITERS, OpenTurn, check_turn_dialects, shape_dialect, turn_writer_kind


def _event(type_name: str, data: Any, seq: int, **envelope: Any) -> Event:
    return make_event(type_name, seq=seq, time=seq, data=freeze(data), **envelope)


def _rules(found: tuple[Rejected, ...] | list[Rejected]) -> list[tuple[str, int | None, str]]:
    return [(r.rule, r.seq, r.reason) for r in found]


# ---------------------------------------------------------------- PRN-3, PRN-4: a prune replacement

_ORIGINAL_TEXT = "".join(chr(ord("a") + i % 26) for i in range(100))  # 100 code points, each place told apart


def _result(content: Any, seq: int = 0) -> Event:
    return _event("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": content}, seq, surface_op="append")


def _replacement(content: Any, start: Any, seq: int = 1) -> Event:
    return _event("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": content}, seq,
                  surface_op=freeze({"op": "replace", "start": start, "end": start}), source_event_seqs=freeze([start]))


def test_PRN_3_a_marker_at_the_very_start_shows_a_zero_head() -> None:
    """PRN-3 with ``headChars`` 0: nothing before the marker, the last ``tailChars`` code points after it.  The
    original is the log's first node (seq 0: PRN-4's single node at the lowest seq)."""
    pruned = [{"type": "text", "text": PRUNE_MARKER + _ORIGINAL_TEXT[-5:]}]
    assert inferred_prune_config(freeze(pruned)) == PruneConfig(threshold_chars=len(PRUNE_MARKER) + 5, head_chars=0, tail_chars=5)
    assert check_prune_replacement(PruneWatch(Dialect.A55), _replacement(pruned, 0), [_result([{"type": "text", "text": _ORIGINAL_TEXT}])]) == ()
    # A tail that is not the original's last code points is not pruneContent of it.
    wrong = [{"type": "text", "text": PRUNE_MARKER + _ORIGINAL_TEXT[-5:][::-1]}]
    found = check_prune_replacement(PruneWatch(Dialect.A55), _replacement(wrong, 0), [_result([{"type": "text", "text": _ORIGINAL_TEXT}])])
    assert [(r.rule, r.reason) for r in found] == [("PRN-3", "pruned content is not pruneContent of the original")]


@pytest.mark.parametrize("start", [-1, 1], ids=["before-the-log", "at-the-replacement-itself"])
def test_PRN_4_a_prune_replaces_a_node_of_the_log_before_it(start: int) -> None:
    """PRN-4: single-node, ``[originalSeq]``: the seq names an event before the replacement (0 <= seq < its seq)."""
    pruned = [{"type": "text", "text": PRUNE_MARKER + _ORIGINAL_TEXT[-5:]}]
    found = check_prune_replacement(PruneWatch(Dialect.A55), _replacement(pruned, start), [_result([{"type": "text", "text": _ORIGINAL_TEXT}])])
    assert _rules(found) == [("PRN-4", 1, "prune replace is not single-node")]


def test_PRN_2_a_non_text_block_counts_nothing_toward_the_head_and_tail() -> None:
    """PRN-2: "non-text blocks count 0"; PRN-3 keeps them in place: an image before the text moves neither the
    head nor the tail the marker shows."""
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    pruned = [image, {"type": "text", "text": _ORIGINAL_TEXT[:10] + PRUNE_MARKER + _ORIGINAL_TEXT[-5:]}]
    assert inferred_prune_config(freeze(pruned)) == PruneConfig(threshold_chars=10 + len(PRUNE_MARKER) + 5, head_chars=10, tail_chars=5)
    original = [image, {"type": "text", "text": _ORIGINAL_TEXT}]
    assert check_prune_replacement(PruneWatch(Dialect.A55), _replacement(pruned, 0), [_result(original)]) == ()


def test_PRN_2_a_text_block_without_a_string_text_counts_nothing() -> None:
    """PRN-2 sums the code points of text blocks' texts; a ``text`` block whose text is no string has none, so
    the marker's place is read from the string texts only."""
    pruned = freeze([{"type": "text", "text": 12345}, {"type": "text", "text": "abc" + PRUNE_MARKER + "xy"}])
    assert inferred_prune_config(pruned) == PruneConfig(threshold_chars=3 + len(PRUNE_MARKER) + 2, head_chars=3, tail_chars=2)


# ---------------------------------------------------------------- DIA-5, FMT-11: the seed


def _events(*types: str) -> list[Event]:
    return [_event(t, {}, i) for i, t in enumerate(types)]


def test_DIA_5_a_negative_seed_length_names_no_seed() -> None:
    """DIA-5 binds a seed of ``seed_length`` events; a length below one names none, so no end-seed is owed."""
    log = _events("turn/start", "turn/end")
    assert check_end_seed(log, -1, Dialect.D08) == []
    assert check_end_seed(log, 0, Dialect.D08) == []
    # The same log with a one-event seed owes the marker after it.
    assert [r.rule for r in check_end_seed(log, 1, Dialect.D08)] == ["DIA-5"]


def test_FMT_11_a_negative_seed_length_names_no_seed() -> None:
    parent = _events("turn/start", "turn/end")
    child = _events("session/end-seed")
    assert check_fork_child(child, parent, -1) == []
    assert [r.rule for r in check_fork_child(child, parent, 1)] == ["FMT-11"]


def test_FMT_11_a_child_exactly_as_long_as_its_seed_is_compared_event_by_event() -> None:
    """"a fork child's first ``seedLength`` events MUST equal the parent's": a child of exactly ``seedLength``
    events holds them all, so it is compared, not refused for its length."""
    parent = [_event("turn/start", {"turn": 1}, 0), _event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, 1),
              _event("turn/start", {"turn": 2}, 2)]
    assert check_fork_child(parent[:2], parent, 2) == []
    other = [parent[0], _event("turn/end", {"turn": 1, "reason": {"kind": "aborted"}}, 1)]
    assert _rules(check_fork_child(other, parent, 2)) == [("FMT-11", 1, "seed event 1 differs from the parent's event 1")]
    assert [r.rule for r in check_fork_child(parent[:1], parent, 2)] == ["FMT-11"]


# ---------------------------------------------------------------- FMT-7: the writers of a turn


def test_FMT_7_a_user_message_with_an_id_is_the_D08_loops() -> None:
    """D08 writes ``user/message`` as a message with ``id`` (and ``role``); A55's has neither."""
    assert shape_dialect(_event("user/message", {"id": "m1", "content": []}, 0)) is Dialect.D08
    assert shape_dialect(_event("user/message", {"content": [], "source": {"kind": "user"}}, 0)) is Dialect.A55


def test_FMT_7_a_tool_result_with_neither_message_nor_call_id_shows_no_dialect() -> None:
    """A55's ``tool/result`` carries ``callId``, D08's a ``message``; one with neither is neither writer's shape
    (judged by the shape rules, not the writers)."""
    assert shape_dialect(_event("tool/result", {"turn": 1, "content": []}, 0)) is None
    assert shape_dialect(_event("tool/result", {"turn": 1, "callId": "c", "content": []}, 0)) is Dialect.A55


def test_FMT_7_a_tie_with_an_unshaped_turn_start_goes_to_the_A55_loop() -> None:
    """The writer is the dialect most marked events show, "the ``turn/start`` breaks a tie"; a start that shows
    neither dialect (its data no object) leaves the tie to A55, whose rules name the D08 event (LOG-12 for a
    ``user/message``)."""
    start = make_event("turn/start", seq=0, time=0, data=freeze([1]))
    a55 = _event("steering/message", {"turn": 1}, 1)
    d08 = _event("user/message", {"id": "m", "role": "user", "content": []}, 2)
    t = OpenTurn(start=start, last=d08, inner=2, marked=[(a55, Dialect.A55), (d08, Dialect.D08)])
    found = check_turn_dialects(t, 0)
    assert [(r.rule, r.seq) for r in found] == [("LOG-12", 2)]
    assert "inside a turn the A55 loop wrote" in found[0].reason


def test_FMT_7_an_unknown_inner_event_is_not_an_out_of_band_append() -> None:
    """LOG-16's out-of-band append is ``turn/start``, one **log-only** event, ``turn/end completed``: a turn whose one
    inner event is not known to be log-only is a loop's."""
    start = _event("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {}}}, 0)
    end = _event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, 2)
    assert turn_writer_kind(OpenTurn(start=start, last=end, inner=1), A55_WRITERS, 0, ()) == ("a55-loop", "A55 loop")
    logged = _event("todo/write", {"todos": []}, 1)
    assert turn_writer_kind(OpenTurn(start=start, last=end, inner=1, first_inner=logged), A55_WRITERS, 0, ())[0] == "out-of-band"
    assert isinstance(start.data, JsonObject)


def test_FMT_7_a_turn_without_a_dialect_marked_event_has_no_mixed_writer() -> None:
    """FMT-7 Writers: the writer is "the dialect most of its dialect-marked events show"; a live turn none of whose
    events is marked (a start and an end both loops write) shows no other dialect to report."""
    start = make_event("turn/start", seq=0, time=0, data=freeze([1]))
    assert check_turn_dialects(OpenTurn(start=start, last=start), 0) == []
