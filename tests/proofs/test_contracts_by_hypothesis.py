"""The PEP 316 contracts CrossHair cannot analyse (docs/proofs.md rows marked
``error``: JSON-typed arguments), checked by Hypothesis instead.

Each contract is read from the function's docstring (``sessionspec.spec_render.contracts_of``,
the same text proofs/run gives CrossHair) and evaluated as CrossHair would:
``pre:`` filters the drawn inputs, every ``post:`` must hold, with the
arguments, ``__return__`` and the module's globals in scope."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from sessionspec.model.compaction import CompactConfig, check_summary_smaller, frame_summary
from sessionspec.model.compaction.policy import compact_spec
from sessionspec.model.jsonval import ABSENT, freeze
from sessionspec.model.log import Dialect
from sessionspec.model.meter import estimate_header, estimate_message, price
from sessionspec.model.prefix import Contributor, Idiom, compose
from sessionspec.model.prune import PruneConfig, content_chars, prune_content
from sessionspec.spec.header_strategies import headers, prefix_messages
from sessionspec.spec.json_strategies import json_values, texts
from sessionspec.spec_render import contracts_of


def _holds(function: Callable[..., Any], **arguments: Any) -> None:
    """Evaluate ``function``'s docstring contract on one call."""
    scope = dict(vars(inspect.getmodule(function)))
    scope.update(arguments)
    conditions = contracts_of(function)
    for condition in conditions:
        kind, expression = condition.split(": ", 1)
        if kind == "pre":
            assume(eval(expression, scope))  # noqa: S307 - the contract text of our own docstring
    scope["__return__"] = function(**arguments)
    for condition in conditions:
        kind, expression = condition.split(": ", 1)
        if kind == "post":
            assert eval(expression, scope), f"{function.__qualname__}: {condition} fails for {arguments!r}"  # noqa: S307


_TEXT_BLOCKS = texts(40).map(lambda t: {"type": "text", "text": t})
_BLOCKS = st.lists(st.one_of(json_values(6), _TEXT_BLOCKS.map(freeze)), max_size=5).map(tuple)


@given(st.one_of(json_values(8), _BLOCKS))
def test_MTR_2_price_contract(blocks: Any) -> None:
    _holds(price, blocks=blocks)


@given(_BLOCKS)
def test_CMP_20_frame_summary_contract(summary: Any) -> None:
    _holds(frame_summary, summary=summary)


@given(_BLOCKS, st.integers(0, 400))
def test_CMP_21_check_summary_smaller_contract(framed: Any, shadowed: int) -> None:
    _holds(check_summary_smaller, framed=framed, shadowed_tokens=shadowed)


@given(st.one_of(json_values(8), _BLOCKS), st.integers(1, 60), st.integers(0, 20), st.integers(0, 20))
def test_PRN_3_prune_content_contract(blocks: Any, threshold: int, head: int, tail: int) -> None:
    config = PruneConfig(threshold_chars=threshold + head + tail + 40, head_chars=head, tail_chars=tail)
    _holds(prune_content, blocks=blocks, config=config)


@given(st.one_of(json_values(8), _BLOCKS))
def test_PRN_2_content_chars_contract(blocks: Any) -> None:
    _holds(content_chars, blocks=blocks)


@given(st.one_of(json_values(6), _BLOCKS).map(lambda content: freeze({"role": "user", "content": content})))
def test_MTR_3_estimate_message_contract(message: Any) -> None:
    _holds(estimate_message, message=message)


@given(st.one_of(st.just(ABSENT), headers()), st.sampled_from(list(Dialect)))
def test_MTR_4_estimate_header_contract(header: Any, dialect: Dialect) -> None:
    _holds(estimate_header, header=header, dialect=dialect)


@given(st.one_of(st.none(), st.integers(-5, 10**7), st.floats(allow_nan=True), st.booleans()),
       st.floats(min_value=0, max_value=1, exclude_min=True), st.one_of(st.none(), st.floats(0.01, 0.99)),
       st.one_of(st.none(), st.integers(0, 10**6)))
def test_CMP_4_compact_spec_contract(window: Any, ratio: float, retain_ratio: float | None, retain_tokens: int | None) -> None:
    """The floors of CMP-4 on any window and any checked ratio (issue 43: rounding decides at the boundary)."""
    assume(retain_ratio is None or retain_tokens is None)
    _holds(compact_spec, policy=CompactConfig(threshold_ratio=ratio, retain_ratio=retain_ratio, retain_tokens=retain_tokens),
           context_window=window, target="p/m")


_CONTRIBUTORS = st.lists(
    st.builds(Contributor, idiom=st.sampled_from(list(Idiom)), content=st.lists(prefix_messages(), max_size=3).map(tuple),
              throws=st.one_of(st.none(), st.just("boom")), scope=st.one_of(st.none(), st.sampled_from(["a", "b"]))),
    max_size=4).map(tuple)


@given(_CONTRIBUTORS, st.one_of(st.none(), st.sampled_from(["a", "b"])))
def test_PFX_3_compose_contract(contributors: Any, agent_id: str | None) -> None:
    _holds(compose, contributors=contributors, agent_id=agent_id)


def _planted(n: int) -> int:
    """A contract the body breaks, to show the evaluator can fail.

    post: __return__ > n
    """
    return n


def test_the_contract_evaluator_refutes_a_planted_bug() -> None:
    import pytest

    with pytest.raises(AssertionError, match="post: __return__ > n"):
        _holds(_planted, n=3)
