"""The decision search's wider candidates (issue 43 item 3): logs corrupted the way the rules judge them.

The first candidates (candidates.py, candidates_logs.py) edit one value of a log at a random place; most short
outcomes sit behind a particular field of a particular event type, a number or string written in another
JSON spelling, a packed row, or a configuration on the edge of its validity.  Each family here aims at one:

- ``targeted``: ``check`` (or ``measure``/``replay``/``repair``) of a log with one to three edits aimed at the
  fields the shape rules read: a key moved first or last, an unknown key, a key removed, a value retyped, for the
  event's ``data`` and the objects inside it (``trigger``, ``chunk``, ``header``, ``config``, ``content``);
  lines swapped, a session header line before the events with its own fields edited;
- ``spelling``: a line whose numbers are written another way (``1.0``, ``1e0``, ``-0``, ``2^53 + 1``, ...) or
  whose strings hold escapes (lone surrogates, astral characters), a duplicated key, a deep nest;
- ``rows``: the packed chunk rows the writer makes of the log (CHK-2), with one field of a row edited;
- ``config``: compact-basic called with a configuration at and around its validity edges (CMP-3), or with a
  prune configuration around the size of the log's (edited) tool results, whose content is split into several
  blocks, given a non-text block, or emptied (PRN-1..3).

Logs are cut to at most MAX_LINES lines and long texts shortened, so the vectors stay small.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Final

from sessionspec.decisions.candidates import _edit, loop_trace, model_log

MAX_LINES: Final = 30
ODD_VALUES: Final[tuple[Any, ...]] = (None, -1, 0, 1, 1.5, "", "x", [], {}, [{}], True, False, 2**53, 2**53 - 1, -(2**53), {"kind": "x"})
NUMBER_SPELLINGS: Final = ("{n}.0", "{n}e0", "{n}E+0", "{n}.00e0", "-0", "0.0", "-0.0", "9007199254740991", "9007199254740992",
                           "9007199254740993", "-9007199254740993", "1e21", "1e-7", "123e-20", "1.5e300", "1e400", "0.000001",
                           "{n}.5", "1e20", "100000000000000000000", "-1e-7", "5e-324", "-{n}")
STRING_SPELLINGS: Final = ("\\ud800", "\\udfff", "a\\ud83d\\ude00b", "\\ud83d", "\\udbff\\udfff", "\\u00e9t\\u00e9", "\\u0000",
                           "\\uffff", "\\ue000", "\\ud7ff", "x\\udc00y")
WIDE_TYPES: Final = ("request/header", "turn/start", "assistant/chunk", "tool/result", "user/message", "assistant/message",
                     "todo/write", "turn/end", "step/start", "tool/call", "steering/message", "request/context")


def _shorten(value: Any, limit: int = 60) -> Any:
    """Long texts cut (the vectors stay small; no rule here reads a text's length but prune's)."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        return [_shorten(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: _shorten(v, limit) for k, v in value.items()}
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def base_lines(rng: random.Random) -> list[str]:
    """A model log of a seeded loop session, cut to a window of at most MAX_LINES lines from its start."""
    for _ in range(4):
        initial, ops = loop_trace(rng)
        lines = model_log(initial, ops)
        if len(lines) >= 4:
            return [_dumps(_shorten(json.loads(line))) for line in lines[:MAX_LINES]]
    return []


def _objects(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every object inside ``value`` with its path (the value itself first)."""
    out: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    if isinstance(value, dict):
        out.append((path, value))
        for k, v in value.items():
            out += _objects(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _objects(v, path + (i,))
    return out


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replaced(copy[head], rest, new)
    return copy


def _edit_object(rng: random.Random, obj: dict[str, Any]) -> dict[str, Any]:
    """One edit of an object's keys or values, as the shape rules judge them."""
    keys = list(obj)
    roll = rng.random()
    if keys and roll < 0.15:  # a key moved first or last (key order is judged: LOG-12, the prompt's ``turn`` first)
        k = rng.choice(keys)
        rest = {x: obj[x] for x in keys if x != k}
        return {k: obj[k], **rest} if rng.random() < 0.5 else {**rest, k: obj[k]}
    if roll < 0.3:
        return {**obj, rng.choice(["extra", "note", "turn", "step", "kind", "source", "type", "id"]): rng.choice(ODD_VALUES)}
    if keys and roll < 0.45:
        k = rng.choice(keys)
        return {x: obj[x] for x in keys if x != k}
    if keys:
        k = rng.choice(keys)
        return {**obj, k: rng.choice(ODD_VALUES) if rng.random() < 0.6 else _edit(rng, obj[k])}
    return {"type": "text", "text": "x"}


def targeted_edit(rng: random.Random, lines: list[str]) -> list[str]:
    """One edit aimed at an object inside one event (an event of a type the shape rules read, preferably)."""
    if not lines:
        return lines
    edited = list(lines)
    preferred = [i for i, line in enumerate(edited) if any(f'"type":"{t}"' in line[:40] for t in WIDE_TYPES)]
    i = rng.choice(preferred or range(len(edited)))
    roll = rng.random()
    if roll < 0.08 and len(edited) > 1:
        j = min(i + 1, len(edited) - 1)
        edited[i], edited[j] = edited[j], edited[i]
        return edited
    if roll < 0.14:
        edited.insert(i, edited[i])
        return edited
    try:
        event = json.loads(edited[i])
    except ValueError:
        return edited
    path, obj = rng.choice(_objects(event))
    edited[i] = _dumps(_replaced(event, path, _edit_object(rng, obj)))
    return edited


def session_header(rng: random.Random) -> str:
    """A storage session header line (LOG-17/18), one of its fields edited now and then."""
    header: dict[str, Any] = {"type": "session", "version": 1, "id": "s-1", "cwd": "/work", "timestamp": "2026-01-01T00:00:00Z"}
    if rng.random() < 0.6:
        header = _edit_object(rng, header)
    if rng.random() < 0.3:
        header["seed"] = rng.choice([0, 7, -1, 1.5, 2**53, "x", None])
    return _dumps(header)


def respelled(rng: random.Random, line: str) -> str:
    """The line with a number or a string written another way, a key duplicated, or nested deep."""
    roll = rng.random()
    if roll < 0.45:
        numbers = list(re.finditer(r'(?<=[:\[,])-?\d+(?=[,\]}])', line))
        if numbers:
            m = rng.choice(numbers)
            spelling = rng.choice(NUMBER_SPELLINGS).format(n=m.group(0).lstrip("-") or "0")
            return line[:m.start()] + spelling + line[m.end():]
    if roll < 0.8:
        strings = list(re.finditer(r'(?<=:")[^"\\]{1,40}(?=")', line))
        if strings:
            m = rng.choice(strings)
            inserted = rng.choice(STRING_SPELLINGS)
            cut = rng.randint(0, len(m.group(0)))
            return line[:m.start() + cut] + inserted + line[m.start() + cut:]
    if roll < 0.9 and line.startswith("{"):
        key = rng.choice(['"type":"x"', '"seq":0', '"data":{}', '"time":0', '"extra":1'])
        return line[:-1] + "," + key + "}" if rng.random() < 0.5 else "{" + key + "," + line[1:]
    depth = rng.choice([20, 300])  # trace_shape blanks a log line parsed: no deeper than recursion allows
    return line[:-1] + ',"deep":' + "[" * depth + "]" * depth + "}"


def packed(lines: list[str]) -> list[str]:
    """The log as the writer stores it: runs of chunks packed into rows (CHK-2), as JSONL lines written as the
    writer writes them (``js_stringify``: a number that is not an integer is a JSON number, never the protocol's
    ``{"$number": ...}`` spelling, which inside a log line would be an object the model reads as a config value)."""
    from sessionspec.model.codec import pack_chunk_runs
    from sessionspec.model.jsonval import js_stringify
    from sessionspec.replay import LoadError, load_log_text

    loaded = load_log_text("".join(line + "\n" for line in lines))
    if isinstance(loaded, LoadError):
        return lines
    return [js_stringify(row) for row in pack_chunk_runs(loaded.events)]


def row_edited(rng: random.Random, lines: list[str]) -> list[str]:
    """One packed row (a line with ``seq0``) edited: a row field, its data's keys or one payload entry."""
    rows = [i for i, line in enumerate(lines) if '"seq0"' in line]
    if not rows:
        return targeted_edit(rng, lines)
    edited = list(lines)
    i = rng.choice(rows)
    row = json.loads(edited[i])
    roll = rng.random()
    if roll < 0.3:
        row = _edit_object(rng, row)
    elif roll < 0.6:
        row["data"] = _edit_object(rng, row["data"])
    elif roll < 0.8:
        key = rng.choice([k for k in ("dt", "texts", "argumentsDeltas", "deltas") if k in row["data"]] or ["dt"])
        values = row["data"].get(key, [])
        row["data"][key] = (values[:-1] if rng.random() < 0.5 else values + [rng.choice(ODD_VALUES)]) if isinstance(values, list) else []
    else:
        row[rng.choice(["seq0", "time0"])] = rng.choice([2**53 - 1, 2**53 - 3, 2**53, -1, 1.5, "0"])
    edited[i] = _dumps(row)
    return edited


__all__ = ["base_lines", "packed", "respelled", "row_edited", "session_header", "targeted_edit"]
