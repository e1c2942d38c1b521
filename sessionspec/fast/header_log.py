"""The header records of :mod:`sessionspec.model.header_log` the header fold asks at every step and header, for the
checker's one pass: the step boundaries (``open_step``, ``close_step``) and ``check_header_record`` for an A55 header
in its place that is an anchor or a change of system; every other record is the definition's.  Compiled, a call into
the interpreted model costs more than these answers (a change cost the definition about 460,000 instructions:
``opt_header_eq`` and the prefix's JS text).  ``tests/fast/test_fast_header.py`` holds them to the definitions:
the track after each, and the header fold with them and with the definitions, finding for finding.
"""

from __future__ import annotations

from typing import Final

from sessionspec.fast.constants import ABSENT
from sessionspec.fast.json_eq import same_json
from sessionspec.model.header import EpochHeader
from sessionspec.model.header_log import A55_HEADERS, HeaderShapes, HeaderTrack
from sessionspec.model.header_log import check_header_record as record_by_definition
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.log import Event
from sessionspec.model.rejected import Rejected

_OBJECT: Final = JsonObject
_A55_HEADERS: Final = A55_HEADERS

def open_step(track: HeaderTrack) -> None:
    """:func:`sessionspec.model.header_log.open_step` (asked at every ``step/start``: compiled, a call into the
    interpreted model costs more than its three assignments)."""
    track.step_open, track.step_header, track.last_chunk = True, None, None


def close_step(track: HeaderTrack) -> None:
    """:func:`sessionspec.model.header_log.close_step`."""
    track.step_open = False


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
