"""HDR-3/HDR-4 strict equality and the JSON domain's edges (issue 43): each outcome of their decisions taken.

Expected values: HDR-3 "configEq compares provider, model, reasoningEffort, temperature and maxTokens by strict
equality (absent equals only absent), and stop"; strict equality is JS ``===`` (primitives by type and value, an
object or array is never ``===`` to another); HDR-4 "a header holding a placeholder is compared by JSON identity"
(Q-15, FMT-6); DEEPEQ "structural equality, key order ignored, types exact"; JSON.stringify writes a lone
surrogate as a lowercase ``\\uXXXX`` escape.
"""

from __future__ import annotations

import pytest

from sessionspec.model.header import EpochHeader, config_eq, hdr4_clauses, header_eq, header_holds_placeholder
from sessionspec.model.jsonval import ABSENT, Json, JsonObject, deep_eq, freeze, js_stringify, without


def _config(**values: object) -> JsonObject:
    return freeze({"provider": "p", "model": "m", **values})  # type: ignore[return-value]


@pytest.mark.parametrize(("a", "b", "equal"), [
    ({"stop": "END"}, {"stop": "END"}, True),     # a stop that is not a list: compared strictly
    ({"stop": "END"}, {"stop": ["END"]}, False),
    ({"stop": ["a", "b"]}, {"stop": ["a", "b"]}, True),
    ({"stop": ["a"]}, {"stop": ["a", "b"]}, False),
    ({"temperature": {}}, {"temperature": {}}, False),  # an object is never === another
    ({"temperature": []}, {"temperature": []}, False),
    ({"temperature": True}, {"temperature": True}, True),
    ({"temperature": True}, {"temperature": 1}, False),  # a boolean is not a number
    ({"reasoningEffort": None}, {"reasoningEffort": None}, True),  # null === null
    ({"reasoningEffort": None}, {"reasoningEffort": "low"}, False),
    ({"reasoningEffort": "low"}, {"reasoningEffort": None}, False),
    ({"maxTokens": "8"}, {"maxTokens": 8}, False),  # a string is not a number
    ({"maxTokens": 8}, {"maxTokens": 8.0}, True),    # one JS number
    ({"maxTokens": 8}, {}, False),                    # absent equals only absent
    ({"topP": 1}, {"topP": 2}, True),                 # other keys are not compared
])
def test_HDR_3_config_equality_is_strict_per_key(a: dict[str, object], b: dict[str, object], equal: bool) -> None:
    assert config_eq(_config(**a), _config(**b)) is equal
    assert config_eq(_config(**b), _config(**a)) is equal


def test_HDR_4_a_header_holding_a_placeholder_compares_by_json_identity() -> None:
    plain = EpochHeader(config=_config(), system="s")
    scrubbed = EpochHeader(config=_config(), system="{{redacted}}")
    assert header_holds_placeholder(scrubbed) and not header_holds_placeholder(ABSENT)
    assert header_eq(plain, scrubbed) is False and header_eq(scrubbed, scrubbed) is True
    assert header_eq(plain, EpochHeader(config=_config(), system="s", tools=freeze(["{{tools}}"]))) is False  # type: ignore[arg-type]


def test_HDR_4_tools_that_are_not_a_list_compare_by_json_identity() -> None:
    odd: Json = "not a list"
    a = EpochHeader(config=_config(), tools=odd)
    assert header_eq(a, EpochHeader(config=_config(), tools=odd)) is True
    assert header_eq(a, EpochHeader(config=_config(), tools=())) is False
    assert header_eq(EpochHeader(config=_config(), tools=()), a) is False


@pytest.mark.parametrize(("a", "b", "equal"), [
    ({"x": 1}, [1], False), ([1], {"x": 1}, False), (None, 0, False), (0, None, False),
    ("1", 1, False), (1, "1", False), ("a", "a", True), (True, 1, False), (1, 1.0, True),
    ({"a": 1, "b": [2]}, {"b": [2], "a": 1}, True),  # key order ignored
    ([1, 2], [2, 1], False),
])
def test_DEEPEQ_structural_types_exact(a: object, b: object, equal: bool) -> None:
    assert deep_eq(freeze(a), freeze(b)) is equal


def test_without_drops_one_key_and_keeps_the_order() -> None:
    o = freeze({"a": 1, "b": 2, "c": 3})
    assert list(without(o, "b").items()) == [("a", 1), ("c", 3)]  # type: ignore[arg-type]
    assert without(o, "z") == o  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "written"), [
    ("\udfff", '"\\udfff"'),       # the last low surrogate, alone: escaped
    ("\ud800", '"\\ud800"'),       # the first high surrogate, alone
    ("\ue000", '"\ue000"'),        # the first code point after the surrogates: as it is
    ("é\udfff", '"é\\udfff"'),
])
def test_FMT_2_a_lone_surrogate_is_written_as_javascript_writes_it(text: str, written: str) -> None:
    assert js_stringify(text) == written


@pytest.mark.parametrize(("number", "written"), [
    (1e21, "1e+21"), (1e20, "100000000000000000000"), (123e18, "123000000000000000000"), (1.5e-7, "1.5e-7"),
    (0.000001, "0.000001"), (-2.5, "-2.5"), (123.456, "123.456"), (5e-324, "5e-324"),
])
def test_FMT_2_numbers_are_written_as_javascript_writes_them(number: float, written: str) -> None:
    assert js_stringify(number) == written


# ---------------------------------------------------------------- HDR-4's clauses on the odd values a log can hold


_CONFIG = freeze({"provider": "p", "model": "m"})
_TOOLS = freeze([{"name": "read"}])
_ODD = [
    # (a's system, a's tools, b's system, b's tools, equal): HDR-4 "`system` strictly equal" (an object is never
    # `===`), "the tool lists (absent = []) of equal length and pairwise JSONEQ"; a tool value that is not a list is
    # compared by its JSON text (the fold keeps what the log holds)
    ("s", _TOOLS, "{{system}}", _TOOLS, False),  # only the second holds a placeholder: whole-header JSON
    ("s", 5, "s", 5, True),
    ("s", 5, "s", 6, False),
    ("s", _TOOLS, "s", 5, False),
    ("s", 5, "s", _TOOLS, False),
    (freeze({"t": 1}), _TOOLS, freeze({"t": 1}), _TOOLS, False),
    ("s", _TOOLS, freeze({"t": 1}), _TOOLS, False),
]


@pytest.mark.parametrize(("sa", "ta", "sb", "tb", "equal"), _ODD)
def test_HDR_4_clauses_and_header_eq_agree_on_odd_values(sa: object, ta: object, sb: object, tb: object, equal: bool) -> None:
    from sessionspec.model.header import EpochHeader, hdr4_clauses, header_eq

    a = EpochHeader(config=_CONFIG, system=sa, tools=ta)  # type: ignore[arg-type]
    b = EpochHeader(config=_CONFIG, system=sb, tools=tb)  # type: ignore[arg-type]
    assert all(hdr4_clauses(a, b)) is equal
    assert header_eq(a, b) is equal


TOOL_A = freeze({"name": "a", "parameters": {}})
TOOL_B = freeze({"name": "b", "parameters": {}})
PREFIX = freeze([{"role": "user", "content": "p"}])


def _header(config: Json = _CONFIG, **fields: Json) -> EpochHeader:
    """A header of ``_CONFIG`` (or ``config``) with the given system, tools and message_prefix (absent otherwise)."""
    return EpochHeader(config=config, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("system_a", "system_b", "held"), [
    ("s", "s", True),
    (ABSENT, ABSENT, True),  # "absent only to absent"
    ("s", ABSENT, False),
    (ABSENT, "s", False),
    ("s", "t", False),
])
def test_HDR_4_the_system_clause_is_strict_equality_and_absent_equals_only_absent(system_a: Json, system_b: Json, held: bool) -> None:
    """HDR-4's second clause, "``system`` strictly equal, absent only to absent": one header with a system and one
    without differ by that clause alone (config, prefix and tools equal)."""
    clauses = hdr4_clauses(_header(system=system_a, tools=(TOOL_A,)), _header(system=system_b, tools=(TOOL_A,)))
    assert clauses == (True, held, True, True, True)
    assert header_eq(_header(system=system_a), _header(system=system_b)) is held


@pytest.mark.parametrize(("a", "b", "clauses"), [
    # the prefix and the tools: absent = [] (HDR-4 "JSONEQ(prefix or [])", "the tool lists (absent = [])")
    (_header(message_prefix=()), _header(), (True, True, True, True, True)),
    (_header(tools=()), _header(), (True, True, True, True, True)),
    (_header(message_prefix=PREFIX), _header(), (True, True, False, True, True)),
    (_header(tools=(TOOL_A, TOOL_B)), _header(tools=(TOOL_A,)), (True, True, True, False, True)),  # equal length
    (_header(tools=(TOOL_B, TOOL_A)), _header(tools=(TOOL_A, TOOL_B)), (True, True, True, False, True)),  # in order
    (_header(config=freeze({"provider": "p", "model": "n"})), _header(), (False, True, True, True, True)),
])
def test_HDR_4_each_clause_is_decided_on_its_own_field(a: EpochHeader, b: EpochHeader, clauses: tuple[bool, ...]) -> None:
    """HDR-4 clause by clause, (configEq, system, prefix, tools, D08's adapterDefaults): each differing field fails
    its own clause only."""
    assert hdr4_clauses(a, b) == clauses and hdr4_clauses(b, a) == clauses


@pytest.mark.parametrize(("a", "b", "equal"), [
    (_header(system="{{system}}"), _header(system="{{system}}"), True),
    (_header(system="{{system}}"), _header(system="s"), False),
    (_header(system="s"), _header(system="{{system}}"), False),
    (_header(tools="{{tools}}"), _header(tools=(TOOL_A,)), False),
    (_header(message_prefix=("{{messagePrefix}}",)), _header(message_prefix=PREFIX), False),  # LEG-8: entry by entry
])
def test_HDR_4_a_placeholder_in_either_header_leaves_the_one_clause_of_whole_header_identity(
        a: EpochHeader, b: EpochHeader, equal: bool) -> None:
    """Q-15 / FMT-6: "A header holding a placeholder: JSON identity of the whole header": a placeholder in one header
    (either one) or in both replaces HDR-4's field clauses by that single clause."""
    assert hdr4_clauses(a, b) == (equal,) and hdr4_clauses(b, a) == (equal,)
    assert header_eq(a, b) is equal
