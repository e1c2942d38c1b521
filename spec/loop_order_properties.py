"""Order, precedence and threshold properties of the loop (issue 43): what the state machine checks of the
decisions its older invariants did not see.

- :func:`steering_in_queue_order` (LOOP-13): steering is drained first-in first-out, into the step
  (``steering/message``) or, re-queued by a turn that ended in its prologue (QF-4), as the prompts of the
  next turns (``user/message``): the harness's inbox ``drainSteering`` returns "the drained messages in
  arrival order" (``agent-loop/src/inbox.ts`` lines 104-108).
- :func:`listener_keys_win` (LOOP-7, LOOP-8): the ``agent/request`` waterfall is ``{...seed, ...changes}``:
  a key the listener sets wins over the seed's, the seed's own keys (provider, model, reasoningEffort)
  included; the header in force and the request carry the listener's value.
- :func:`prunes_only_above_threshold` (PRN-3): a tool result of at most ``thresholdChars`` code points is
  never pruned, and a pruned one is within the threshold afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from sessionspec.model.jsonval import Absent, Json, JsonObject, get
from sessionspec.model.log import Event
from sessionspec.model.loop import SentRequest
from sessionspec.model.prune import content_chars

STEER: Final = re.compile(r"^steer (\d+)\.(\d+)$")
# The keys of a request/header config that the frozen request carries (WIRE-1), by request field.
REQUEST_FIELDS: Final = {"provider": "provider", "model": "model", "reasoningEffort": "reasoning_effort",
                         "temperature": "temperature", "maxTokens": "max_tokens", "stop": "stop"}


def _texts(content: Json | Absent) -> list[str]:
    return [t for b in content for t in (get(b, "text"),) if isinstance(t, str)] if isinstance(content, tuple) else []


def steering_in_queue_order(log: Sequence[Event], since: int = 0) -> str | None:
    """LOOP-13/QF-4: the steering items ``steer N.I`` of send N appear (drained, or re-queued as prompts) in
    increasing I: first in, first out.  Items a cancel discarded (QF-9) simply never appear."""
    last: dict[int, int] = {}
    for event in log:
        if event.type not in ("steering/message", "user/message"):
            continue
        for text in _texts(get(event.data, "content")):
            match = STEER.match(text)
            if match is None:
                continue
            send, index = int(match.group(1)), int(match.group(2))
            if index <= last.get(send, -1) and event.seq >= since:
                return (f"LOOP-13 first-in first-out: steering 'steer {send}.{index}' (seq {event.seq}) came after "
                        f"'steer {send}.{last[send]}', queued after it")
            last[send] = max(index, last.get(send, -1))
    return None


def _header_in_force(log: Sequence[Event], end: int) -> JsonObject | None:
    for event in reversed(log[:end]):
        if event.type == "request/header":
            config = get(get(event.data, "header"), "config")
            return config if isinstance(config, JsonObject) else None
    return None


def listener_keys_win(log: Sequence[Event], requests: Sequence[SentRequest], changes: Mapping[str, Json]) -> str | None:
    """LOOP-7/LOOP-8: each request of a turn whose ``agent/request`` listener returned ``changes`` carries
    them: the header in force has every key with the listener's value, and the request each key it has a
    field for."""
    for sent in requests:
        config = _header_in_force(log, sent.dispatch_len)
        for key, value in changes.items():
            if config is None or get(config, key) != value:
                return (f"LOOP-7 listener keys win: the listener set {key}={value!r}, but the header in force for the request of turn "
                        f"{sent.turn} step {sent.step} has {key}={get(config, key) if config is not None else None!r}")
            field = REQUEST_FIELDS.get(key)
            if field is not None and getattr(sent.request, field) != value:
                return (f"LOOP-7 listener keys win: the listener set {key}={value!r}, but the request of turn {sent.turn} step {sent.step} "
                        f"carries {getattr(sent.request, field)!r}")
    return None


def prunes_only_above_threshold(log: Sequence[Event], threshold_chars: int, since: int = 0) -> str | None:
    """PRN-3: a prune replaces only a tool result of more than ``thresholdChars`` code points, with content of
    at most that many."""
    for event in log[since:]:
        if event.type != "tool/result" or not isinstance(event.surface_op, JsonObject):
            continue
        cited = event.source_event_seqs
        if not isinstance(cited, tuple) or len(cited) != 1 or not isinstance(cited[0], int) or not 0 <= cited[0] < len(log):
            continue
        original, pruned = get(log[cited[0]].data, "content"), get(event.data, "content")
        before = content_chars(None if isinstance(original, Absent) else original)
        after = content_chars(None if isinstance(pruned, Absent) else pruned)
        if before <= threshold_chars:
            return f"PRN-3 threshold: seq {event.seq} prunes seq {cited[0]}, whose {before} code points are within thresholdChars {threshold_chars}"
        if after > threshold_chars:
            return f"PRN-3 threshold: seq {event.seq} leaves {after} code points, over thresholdChars {threshold_chars}"
    return None
