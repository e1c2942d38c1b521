"""Decision outcomes of where a compaction lies in a log and what its bracket holds (model/compaction/trigger_place.py,
bracket_contents.py, companion.py, moved into model/ by issue 44) no other test took (issue 43 item 1): CMP-6's
post-step window and its tool results, CMP-7's committed overflow, CMP-19/CMP-22's bracket contents, CMP-2 and DIA-2's
checkpoint source, DIA-7's attempt failure, and CMP-15/CMP-20's summary and checkpoint.

Each test builds the events whose decision is at stake, folds them through the model's acceptor (as the checker
does), and asserts what the rule says of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from sessionspec.model.compaction.bracket_contents import check_checkpoint_source, take_event
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.compaction.records import Ids
from sessionspec.model.compaction.trigger_place import TriggerPlace, take_bracket_event, take_chunk
from sessionspec.model.jsonval import ABSENT, freeze, get, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.rejected import Rejected
from tests.companion_cases import committed_bracket
from tests.companion_cases import judged as companion_judged
from tests.support import with_data

CHECKPOINT_SOURCE = {"kind": "plugin", "plugin": "compact"}


def _log(*specs: tuple[str, Any] | tuple[str, Any, Any]) -> list[Event]:
    """Events numbered from 0: (type, data) or (type, data, surfaceOp)."""
    out: list[Event] = []
    for spec in specs:
        type_name, data = spec[0], spec[1]
        envelope: dict[str, Any] = {"surface_op": freeze(spec[2])} if len(spec) == 3 else {}
        out.append(make_event(type_name, seq=len(out), time=0, data=freeze(data), **envelope))
    return out


def _folded(events: Sequence[Event], dialect: Dialect = Dialect.A55) -> tuple[TriggerPlace, list[Rejected]]:
    place, found = TriggerPlace(dialect), list[Rejected]()
    for event in events:
        take_event(place, event, True, found)
    return place, found


_STEP = (("turn/start", {"turn": 1}), ("request/header", {"reason": "initial"}), ("step/start", {"turn": 1, "step": 1}))
_CALL = {"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"}


def _message(content: Any) -> tuple[str, Any, Any]:
    return ("assistant/message", {"turn": 1, "step": 1, "content": content}, "append")


def _result(call_id: str) -> tuple[str, Any, Any]:
    return ("tool/result", {"turn": 1, "step": 1, "callId": call_id, "content": []}, "append")


_START = ("compact/start", {"turn": 1})


# ---------------------------------------------------------------- CMP-6: the post-step window


def test_CMP_6_a_message_whose_content_is_no_list_has_no_tool_calls_to_wait_for() -> None:
    """Pressure compaction runs in post-step, "after the assistant message and the tool results": a message whose
    content is no list holds no tool-call block, so no result is owed before the bracket."""
    _, found = _folded(_log(*_STEP, _message("text"), _START))
    assert found == []
    _, owed = _folded(_log(*_STEP, _message([_CALL]), _START))
    assert [(r.rule, r.seq) for r in owed] == [("CMP-6", 4)]
    assert "before the step's last tool result" in owed[0].reason


def test_CMP_6_a_bracket_after_more_results_than_calls_follows_them_all() -> None:
    """The bracket comes after the step's results: with every call answered (here one more result than the
    message's calls, LOG-13's to judge), CMP-6 has nothing to refuse."""
    _, found = _folded(_log(*_STEP, _message([_CALL]), _result("c1"), _result("c2"), _START))
    assert found == []


def test_CMP_6_a_step_without_a_message_has_no_tool_calls() -> None:
    """The calls a bracket waits for are those of the step's appended ``assistant/message``: none before it."""
    place = TriggerPlace(Dialect.A55)
    assert place.calls() == 0
    place.message_event = _log(_message([_CALL, {**_CALL, "id": "c2"}]))[0]
    assert place.calls() == 2


# ---------------------------------------------------------------- CMP-7: a committed overflow recovery

_FAILED_STEP = (*_STEP, ("step/end", {"turn": 1, "step": 1}))  # no message: a failed step (LOOP-14)
_CHECKPOINT = ("user/message", {"content": [], "source": CHECKPOINT_SOURCE}, {"op": "replace", "start": 0, "end": 0})
_SUMMARY = ("compact/summary", {"turn": 1})
_END = ("compact/end", {"turn": 1})
_FAILED_END = ("turn/end", {"turn": 1, "reason": {"kind": "error", "step": 1, "failure": {"message": "m", "code": "CONTEXT_WINDOW_EXCEEDED"}}})


def test_CMP_7_a_recovery_that_committed_nothing_owes_no_retry() -> None:
    """CMP-7: the listener "returns ``retry`` iff not aborted and ``replaceGeneration > g0``", else delegates to the
    default ``fail``: after a bracket that wrote no checkpoint the turn may end in error; after one that committed its
    checkpoint it owes the retry step."""
    place, found = _folded(_log(*_FAILED_STEP, _START, _SUMMARY, _END, _FAILED_END))
    assert found == [] and place.overflow_committed is None
    _, owed = _folded(_log(*_FAILED_STEP, _START, _SUMMARY, _CHECKPOINT, _END, _FAILED_END))
    assert [(r.rule, r.seq) for r in owed] == [("CMP-7", 8)]


# ---------------------------------------------------------------- CMP-19, CMP-22, PRN-6: inside a bracket


def test_CMP_22_a_tool_result_replace_inside_a_bracket_is_neither_a_prune_nor_the_checkpoint() -> None:
    """PRN-6 judges a prune replacement *outside* a bracket; inside one a replace is the bracket's, and only a
    checkpoint-sourced ``user/message`` replace is its checkpoint (CMP-22): a ``tool/result`` replace is not."""
    replace_result = ("tool/result", {"turn": 1, "step": 1, "callId": "c1", "content": []}, {"op": "replace", "start": 4, "end": 4})
    events = _log(*_STEP, _message([_CALL]), _result("c1"), _START, replace_result)
    place, found = _folded(events)
    assert found == [] and place.checkpoint is None
    # The same replace outside the bracket is a prune, judged by PRN-6 (here in its window: after the results).
    _, outside = _folded(_log(*_STEP, _message([_CALL]), _result("c1"), replace_result))
    assert outside == []
    _, too_early = _folded(_log(*_STEP, _message([_CALL]), replace_result))
    assert [r.rule for r in too_early] == ["PRN-6"]


def test_CMP_2_a_replace_without_the_checkpoint_source_is_not_the_checkpoint() -> None:
    """CMP-2: "a source is a checkpoint source iff ``kind == "plugin" and plugin == "compact"``": another
    ``user/message`` replace in a bracket is not its checkpoint, and its source is not judged as one."""
    other = ("user/message", {"content": [], "source": {"kind": "user"}}, {"op": "replace", "start": 3, "end": 3})
    place, found = _folded(_log(*_STEP, _message([]), _START, other))
    assert found == [] and place.checkpoint is None
    place, found = _folded(_log(*_STEP, _message([]), _START, ("user/message", {"content": [], "source": CHECKPOINT_SOURCE},
                                                               {"op": "replace", "start": 3, "end": 3})))
    assert found == [] and place.checkpoint == 5


def test_CMP_19_only_a_surface_op_is_a_change_of_the_surface() -> None:
    """CMP-19: the commit fails when the *surface* changed during summarization; a log-only event inside the bracket
    is no surface append and no checkpoint."""
    place = TriggerPlace(Dialect.A55)
    (log_only,) = _log(("todo/write", {"todos": []}))
    take_bracket_event(place, log_only)
    assert place.surface_append is None and place.checkpoint is None


def test_SURF_8_an_event_of_a_type_off_the_surface_moves_neither_head_nor_tail() -> None:
    """RULES §0.3 / DIA-11: only ``user/message``, ``assistant/message`` and ``tool/result`` are surface-eligible, so
    another type's append is no surface node (the range a bracket may name, CMP-12)."""
    place, found = _folded(_log(("todo/write", {"todos": []}, "append")))
    assert found == [] and (place.head, place.last, place.size) == (None, None, 0)
    place, _ = _folded(_log(("user/message", {"content": []}, "append")))
    assert (place.head, place.last, place.size) == (0, 0, 1)


def test_LOOP_11_only_an_append_is_the_steps_message() -> None:
    """The step's message is its appended ``assistant/message`` (LOOP-11); a surface op that is neither an append nor
    a replace object makes none (the surface fold refuses it, SURF-2)."""
    place, _ = _folded(_log(*_STEP, ("assistant/message", {"turn": 1, "step": 1, "content": []}, "prepend")))
    assert not place.message and place.message_event is None
    place, _ = _folded(_log(*_STEP, _message([])))
    assert place.message


# ---------------------------------------------------------------- DIA-2: a D08 checkpoint's source


def test_DIA_2_the_compaction_id_is_a_string() -> None:
    """DIA-2: ``{kind, plugin, compactionId, sourceCommandId?}``, "the id a non-empty string": a number is refused."""
    source = {**CHECKPOINT_SOURCE, "compactionId": 5}
    (checkpoint,) = _log(("user/message", {"content": [], "source": source}, {"op": "replace", "start": 0, "end": 0}))
    bad = check_checkpoint_source(checkpoint, Dialect.D08)
    assert bad is not None and (bad.rule, bad.seq) == ("DIA-2", 0)
    (good,) = _log(("user/message", {"content": [], "source": {**source, "compactionId": "c1"}}, {"op": "replace", "start": 0, "end": 0}))
    assert check_checkpoint_source(good, Dialect.D08) is None


def test_DIA_2_the_finding_names_the_compaction_id_it_read() -> None:
    """The reason says what the id is: a number is not called empty (the finding named 5 "an empty compactionId")."""
    def reason(compaction_id: Any) -> str:
        source = {**CHECKPOINT_SOURCE, "compactionId": compaction_id}
        (checkpoint,) = _log(("user/message", {"content": [], "source": source}, {"op": "replace", "start": 0, "end": 0}))
        bad = check_checkpoint_source(checkpoint, Dialect.D08)
        assert bad is not None and bad.rule == "DIA-2"
        return bad.reason

    assert reason(5) == "checkpoint source has the compactionId 5, not a non-empty string"
    assert reason("") == 'checkpoint source has the compactionId "", not a non-empty string'
    assert "empty compactionId" not in reason(5)


def _source_reason(source: Any, dialect: Dialect) -> str | None:
    (checkpoint,) = _log(("user/message", {"content": [], "source": source}, {"op": "replace", "start": 0, "end": 0}))
    bad = check_checkpoint_source(checkpoint, dialect)
    if bad is None:
        return None
    assert bad.rule == {Dialect.A55: "CMP-2", Dialect.D08: "DIA-2"}[dialect] and bad.seq == 0
    return bad.reason


@pytest.mark.parametrize("ids", [Ids(compaction_id="c1"), Ids(compaction_id="c1", source_command_id="cmd-7"), Ids(compaction_id="c1", source_command_id="")])
@pytest.mark.parametrize("dialect", [Dialect.A55, Dialect.D08])
def test_CMP_2_DIA_2_the_source_the_writer_writes_is_accepted(ids: Ids, dialect: Dialect) -> None:
    """The writer's own source (``checkpoint_message``'s, through the dialect's overlay) for any ids it is handed."""
    written = get(rules_of(dialect).checkpoint_message((), ids), "source")
    assert _source_reason(thaw(written), dialect) is None


@pytest.mark.parametrize(("dialect", "source", "reason"), [
    (Dialect.A55, "plugin", "is not an object"),
    (Dialect.A55, {**CHECKPOINT_SOURCE, "compactionId": "c1"}, "has the unexpected key 'compactionId'"),
    (Dialect.A55, {"plugin": "compact", "kind": "plugin"}, "has its keys out of order (plugin, kind; expected kind, plugin)"),
    (Dialect.A55, {"kind": "user", "plugin": "compact"}, 'has the kind "user", not "plugin"'),
    (Dialect.A55, {"kind": "plugin", "plugin": "compacted"}, 'has the plugin "compacted", not "compact"'),
    (Dialect.D08, {"kind": "plugin", "plugin": "other", "compactionId": "c1"}, 'has the plugin "other", not "compact"'),
    (Dialect.D08, CHECKPOINT_SOURCE, "lacks 'compactionId'"),
    (Dialect.D08, {**CHECKPOINT_SOURCE, "compactionId": "c1", "extra": 1}, "has the unexpected key 'extra'"),
    (Dialect.D08, {"compactionId": "c1", **CHECKPOINT_SOURCE}, "has its keys out of order (compactionId, kind, plugin; expected kind, plugin, compactionId)"),
    (Dialect.D08, {**CHECKPOINT_SOURCE, "sourceCommandId": "s", "compactionId": "c1"},
     "has its keys out of order (kind, plugin, sourceCommandId, compactionId; expected kind, plugin, compactionId, sourceCommandId)"),
    (Dialect.D08, {**CHECKPOINT_SOURCE, "compactionId": "c1", "sourceCommandId": None}, "has the sourceCommandId null, not a non-empty string"),
    (Dialect.D08, {**CHECKPOINT_SOURCE, "compactionId": None}, "has the compactionId null, not a non-empty string"),
])
def test_CMP_2_DIA_2_a_source_the_writer_does_not_write_says_what_differs(dialect: Dialect, source: Any, reason: str) -> None:
    """CMP-2/DIA-2 compare the logged source with the writer's rebuilt from the ids it shows, as JSON text (key
    order included), and name the first difference."""
    assert _source_reason(source, dialect) == f"checkpoint source {reason}"


# ---------------------------------------------------------------- DIA-7, CMP-7: an attempt's failure


def test_CMP_7_a_chunk_that_is_no_object_ends_no_attempt() -> None:
    """Only a ``finish`` chunk ends an attempt (DIA-7) and carries the failure code CMP-7 reads: a chunk event whose
    data, or whose chunk, is no object moves nothing."""
    place = TriggerPlace(Dialect.D08)
    (failed,) = _log(("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"code": "X"}}}}))
    take_chunk(place, failed)
    assert place.failed_attempt and place.failure_code == "X"
    for data in (["x"], {"chunk": "finish"}):
        take_chunk(place, make_event("assistant/chunk", seq=1, time=0, data=freeze(data)))
        assert place.failed_attempt and place.failure_code == "X"
    (ok,) = _log(("assistant/chunk", {"chunk": {"type": "finish", "reason": {"kind": "stop"}}}))
    take_chunk(place, ok)
    assert not place.failed_attempt and place.failure_code is ABSENT


# ---------------------------------------------------------------- CMP-15, CMP-20, CMP-21: summary and checkpoint


def test_CMP_15_a_zero_token_count_is_well_formed_and_compared_with_the_price() -> None:
    """CMP-25 vetoes a ``shadowedTokenCount`` that is "not a non-negative safe integer": 0 is one, so CMP-25 has
    nothing to say, and CMP-15 compares it with the priced sum of the shadowed nodes (never 0 for a message)."""
    events, start, summary, checkpoint, end = committed_bracket()
    zero = with_data(summary, shadowedTokenCount=0)
    found = [f for f in companion_judged([*events, start, zero]) if f.seq == zero.seq]
    assert [f.rule for f in found] == ["CMP-15"]
    assert found[0].reason.startswith("shadowedTokenCount 0 != recomputed ")


def test_CMP_20_a_checkpoint_content_that_is_no_list_is_not_the_framed_summary() -> None:
    """CMP-20: the checkpoint's content is the framed summary (a block list); a string is not, and CMP-21's shrink,
    a comparison of priced blocks, is not asked of it."""
    events, start, summary, checkpoint, end = committed_bracket()
    text = with_data(checkpoint, content="summary")
    found = [f.rule for f in companion_judged([*events, start, summary, text, end]) if f.seq == text.seq]
    assert "CMP-20" in found and "CMP-21" not in found
    assert get(text.data, "content") == "summary"
