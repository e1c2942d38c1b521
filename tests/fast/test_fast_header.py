"""sessionspec.fast.header.canonical_header_of is model.header.header_of_event (HDR-1, HDR-2, DIA-8):
the same canonical header, or the same rejection, for every ``request/header`` of the real logs and
for headers whose fields are present, empty, of other JSON types or missing, in both dialects.  The twins of
model.header_log's step boundaries leave the track as the definitions do, and the header fold with all three
finds what it finds with the definitions, on the real logs, the simulator's and those without a step boundary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check import header_audit
from sessionspec.check.header_audit import check_header_reasons
from sessionspec.check.logfile import read_path
from sessionspec.fast.header import canonical_header_of, opaque_header_fields
from sessionspec.fast.header_log import check_header_record, close_step, open_step
from sessionspec.generate import generate_events
from sessionspec.model import diagnostics, header_log
from sessionspec.model.header import EpochHeader, header_of_event
from sessionspec.model.header_log import HeaderTrack
from sessionspec.model.jsonval import ABSENT, freeze, thaw
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.spec.json_strategies import json_values
from tests.support import with_data

DATA = Path(__file__).parents[1] / "data"


def test_every_real_header_is_canonical_as_the_model_makes_it() -> None:
    headers = 0
    for path in sorted(DATA.rglob("*.jsonl")):
        for event in read_path(str(path)).events:
            if event.type == "request/header":
                headers += 1
                for dialect in Dialect:
                    assert canonical_header_of(event, dialect) == header_of_event(event, dialect), (path, event.seq)
    assert headers > 50


# A header field: missing, or a value with or without a JS length, empty or not (an astral character is
# one code point and two UTF-16 units).
_FIELD = st.one_of(st.just(ABSENT), st.sampled_from(["", "s", "😀", "{{system}}", 0, 1, None, True, {}, {"a": "b"}]),
                  st.lists(st.text(max_size=2), max_size=2), json_values(2))


@given(_FIELD, st.one_of(st.just(ABSENT), json_values(2), st.just({"provider": "p", "model": "m"})),
       _FIELD, _FIELD, _FIELD, _FIELD, st.sampled_from(list(Dialect)), st.booleans())
def test_any_header_is_canonical_as_the_model_makes_it(
        system: object, config: object, tools: object, prefix: object, defaults: object, extra: object, dialect: Dialect,
        header_is_object: bool) -> None:
    """The header an object of these fields (each missing when ABSENT), or else ``extra`` itself (a
    header that is no object, or no header at all)."""
    fields = {"config": config, "system": system, "tools": tools, "messagePrefix": prefix, "adapterDefaults": defaults, "other": extra}
    header = {key: value for key, value in fields.items() if value is not ABSENT} if header_is_object else extra
    data = {"reason": "initial"} | ({} if header is ABSENT else {"header": header})
    event = make_event("request/header", seq=4, time=0, data=freeze(data))
    assert canonical_header_of(event, dialect) == header_of_event(event, dialect)


_VALUES: list[object] = [ABSENT, "", "s", "😀", "{{system}}", 0, 1, None, True, [], ["p"], {}, {"a": "b"}]


def test_each_field_of_a_header_with_a_config_is_canonical_as_the_model_makes_it() -> None:
    """Each of system, tools, messagePrefix and adapterDefaults, alone or beside another field, given every
    kind of value (HDR-2: kept only with a JS length above 0; DIA-8: D08 drops the prefix, keeps adapterDefaults)."""
    keys = ("system", "tools", "messagePrefix", "adapterDefaults")
    for key in keys:
        for other in keys:
            for value in _VALUES:
                fields = {"config": {"model": "m"}, other: "x", key: value}
                header = {k: v for k, v in fields.items() if v is not ABSENT}
                event = make_event("request/header", seq=4, time=0, data=freeze({"header": header}))
                for dialect in Dialect:
                    assert canonical_header_of(event, dialect) == header_of_event(event, dialect), (key, other, value, dialect)


def _header_fold_tied(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> None:
    """The header fold with the twins (canonical header, step boundaries) and with the definitions in their place."""
    by_twins = check_header_reasons(events, dialect, first_live_seq)
    with mock.patch.multiple(header_audit, canonical_header_of=header_of_event, open_step=header_log.open_step,
                             close_step=header_log.close_step, check_header_record=header_log.check_header_record):
        assert by_twins == check_header_reasons(events, dialect, first_live_seq)


def test_the_header_fold_judges_every_real_log_as_with_the_definitions() -> None:
    for path in sorted(DATA.rglob("*.jsonl")):
        events = read_path(str(path)).events
        for dialect in Dialect:
            _header_fold_tied(events, dialect)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_header_fold_judges_simulated_logs_and_dropped_boundaries_as_with_the_definitions(dialect: Dialect) -> None:
    """The simulator's log, and without each of its first step boundaries (a header outside a step, two in one)."""
    log = [event for block in generate_events(400, 2, 2) for event in block]
    _header_fold_tied(log, dialect)
    _header_fold_tied(log, dialect, first_live_seq=log[len(log) // 3].seq)
    for kind in ("step/start", "step/end"):
        for index in [i for i, e in enumerate(log) if e.type == kind][:3]:
            _header_fold_tied([*log[:index], *log[index + 1:]], dialect)
    # Each of the first headers with every reason (an initial after a header, a resume before one, a change,
    # none the loop writes), and moved after its step's first chunk or doubled in its step.
    headers = [i for i, e in enumerate(log) if e.type == "request/header"][:3]
    for index in headers:
        for reason in ("initial", "resume", "change", "fallback", 3):
            _header_fold_tied([*log[:index], with_data(log[index], reason=reason), *log[index + 1:]], dialect)
        chunk = next(i for i in range(index, len(log)) if log[i].type == "assistant/chunk")
        moved = [*log[:index], *log[index + 1:chunk + 1], log[index], *log[chunk + 1:]]
        _header_fold_tied(moved, dialect)
        _header_fold_tied([*log[:index + 1], log[index], *log[index + 1:]], dialect)


def test_the_step_boundary_twins_leave_the_track_as_the_definitions() -> None:
    chunk = make_event("assistant/chunk", seq=1, time=0, data=freeze({"chunk": {"type": "finish"}}))
    for twin, definition in ((open_step, header_log.open_step), (close_step, header_log.close_step)):
        for open_before in (False, True):
            by_twin = HeaderTrack(step_open=open_before, step_header=3, last_chunk=chunk)
            by_definition = replace(by_twin)
            twin(by_twin)
            definition(by_definition)
            assert by_twin == by_definition


def test_the_opaque_fields_twin_names_every_real_headers_fields_as_the_model() -> None:
    for path in sorted(DATA.rglob("*.jsonl")):
        for event in read_path(str(path)).events:
            assert opaque_header_fields(event) == diagnostics.opaque_header_fields(event), (path, event.seq)


def test_the_opaque_fields_twin_names_each_changed_field_as_the_model() -> None:
    """``system``, ``tools`` and ``messagePrefix`` given every kind of value, a scrubber's among them (FMT-6, LEG-8),
    one at a time beside plain others; a header that is no object; an event of another type."""
    values: list[object] = [*_VALUES, "{{x", "{{system}} and more", ["read", "write"], ["{{messagePrefix}}"], [{"role": "user"}, "{{messagePrefix}}"],
                            [{}], [3]]
    plain = {"config": {"provider": "p", "model": "m"}, "system": "s", "tools": [{"name": "t"}], "messagePrefix": [{"role": "user"}]}
    events = [make_event("request/header", seq=1, time=0, data=freeze({"header": v, "reason": "initial"})) for v in values if v is not ABSENT]
    events.append(make_event("user/message", seq=1, time=0, data=freeze({"header": {"system": "{{system}}"}})))
    for key in ("system", "tools", "messagePrefix"):
        for value in values:
            header = {k: v for k, v in {**plain, key: value}.items() if v is not ABSENT}
            events.append(make_event("request/header", seq=1, time=0, data=freeze({"header": header, "reason": "initial"})))
    for event in events:
        assert opaque_header_fields(event) == diagnostics.opaque_header_fields(event), event


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_record_twin_leaves_the_track_as_the_definition(dialect: Dialect) -> None:
    """Each header of the simulator's log (and with each reason changed) judged by both on their own track, compared
    after every header: the findings, the header in force, the instance's anchor and prefix."""
    log = [event for block in generate_events(400, 5, 2) for event in block]
    shapes = header_log.header_shapes(dialect)
    first_header = next(i for i, e in enumerate(log) if e.type == "request/header")
    later = [e for e in log[first_header + 3:] if e.type == "request/header"]
    changed_system = {e.seq: with_data(e, header={**thaw(e.data)["header"], "system": f"s{e.seq}"}) for e in later}
    changed_prefix = {e.seq: with_data(e, header={**thaw(e.data)["header"], "system": f"s{e.seq}", "messagePrefix": [{"role": "user", "content": []}]})
                      for e in later[::2]}
    variants = [[*log[:first_header + 3], *(with_data(e, reason=reason) if e.type == "request/header" else e for e in log[first_header + 3:])]
                for reason in ("initial", "resume", "change")]
    for edits in (changed_system, changed_prefix):
        for reason in ("change", "resume"):
            variants.append([with_data(edits[e.seq], reason=reason) if e.seq in edits else e for e in log])
    for events in (log, *variants):
        by_twin, by_definition = HeaderTrack(), HeaderTrack()
        headers = 0
        for event in events:
            if event.type == "step/start":
                header_log.open_step(by_twin)
                header_log.open_step(by_definition)
            elif event.type == "step/end":
                header_log.close_step(by_twin)
                header_log.close_step(by_definition)
            elif event.type == "assistant/chunk":
                by_twin.last_chunk = by_definition.last_chunk = event
            elif event.type == "request/header" and isinstance(header := header_of_event(event, dialect), EpochHeader):
                found = check_header_record(by_twin, event, header, shapes, headers == 0)
                assert found == header_log.check_header_record(by_definition, event, header, shapes, headers == 0)
                # The instance prefix's text is the definition's memo, written when it compares (the twin leaves it).
                assert replace(by_twin, instance_prefix_text=None) == replace(by_definition, instance_prefix_text=None), event
                headers += 1
        assert headers > 3


def test_a_change_after_a_seed_header_alone_is_judged_as_the_definition() -> None:
    """A fork's first live header a change: the seed's header is in force, but no anchor of this instance (FMT-9 (e))."""
    log = [event for block in generate_events(400, 5, 2) for event in block]
    first, second = [e for e in log if e.type == "request/header"][:2]
    seed_header, live = header_of_event(first, Dialect.A55), with_data(second, reason="change", header={**thaw(second.data)["header"], "system": "other"})
    header = header_of_event(live, Dialect.A55)
    assert isinstance(seed_header, EpochHeader) and isinstance(header, EpochHeader)
    tracks = []
    for record in (check_header_record, header_log.check_header_record):
        track = HeaderTrack()
        header_log.take_seed_header(track, seed_header)
        header_log.open_step(track)
        tracks.append((record(track, live, header, header_log.A55_HEADERS, True), replace(track, instance_prefix_text=None)))
    assert tracks[0] == tracks[1]
    assert [f.rule for f in tracks[0][0]] == ["FMT-9"]
