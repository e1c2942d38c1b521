"""What a log shows besides findings, decided event by event: the pre-A55 designs that put it outside the model
(LEG-7), the header fields scrubbed to placeholders (LEG-8), and the §17 quirks of the real code a log shows
(Q-4, Q-17).

None of these makes a log invalid: a pre-A55 design makes the verdict ``unknown``, a placeholder field a note, a
quirk a note (a finding under ``--strict-quirks``).  ``sessionspec check`` runs these definitions over a log
(``sessionspec/check/observations.py``); ``tests/model/test_diagnostics.py`` holds them against the logs the
loop writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from sessionspec.model.jsonval import ABSENT, get
from sessionspec.model.log import Event, json_int
from sessionspec.model.placeholder import is_opaque_field
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import decides, implements

# The header fields a snapshot scrubber replaces (FMT-6, LEG-8).
SCRUBBED_FIELDS: Final = ("system", "tools", "messagePrefix")
# The pre-A55 designs an event can show (LEG-7), in the order they are named.
REQUEST_ADVICE: Final = "agent/request-advice"
MESSAGE_SUFFIX: Final = "a request/header with messageSuffix"


@decides("LEG-7")
@implements("LEG-7")
def pre_a55_design(event: Event) -> str | None:
    """LEG-7: "Pre-A55 designs MUST be recognized only for diagnostics, never produced: per-step
    `agent/request-advice {before, after}` and `EpochHeader.messageSuffix` (replaced by the prefix at
    `ea4c10d753`); the `request/header-delta` codec (system line-delta, tools delta, whole config, whole
    `messagePrefix`, empty array meaning "back to none") and reasons `initial|resume|fallback` (removed at
    `1123e946c0`); prefix composition inside the step after `step/start` (`ea4c10d753`, moved before pre-step at
    `765052a7d1`); caching an interrupted composition (fixed at `959a3c3a8b`); compaction in `agent/pre-step` with
    the prefix passed in and pressure `estimateTokens(prefix ++ derived, system)` (`765052a7d1`..`12484104c8`)."

    What an event shows of such a design (None: nothing): ``agent/request-advice``, or a header with a
    ``messageSuffix``.  Unlike LEG-1..LEG-6 the rule rejects nothing: the real loader takes
    ``agent/request-advice`` as a plugin type (LOG-8) and canonicalization drops ``messageSuffix`` (HDR-2), yet
    both changed the request of the design that wrote them, so the model cannot decide such a log's requests
    (:func:`outside_the_model`).  The delta codec and ``fallback`` are LEG-1's and LEG-2's findings."""
    if event.type == "agent/request-advice":
        return REQUEST_ADVICE
    if event.type == "request/header" and get(get(event.data, "header"), "messageSuffix") is not ABSENT:
        return MESSAGE_SUFFIX
    return None


def outside_the_model(designs: Mapping[str, int]) -> str | None:
    """Why a log is outside the model: the pre-A55 designs it shows (each with the seq of its first event)."""
    if not designs:
        return None
    shown = " and ".join(f"{design} at seq {designs[design]}" for design in (REQUEST_ADVICE, MESSAGE_SUFFIX) if design in designs)
    return f"a pre-A55 design (LEG-7, recognized for diagnostics only): {shown}; the model does not decide its requests"


@decides("LEG-8")
@implements("LEG-8")
def opaque_header_fields(event: Event) -> tuple[str, ...]:
    """LEG-8: "Files whose `messagePrefix` entries are the placeholder string `"{{messagePrefix}}"` (the acp/web
    snapshot scrubber) MUST be read as "a prefix of N messages with unknown content": reconstruction and pricing
    involving the prefix are `unknown`, not failures."

    The fields of a ``request/header`` that a scrubber wrote (FMT-6, :func:`is_opaque_field`: ``system`` and
    ``tools`` as whole-field placeholders too): the requests are known only up to them (:func:`placeholder_note`)."""
    if event.type != "request/header":
        return ()
    header = get(event.data, "header")
    return tuple(key for key in SCRUBBED_FIELDS if is_opaque_field(key, get(header, key)))


def placeholder_note(fields: Mapping[str, int]) -> str | None:
    """The note of the opaque header fields a log shows (each with the seq of its first header)."""
    if not fields:
        return None
    listed = ", ".join(f"{key} (first at seq {seq})" for key, seq in fields.items())
    return f"placeholder header fields are opaque, no finding depends on them (FMT-6, LEG-8): {listed}"


@decides("Q-4")
def error_step_never_started(event: Event, started: set[int]) -> Rejected | None:
    """Q-4 (a quirk of the real code, §17): "A failure in composition, assembly or pre-step yields
    ``turn/end {kind:"error", step: n}`` with no ``step/start`` for ``n``; a prompt-submit failure yields
    ``step: 0``."  ``started``: the steps the turn started."""
    reason = get(event.data, "reason")
    step = json_int(get(reason, "step"))
    if get(reason, "kind") == "error" and step is not None and step not in started:
        return Rejected(rule="Q-4", seq=event.seq, reason=f"turn/end error names step {step}, which never started")
    return None


@decides("Q-17")
def earlier_than_previous(event: Event, previous_time: int | None) -> Rejected | None:
    """Q-17 (a quirk of the real code, §17): "Refreshed snapshots reuse timestamps; never assert time order": an
    event whose ``time`` is earlier than the previous event's is shown, never refused."""
    if previous_time is not None and event.time < previous_time:
        return Rejected(rule="Q-17", seq=event.seq, reason=f"time {event.time} is earlier than the previous event's {previous_time}")
    return None
