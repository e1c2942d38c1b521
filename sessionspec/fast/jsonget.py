"""``model.jsonval.get``, ``model.log.json_int``, ``model.placeholder.is_placeholder`` and an object's
key order, for the checker's hot paths (issue 26).

The definition: ``o[key]`` for an object that has the key, else ``ABSENT`` (total).  The audits
call it about a dozen times per event; here it is one C ``dict.get`` behind a type test
(``JsonObject`` is final, so ``type(o) is JsonObject`` is ``isinstance``), which a compiled build
of the fast layer calls natively instead of calling into the interpreted model.
``tests/fast/test_jsonget.py`` checks it against the definition, and :func:`keys_are` and
:func:`keys_in` against the key tuple they compare without building.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any, Final

from sessionspec.fast.constants import ABSENT
from sessionspec.model.jsonval import Absent, Json, JsonObject
from sessionspec.model.placeholder import is_placeholder as placeholder_by_definition

# The class as a constant of this module (compiled, an imported name is a dictionary lookup at each read).
_OBJECT: Final = JsonObject


def get(o: Json | Absent, key: str) -> Json | Absent:
    """``model.jsonval.get(o, key)``."""
    if type(o) is _OBJECT:
        return o.get(key, ABSENT)
    return ABSENT


def json_int(v: object) -> int | None:
    """``model.log.json_int``: a JSON integer (a number without fraction; ``true``/``false`` are not), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def is_placeholder(value: Json | Absent) -> bool:
    """``model.placeholder.is_placeholder`` (FMT-6, a string that is one ``{{...}}`` token), asked of the
    definition only for a string that opens like one."""
    return isinstance(value, str) and value.startswith("{{") and placeholder_by_definition(value)


# An object's key order.  Compiled, tested in place without building the tuple of its keys (``tuple(o)``
# goes through the generic iterator and allocates: several times the cost of the comparison); interpreted,
# the tuple is built and compared in C, where the loop in place is a Python generator (about 7 times the
# cost: the key-order tests were 4 % of an interpreted check).  The build is this module's own: a
# compiled module is an extension module (``__file__``), a constant each branch below reads.
COMPILED: Final = __file__.endswith(tuple(EXTENSION_SUFFIXES))


def keys_are(o: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """``tuple(o) == keys``: exactly these keys, in this order."""
    if not COMPILED:
        return tuple(o) == keys
    if len(o) != len(keys):
        return False
    return all(key == keys[i] for i, key in enumerate(o))


def keys_in(o: dict[str, Any], orders: tuple[tuple[str, ...], ...]) -> bool:
    """``tuple(o) in orders``."""
    if not COMPILED:
        return tuple(o) in orders
    return any(keys_are(o, keys) for keys in orders)
