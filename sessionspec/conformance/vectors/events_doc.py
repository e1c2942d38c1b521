"""docs/events.md: the event reference for implementers, generated (issue 27, part 6).

From three sources, so it cannot drift from any: the model's event classes (model/log.py: every core event
type, the envelope), the rule book (spec/rulebook.md through spec.registry: which rules name an event type,
a field, a chunk kind), and the committed vectors (every event an expectation holds: which data fields occur
and how often, their JSON kinds, and the shortest real example).  ``python -m
sessionspec.conformance.vectors.events_doc`` writes it; tests/conformance/test_vector_events_doc.py fails when the committed file
differs from a fresh rendering.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from sessionspec.conformance.vectors.build import VECTORS_DIR
from sessionspec.conformance.vectors.diff import expected_value
from sessionspec.conformance.vectors.files import load_dir
from sessionspec.conformance.vectors.format import canonical_text
from sessionspec.model.log import CORE_CLASSES
from sessionspec.spec.registry import Rule, rules

EVENTS_DOC: Final = Path(__file__).resolve().parents[3] / "docs" / "events.md"
ENVELOPE: Final = (("type", "the event type"), ("seq", "its position in the log, from 0, contiguous (LOG-1)"),
                   ("time", "a timestamp; vectors accept any value (Q-17)"), ("data", "the event's payload (below)"),
                   ("sourceEventSeqs", "optional: the seqs this event was derived from"),
                   ("surfaceOp", "optional: how the event changes the surface (`append`, `replace`)"))


@dataclass(slots=True)
class _Seen:
    """What the vectors show of one event type or chunk kind."""

    count: int = 0
    fields: Counter[str] = field(default_factory=Counter)
    kinds: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    envelope: Counter[str] = field(default_factory=Counter)
    values: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    example: str | None = None

    def add(self, data: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        self.count += 1
        for key, value in data.items():
            self.fields[key] += 1
            self.kinds[key].add(_kind(value))
            if isinstance(value, str) and len(value) <= 40:
                self.values[key].add(value)
            elif isinstance(value, dict) and isinstance(value.get("kind"), str):
                self.values[key].add(f"kind {value['kind']}")
        for key in ("sourceEventSeqs", "surfaceOp"):
            if key in event:
                self.envelope[key] += 1
        text = canonical_text(event)
        if self.example is None or (len(text), text) < (len(self.example), self.example):
            self.example = text


def _kind(value: object) -> str:
    match value:
        case bool():
            return "boolean"
        case int():
            return "integer"
        case str():
            return "string"
        case list():
            return "array"
        case None:
            return "null"
        case dict() if set(value) == {"$number"}:
            return "number"
        case _:
            return "object"


def _events(documents: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Every event an expectation holds (``appended`` and ``log`` answers), with its time left out."""
    for document in documents:
        for vector in document["vectors"]:
            for step in vector["steps"]:
                value = expected_value(step.get("expect", {"any": {}}))
                if not isinstance(value, dict):
                    continue
                for key in ("appended", "log", "closers"):
                    for event in value.get(key, []) if isinstance(value.get(key), list) else []:
                        if isinstance(event, dict) and isinstance(event.get("type"), str) and isinstance(event.get("data"), dict):
                            yield {k: v for k, v in event.items() if k != "time"}


def survey(directory: Path = VECTORS_DIR) -> tuple[dict[str, _Seen], dict[str, _Seen]]:
    """Per event type and per ``assistant/chunk`` kind, what the vectors show."""
    by_type: dict[str, _Seen] = defaultdict(_Seen)
    by_chunk: dict[str, _Seen] = defaultdict(_Seen)
    for event in _events(load_dir(directory)):
        data = event["data"]
        by_type[event["type"]].add(data, event)
        chunk = data.get("chunk")
        if event["type"] == "assistant/chunk" and isinstance(chunk, dict) and isinstance(chunk.get("type"), str):
            by_chunk[chunk["type"]].add(chunk, chunk)
    return dict(by_type), dict(by_chunk)


def _naming(book: Sequence[Rule], name: str, within: Sequence[Rule] | None = None) -> list[Rule]:
    """The rules whose text names ``name`` in backticks (an event type, a chunk kind), or, ``within`` given,
    those of ``within`` whose code spans name it as a key (a field: `` `reason.kind` ``, `` `{turn, step}` ``)."""
    if within is None:
        return [r for r in book if f"`{name}`" in r.text]
    word = re.compile(rf"(?<![\w/-]){re.escape(name)}(?![\w/-])")
    return [r for r in within if any(word.search(span) for span in re.findall(r"`([^`]+)`", r.text))]


def _ids(found: Sequence[Rule]) -> str:
    return ", ".join(r.id for r in found) or "—"


def _table(seen: _Seen, book_rules: Sequence[Rule]) -> list[str]:
    lines = ["| field | in events | JSON kinds | rules naming it |", "|---|---:|---|---|"]
    for key in sorted(seen.fields):
        shown = sorted(seen.values[key])
        values = f" ({', '.join(shown)})" if shown and len(shown) <= 10 else ""
        lines.append(f"| `{key}` | {seen.fields[key]}/{seen.count} | {', '.join(sorted(seen.kinds[key]))}{values} | "
                     f"{_ids(_naming([], key, book_rules))} |")
    return lines


def render(directory: Path = VECTORS_DIR) -> str:
    """The text of docs/events.md."""
    book = rules()
    by_type, by_chunk = survey(directory)
    out = ["# Event reference (generated)", "",
           "Every event type of the session log and every `assistant/chunk` kind, for an implementer of the adapter",
           "protocol (docs/conformance.md): its fields, how often each occurs in the committed vectors, the rules of",
           "spec/rulebook.md that name it, and the shortest real example from the vectors (event `time` left out: any",
           "value matches, Q-17).  Generated by `python -m sessionspec.conformance.vectors.events_doc` from model/log.py, the rule",
           "book and vectors/; tests/conformance/test_vector_events_doc.py fails when this file is stale.  Do not edit by hand.", "",
           "## The envelope", "", "| key | meaning |", "|---|---|"]
    out += [f"| `{key}` | {meaning} |" for key, meaning in ENVELOPE]
    out += ["", "A key order is not compared (canonical JSON); a non-integer number is `{\"$number\": \"0.7\"}`.", ""]
    out += ["## Event types", ""]
    known = list(CORE_CLASSES)
    others = sorted(t for t in by_type if t not in CORE_CLASSES)
    for name in known + others:
        seen = by_type.get(name, _Seen())
        naming = _naming(book, name)
        cls = CORE_CLASSES.get(name)
        origin = f"model class `{cls.__name__}`" if cls is not None else "carried opaquely (`OpaqueEvent`, LOG-10)"
        out += [f"### `{name}`", "", f"{origin}; {seen.count} in the vectors; rules naming it: {_ids(naming)}.", ""]
        if seen.count:
            envelope = ", ".join(f"`{k}` in {n}/{seen.count}" for k, n in sorted(seen.envelope.items()))
            out += _table(seen, naming)
            out += ["", f"Envelope extras: {envelope or 'none'}.", "", "```json", seen.example or "", "```", ""]
    out += ["## `assistant/chunk` kinds (`data.chunk.type`)", "",
            "`data` is `{turn, step, chunk}`; the stream of one reply is block-start, deltas, block-end per block",
            "(reasoning, text, tool calls), then a usage chunk when there is usage, then `finish`.", ""]
    for name in sorted(by_chunk):
        seen = by_chunk[name]
        naming = _naming(book, name)
        out += [f"### `{name}`", "", f"{seen.count} in the vectors; rules naming it: {_ids(naming)}.", ""]
        out += _table(seen, naming)
        out += ["", "```json", seen.example or "", "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else EVENTS_DOC
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
