"""JS number text that mutation testing found unpinned (issue 9, docs/quality.md).

JSONEQ compares ``JSON.stringify`` text, so the model must print numbers as
JS does (Number::toString, ECMA-262).  Every expected string below was
printed by ``node -e 'console.log(JSON.stringify(x))'`` for the same double.
"""

from __future__ import annotations

import pytest

from model.jsonval import js_number, js_stringify

JS_TEXT = [
    (1.5, "1.5"),
    (0.5, "0.5"),
    (0.000001, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123456789012345680000.0, "123456789012345680000"),
    (1e21, "1e+21"),
    (1.5e300, "1.5e+300"),
    (9007199254740992.0, "9007199254740992"),
    (100.0, "100"),
    (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-2.5e-8, "-2.5e-8"),
    (1e15, "1000000000000000"),
    (-0.000123, "-0.000123"),
]


@pytest.mark.parametrize("value,text", JS_TEXT)
def test_JSONEQ_numbers_print_as_js_does(value: float, text: str) -> None:
    assert js_number(value) == text
    assert js_stringify((value,)) == f"[{text}]"


def test_JSONEQ_booleans_print_as_js_literals() -> None:
    assert (js_number(True), js_number(False)) == ("true", "false")
    assert js_stringify((True, False)) == "[true,false]"
