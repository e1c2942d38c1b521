"""sessionspec.fast.json_eq.same_json is model.jsonval.json_eq (JSONEQ: equal JS text)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from model.jsonval import ABSENT, Json, freeze, json_eq
from sessionspec.fast.json_eq import same_json

NUMBERS: list[Json] = [0, 1, -1, 0.0, -0.0, 1.0, 1.5, 1e21, 10**21, 2**53, float(2**53), 5e-324, True, False, None, "1", "true"]
numbers = st.integers(-3, 3) | st.sampled_from(NUMBERS)
values = st.recursive(
    st.none() | numbers | st.text(max_size=3) | st.sampled_from(["\ud800", "é", "1", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8,
).map(freeze)


@given(values, values)
def test_same_json_is_jsoneq(a: Json, b: Json) -> None:
    assert same_json(a, b) == json_eq(a, b)


def test_every_pair_of_scalars_that_python_may_confuse() -> None:
    """1 == 1.0 == True in Python, 1e21 == 10**21: JS text says which are one value."""
    for a in NUMBERS:
        for b in NUMBERS:
            assert same_json(a, b) == json_eq(a, b), (a, b)


@given(values)
def test_a_value_and_its_copy_or_its_reordered_copy(a: Json) -> None:
    """Equal values, and the same objects with their keys in another order (JSONEQ tells them apart)."""
    copy = freeze(_thawed(a))
    reordered = freeze(_thawed(a, reverse=True))
    assert same_json(a, copy) == json_eq(a, copy) is True
    assert same_json(a, reordered) == json_eq(a, reordered)
    assert same_json(a, ABSENT) == json_eq(a, ABSENT) is False
    assert same_json(ABSENT, ABSENT) is True


def _thawed(v: object, reverse: bool = False) -> object:
    if isinstance(v, dict):
        items = list(v.items())
        return {k: _thawed(x, reverse) for k, x in (reversed(items) if reverse else items)}
    if isinstance(v, tuple):
        return [_thawed(x, reverse) for x in v]
    return v
