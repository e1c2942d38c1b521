"""The one place the compaction companion is selected by dialect.

:data:`model.compaction.companion.A55_COMPANION` lists the A55 definitions of every function a dialect modifies;
:data:`D08_COMPANION` is A55 with the overrides of :mod:`model.compaction.companion_d08`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import sessionspec.model.compaction.companion_d08 as d08
from sessionspec.model.compaction.companion import A55_COMPANION, BracketWatch, CompanionRules
from sessionspec.model.compaction.dialect import rules_of
from sessionspec.model.log import Dialect

D08_COMPANION: Final = replace(
    A55_COMPANION,
    take_turn_start=d08.take_turn_start,
    take_turn_end=d08.take_turn_end,
    check_owner=d08.check_owner,
    same_bracket=d08.same_bracket,
    checkpoint_placed=d08.checkpoint_placed,
    end_placed=d08.end_placed,
)


def companion_rules(dialect: Dialect) -> CompanionRules:
    """The dialect's companion: A55's, or D08's overlay (DIA-16, DIA-19)."""
    match dialect:
        case Dialect.A55:
            return A55_COMPANION
        case Dialect.D08:
            return D08_COMPANION


def bracket_watch(dialect: Dialect) -> BracketWatch:
    """A watch for a log of ``dialect``: its companion and its bracket event names (CMP-1, DIA-1)."""
    names = rules_of(dialect)
    return BracketWatch(rules=companion_rules(dialect),
                        types=(names.event_type("start"), names.event_type("summary"), names.event_type("end")))
