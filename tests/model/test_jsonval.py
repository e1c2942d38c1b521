"""The JSON domain (RULES §0.4, §0.6, LOG-4) of model.jsonval."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.jsonval import (
    ABSENT,
    Json,
    JsonObject,
    JsonParseFailure,
    deep_eq,
    freeze,
    get,
    js_number,
    js_stringify,
    json_eq,
    number_from_float_text,
    obj,
    parse_json,
    thaw,
    u16,
)
from sessionspec.spec.json_strategies import json_values


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (123.456, "123.456"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (100, "100"),
        (0, "0"),
    ],
)
def test_JS_number_formatting_matches_javascript(value: float, text: str) -> None:
    assert js_number(value) == text


def test_JS_stringify_is_compact_ordered_and_literal() -> None:
    value = obj((("b", 1), ("a", ("é", "𝄞", None, True, False))))
    assert js_stringify(value) == '{"b":1,"a":["é","𝄞",null,true,false]}'


def test_JS_stringify_escapes_lone_surrogates_but_not_line_separators() -> None:
    assert js_stringify("\ud800x") == '"\\ud800x"'
    assert js_stringify("\u2028\u2029") == '"\u2028\u2029"'
    assert js_stringify('"\\\n\t\x01') == '"\\"\\\\\\n\\t\\u0001"'


def test_JSONEQ_is_key_order_sensitive_and_DEEPEQ_is_not() -> None:
    a, b = obj((("x", 1), ("y", 2))), obj((("y", 2), ("x", 1)))
    assert not json_eq(a, b) and deep_eq(a, b)
    assert json_eq(a, obj((("x", 1), ("y", 2))))


def test_DEEPEQ_distinguishes_types_key_sets_and_array_order() -> None:
    assert not deep_eq(True, 1) and not deep_eq(0, False) and not deep_eq(None, 0)
    assert not deep_eq(obj((("x", 1),)), obj((("x", 1), ("y", 1))))
    assert not deep_eq((1, 2), (2, 1))
    assert not deep_eq("1", 1)


def test_JSONEQ_absent_equals_only_absent() -> None:
    assert json_eq(ABSENT, ABSENT) and not json_eq(ABSENT, None)


def test_U16_counts_utf16_code_units() -> None:
    assert u16("abc") == 3 and u16("é") == 1 and u16("𝄞") == 2 and u16("a🙂b") == 4


def test_LOG_4_json_object_is_immutable_and_hashable() -> None:
    o = obj((("a", 1),))
    mutations: tuple[Callable[[], object], ...] = (
        lambda: o.__setitem__("a", 2),
        lambda: o.__delitem__("a"),
        lambda: o.update({"b": 1}),
        lambda: o.pop("a"),
        lambda: o.clear(),
        lambda: o.setdefault("c", 1),
        lambda: o.popitem(),
    )
    for mutate in mutations:
        with pytest.raises(TypeError):
            mutate()
    assert o == {"a": 1} and hash(o) == hash(obj((("a", 1),)))


def test_freeze_thaw_and_get() -> None:
    plain = {"a": [1, {"b": None}], "c": "x"}
    frozen = freeze(plain)
    assert isinstance(frozen, JsonObject) and frozen["a"] == (1, obj((("b", None),)))
    assert thaw(frozen) == plain
    assert get(frozen, "c") == "x" and get(frozen, "zz") is ABSENT and get(None, "a") is ABSENT
    with pytest.raises(TypeError):
        freeze({1, 2})


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("-0", "LOG-4"),
        ("[-0.0]", "LOG-4"),
        ("-0e5", "LOG-4"),
        ("NaN", "LOG-4"),
        ("-Infinity", "LOG-4"),
        ("1e999", "LOG-4"),
        ("9007199254740992", "LOG-4"),
        ('{"a":1,"a":2}', "FMT-2"),
        ("{", "FMT-1"),
        ("", "FMT-1"),
    ],
)
def test_LOG_4_parse_json_rejects_non_lossless_text(text: str, rule: str) -> None:
    result = parse_json(text)
    assert isinstance(result, JsonParseFailure) and result.rule == rule


def test_LOG_4_a_textual_minus_zero_is_refused_with_its_reason() -> None:
    """LOG-4 rejects ``-0``; the finding says which value and why (the checker prints it)."""
    for text in ("-0", "[-0.0]", "-0e5"):
        result = parse_json(text)
        assert isinstance(result, JsonParseFailure) and result.rule == "LOG-4"
        assert result.reason == "textual -0 is not lossless JSON (JS keeps -0, the harness rejects it)"


def test_LOG_4_parse_json_is_total_on_deep_nesting() -> None:
    result = parse_json("[" * 100_000 + "]" * 100_000)
    assert isinstance(result, (JsonParseFailure, tuple))


def test_LOG_4_integral_floats_are_js_integers() -> None:
    assert parse_json("1.0") == 1 and isinstance(parse_json("1.0"), int)
    assert parse_json("1e2") == 100 and parse_json("0.5") == 0.5


@given(json_values())
def test_LOG_4_text_round_trip_is_exact(value: Json) -> None:
    text = js_stringify(value)
    parsed = parse_json(text)
    assert not isinstance(parsed, JsonParseFailure)
    assert js_stringify(parsed) == text
    assert deep_eq(parsed, value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_JS_number_round_trips_through_python_json(x: float) -> None:
    if x == 0:
        return
    assert float(json.loads(js_number(x))) == x


# ---------------------------------------------------------------- JS number text (as node prints it), immutability


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


def test_js_number_of_zero_is_0() -> None:
    """JS: String(0) and String(-0) are "0"."""
    assert js_number(0) == "0" and js_number(0.0) == "0" and js_number(-0.0) == "0"


def test_LOG_4_an_integral_float_text_up_to_2_53_minus_1_reads_as_an_integer() -> None:
    """JS has one number type: 9007199254740991.0 is the largest safe integer, read as an integer."""
    value = number_from_float_text("9007199254740991.0")
    assert value == 2**53 - 1 and isinstance(value, int)
    assert isinstance(number_from_float_text("9007199254740992.0"), float)


def test_a_json_object_refuses_assignment_saying_it_is_immutable() -> None:
    with pytest.raises(TypeError, match="^JsonObject is immutable$"):
        freeze({"a": 1})["a"] = 2  # type: ignore[index]
