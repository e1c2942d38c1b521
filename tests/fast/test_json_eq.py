"""sessionspec.fast.json_eq.same_json is model.jsonval.json_eq (JSONEQ: equal JS text)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.json_eq import same_json
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject, freeze, json_eq, obj
from sessionspec.spec.json_strategies import json_values

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


# Braces, the characters JSON escapes, non-ASCII and non-BMP text.
_BRACED = st.text(alphabet=st.sampled_from("{}ab \"\\\n\té🙂"), max_size=10) | st.sampled_from(
    ["{{cwd}}", "x {{tools}} y", "{{", "}}", "{{a", "a}}", "{{\"}}", "{{\\n}}", "{{é}}", "{{}}", "{{{x}}}", "{ {x} }"])


def _braced_values() -> st.SearchStrategy[Json]:
    scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | _BRACED
    return st.recursive(scalars, lambda children: st.lists(children, max_size=4).map(tuple)
                        | st.lists(st.tuples(_BRACED, children), max_size=4, unique_by=lambda kv: kv[0]).map(obj), max_leaves=12)


def _variant(value: Json, rng: random.Random) -> Json:
    """``value`` rebuilt (not the same objects), sometimes changed where JS text tells it: a key order,
    an int for a float or a bool, a string."""
    if isinstance(value, tuple):
        return tuple(_variant(x, rng) for x in value)
    if isinstance(value, JsonObject):
        items = [(k, _variant(x, rng)) for k, x in value.items()]
        if len(items) > 1 and rng.random() < 0.1:
            items.reverse()
        return obj(items)
    roll = rng.random()
    if roll < 0.05 and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if isinstance(value, int) else int(value)
    if roll < 0.1 and isinstance(value, bool):
        return int(value)
    if roll < 0.15 and isinstance(value, str):
        return value + "x"
    return "".join(value) if isinstance(value, str) else value


@given(json_values() | _braced_values(), st.integers(0, 2**32), st.booleans())
def test_structural_equality_is_jseq(value: Json, seed: int, absent: bool) -> None:
    other: Json | Absent = ABSENT if absent else _variant(value, random.Random(seed))
    assert same_json(value, other) == json_eq(value, other)
    assert same_json(other, value) == json_eq(other, value)


@given(json_values(), json_values())
def test_unrelated_values_are_jseq_as_defined(a: Json, b: Json) -> None:
    assert same_json(a, b) == json_eq(a, b)
