"""What a strict load refuses of one event, :func:`sessionspec.model.load_shape.load_refusals`, for the checker's
one pass: the same answer, from a module the compiled wheel compiles (issue 44 item 5).

The load fold hands the model every ``assistant/message`` and ``turn/end`` (about one event in five): compiled,
each is a call into the interpreted model that reads a few fields and refuses nothing.  Here the two common
accepted shapes are answered at once: an A55 message with a non-empty provider and model in its provenance (HDR-8;
a D08 message's LLM shape is not read, DIA-10), and an A55 ``turn/end`` whose reason is an object of a bare, error
or rejected kind (LOG-11; LEG-4 reads only ``aborted``).  Every other event, and every refusal, is the
definition's.  ``tests/fast/test_fast_load_shape.py`` holds it to the definition, finding for finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sessionspec.fast.constants import A55, ABSENT
from sessionspec.model.jsonval import JsonObject
from sessionspec.model.load_shape import A55_END_KINDS, LoadShapes
from sessionspec.model.load_shape import load_refusals as refusals_by_definition
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

_OBJECT: Final = JsonObject
_NONE: Final[tuple[Rejected, ...]] = ()
# LEG-4 reads an aborted reason's keys: that kind goes to the definition.
_PLAIN_A55_END_KINDS: Final = frozenset(A55_END_KINDS - {"aborted"})


def load_refusals(event: Event, shapes: LoadShapes) -> Sequence[Rejected]:
    """:func:`sessionspec.model.load_shape.load_refusals`."""
    kind = event.type
    if kind == "assistant/message":
        if shapes.dialect is not A55:
            return _NONE  # D08's LLM shape reads only headers (DIA-10)
        data = event.data
        provenance = data.get("provenance", ABSENT) if type(data) is _OBJECT else ABSENT
        if type(provenance) is _OBJECT:
            provider, model = provenance.get("provider", ABSENT), provenance.get("model", ABSENT)
            if type(provider) is str and provider and type(model) is str and model:
                return _NONE
    elif kind == "turn/end" and shapes.dialect is A55:
        data = event.data
        reason = data.get("reason", ABSENT) if type(data) is _OBJECT else ABSENT
        if type(reason) is _OBJECT:
            end = reason.get("kind", ABSENT)
            if type(end) is str and end in _PLAIN_A55_END_KINDS:
                return _NONE
    return refusals_by_definition(event, shapes)
