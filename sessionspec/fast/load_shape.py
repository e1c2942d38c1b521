"""What a strict load refuses of one event, :func:`sessionspec.model.load_shape.load_refusals`, for the checker's
one pass: the same answer, from a module the compiled wheel compiles (issue 44 item 5).

The load fold hands the model every ``assistant/message``, ``turn/end`` and ``request/header`` (about one event in
five): compiled, each is a call into the interpreted model that reads a few fields and refuses nothing.  Here the
common accepted shapes are answered at once: an A55 message with a non-empty provider and model in its provenance
(HDR-8; a D08 message's LLM shape is not read, DIA-10), an A55 ``turn/end`` whose reason is an object of a bare,
error or rejected kind (LOG-11; LEG-4 reads only ``aborted``), and a header whose every field the load reads is of
its type (HDR-8, LEG-2, LEG-6, HDR-1, DIA-8).  Every other event, and every refusal, is the definition's.
``tests/fast/test_fast_load_shape.py`` holds it to the definition, finding for finding.
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
    elif kind == "request/header":
        data = event.data
        header = data.get("header", ABSENT) if type(data) is _OBJECT and data.get("reason", ABSENT) != "fallback" else ABSENT
        if type(header) is _OBJECT and _plainly_typed(header, shapes.dialect is A55):
            return _NONE
    return refusals_by_definition(event, shapes)


def _objects(v: object) -> bool:
    return type(v) is tuple and all(type(x) is _OBJECT for x in v)


def _plainly_typed(header: JsonObject, a55: bool) -> bool:
    """A header the definition refuses nothing of: HDR-8's non-empty provider and model (and LEG-6's
    reasoningEffort, when present), each typed field of HDR-1 (DIA-8: ``adapterDefaults`` for ``messagePrefix``)
    absent or of its type, with no placeholder (FMT-6's are the definition's to weigh)."""
    config = header.get("config", ABSENT)
    if type(config) is not _OBJECT:
        return False
    provider, model, effort = config.get("provider", ABSENT), config.get("model", ABSENT), config.get("reasoningEffort", ABSENT)
    if not (type(provider) is str and provider and type(model) is str and model):
        return False
    if effort is not ABSENT and not (type(effort) is str and effort):
        return False
    system, tools = header.get("system", ABSENT), header.get("tools", ABSENT)
    if not (system is ABSENT or type(system) is str) or not (tools is ABSENT or _objects(tools)):
        return False
    if a55:
        prefix = header.get("messagePrefix", ABSENT)
        if not (prefix is ABSENT or _objects(prefix)):
            return False
    else:
        defaults = header.get("adapterDefaults", ABSENT)
        if not (defaults is ABSENT or type(defaults) is _OBJECT):
            return False
    temperature, tokens, stop = config.get("temperature", ABSENT), config.get("maxTokens", ABSENT), config.get("stop", ABSENT)
    return ((temperature is ABSENT or type(temperature) is int or type(temperature) is float)
            and (tokens is ABSENT or type(tokens) is int)
            and (stop is ABSENT or (type(stop) is tuple and all(type(x) is str for x in stop))))
