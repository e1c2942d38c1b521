"""``--expect FILE``: the vectors an implementation is known to fail, each with a reason (issue 27, part 2).

As a test262 runner's expectations file: a failure listed here is *expected* (``xfail``), and an expected
failure that passes is reported (``xpass``) so the file shrinks as the implementation grows.  Two
spellings, told apart by the first character:

- text: one entry per line, ``ID-or-glob  reason`` (the reason is the rest of the line; ``#`` starts a
  comment line; globs are ``fnmatch``'s: ``check/rule/*``);
- JSON: ``{"ID-or-glob": "reason", …}`` or ``[{"id": "ID-or-glob", "reason": "…"}, …]``.

For ``conform`` an entry names ``conform/RULE`` (a glob too): a divergence that maps to a matching rule is
expected.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import final


class ExpectationsError(Exception):
    """An expectations file that cannot be read (a usage error, exit 2)."""


@final
@dataclass(frozen=True, slots=True)
class Entry:
    pattern: str
    reason: str


@final
@dataclass(frozen=True, slots=True)
class Expectations:
    entries: tuple[Entry, ...] = ()
    source: str = ""

    def reason_for(self, ident: str) -> str | None:
        """The reason of the first entry matching ``ident``, else None (not expected to fail)."""
        for entry in self.entries:
            if fnmatch.fnmatchcase(ident, entry.pattern):
                return entry.reason
        return None

    def unused(self, idents: Iterable[str]) -> tuple[Entry, ...]:
        """The entries that match none of ``idents`` (a typo, or a vector that no longer exists)."""
        every = list(idents)
        return tuple(e for e in self.entries if not any(fnmatch.fnmatchcase(i, e.pattern) for i in every))


def parse_expectations(text: str, source: str = "") -> Expectations:
    """The entries of an expectations file's text; :class:`ExpectationsError` when it is malformed."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return Expectations(_json_entries(stripped, source), source)
    entries: list[Entry] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pattern, *rest = line.split(None, 1)
        reason = rest[0] if rest else ""
        if not reason.strip():
            raise ExpectationsError(f"{source}:{number}: an entry is `ID-or-glob reason`; {pattern!r} has no reason")
        entries.append(Entry(pattern, reason.strip()))
    return Expectations(tuple(entries), source)


def _json_entries(text: str, source: str) -> tuple[Entry, ...]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as bad:
        raise ExpectationsError(f"{source}: not JSON: {bad}") from None
    if isinstance(document, dict) and all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                          for k, v in document.items()):
        return tuple(Entry(k, v) for k, v in document.items())
    if isinstance(document, list) and all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                          and isinstance(e.get("reason"), str) and e["reason"].strip() for e in document):
        return tuple(Entry(e["id"], e["reason"]) for e in document)
    raise ExpectationsError(f"{source}: expected {{\"ID-or-glob\": \"reason\"}} or [{{\"id\", \"reason\"}}], "
                            "each with a non-empty reason")


def load_expectations(path: str | Path) -> Expectations:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as failed:
        raise ExpectationsError(f"cannot read the expectations file {path}: {failed}") from None
    return parse_expectations(text, str(path))
