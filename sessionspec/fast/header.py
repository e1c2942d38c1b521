"""A ``request/header`` event's canonical header, for the checker's one pass (issue 26).

The definition is :func:`model.header.header_of_event`: ``canonical(header_from_json(data.header))``
(HDR-1, HDR-2, DIA-8).  It builds the header twice through the dataclass's interpreted keyword
initializer; every ``request/header`` is folded by the compaction audit and the request points.
A header whose ``config`` is an object is built here once, through the slots
(:mod:`sessionspec.fast.slots`); any other gets the definition's rejection.
``tests/fast/test_fast_header.py`` compares the two on the real and generated headers and their
variants.  Beside it, the twin of LEG-8's ``opaque_header_fields``, which the placeholder note asks of every
header; the same test holds the note's fields to the definition's.  The header records' twins are
:mod:`sessionspec.fast.header_log`'s.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.jsonget import get
from sessionspec.fast.slots import new_instance, plain_fields, slot_setter
from sessionspec.model.diagnostics import opaque_header_fields as opaque_by_definition
from sessionspec.model.header import EpochHeader, header_of_event
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

_OBJECT: Final = JsonObject
_FIELDS: Final = ("config", "system", "tools", "message_prefix", "adapter_defaults")
assert plain_fields(EpochHeader, _FIELDS)
_set_config: Final = slot_setter(EpochHeader, "config")
_set_system: Final = slot_setter(EpochHeader, "system")
_set_tools: Final = slot_setter(EpochHeader, "tools")
_set_message_prefix: Final = slot_setter(EpochHeader, "message_prefix")
_set_adapter_defaults: Final = slot_setter(EpochHeader, "adapter_defaults")


def canonical_header_of(event: Event, dialect: Dialect) -> EpochHeader | Rejected:
    """``model.header.header_of_event(event, dialect)``: HDR-2 keeps ``system``, ``tools`` and (A55)
    ``messagePrefix`` only when present with a length above 0, ``config`` as it is; DIA-8: D08 keeps
    ``adapterDefaults`` and drops any ``messagePrefix``."""
    header = get(event.data, "header")
    if isinstance(header, JsonObject):
        config = header.get("config", ABSENT)
        if isinstance(config, JsonObject):
            built: EpochHeader = new_instance(EpochHeader)
            _set_config(built, config)
            _set_system(built, _if_present(header.get("system", ABSENT)))
            _set_tools(built, _if_present(header.get("tools", ABSENT)))
            _set_message_prefix(built, _if_present(header.get("messagePrefix", ABSENT)) if dialect is A55 else ABSENT)
            _set_adapter_defaults(built, header.get("adapterDefaults", ABSENT) if dialect is D08 else ABSENT)
            return built
    return header_of_event(event, dialect)


def _if_present(value: Json | Absent) -> Json | Absent:
    """HDR-2's 'present with length > 0' (JS ``length``: a string's UTF-16 units, an array's entries; no
    other value has one): a non-empty string or array, else ABSENT."""
    return value if isinstance(value, (str, tuple)) and len(value) > 0 else ABSENT


def _plain_objects(v: Json | Absent) -> bool:
    return v is ABSENT or (type(v) is tuple and all(type(x) is _OBJECT for x in v))


def opaque_header_fields(event: Event) -> tuple[str, ...]:
    """:func:`sessionspec.model.diagnostics.opaque_header_fields` (LEG-8, FMT-6), asked of every ``request/header``:
    a header whose ``system`` is missing or no placeholder's opening and whose ``tools`` and ``messagePrefix`` are
    missing or lists of objects holds no scrubbed field; any other is the definition's."""
    data = event.data
    header = data.get("header", ABSENT) if event.type == "request/header" and type(data) is _OBJECT else ABSENT
    if type(header) is _OBJECT:
        system = header.get("system", ABSENT)
        if ((system is ABSENT or (type(system) is str and not system.startswith("{{")))
                and _plain_objects(header.get("tools", ABSENT)) and _plain_objects(header.get("messagePrefix", ABSENT))):
            return ()
    return opaque_by_definition(event)

