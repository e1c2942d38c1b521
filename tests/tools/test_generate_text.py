"""``sessionspec.generate_text.js_text`` is ``JS(v)`` (RULES §0.4): the same text as ``js_stringify``.

The generator writes every line with the C encoder where its text is provably
the definition's; these tests hold it to the definition on the JSON domain,
including the two kinds the C encoder writes differently (floats, lone
surrogates), which must fall back.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionspec.generate import generate_lines
from sessionspec.generate_text import js_text
from sessionspec.model.jsonval import Json, JsonObject, freeze, js_stringify

_CHARS = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))
_STRINGS = st.text(alphabet=_CHARS, max_size=6) | st.sampled_from(["1.5", ":1.", "e+", ",2e-3", "call-1"])
_SCALARS: st.SearchStrategy[Json] = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False), _STRINGS,
)
_VALUES: st.SearchStrategy[Json] = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.lists(st.tuples(_STRINGS, children), max_size=4, unique_by=lambda kv: kv[0]).map(JsonObject),
    ),
    max_leaves=16,
)


@given(_VALUES)
def test_js_text_is_js_stringify_on_the_json_domain(value: Json) -> None:
    assert js_text(value) == js_stringify(value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # JS Number::toString, not Python's repr (which the C encoder writes).
        (1.0, "1"),
        (JsonObject([("a", 1e21), ("b", 1e-7), ("c", 0.5)]), '{"a":1e+21,"b":1e-7,"c":0.5}'),
        ((-2.5, 3), "[-2.5,3]"),
        # JSON.stringify escapes a lone surrogate, in lower case.
        ("x\ud83dy", '"x\\ud83dy"'),
        (float("inf"), "null"),
        # A string that looks like a float token is written as it is.
        (JsonObject([("t", ":1.5,e+2")]), '{"t":":1.5,e+2"}'),
        (JsonObject([("é", "🙂\n")]), '{"é":"🙂\\n"}'),
    ],
)
def test_js_text_writes_what_json_stringify_writes(value: Json, text: str) -> None:
    assert js_text(value) == text == js_stringify(value)


def test_generated_lines_are_the_definitions_text() -> None:
    for line in generate_lines(events=600, seed=3, block_turns=5):
        assert js_stringify(freeze(json.loads(line))) == line
