"""The storage text of a generated record, fast: ``JS(v)`` (RULES §0.4, FMT-3) by the C encoder where it is provably the same.

:func:`model.jsonval.js_stringify` is the definition of ``JS(v)``: JS
``JSON.stringify`` (compact, insertion order, literal non-ASCII, ``\\uXXXX`` for
lone surrogates, JS number formatting).  It walks the value in Python, one call
per node, and was the largest cost of ``sessionspec generate`` after the simulator (about a
fifth of its CPU on a 100k-event log).  CPython's C JSON encoder, configured
compactly (``separators=(",", ":")``, ``ensure_ascii=False``), writes the same
text for every value except two kinds, and both are visible in its output:

* **floats**: Python writes ``repr(x)`` (``1.0``, ``1e-07``), JS writes
  ``Number::toString`` (``1``, ``1e-7``); a float token in the C text starts
  after ``:``, ``,``, ``[`` or at the start, and its digits are followed by
  ``.``, ``e+`` or ``e-`` (``repr`` writes no other form of a finite float): if
  such a token appears (or could, inside a string), the record is written by
  the definition instead;
* **lone surrogates**: the C encoder leaves them raw, JS escapes them; the text
  is then not ASCII and holds a code point in U+D800..U+DFFF: same fallback.

Strings, keys, integers, ``true``/``false``/``null`` and nesting are written
alike by both (``_js_string`` of the definition is itself ``json.dumps`` with
``ensure_ascii=False``).  Non-finite floats and values outside the JSON domain
make the C encoder raise, and fall back too, so the result equals
``js_stringify`` on every value of the JSON domain (string keys only;
tests/tools/test_generate_text.py states it as a property).
"""

from __future__ import annotations

import json
import re
from typing import Final

from sessionspec.model.jsonval import Json, js_stringify

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False, allow_nan=False)
# A number token with a fraction or an exponent: only floats are written so.
_FLOAT_TOKEN: Final = re.compile(r"[:,\[]-?[0-9]+(?:\.|e[+-])")
_FLOAT_AT_START: Final = re.compile(r"-?[0-9]+(?:\.|e[+-])")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def js_text(value: Json) -> str:
    """``JS(value)``, equal to :func:`model.jsonval.js_stringify` ``(value)``."""
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError):
        return js_stringify(value)
    if _may_hold_float(text) or (not text.isascii() and _SURROGATE.search(text) is not None):
        return js_stringify(value)
    return text


def _may_hold_float(text: str) -> bool:
    # Substring tests first: most lines have no "." or exponent at all, and
    # they cost a tenth of the regular expression (which cost as much as the encoding).
    if "." not in text and "e+" not in text and "e-" not in text:
        return False
    return _FLOAT_TOKEN.search(text) is not None or _FLOAT_AT_START.match(text) is not None
