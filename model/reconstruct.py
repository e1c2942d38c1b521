"""Request reconstruction from the log alone (INV, HDR-9, FMT-8).

For every loop request ``k`` whose ``step/start`` has seq ``b_k`` and whose first
chunk has seq ``c_k``::

    messages_k = (H_k.messagePrefix or []) ++ derive(log[0:b_k]),  H_k = fold(log[0:c_k])

and every config scalar, ``system`` and ``tools`` come from ``H_k`` (INV-5).
``derive`` from scratch is the definition (:func:`rebuild_request_at`); the
checker's one-pass equivalent is :func:`sessionspec.fast.request_points.request_points`,
and the property tests assert the two agree.  :func:`reconstruction_mismatch`
is the comparison INV-5 makes against a request the loop sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, final

from sessionspec.model.derive import derive
from sessionspec.model.header import fold_header
from sessionspec.model.jsonval import ABSENT, Absent, JsonObject, get, js_stringify
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.model.rules import implements
from sessionspec.model.wire import Request, build_request, request_to_json


@implements("INV-3", "INV-5")
def rebuild_request_at(events: Sequence[Event], step_start_seq: int, first_chunk_seq: int | None, dialect: Dialect = Dialect.A55) -> Request | Rejected:
    """INV-5: "(the model's theorem, stronger than INV-4) The model MUST check that, for every loop request
    `k`, with boundary seq `b_k` and first chunk seq `c_k`:"

    The executable definition (INV-5): a fresh derivation of
    ``log[0:step_start]`` and the header fold at the first chunk (or, with no
    chunk, the whole given log).  Quadratic when used for every request; the
    checker uses ``sessionspec.fast.request_points``, and properties assert they agree.
    INV-3: "`JS(request.messages)` MUST equal `JS((h.messagePrefix or []) ++
    derive(fresh_session(log[0:b])))`."

    With no chunk the caller must cut ``events`` at the step's ``step/end``
    (HDR-9): a header recorded after the step must not leak into its request.

    post: isinstance(__return__, Rejected) or 0 <= step_start_seq < len(events)
    """
    if not 0 <= step_start_seq < len(events) or events[step_start_seq].type != "step/start":
        return Rejected(rule="INV-2", seq=step_start_seq, reason="no step/start at the boundary")
    boundary = derive(list(events[:step_start_seq]), dialect)
    if isinstance(boundary, Rejected):
        return boundary
    upto = first_chunk_seq if first_chunk_seq is not None else len(events)
    header = fold_header(list(events[:upto]), ABSENT, dialect)
    if isinstance(header, Rejected):
        return header
    if header is ABSENT:
        return Rejected(rule="INV-2", seq=step_start_seq, reason="no request/header event")
    return build_request(header, boundary)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Mismatch:
    """Which request fields differ from the rebuild (INV-5), and whether the
    harness's weaker INV-4 check would still accept it (Q-6)."""

    fields: tuple[str, ...]
    harness_accepts: bool


# INV-4: the harness compares these against the folded header (plus messages);
# it deliberately omits provider and reasoningEffort.
HARNESS_FIELDS: Final = ("messages", "model", "system", "temperature", "maxTokens", "stop", "tools")
MODEL_FIELDS: Final = ("provider", "model", "reasoningEffort", "messages", "system", "tools", "temperature",
                       "maxTokens", "stop")


@implements("INV-4")
def reconstruction_mismatch(log: Sequence[Event], request: Request, step_start_seq: int,
                            dispatch_len: int) -> Mismatch | Rejected | None:
    """INV-4: "These fields MUST equal the folded header: `model`, `system`, `temperature`, `maxTokens`,
    `JS(stop)`, and `JS(tools or [])`."

    INV-5 (the model's theorem): rebuild the request from ``log`` strictly before
    the step's ``step/start`` (``step_start_seq``) with a FRESH derivation (``derive`` from scratch, as
    the harness's ``fresh_session`` re-validates a copy), with the header folded
    over the log as it stood at dispatch (``dispatch_len`` events), and compare every field.  ``None`` when
    equal.  INV-4, the harness's weak companion, skips ``provider`` and
    ``reasoningEffort`` and compares ``tools`` as ``tools or []``."""
    # The header in force at dispatch is the fold over the log as it stood then
    # (nothing is appended between dispatch and the first chunk).
    rebuilt = rebuild_request_at(list(log[:dispatch_len]), step_start_seq, None)
    if isinstance(rebuilt, Rejected):
        return rebuilt
    expected = request_to_json(rebuilt)
    actual = request_to_json(request)
    differing = tuple(key for key in MODEL_FIELDS if _field_text(expected, key) != _field_text(actual, key))
    if not differing:
        return None
    harness_sees = [
        key for key in differing
        if key in HARNESS_FIELDS and not (key == "tools" and _tools_or_empty(expected) == _tools_or_empty(actual))
    ]
    return Mismatch(fields=differing, harness_accepts=not harness_sees)


def _field_text(request: JsonObject, key: str) -> str | None:
    """``JS(value)``, or None when the key is absent (absent differs from any value)."""
    value = get(request, key)
    return None if isinstance(value, Absent) else js_stringify(value)


def _tools_or_empty(request: JsonObject) -> str:
    value = get(request, "tools")
    return js_stringify(() if isinstance(value, Absent) else value)

