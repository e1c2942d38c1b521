"""INV-5 / P-INV-1: the checker's one-pass fold equals the from-scratch definition.

``sessionspec.fast.request_points.request_points`` (the incremental fold the checker runs,
linear in the log) must give, for every request point, the same request as
``rebuild_request_at`` (a fresh ``derive`` of ``log[0:step_start]`` and the
header fold at the first chunk, HDR-9; quadratic when used for every request).
Checked on three families of logs: the well-formed logs of
``spec.log_strategies`` (prunes and compactions included), the model's own loop
simulator, and ``sessionspec generate`` output read back through the codec
(packed chunk rows, CHK).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.fast.request_points import RequestPoint, request_points
from sessionspec.generate import generate_lines, simulated_log
from sessionspec.model.codec import parse_event_line
from sessionspec.model.derive import derive
from sessionspec.model.jsonval import JsonObject, js_stringify
from sessionspec.model.log import Event
from sessionspec.model.reconstruct import rebuild_request_at
from sessionspec.model.rejected import Rejected
from sessionspec.model.wire import request_to_json
from sessionspec.spec.log_strategies import well_formed_logs


def _step_end_seq(events: Sequence[Event], step_start: int) -> int:
    return next(e.seq for e in events[step_start + 1 :] if e.type == "step/end")


def _first_chunk_seq(events: Sequence[Event], step_start: int) -> int | None:
    for event in events[step_start + 1 :]:
        if event.type == "assistant/chunk":
            return event.seq
        if event.type == "step/end":
            return None
    return None


def _assert_fold_equals_definition(events: Sequence[Event]) -> int:
    """Every request point's request equals the from-scratch rebuild; returns how many were compared."""
    points = request_points(events)
    assert not isinstance(points, Rejected), points
    for point in points:
        _assert_point(events, point)
    return len(points)


def _assert_point(events: Sequence[Event], point: RequestPoint) -> None:
    assert point.first_chunk_seq == _first_chunk_seq(events, point.step_start_seq)
    fast = point.request()
    # HDR-9: without a chunk the header is the fold at the step's step/end, so
    # the definition sees the log cut there (a later header must not leak in).
    upto = len(events) if point.first_chunk_seq is not None else _step_end_seq(events, point.step_start_seq) + 1
    slow = rebuild_request_at(events[:upto], point.step_start_seq, point.first_chunk_seq)
    assert fast is not None and not isinstance(slow, Rejected), slow
    assert js_stringify(request_to_json(fast)) == js_stringify(request_to_json(slow))
    # The boundary itself is derive() of the log before step/start (DER-7).
    assert point.boundary == derive(events[: point.step_start_seq])


@given(well_formed_logs(headers_on=True, max_turns=4, max_steps=3))
def test_INV_5_request_points_equal_rebuild_on_well_formed_logs(events: tuple[Event, ...]) -> None:
    _assert_fold_equals_definition(events)


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=10))
def test_INV_5_request_points_equal_rebuild_on_simulated_logs(seed: int, turns: int) -> None:
    events = simulated_log(seed, turns)
    compared = _assert_fold_equals_definition(events)
    # A simulated turn sends at least one request unless it was interrupted
    # before streaming; with one turn or more, some request must exist.
    assert compared >= 1 or all(e.type != "assistant/chunk" for e in events)


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=4))
def test_INV_5_request_points_equal_rebuild_on_generated_rows(seed: int, block_turns: int) -> None:
    """``generate`` output read back line by line (packed rows expand, CHK-6),
    with small blocks so that appended instances (resumes) are exercised."""
    events: list[Event] = []
    for line in generate_lines(events=300, seed=seed, block_turns=block_turns):
        decoded = parse_event_line(line)
        assert not isinstance(decoded, Rejected), decoded
        events.extend(decoded)
    assert [e.seq for e in events] == list(range(len(events)))
    assert _assert_fold_equals_definition(events) >= 1


@given(well_formed_logs(headers_on=True, max_turns=3, max_steps=3))
def test_DER_7_snapshots_stay_stable_after_later_appends(events: tuple[Event, ...]) -> None:
    """The fold shares storage between snapshots (``RequestPoint.boundary_store``
    is not copied): a snapshot taken early must still read as derive() of its
    prefix after the whole log, replaces (prune, compaction) included, has
    been appended."""
    derivation = IncrementalDerivation()
    held: list[tuple[int, list[JsonObject], int]] = []
    for event in events:
        assert derivation.append(event) is None
        store, length = derivation.snapshot()
        held.append((event.seq + 1, store, length))
    for upto, store, length in held:
        assert tuple(store[:length]) == derive(events[:upto])
