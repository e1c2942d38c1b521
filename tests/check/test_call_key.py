"""The call key the provenance and repair audits index calls by (sessionspec.model.provenance.call_key)
equates two ids exactly when their JS texts are equal, as the harness's keys ``JS(id)`` do."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.jsonval import Json, freeze, js_stringify
from sessionspec.model.provenance import call_key

# Ids that collide or nearly: a string spelling a number or a JS text, lone surrogates, escapes.
_TRICKY = ["1", '"1"', "null", "true", "[]", "\ud800", "\\ud800", '"\\ud800"', "1.0", ""]
IDS = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False, width=16)
    | st.sampled_from(_TRICKY) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "x"]), inner, max_size=2),
    max_leaves=6,
)


@given(IDS, IDS)
def test_two_ids_share_a_key_exactly_when_their_js_texts_are_equal(a: object, b: object) -> None:
    x, y = freeze(a), freeze(b)
    assert (call_key(x) == call_key(y)) == (js_stringify(x) == js_stringify(y))


def test_a_number_and_the_string_of_its_text_are_two_calls() -> None:
    one: Json = 1
    assert call_key(one) != call_key("1") and call_key(1.0) == call_key(one)
