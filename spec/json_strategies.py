"""Hypothesis strategies for JSON values (``model.jsonval.Json``).

- :func:`json_values` — any value of the JSON domain: immutable, ordered, finite floats other than ``-0.0``;
- :func:`json_scalars` — its leaves;
- :func:`texts` — short strings (ASCII and some non-BMP text).
"""

from __future__ import annotations

from functools import cache
from typing import Final

from hypothesis import strategies as st

from sessionspec.model.jsonval import Json, obj

_KEYS: Final = st.sampled_from(["a", "b", "type", "text", "k", "é", "𝄞", ""])


@cache
def texts(max_size: int = 8) -> st.SearchStrategy[str]:
    """Short text: mostly ASCII letters, sometimes non-ASCII (incl. non-BMP)."""
    return st.text(alphabet=st.sampled_from("abcxyz 🙂é\n\"\\"), max_size=max_size)


def _finite_floats() -> st.SearchStrategy[Json]:
    # The JSON domain has no -0.0, NaN or infinities (LOG-4); integral floats
    # are ints in JS, and the parser reads them as ints, so avoid them too.
    return st.floats(allow_nan=False, allow_infinity=False, width=64).filter(
        lambda x: not x.is_integer()
    )


def json_scalars() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
        _finite_floats(),
        texts(),
    )


@cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Json]:
    """Any JSON-domain value: None, bool, int, finite non-integral float, str,
    tuples and JsonObjects (unique keys, insertion order kept)."""
    return st.recursive(
        json_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=4).map(tuple),
            st.lists(st.tuples(_KEYS, children), max_size=4, unique_by=lambda kv: kv[0]).map(obj),
        ),
        max_leaves=max_leaves,
    )
