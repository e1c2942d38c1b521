"""The replay page's timeline: the log's structure in sentences a person reads (issue 46), each event's JSON
behind a disclosure.

Turns, steps (linked to the request they sent), header snapshots, compactions, prunes and checkpoints; the
chunks and messages are the requests' business, below.  A turn's end reads as what happened (``Turn 2 ends:
the model ran out of output tokens (max-tokens).``), not as its JSON.  Where the log stops being a valid loop
log (sessionspec/replay_read.py), the timeline ends with that point, marked.
"""

from __future__ import annotations

import html
import json
from typing import Final

from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, get, js_stringify, thaw
from sessionspec.model.log import Event
from sessionspec.replay import ReplayReport, replace_kind, stop_sentence

# What a turn's end reason says, by its kind (LOG-11, DIA-14).
TURN_ENDS: Final = {
    "completed": "completed",
    "max-tokens": "the model ran out of output tokens",
    "aborted": "aborted",
    "interrupted": "interrupted (the process stopped; crash repair closed it)",
    "rejected": "the prompt was blocked",
    "error": "an error",
    "disposed": "the session was disposed",
    "blocked": "the prompt was blocked",
}


def _word(value: Json | Absent) -> str:
    """A value in a sentence: a string as itself, anything else as compact JSON."""
    return value if isinstance(value, str) else "?" if value is ABSENT else js_stringify(value)


def _details(value: Json, label: str = "event JSON") -> str:
    text = json.dumps(thaw(value), ensure_ascii=False, indent=1)
    return f'<details class="json"><summary>{html.escape(label)}</summary><pre>{html.escape(text)}</pre></details>'


def turn_start_sentence(e: Event) -> str:
    trigger = get(e.data, "trigger")
    source = get(get(trigger, "source"), "kind") if isinstance(trigger, JsonObject) else ABSENT
    kind = get(trigger, "kind") if isinstance(trigger, JsonObject) else ABSENT
    why = f": a {_word(kind)} from {_word(source)}" if kind is not ABSENT and source is not ABSENT else ""
    return f"Turn {_word(get(e.data, 'turn'))} starts{why}."


def turn_end_sentence(e: Event) -> str:
    reason = get(e.data, "reason")
    kind = get(reason, "kind") if isinstance(reason, JsonObject) else reason
    said = TURN_ENDS.get(kind, _word(kind)) if isinstance(kind, str) else _word(kind)
    extra: list[str] = []
    if isinstance(reason, JsonObject):
        step = get(reason, "step")
        if step is not ABSENT:
            extra.append(f"at step {_word(step)}")
        why = get(reason, "reason")
        if why is not ABSENT:
            extra.append(f"because: {_word(get(why, 'kind') if isinstance(why, JsonObject) else why)}")
        message = get(reason, "message")
        if isinstance(message, str):
            extra.append(f"“{message}”")
    detail = f" ({', '.join(extra)})" if extra else ""
    code = f" ({kind})" if isinstance(kind, str) and kind not in said else ""
    return f"Turn {_word(get(e.data, 'turn'))} ends: {said}{code}{detail}."


def header_sentence(e: Event) -> str:
    header = get(e.data, "header")
    reason = _word(get(e.data, "reason"))
    config = get(header, "config") if isinstance(header, JsonObject) else ABSENT
    route = "/".join(str(v) for v in (get(config, "provider"), get(config, "model")) if isinstance(v, str)) if isinstance(config, JsonObject) else ""
    tools = get(header, "tools") if isinstance(header, JsonObject) else ABSENT
    prefix = get(header, "messagePrefix") if isinstance(header, JsonObject) else ABSENT
    parts = [f"to {route}" if route else ""]
    if isinstance(tools, tuple):
        parts.append(f"{len(tools)} tool{'s' if len(tools) != 1 else ''}")
    if isinstance(prefix, tuple) and prefix:
        parts.append(f"a session prefix of {len(prefix)} message{'s' if len(prefix) != 1 else ''}")
    said = ", ".join(p for p in parts if p)
    return f"Header snapshot ({reason}){': ' + said if said else ''}."


def replace_sentence(e: Event) -> str:
    op = e.surface_op
    kind = replace_kind(e)
    span = f"seqs {_word(get(op, 'start'))}–{_word(get(op, 'end'))}" if isinstance(op, JsonObject) else "?"
    what = {"prune": "Prune: a tool result's content is replaced", "compaction checkpoint": "Compaction checkpoint: a summary replaces"}
    return f"{what.get(kind, 'A replace')} ({span})."


def timeline_html(report: ReplayReport) -> list[str]:
    parts: list[str] = ['<h2 id="timeline-heading">Timeline</h2><div class="timeline" id="timeline">']
    by_boundary = {r.point.step_start_seq: r for r in report.requests}
    for e in report.events:
        line: tuple[str, str] | None = None
        if e.type == "turn/start":
            line = ("ev-turn", html.escape(turn_start_sentence(e)))
        elif e.type == "turn/end":
            line = ("ev-turn-end", html.escape(turn_end_sentence(e)))
        elif e.type == "step/start":
            r = by_boundary.get(e.seq)
            link = f' It sends <a href="#request-{r.index + 1}">request {r.index + 1}</a>.' if r is not None else ""
            line = ("ev-request", f"Step {html.escape(_word(get(e.data, 'step')))} starts.{link}")
        elif e.type == "request/header":
            line = ("ev-header", html.escape(header_sentence(e)))
        elif e.type.startswith(("compact/", "compaction/")):
            stage = e.type.split("/", 1)[1]
            line = ("ev-compaction", html.escape(f"Compaction: {stage}."))
        if line is not None:
            parts.append(f'<div class="ev {line[0]}" data-seq="{e.seq}">{line[1]} <span class="seq">seq {e.seq}</span>'
                         f"{_details(e.data)}</div>")
        if isinstance(e.surface_op, JsonObject) and get(e.surface_op, "op") == "replace":
            kind = replace_kind(e)
            cls = "ev-prune" if kind == "prune" else "ev-compaction"
            parts.append(f'<div class="ev {cls}" data-replace="{html.escape(kind)}" data-seq="{e.seq}">'
                         f'{html.escape(replace_sentence(e))} <span class="seq">seq {e.seq}</span>{_details(e.surface_op, "surfaceOp JSON")}</div>')
    if report.stop is not None:
        parts.append(f'<div class="ev ev-stop" id="stop">{html.escape(stop_sentence(report).capitalize())}.'
                     f'<div class="hdr">{html.escape(report.stop.text)}</div></div>')
    parts.append("</div>")
    return parts
