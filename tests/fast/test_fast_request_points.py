"""sessionspec.fast.request_points gives what the model's request points (model/request_points.py) give, one for
one: the same points (step, first chunk, header in force) and the same findings (rule and seq), on the logs the
loop simulator writes, in both dialects and from several first live seqs, on the same logs with lines dropped
(the surface or the derivation refuses them) and with their headers damaged (none in force, no provider or model),
and on logs with an unreadable header or surface event."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.request_audit import check_request_points as fast_findings
from sessionspec.fast.request_points import check_request_point as fast_check_point
from sessionspec.fast.request_points import request_points as fast_points
from sessionspec.model.header import EpochHeader, fold_header, opt_header_eq
from sessionspec.model.jsonval import ABSENT, freeze, thaw
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.request_points import check_request_point, check_request_points, logged_requests
from tests.support import generated_log, read_events, request_point_logs


def _kind(findings: list[Rejected]) -> list[tuple[str, int | None]]:
    """Findings compared by kind and place, never by message (the errors of two implementations)."""
    return [(f.rule, f.seq) for f in findings]


def _same(log: list[Event], dialect: Dialect, first_live_seq: int) -> None:
    model = check_request_points(log, dialect, first_live_seq)
    assert _kind(fast_findings(log, dialect, first_live_seq)) == _kind(model)
    points = fast_points(log, dialect, first_live_seq)
    if isinstance(points, Rejected):
        assert _kind([points]) == _kind(model)
        return
    defined = logged_requests(log, first_live_seq)
    assert [(p.step_start_seq, p.first_chunk_seq) for p in points] == [(p.step_start_seq, p.first_chunk_seq) for p in defined]
    for fast, point in zip(points, defined, strict=True):
        header = fold_header(log[: point.header_at], ABSENT, dialect)
        assert not isinstance(header, Rejected)
        assert opt_header_eq(fast.header, header, dialect)


@settings(max_examples=60, deadline=None)
@given(request_point_logs())
def test_the_fast_points_and_findings_are_the_models(drawn: tuple[list[Event], Dialect, int]) -> None:
    _same(*drawn)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), where=st.integers(0, 2**16), what=st.sampled_from(["header", "content", "data"]),
       dialect=st.sampled_from(Dialect))
def test_an_unreadable_event_is_the_one_finding_of_both(seed: int, where: int, what: str, dialect: Dialect) -> None:
    """A header whose header is no object (HDR-1), a surface event without its content or data (DER-1)."""
    log = read_events(generated_log(200, seed))
    kinds = ("request/header",) if what == "header" else ("user/message", "assistant/message", "tool/result")
    candidates = [e.seq for e in log if e.type in kinds]
    at = candidates[where % len(candidates)]
    data = thaw(log[at].data)
    assert isinstance(data, dict)
    if what == "header":
        data["header"] = 5
    elif what == "content":
        data.pop("content", None)
        data.pop("message", None)
    changed = list(log)
    changed[at] = replace(log[at], data=freeze(data) if what != "data" else freeze([1]))
    model = check_request_points(changed, dialect)
    assert len(model) == 1
    assert _kind(fast_findings(changed, dialect)) == _kind(model)


@given(header=st.sampled_from(["absent", "whole", "no provider", "empty model", "numeric model"]), chunk=st.booleans())
def test_each_point_is_judged_alike(header: str, chunk: bool) -> None:
    """The compiled twin of check_request_point gives the model's finding, message and all."""
    config = {"whole": {"provider": "p", "model": "m"}, "no provider": {"model": "m"}, "empty model": {"provider": "p", "model": ""},
              "numeric model": {"provider": "p", "model": 5}}.get(header)
    in_force = ABSENT if config is None else EpochHeader(config=freeze(config))
    assert fast_check_point(3, 5 if chunk else None, in_force) == check_request_point(3, 5 if chunk else None, in_force)
