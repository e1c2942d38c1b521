"""sessionspec/fast/load_shape.py against model/load_shape.py's ``load_refusals``, finding for finding.

On every event of the logs the loop simulator writes (A55, and their D08 form, DIA-13), of the real logs under
tests/data, and on each single change of the fields the twin reads (the provenance of a message, the reason of a
turn's end, a type it answers for another), both dialects: the same refusals, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.check.logfile import read_path
from sessionspec.fast import load_shape as fast
from sessionspec.generate import generate_events
from sessionspec.model import load_shape as model
from sessionspec.model.jsonval import ABSENT, freeze
from sessionspec.model.log import Dialect, Event, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.spec.json_strategies import json_values

DATA = Path(__file__).parents[1] / "data"


def tied(events: Iterable[Event], dialect: Dialect) -> int:
    shapes = model.load_shapes(dialect)
    taken = 0
    for event in events:
        if event.type in model.LOAD_CHECKED_TYPES:
            assert list(fast.load_refusals(event, shapes)) == list(model.load_refusals(event, shapes)), (dialect, event)
            taken += 1
    return taken


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_the_twin_refuses_what_the_simulated_loop_writes_as_the_model(seed: int) -> None:
    log = [event for block in generate_events(300, seed, 2) for event in block]
    for dialect in Dialect:
        assert tied(log, dialect) and tied(migrate_legacy(log, "s"), dialect)


def test_the_twin_refuses_every_real_event_as_the_model() -> None:
    taken = 0
    for path in sorted(DATA.rglob("*.jsonl")):
        events = read_path(str(path)).events
        taken += sum(tied(events, dialect) for dialect in Dialect)
    assert taken > 1000


# Each value a field the twin reads may take: missing, empty, another JSON type, a kind of each family.
_VALUES: list[object] = [ABSENT, "", "p", "{{x}}", 0, None, True, [], ["p"], {}, {"kind": "user"}]
_KINDS: list[object] = [ABSENT, "completed", "disposed", "max-tokens", "interrupted", "aborted", "error", "rejected", "blocked",
                        "cancelled", "", 3, None]


def _message(provenance: object, dialect_data: object = ABSENT) -> Event:
    data: dict[str, object] = {"role": "assistant", "content": []}
    if provenance is not ABSENT:
        data["provenance"] = provenance
    if dialect_data is not ABSENT:
        data["message"] = dialect_data
    return make_event("assistant/message", seq=3, time=0, data=freeze(data))


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_twin_refuses_each_change_of_a_message_provenance_as_the_model(dialect: Dialect) -> None:
    good = {"provider": "p", "model": "m"}
    changes: list[object] = [ABSENT, good, *_VALUES]
    for key in ("provider", "model"):
        for value in _VALUES:
            changes.append({k: v for k, v in {**good, key: value}.items() if v is not ABSENT})
    assert tied((_message(p) for p in changes), dialect) == len(changes)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_twin_refuses_each_change_of_a_turn_end_as_the_model(dialect: Dialect) -> None:
    reasons: list[object] = [ABSENT, *_VALUES]
    for kind in _KINDS:
        bare = {} if kind is ABSENT else {"kind": kind}
        reasons += [bare, {**bare, "reason": {"kind": "user"}}, {**bare, "reason": "r"}, {**bare, "message": "m", "code": "c"}]
    events = [make_event("turn/end", seq=5, time=0, data=freeze({"turn": 1} | ({} if r is ABSENT else {"reason": r})))
              for r in reasons]
    events.append(make_event("turn/end", seq=5, time=0, data=freeze(["not", "an", "object"])))
    assert tied(events, dialect) == len(events)


@given(st.sampled_from(sorted(model.LOAD_CHECKED_TYPES)), json_values(3), st.sampled_from(list(Dialect)))
def test_the_twin_refuses_any_data_as_the_model(kind: str, data: object, dialect: Dialect) -> None:
    assert tied([make_event(kind, seq=1, time=0, data=freeze(data))], dialect) == 1


_HEADER_VALUES: list[object] = [ABSENT, "", "s", "{{system}}", 0, 1.5, True, None, [], [{}], [{"role": "user"}, "{{messagePrefix}}"],
                                ["a", "b"], ["a", 1], {}, {"a": 1}]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_twin_refuses_each_change_of_a_header_field_as_the_model(dialect: Dialect) -> None:
    """Each field the load reads, given every kind of value (or missing), one at a time: the header's typed fields,
    the config's, and the record's reason."""
    config = {"provider": "p", "model": "m", "reasoningEffort": "high", "temperature": 0.5, "maxTokens": 100, "stop": ["x"]}
    header = {"config": config, "system": "s", "tools": [{"name": "t"}], "messagePrefix": [{"role": "user"}], "adapterDefaults": {}}
    events = []
    for key in ("system", "tools", "messagePrefix", "adapterDefaults", *(f"config.{k}" for k in config)):
        for value in _HEADER_VALUES:
            changed = {**header, "config": dict(config)}
            target, name = (changed["config"], key.split(".")[1]) if key.startswith("config.") else (changed, key)
            assert isinstance(target, dict)
            target.pop(name)
            if value is not ABSENT:
                target[name] = value
            events.append(make_event("request/header", seq=2, time=0, data=freeze({"header": changed, "reason": "initial"})))
    for reason in ("fallback", "resume", 3):
        events.append(make_event("request/header", seq=2, time=0, data=freeze({"header": header, "reason": reason})))
    for value in _HEADER_VALUES:
        events.append(make_event("request/header", seq=2, time=0, data=freeze({} if value is ABSENT else {"header": value, "reason": "initial"})))
    assert tied(events, dialect) == len(events)
