"""``model.jsonval.get`` for the checker's hot paths (issue 26).

The definition: ``o[key]`` for an object that has the key, else ``ABSENT`` (total).  The audits
call it about a dozen times per event; here it is one C ``dict.get`` behind a type test
(``JsonObject`` is final, so ``type(o) is JsonObject`` is ``isinstance``), which a compiled build
of the fast layer calls natively instead of calling into the interpreted model.
``tests/fast/test_jsonget.py`` checks it against the definition.
"""

from __future__ import annotations

from model.jsonval import Absent, Json, JsonObject
from sessionspec.fast.constants import ABSENT


def get(o: Json | Absent, key: str) -> Json | Absent:
    """``model.jsonval.get(o, key)``."""
    if type(o) is JsonObject:
        return o.get(key, ABSENT)
    return ABSENT
