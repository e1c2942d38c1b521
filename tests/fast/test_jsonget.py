"""sessionspec.fast.jsonget: get is model.jsonval.get, json_int model.log.json_int, is_placeholder
model.placeholder.is_placeholder; keys_are and keys_in compare the key tuple."""

from __future__ import annotations

from enum import IntEnum

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.fast.jsonget import get, is_placeholder, json_int, keys_are, keys_in
from sessionspec.model import jsonval, log, placeholder
from sessionspec.model.jsonval import ABSENT, Json, freeze

values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", ""]), inner, max_size=3),
    max_leaves=6,
).map(freeze)


@given(values | st.just(ABSENT), st.sampled_from(["a", "b", "", "c"]))
def test_get_is_the_models_get(value: Json, key: str) -> None:
    assert repr(get(value, key)) == repr(jsonval.get(value, key))
    assert get(value, key) is jsonval.get(value, key) or get(value, key) == jsonval.get(value, key)


def test_a_plain_dict_is_not_an_object() -> None:
    """Only the model's JsonObject is a JSON object: a plain dict (say a decoder's) is not read."""
    assert get({"a": 1}, "a") is ABSENT is jsonval.get({"a": 1}, "a")  # type: ignore[arg-type]


_KEY_TUPLES = st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=4, unique=True).map(tuple)


@given(st.dictionaries(st.sampled_from(["a", "b", "c", ""]), st.none(), max_size=4), _KEY_TUPLES, st.lists(_KEY_TUPLES, max_size=3))
def test_keys_are_and_keys_in_compare_the_key_tuple(o: dict[str, None], keys: tuple[str, ...], orders: list[tuple[str, ...]]) -> None:
    """The key order tests read the keys in place: the same answers as building ``tuple(o)``."""
    assert keys_are(o, keys) == (tuple(o) == keys)
    assert keys_are(o, tuple(o))
    assert keys_in(o, tuple(orders)) == (tuple(o) in orders)
    assert keys_in(o, (*orders, tuple(o)))


class _Small(IntEnum):
    ONE = 1


@given(values | st.just(ABSENT) | st.just(_Small.ONE) | st.floats(allow_nan=False) | st.booleans() | st.integers())
def test_json_int_is_the_models(value: object) -> None:
    fast, model = json_int(value), log.json_int(value)
    # The same value of the same type (so True is not 1); compiled, an int subclass comes back as a plain int
    # (mypyc's int return), which parsed JSON never holds.
    assert fast == model and (type(fast) is type(model) or (isinstance(model, IntEnum) and type(fast) is int))


# Strings near a token: braces anywhere, doubled or not, and text between them.
_NEAR_TOKENS = st.text(alphabet="{}ab ", max_size=8) | st.builds("{{{}}}".format, st.text(alphabet="{}a-", max_size=4))


@given(values | st.just(ABSENT) | _NEAR_TOKENS)
def test_is_placeholder_is_the_models(value: Json) -> None:
    assert is_placeholder(value) == placeholder.is_placeholder(value)


def test_the_tokens_of_the_rule_are_placeholders() -> None:
    """FMT-6's examples are tokens; text around one, or a brace inside, is not."""
    for token in ("{{system}}", "{{tools}}", "{{messagePrefix}}", "{{child-3}}", "{{}}"):
        assert is_placeholder(token) and placeholder.is_placeholder(token)
    for text in ("x{{system}}", "{{system}} ", "{{sys{tem}}", "{system}", "", None):
        assert not is_placeholder(text) and not placeholder.is_placeholder(text)
