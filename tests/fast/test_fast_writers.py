"""sessionspec.fast.writers.shape_dialect answers as the model's definition (model/writers.py) does, one for one: on
every event of the logs the loop simulator writes and of their D08 form (DIA-13), and on drawn data of every type."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionspec.fast import writers as fast
from sessionspec.generate import generate_events
from sessionspec.model import writers as model
from sessionspec.model.jsonval import Json, freeze
from sessionspec.model.log import EventKind, make_event
from sessionspec.model.migrate import migrate_legacy
from sessionspec.spec.json_strategies import json_values

_TYPES = [kind.value for kind in EventKind] + ["steering/message", "prompt/blocked", "agent/inbox/spliced", "compact/start", "plugin/x"]
_KEYS = ["trigger", "reason", "role", "id", "message", "provenance", "callId", "error", "kind", "x"]


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_the_twin_marks_every_written_event_as_the_model_does(seed: int) -> None:
    log = [event for block in generate_events(300, seed, 2) for event in block]
    for event in (*log, *migrate_legacy(log, "s")):
        assert fast.shape_dialect(event) is model.shape_dialect(event)


@given(st.sampled_from(_TYPES), json_values() | st.dictionaries(st.sampled_from(_KEYS), json_values(max_leaves=3)
                                                                  | st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(
                                                                      ["rejected", "disposed", "blocked", "aborted", "error", "completed"])),
                                                                  max_size=4).map(freeze))
def test_the_twin_marks_any_data_as_the_model_does(kind: str, data: Json) -> None:
    event = make_event(kind, seq=0, time=0, data=data)
    assert fast.shape_dialect(event) is model.shape_dialect(event)
