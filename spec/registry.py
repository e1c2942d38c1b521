"""The rule registry: rule ID -> normative sentence -> implementing functions.

One source of truth per side: the sentences are read from the rule book that
ships with the package (``spec/rulebook.md``, a copy of the project's normative
RULES.md), the links to code from ``@implements`` in ``model/``.  Properties
(``P-...``) and quirks (``Q-...``) are read from the same book.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from hashlib import sha256
from pathlib import Path
from typing import Final, final

from sessionspec.model.rules import DECIDERS, IMPLEMENTATIONS
from sessionspec.spec.status import STATUS, OutOfScope

RULEBOOK: Final = Path(__file__).with_name("rulebook.md")


def _property_modules() -> tuple[str, ...]:
    from sessionspec import spec

    return tuple(sorted(f"sessionspec.spec.{info.name}" for info in pkgutil.iter_modules(spec.__path__) if info.name.endswith("_properties")))


# The modules whose ``@implements`` links the registry reads: every module of ``model/`` and every
# ``spec/*_properties.py`` (both found by walking the package, so a new module cannot be forgotten).
PROPERTY_MODULES: Final = _property_modules()

_RULE_START = re.compile(r"^\*\*([A-Z]+-\d+)\*\*\s*(.*)$")
_PROPERTY_ROW = re.compile(r"^\|\s*(P-[A-Z]+-\d+)([^|]*)\|([^|]*)\|([^|]*)\|")
_QUIRK = re.compile(r"^- \*\*(QF?-\d+) ([^*]+)\*\*\s*(.*)$")
# Quirks the project found itself (QF-…), kept apart from the copied book.
QUIRKS_FOUND: Final = Path(__file__).with_name("quirks_found.md")


@final
@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    area: str
    text: str
    implemented_by: tuple[str, ...]

    @property
    def lead(self) -> str:
        """The rule's opening paragraph (before its first blank line, bullet, table or example), on one line."""
        head: list[str] = []
        for line in self.text.splitlines():
            if not line.strip() or line.startswith(("- ", "```", "|")):
                break
            head.append(line.strip())
        return " ".join(head)

    @property
    def sentence(self) -> str:
        """The normative first sentence of the rule."""
        match = re.match(r"(.+?\.)(\s|$)", self.lead, re.DOTALL)
        return match.group(1) if match else self.lead


@final
@dataclass(frozen=True, slots=True)
class Property:
    id: str
    name: str
    statement: str
    checks: tuple[str, ...]
    checkable_on_real_logs: bool


@final
@dataclass(frozen=True, slots=True)
class Quirk:
    id: str
    title: str
    text: str


def load_definitions() -> None:
    """Import every module of ``model/`` and the property modules, so ``@implements`` has registered every link.

    Without this the registry would depend on what happened to be imported before, and
    ``rules()`` (and everything rendered from it) would not be a function of the tree.
    """
    from sessionspec import model

    names = sorted(info.name for info in pkgutil.walk_packages(model.__path__, "sessionspec.model."))
    for name in (*names, *PROPERTY_MODULES):
        importlib.import_module(name)


def deciders() -> dict[str, list[Callable[..., object]]]:
    """Every function that decides a rule in a log: the ``@decides`` definitions of ``model/`` (all loaded),
    which ``check`` runs (issue 44: the checker is their driver; no rule is decided by checker code)."""
    load_definitions()
    return {rule_id: list(functions) for rule_id, functions in DECIDERS.items()}


def _qualname(function: object) -> str:
    module = getattr(function, "__module__", "?")
    name = getattr(function, "__qualname__", repr(function))
    return f"{module}.{name}"


def rule_blocks(book: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each rule's whole block of the book: ``(ID, lines)``, tables, bullets and fenced examples included.

    A block starts at a line ``**ID** …`` and runs to the next rule, heading or ``---`` outside a
    fence (blank lines inside a rule belong to it: LOG-9's type table follows one); the ``**ID**``
    marker itself and the block's trailing blank lines are dropped.
    """
    current: tuple[str, list[str]] | None = None
    fenced = False
    for line in book.splitlines():
        start = None if fenced else _RULE_START.match(line)
        if start or (not fenced and _ends_block(line)):
            if current is not None:
                yield current[0], _trimmed(current[1])
            current = (start.group(1), [start.group(2)]) if start else None
        elif current is not None:
            current[1].append(line)
            if line.startswith("```"):
                fenced = not fenced
    if current is not None:
        yield current[0], _trimmed(current[1])


def _ends_block(line: str) -> bool:
    return line.startswith("#") or line.startswith("---")


def _trimmed(lines: list[str]) -> tuple[str, ...]:
    while lines and not lines[-1].strip():
        lines.pop()
    return tuple(lines)


RULE_SECTIONS: Final = (re.compile(r"^## 1\. "), re.compile(r"^## 16\. "))


def unclaimed_lines(book: str) -> tuple[tuple[int, str], ...]:
    """The non-blank lines of the rule sections (§1–§15) that no rule block holds: ``(line number, text)``.

    A heading, and the paragraph right under a heading before its first rule (a section's
    introduction), are claimed by the heading; every other line must be some rule's text, so
    nothing normative is lost between the book and what ``rules()`` renders.
    """
    lines = book.splitlines()
    first = next((i for i, line in enumerate(lines) if RULE_SECTIONS[0].match(line)), len(lines))
    last = next((i for i, line in enumerate(lines) if RULE_SECTIONS[1].match(line)), len(lines))
    unclaimed: list[tuple[int, str]] = []
    # state: "rule" (inside a rule block), "heading" (after a heading, before its introduction),
    # "intro" (inside the one introductory paragraph), "none" (after the introduction or a ---).
    state, fenced = "none", False
    for number, line in enumerate(lines[first:last], start=first + 1):
        if fenced:
            fenced = not line.startswith("```")
        elif _RULE_START.match(line):
            state = "rule"
        elif _ends_block(line):
            state = "heading" if line.startswith("#") else "none"
        elif state == "rule":
            fenced = line.startswith("```")
        elif not line.strip():
            state = "none" if state == "intro" else state
        elif state in ("heading", "intro"):
            state = "intro"
        else:
            unclaimed.append((number, line))
    return tuple(unclaimed)


@cache
def rules() -> tuple[Rule, ...]:
    """Every rule of the book, in book order, with its whole text and its implementing functions."""
    load_definitions()
    found: list[Rule] = []
    for rule_id, lines in rule_blocks(RULEBOOK.read_text(encoding="utf-8")):
        impl = tuple(sorted({_qualname(f) for f in IMPLEMENTATIONS.get(rule_id, [])}))
        found.append(Rule(rule_id, rule_id.split("-")[0], "\n".join(lines), impl))
    return tuple(found)


@cache
def properties() -> tuple[Property, ...]:
    found: list[Property] = []
    for line in RULEBOOK.read_text(encoding="utf-8").splitlines():
        row = _PROPERTY_ROW.match(line)
        if row:
            checks = tuple(_expand_ids(row.group(4)))
            found.append(Property(row.group(1), row.group(2).strip(), row.group(3).strip(), checks, "◆" in row.group(2)))
    return tuple(found)


@cache
def quirks() -> tuple[Quirk, ...]:
    found: list[Quirk] = []
    text = RULEBOOK.read_text(encoding="utf-8") + "\n" + QUIRKS_FOUND.read_text(encoding="utf-8")
    for line in text.splitlines():
        q = _QUIRK.match(line)
        if q:
            found.append(Quirk(q.group(1), q.group(2).rstrip(". "), q.group(3)))
    return tuple(found)


def out_of_scope() -> dict[str, str]:
    """Rule ID -> why the model cannot decide it (``spec.status``: ``OutOfScope``)."""
    return {rid: status.model.reason for rid, status in STATUS.items() if isinstance(status.model, OutOfScope)}


def _expand_ids(text: str) -> list[str]:
    """'LEG-1..6, HDR-8' -> LEG-1 .. LEG-6, HDR-8."""
    ids: list[str] = []
    for area, first, last in re.findall(r"([A-Z]+)-(\d+)(?:\.\.(\d+))?", text):
        end = int(last) if last else int(first)
        ids.extend(f"{area}-{n}" for n in range(int(first), end + 1))
    return ids


def rule(rule_id: str) -> Rule:
    for r in rules():
        if r.id == rule_id:
            return r
    raise KeyError(rule_id)


def rule_ids() -> frozenset[str]:
    return frozenset(r.id for r in rules())


def registry_digest() -> str:
    """A digest of the registry (IDs and texts), stamped into generated artefacts."""
    h = sha256()
    for r in rules():
        h.update(f"{r.id}\x00{r.text}\x00".encode())
    return h.hexdigest()[:16]
