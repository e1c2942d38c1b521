"""sessionspec.fast.surface answers as the definitions do: ``plan_surface_event`` as
``model.surface.plan_surface_event`` (SURF-9: the same plan, or the same rejection, rule, seq and
reason) and ``with_markers`` as ``model.migrate.with_markers`` (FMT-10), on every event of the
real logs, of generated logs and of well-formed strategy logs, and on those events with their
surface keys, seq and type mutated."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.check.logfile import read_path, read_stream
from sessionspec.fast.surface import plan_surface_event, with_markers
from sessionspec.generate import write_log
from sessionspec.model.jsonval import ABSENT, MAX_SAFE_INTEGER, Json, JsonObject, freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import NO_EVIDENCE, DialectEvidence
from sessionspec.model.migrate import with_markers as markers_by_definition
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, splice
from sessionspec.model.surface import plan_surface_event as plan_by_definition
from sessionspec.spec.log_strategies import well_formed_logs

DATA = Path(__file__).parents[1] / "data"
REAL = sorted(DATA.rglob("*.jsonl"))


def _logs() -> Iterator[Sequence[Event]]:
    for path in REAL:
        yield read_path(str(path)).events
    generated = io.StringIO()
    write_log(generated, 3000, 5)
    yield read_stream(io.BytesIO(generated.getvalue().encode()), "generated.jsonl").events


def _same_plans(events: Sequence[Event], dialect: Dialect, mutate: dict[int, Event] | None = None) -> int:
    """Fold the surface by the definition, asking both of every event (or of its mutation, at the
    positions of ``mutate``); the number of appends answered."""
    nodes: list[int] = []
    appends = 0
    for index, event in enumerate(events):
        asked = (mutate or {}).get(index, event)
        fast, exact = plan_surface_event(nodes, asked, events[:index], dialect), plan_by_definition(nodes, asked, events[:index], dialect)
        assert fast == exact, (index, asked, fast, exact)
        planned = plan_by_definition(nodes, event, events[:index], dialect)
        if isinstance(planned, Rejected):
            return appends
        if isinstance(planned, SurfacePlan):
            appends += not planned.is_replace
            splice(nodes, planned, planned.seq)
    return appends


def test_every_real_and_generated_event_is_planned_as_the_model_plans_it() -> None:
    appends = sum(_same_plans(events, dialect) for events in _logs() for dialect in Dialect)
    assert appends > 1000


@given(well_formed_logs())
def test_every_event_of_a_well_formed_log_is_planned_as_the_model_plans_it(events: Sequence[Event]) -> None:
    for dialect in Dialect:
        _same_plans(events, dialect)


_OPS: list[Json] = ["append", "Append", "", None, 1, JsonObject({"op": "replace", "start": 0, "end": 0}), JsonObject({"op": "append"})]
_SOURCES: list[Json] = [(), (0,), (0, 0), (1, 0), (True,), (-1,), (1.0,), (MAX_SAFE_INTEGER,), ("0",), JsonObject(), 0, None]
_TYPES = ["user/message", "assistant/message", "tool/result", "assistant/chunk", "step/start", "steering/message", "x/y"]


def _mutated(event: Event, change: str, value: Json | str) -> Event:
    keep = {"seq": event.seq, "time": event.time, "data": event.data, "source_event_seqs": event.source_event_seqs, "surface_op": event.surface_op}
    match change:
        case "op":
            keep["surface_op"] = ABSENT if value == "absent" else value
        case "sources":
            keep["source_event_seqs"] = ABSENT if value == "absent" else value
        case "seq":
            keep["seq"] = event.seq + 1
        case _:
            return make_event(str(value), **keep)  # type: ignore[arg-type]
    return make_event(event.type, **keep)  # type: ignore[arg-type]


@given(st.data())
def test_any_mutated_event_is_planned_as_the_model_plans_it(data: st.DataObject) -> None:
    """Events of a generated log with their ``surfaceOp``, ``sourceEventSeqs``, seq or type changed
    (SURF-2, SURF-3, SURF-4, LOG-1 rejections and the appends beside them)."""
    generated = io.StringIO()
    write_log(generated, 200, data.draw(st.integers(0, 3), label="seed"))
    events = read_stream(io.BytesIO(generated.getvalue().encode()), "generated.jsonl").events
    index = data.draw(st.integers(0, len(events) - 1), label="index")
    change = data.draw(st.sampled_from(["op", "sources", "seq", "type"]), label="change")
    pools: dict[str, list[Json | str]] = {"op": [*_OPS, "absent"], "sources": [*_SOURCES, "absent", (max(events[index].seq - 1, 0),)],
                                          "seq": [0], "type": list(_TYPES)}
    pool = pools[change]
    mutation = _mutated(events[index], change, data.draw(st.sampled_from(pool), label="value"))
    for dialect in Dialect:
        _same_plans(events[: index + 1], dialect, {index: mutation})


_EVIDENCE = [
    NO_EVIDENCE,
    DialectEvidence(a55_seq=0, a55_reason="steering/message event", d08_seq=None, d08_reason=""),
    DialectEvidence(a55_seq=None, a55_reason="", d08_seq=-1, d08_reason="session header with origin"),
    DialectEvidence(a55_seq=1, a55_reason="x", d08_seq=2, d08_reason="y"),
]


def test_every_event_adds_the_markers_the_model_adds() -> None:
    """Every event of the real and generated logs (both dialects' markers among them), and the same
    envelope under every marked type and a plugin type, after each kind of evidence so far."""
    marked = 0
    types = ["compaction/start", "compact/done", "compactionx", "session/end-seed", "agent/inbox/spliced", "request/context",
             "steering/message", "assistant/message", "tool/result", "user/message", "request/header", "step/start", "x/y"]
    for events in _logs():
        for event in events:
            for evidence in _EVIDENCE:
                fast, exact = with_markers(evidence, event), markers_by_definition(evidence, event)
                assert fast == exact, event
                marked += exact != evidence
        for event in events[:200]:
            for type_name in types:
                other = dataclasses.replace(event) if event.type == type_name else _mutated(event, "type", type_name)
                for evidence in _EVIDENCE:
                    assert with_markers(evidence, other) == markers_by_definition(evidence, other), other
    assert marked > 20


# FMT-10's shape markers and their near misses, as data of each type that can carry one.
_SHAPES: list[dict[str, object]] = [
    {}, {"message": {}}, {"message": "x"}, {"message": None}, {"role": "user", "id": "u1"}, {"role": "user"},
    {"role": "user", "id": None}, {"role": "assistant", "id": "u1"}, {"id": "u1"}, {"provenance": {}}, {"provenance": None},
    {"header": {"adapterDefaults": {}}}, {"header": {"adapterDefaults": None}}, {"header": {}}, {"header": "x"},
    {"header": {"messagePrefix": ["p"]}}, {"header": {"messagePrefix": []}}, {"header": {"messagePrefix": "p"}},
    {"header": {"messagePrefix": ["p"], "adapterDefaults": {}}}, {"message": {}, "provenance": {}},
]


def test_each_shape_marker_and_its_near_misses_are_found_as_the_model_finds_them() -> None:
    """Every shape type with every marker shape (and what is almost one), after each kind of evidence."""
    for type_name in ("assistant/message", "tool/result", "user/message", "request/header", "step/start"):
        for data in _SHAPES:
            event = make_event(type_name, seq=3, time=0, data=freeze(data))
            for evidence in _EVIDENCE:
                assert with_markers(evidence, event) == markers_by_definition(evidence, event), (type_name, data, evidence)


def test_every_provenance_of_an_append_is_planned_as_the_model_plans_it() -> None:
    """SURF-4 on an append, exhaustively: the first appends of a generated log (each eligible type)
    given every kind of ``sourceEventSeqs`` (absent, empty, a later or the same seq, a duplicate,
    bool, float, negative, string and non-array entries)."""
    generated = io.StringIO()
    write_log(generated, 400, 1)
    events = read_stream(io.BytesIO(generated.getvalue().encode()), "generated.jsonl").events
    nodes: list[int] = []
    appends: list[int] = []
    for index, event in enumerate(events):
        planned = plan_by_definition(nodes, event, events[:index], Dialect.A55)
        if isinstance(planned, SurfacePlan):
            appends += [index] if not planned.is_replace else []
            splice(nodes, planned, planned.seq)
    types = {events[i].type for i in appends[:40]}
    assert {"user/message", "assistant/message", "tool/result"} <= types
    for index in appends[:40]:
        seq = events[index].seq
        for sources in [*_SOURCES, "absent", (seq,), (seq + 1,), (seq - 1, seq - 1), (seq - 1,), (0, seq - 1), (seq - 1, True)]:
            for dialect in Dialect:
                _same_plans(events[: index + 1], dialect, {index: _mutated(events[index], "sources", sources)})
