"""Which rules a ``check`` run reports: ``--select`` and ``--ignore`` (and their ``[tool.sessionspec]`` keys).

A selector is ``ALL``, a rule area (``SURF``, ``LOG``, ``Q`` for the book's quirks, ``QF`` for the project's)
or one ID (``SURF-3``, ``Q-17``), in any case.  As in ruff, the most specific selector that names a finding's
rule decides: ``--select SURF --ignore SURF-3`` reports every SURF rule but SURF-3, ``--select SURF-3 --ignore
SURF`` reports SURF-3 alone; with no ``--select`` every rule is selected.  A finding left out is not shown and
does not count for the verdict: the file is judged on the findings shown (:meth:`FileReport.selected`), and its
report says how many were left out, so a run can never look cleaner than it is without saying so.  Only findings
of the log (kind ``invalid``) are selected: a ``limit`` or ``bug`` finding says what sessionspec could not decide,
and stays whatever the selectors say (an ignored ``--max-events`` limit would call a log valid that was never read
to its end).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, final

from sessionspec.check.pickling import reduce_by_fields

ALL: Final = "ALL"


class SelectorError(ValueError):
    """A selector that names no rule, area or quirk of the registry."""


def area_of(rule: str) -> str:
    """A rule ID's area: its letters (``SURF`` of ``SURF-3``, ``QF`` of ``QF-14``)."""
    return rule.rsplit("-", 1)[0]


@cache
def known_selectors() -> frozenset[str]:
    """Every rule and quirk ID of the registry, their areas, and ``ALL``."""
    from sessionspec.spec.registry import quirks, rules

    ids = {r.id for r in rules()} | {q.id for q in quirks()}
    return frozenset(ids | {area_of(i) for i in ids} | {ALL})


def parse_selectors(words: Iterable[str], option: str) -> tuple[str, ...]:
    """Selectors from option values or config entries (each may be a comma-separated list), upper-cased
    and checked against the registry; :class:`SelectorError` names an unknown one and the areas."""
    out: list[str] = []
    for word in words:
        for part in word.split(","):
            selector = part.strip().upper()
            if not selector:
                continue
            if selector not in known_selectors():
                areas = sorted(s for s in known_selectors() if "-" not in s and s != ALL)
                raise SelectorError(f"{option}: {part.strip()!r} names no rule, area or quirk "
                                    f"(an ID such as SURF-3, an area: {', '.join(areas)}, or ALL; `sessionspec rules` lists them)")
            out.append(selector)
    return tuple(out)


def _specificity(selector: str, rule: str) -> int:
    """How closely ``selector`` names ``rule``: 2 the ID itself, 1 its area, 0 ALL, -1 not at all."""
    if selector == rule:
        return 2
    if selector == area_of(rule):
        return 1
    return 0 if selector == ALL else -1


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """The rules a run reports: ``select`` (empty: all) less ``ignore``, the most specific selector deciding."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.ignore and (not self.select or ALL in self.select)

    def keeps(self, rule: str) -> bool:
        chosen = _best(self.select, rule) if self.select else 0  # no --select: as ALL
        dropped = _best(self.ignore, rule)
        return chosen >= 0 and chosen > dropped  # a tie: ignored, as in ruff

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_by_fields(self)  # it crosses processes: sessionspec/check/pickling.py


def _best(selectors: Sequence[str], rule: str) -> int:
    return max((_specificity(s, rule) for s in selectors), default=-1)
