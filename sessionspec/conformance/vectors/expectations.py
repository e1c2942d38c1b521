"""``--expect FILE``: the vectors an implementation is known to fail, each with a reason (issue 27, part 2).

As a test262 runner's expectations file: a failure listed here is *expected* (``xfail``), and an expected
failure that passes is reported (``xpass``) so the file shrinks as the implementation grows.  Two
spellings, told apart by the first character:

- text: one entry per line, ``ID-or-glob [@SIGNATURE] reason`` (the reason is the rest of the line; ``#``
  starts a comment line; globs are ``fnmatch``'s: ``check/rule/*``);
- JSON: ``{"ID-or-glob": "reason", …}`` or ``[{"id": "ID-or-glob", "reason": "…", "signature"?: "…"}, …]``.

An entry may pin *how* the failure fails (issue 45, part 3): its signature (diff.signature: the operation
and the first differing path, ``send/requests.messages``; a glob too).  A failure whose signature is
another is not the expected one: it fails.

For ``conform`` an entry names ``conform/SIGNATURE`` (a glob too): a divergence whose signature matches is
expected, recorded, and the search goes on.  The rule a divergence maps to is a best-effort guess, so an
entry of the old form ``conform/RULE`` is refused with a message saying what to write instead.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final


class ExpectationsError(Exception):
    """An expectations file that cannot be read (a usage error, exit 2)."""


@final
@dataclass(frozen=True, slots=True)
class Entry:
    pattern: str
    reason: str
    signature: str | None = None  # a glob over the failure's signature (diff.signature); None: any

    def pins(self, signature: str) -> bool:
        """Whether a failure with ``signature`` is the one this entry expects."""
        return self.signature is None or fnmatch.fnmatchcase(signature, self.signature)


@final
@dataclass(frozen=True, slots=True)
class Expectations:
    entries: tuple[Entry, ...] = ()
    source: str = ""

    def entry_for(self, ident: str) -> Entry | None:
        """The first entry matching ``ident``, else None (not expected to fail)."""
        for entry in self.entries:
            if fnmatch.fnmatchcase(ident, entry.pattern):
                return entry
        return None

    def reason_for(self, ident: str) -> str | None:
        """The reason of the first entry matching ``ident``, else None (not expected to fail)."""
        entry = self.entry_for(ident)
        return None if entry is None else entry.reason

    def conform_entries(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.pattern.startswith("conform/"))

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
        signature: str | None = None
        if reason.startswith("@"):
            signature, _, reason = reason[1:].partition(" ")
        if not reason.strip():
            raise ExpectationsError(f"{source}:{number}: an entry is `ID-or-glob [@SIGNATURE] reason`; {pattern!r} has no reason")
        entries.append(_checked(Entry(pattern, reason.strip(), signature or None), f"{source}:{number}"))
    return Expectations(tuple(entries), source)


_RULE_KEY: Final = re.compile(r"conform/[A-Z]+-[0-9*?]")


def _checked(entry: Entry, where: str) -> Entry:
    """An entry, unless it keys ``conform`` on a rule (the old form, no longer matched)."""
    if _RULE_KEY.match(entry.pattern):
        raise ExpectationsError(
            f"{where}: {entry.pattern!r}: conform entries key on how a divergence fails, not on the rule it is mapped "
            "to (a guess): write conform/SIGNATURE, the 'expect with:' line conform prints "
            "(e.g. conform/send/requests.messages; docs/conformance.md section 1.2)")
    return entry


def _json_entries(text: str, source: str) -> tuple[Entry, ...]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as bad:
        raise ExpectationsError(f"{source}: not JSON: {bad}") from None
    if isinstance(document, dict) and all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                          for k, v in document.items()):
        return tuple(_checked(Entry(k, v), source) for k, v in document.items())
    if isinstance(document, list) and all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                          and isinstance(e.get("reason"), str) and e["reason"].strip()
                                          and isinstance(e.get("signature", ""), str) for e in document):
        return tuple(_checked(Entry(e["id"], e["reason"], e.get("signature") or None), source) for e in document)
    raise ExpectationsError(f"{source}: expected {{\"ID-or-glob\": \"reason\"}} or [{{\"id\", \"reason\", \"signature\"?}}], "
                            "each with a non-empty reason")


def load_expectations(path: str | Path) -> Expectations:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as failed:
        raise ExpectationsError(f"cannot read the expectations file {path}: {failed}") from None
    return parse_expectations(text, str(path))
