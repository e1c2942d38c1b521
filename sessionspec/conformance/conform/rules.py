"""Which rule a ``conform`` divergence breaks: the first mismatch mapped to a rule ID (best effort,
deterministic; the mismatching paths are printed alongside)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.vectors.format import rejection_rules

_EVENT_RULES: Final = {
    "request/header": "LOOP-9",
    "user/message": "LOOP-3",
    "steering/message": "LOOP-13",
    "assistant/chunk": "LOOP-10",
    "assistant/message": "LOOP-11",
    "tool/call": "LOOP-7",
    "tool/result": "LOOP-7",
    "step/start": "LOOP-5",
    "step/end": "LOOP-5",
    "turn/start": "LOOP-2",
    "turn/end": "LOOP-17",
    "prompt/blocked": "LOOP-3",
    "compact/start": "CMP-15",
    "compact/summary": "CMP-22",
    "compact/end": "CMP-23",
}


def _index(path: str, key: str) -> int | None:
    found = re.match(rf"\$\.{key}\[(\d+)\]", path)
    return int(found.group(1)) if found else None


def _events(response: Response, key: str = "appended") -> list[dict[str, Any]]:
    value = response.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _turn_end(response: Response) -> str | None:
    """The first ``turn/end`` reason of an answer (its kind, or the error message for an error)."""
    for event in _events(response):
        reason = event.get("data", {}).get("reason") if event.get("type") == "turn/end" else None
        if isinstance(reason, dict):
            return str(reason.get("message") if reason.get("kind") == "error" else reason.get("kind"))
    return None


def composition_rule(op: Mapping[str, Any] | None, previous_send: Mapping[str, Any] | None, expected: Response,
                     actual: Response) -> str | None:
    """A turn interrupted ``in-composition`` on one side only: one side composed and the other did not.
    After a turn whose composition was interrupted, the model composes again (PFX-5: nothing was cached);
    otherwise a composition that ran when it should not have, or did not run, breaks PFX-2."""
    interrupt = op.get("interrupt") if op is not None and op.get("op") == "send" else None
    if not isinstance(interrupt, Mapping) or interrupt.get("window") != "in-composition":
        return None
    mine, theirs = _turn_end(expected), _turn_end(actual)
    if mine == theirs:
        return None
    interrupted = ("aborted", "disposed", "turn interrupted")
    before = previous_send.get("interrupt") if previous_send is not None else None
    if mine in interrupted and isinstance(before, Mapping) and before.get("window") == "in-composition":
        return "PFX-5"
    return "PFX-2"


def divergence_rule(expected: Response, actual: Response, mismatches: Sequence[str],
                    previous_header: dict[str, Any] | None = None, op: Mapping[str, Any] | None = None,
                    previous_send: Mapping[str, Any] | None = None) -> str:
    """Map the first mismatch to the rule it breaks (best effort, deterministic).

    A rejection on one side names its rule (or LOOP-1 for a refused turn); a
    differing event maps by its type (a header to LOOP-9; to PFX-15 when its
    ``messagePrefix`` differs, HDR-2 when its tools/system differ, CMP-24 when it
    sits inside a compaction; a surface replace to CMP-22 or PRN-4; an
    extra user message carrying the prefix to PFX-9); a differing request maps
    by field (the prefix part of ``messages`` to PFX-11, the history part to
    LOOP-6 or, with an empty assistant message, DER-5; ``tools``/``system`` to
    HDR-2, other fields to LOOP-8); a differing
    summarizer request to CMP-16.  ``previous_header`` (the model's header in effect before this
    operation) tells an extra header that only changes the prefix (PFX-2: composed again) from a
    needless one (LOOP-9); ``op`` and ``previous_send`` let a turn interrupted in composition on one
    side only map to PFX-2 or PFX-5 (:func:`composition_rule`)."""
    # Prefer a mismatch that names an element over a length difference.
    indexed = [m for m in mismatches if re.match(r"\$\.\w+\[\d+\]", m)]
    first = indexed[0] if indexed else (mismatches[0] if mismatches else "$")
    for side in (actual, expected):
        rules = rejection_rules(side)
        if rules:
            return rules[0]
    by_composition = composition_rule(op, previous_send, expected, actual)
    if by_composition is not None:
        return by_composition
    if first.startswith(("$.appended", "$.log")):
        key = "appended" if first.startswith("$.appended") else "log"
        index = _index(first, key)
        mine, theirs = _events(expected, key), _events(actual, key)
        position = index if index is not None else min(len(mine), len(theirs))
        if index is None:
            # Different lengths: the first position where the types differ.
            position = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a.get("type") != b.get("type")), position)
        got = (theirs + [{}] * (position + 1))[position]
        want = (mine + [{}] * (position + 1))[position]
        # Where the event types differ, an extra header or history message the
        # implementation wrote is the telling one; otherwise what it failed to write.
        event = got if not want or got.get("type") in ("request/header", "user/message") else want
        kind = str(event.get("type", ""))
        if kind == "request/header":
            bracket = [e.get("type") for e in theirs[:position] if e.get("type") in ("compact/start", "compact/end")]
            if bracket and bracket[-1] == "compact/start":
                return "CMP-24"  # a header written inside a compaction
            if re.search(r"\.header(\.messagePrefix\b|: unexpected keys .*\bmessagePrefix\b)", first):
                return "PFX-15"
            if re.search(r"\.header(\.(tools|system)\b|: unexpected keys .*\b(tools|system)\b)", first):
                return "HDR-2"
            extra = want.get("type") != "request/header" and got.get("type") == "request/header"
            if extra and previous_header is not None:
                header = got.get("data", {}).get("header")
                if isinstance(header, dict) and header.get("messagePrefix") != previous_header.get("messagePrefix") and \
                        {k: v for k, v in header.items() if k != "messagePrefix"} == \
                        {k: v for k, v in previous_header.items() if k != "messagePrefix"}:
                    return "PFX-2"  # an extra header whose only change is the prefix: it was composed again
            return "LOOP-9"
        if kind == "user/message" and isinstance(event.get("surfaceOp"), dict):
            return "CMP-22"
        if kind == "tool/result" and isinstance(event.get("surfaceOp"), dict):
            return "PRN-4"
        if kind == "user/message":
            # A prefix message written as history (PFX-9); a request-time inject of this send's replies, missing
            # or misplaced (LOOP-6: it joins the next request); else a composition that ran when it should not
            # have, or did not run when it should (PFX-2).
            prefix = [m.get("content") for m in _prefix_of(mine + theirs)]
            data = event.get("data")
            content = data.get("content") if isinstance(data, dict) else None
            if content is not None and content in prefix:
                return "PFX-9"
            return "LOOP-6" if content is not None and content in _request_injects(op) else "PFX-2"
        return _EVENT_RULES.get(kind, "LOOP-5")
    if first.startswith("$.requests"):
        if ".messages" in first or re.match(r"\$\.requests(\[\d+\])?: expected ", first):
            index = _index(first, "requests")
            if index is not None and _prefix_differs(expected, actual, index):
                return "PFX-11"
            if index is not None and _has_empty_assistant(actual, index):
                return "DER-5"
            return "LOOP-6"
        if ".tools" in first or ".system" in first:
            return "HDR-2"
        return "LOOP-8"
    if first.startswith("$.summaries"):
        return "CMP-16"
    return "LOOP-5"


def _request_injects(op: Mapping[str, Any] | None) -> list[Any]:
    """The contents a send's replies inject during ``agent/request`` (``requestInject``, LOOP-6)."""
    replies = op.get("replies") if op is not None and op.get("op") == "send" else None
    injects = [r.get("requestInject") for r in replies if isinstance(r, Mapping)] if isinstance(replies, list) else []
    return [i.get("content") for i in injects if isinstance(i, Mapping)]


def _has_empty_assistant(response: Response, index: int) -> bool:
    """Whether request ``index`` carries an assistant message with empty content (DER-5 forbids it)."""
    requests = response.get("requests")
    request = requests[index] if isinstance(requests, list) and index < len(requests) else None
    messages = request.get("messages") if isinstance(request, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") == [] for m in messages)


def _prefix_of(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messagePrefix of the first header among ``events`` that has one."""
    for event in events:
        header = event.get("data", {}).get("header") if event.get("type") == "request/header" else None
        if isinstance(header, dict) and isinstance(header.get("messagePrefix"), list):
            return [m for m in header["messagePrefix"] if isinstance(m, dict)]
    return []


def _prefix_differs(expected: Response, actual: Response, index: int) -> bool:
    """Whether the leading messages that the expected request shares with its
    header's prefix differ (a prefix placed elsewhere or lost)."""
    prefixes = [e for e in _events(expected) if e.get("type") == "request/header"]
    prefix = prefixes[-1]["data"]["header"].get("messagePrefix", []) if prefixes else []
    mine, theirs = expected.get("requests"), actual.get("requests")
    if not prefix or not isinstance(mine, list) or not isinstance(theirs, list) or index >= min(len(mine), len(theirs)):
        return False
    request = theirs[index]
    got = request.get("messages") if isinstance(request, dict) else None
    return not isinstance(got, list) or got[: len(prefix)] != prefix


