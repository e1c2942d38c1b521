"""Decision outcomes no run can take, and outcomes no vector can reach, each with the reason (issue 43).

``UNREACHABLE``: outcome id -> why no input of the model takes it (the types, or an earlier check, rule it
out).  ``NOT_BY_VECTORS``: outcome id -> why the adapter protocol cannot reach it (the tests pin it).
tests/spec/test_decision_table.py checks that no recorded run takes an outcome declared unreachable.
"""

from __future__ import annotations

from typing import Final

UNREACHABLE: Final[dict[str, str]] = {}

NOT_BY_VECTORS: Final[dict[str, str]] = {}
