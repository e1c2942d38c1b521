"""A ``request/header`` event's canonical header, for the checker's one pass (issue 26).

The definition is :func:`model.header.header_of_event`: ``canonical(header_from_json(data.header))``
(HDR-1, HDR-2, DIA-8).  It builds the header twice through the dataclass's interpreted keyword
initializer; every ``request/header`` is folded by the compaction audit and the request points.
A header whose ``config`` is an object is built here once, through the slots
(:mod:`sessionspec.fast.slots`); any other gets the definition's rejection.
``tests/fast/test_fast_header.py`` compares the two on the real and generated headers and their
variants.  Beside it, the twins of :mod:`sessionspec.model.header_log`'s step boundaries (``open_step``,
``close_step``), which the header fold asks at every step, of ``check_header_record`` (an A55 anchor, or a change
of system, in its place answered here), and of LEG-8's ``opaque_header_fields``, which the
placeholder note asks of every header; the same test holds the fold with them and with the definitions to the same
findings, and the note's fields to the definition's.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import A55, ABSENT, D08
from sessionspec.fast.json_eq import same_json
from sessionspec.fast.jsonget import get
from sessionspec.fast.slots import new_instance, plain_fields, slot_setter
from sessionspec.model.diagnostics import opaque_header_fields as opaque_by_definition
from sessionspec.model.header import EpochHeader, header_of_event
from sessionspec.model.header_log import A55_HEADERS, HeaderShapes, HeaderTrack
from sessionspec.model.header_log import check_header_record as record_by_definition
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected

_OBJECT: Final = JsonObject
_A55_HEADERS: Final = A55_HEADERS
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


def open_step(track: HeaderTrack) -> None:
    """:func:`sessionspec.model.header_log.open_step` (asked at every ``step/start``: compiled, a call into the
    interpreted model costs more than its three assignments)."""
    track.step_open, track.step_header, track.last_chunk = True, None, None


def close_step(track: HeaderTrack) -> None:
    """:func:`sessionspec.model.header_log.close_step`."""
    track.step_open = False


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


def check_header_record(track: HeaderTrack, event: Event, header: EpochHeader, shapes: HeaderShapes, first_live: bool) -> list[Rejected]:
    """:func:`sessionspec.model.header_log.check_header_record`: answered here for an A55 header in its place (the
    step's first header, before its first chunk: FMT-9 (a)) that is an anchor, ``initial`` as the log's first
    header or ``resume`` after one (FMT-9 (b)), or a ``change`` inside an anchored instance whose system differs
    from the header in force (FMT-9 (c), HDR-4) and whose prefix is the instance's (PFX-15); any other record is
    the definition's.  The instance prefix's text, a memo the definition writes when it compares, is left unwritten
    (the definition writes it when next asked)."""
    data = event.data
    reason = data.get("reason", ABSENT) if type(data) is _OBJECT else ABSENT
    if not (shapes is _A55_HEADERS and track.step_open and track.step_header is None and track.last_chunk is None):
        return record_by_definition(track, event, header, shapes, first_live)
    fold = track.fold
    if (reason == "resume" and fold is not ABSENT) or (reason == "initial" and fold is ABSENT):
        track.step_header = event.seq
        track.anchored, track.instance_prefix, track.instance_prefix_text = True, header.message_prefix, None
        track.fold = header
        return []
    if reason == "change" and isinstance(fold, EpochHeader) and track.anchored and _surely_differ(fold, header) \
            and _same_prefix(track.instance_prefix, header.message_prefix):
        track.step_header = event.seq
        track.fold = header
        return []
    return record_by_definition(track, event, header, shapes, first_live)


def _surely_differ(a: EpochHeader, b: EpochHeader) -> bool:
    """Not HDR-4's ``headerEq``, whichever way it compares (field by field, or, with a placeholder, the whole
    header's JSON): two string systems that differ."""
    return type(a.system) is str and type(b.system) is str and a.system != b.system


def _same_prefix(instance: Json | Absent, prefix: Json | Absent) -> bool:
    """PFX-15's comparison (``_a55_prefix_change``) finds the instance's prefix unchanged: JSONEQ, or both absent."""
    if instance is ABSENT or prefix is ABSENT:
        return instance is prefix
    return same_json(instance, prefix)
