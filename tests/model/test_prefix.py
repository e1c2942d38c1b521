"""PFX: the session-prefix waterfall as data (model/prefix.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionspec.model.jsonval import JsonObject, js_stringify
from sessionspec.model.prefix import (
    Contributor,
    Idiom,
    compose,
    frozen_copy,
    prefix_message,
)
from sessionspec.spec.probes import MUTATION_MARK, HeldObjects


def _c(text: str, idiom: Idiom = Idiom.PREPEND, *, inject: JsonObject | None = None, throws: str | None = None,
       mutate_after: bool = False) -> Contributor:
    return Contributor(idiom=idiom, content=(prefix_message(text),), inject=inject, throws=throws,
                       mutate_after=mutate_after)


def _texts(held: list[object]) -> list[str]:
    out: list[str] = []
    for m in frozen_copy(held):
        assert isinstance(m, JsonObject)
        content = m["content"]
        assert isinstance(content, tuple) and isinstance(content[0], JsonObject)
        text = content[0]["text"]
        assert isinstance(text, str)
        out.append(text)
    return out


def test_PFX_3_no_contributor_yields_the_empty_seed() -> None:
    result = compose(())
    assert result.failure is None and result.held == [] and frozen_copy(result.held) == ()


def test_PFX_4_prepend_idiom_gives_registration_order() -> None:
    assert _texts(compose((_c("one"), _c("two"), _c("three"))).held) == ["one", "two", "three"]


def test_PFX_4_append_idiom_gives_reverse_registration_order() -> None:
    cs = tuple(_c(t, Idiom.APPEND) for t in ("one", "two", "three"))
    assert _texts(compose(cs).held) == ["three", "two", "one"]


def test_PFX_4_mixed_idioms_unwind_innermost_first() -> None:
    """Scenario b: P1 prepend, A1 append, P2 prepend -> [P1, P2, A1]."""
    cs = (_c("P1"), _c("A1", Idiom.APPEND), _c("P2"), Contributor(idiom=Idiom.PREPEND, content=()))
    assert _texts(compose(cs).held) == ["P1", "P2", "A1"]


@given(st.lists(st.tuples(st.sampled_from(list(Idiom)), st.text(max_size=3)), max_size=6))
def test_PFX_4_waterfall_is_prepends_in_order_then_appends_reversed(spec: list[tuple[Idiom, str]]) -> None:
    cs = tuple(_c(f"{i}:{t}", idiom) for i, (idiom, t) in enumerate(spec))
    prepends = [f"{i}:{t}" for i, (idiom, t) in enumerate(spec) if idiom is Idiom.PREPEND]
    appends = [f"{i}:{t}" for i, (idiom, t) in enumerate(spec) if idiom is Idiom.APPEND]
    assert _texts(compose(cs).held) == prepends + appends[::-1]


def test_PFX_12_a_throw_fails_the_waterfall_and_earlier_injects_stay() -> None:
    inject = JsonObject((("content", ()), ("source", JsonObject((("kind", "plugin"),)))))
    cs = (_c("good", inject=inject), _c("bad", throws="boom"), _c("never", inject=inject))
    result = compose(cs)
    assert result.failure is not None and result.failure.message == "boom"
    assert result.held == [] and result.injects == (inject,)


def test_PFX_8_injects_run_in_registration_order() -> None:
    a = JsonObject((("content", ()), ("source", "a")))
    b = JsonObject((("content", ()), ("source", "b")))
    assert compose((_c("x", Idiom.APPEND, inject=a), _c("y", inject=b))).injects == (a, b)


def test_PFX_6_the_frozen_copy_ignores_a_contributor_mutating_its_reference() -> None:
    result = compose((_c("mine", mutate_after=True), _c("other")))
    cached = frozen_copy(result.held)
    before = js_stringify(cached)
    held = HeldObjects()
    held.remember(result)
    held.edit()
    assert js_stringify(cached) == before
    # The contributor's own object did change: an aliasing cache would see it.
    assert MUTATION_MARK in js_stringify(frozen_copy(result.held))
    assert MUTATION_MARK not in before


def test_PFX_4_dispatch_reaches_global_and_own_agent_listeners_only() -> None:
    cs = (_c("global"), Contributor(idiom=Idiom.PREPEND, content=(prefix_message("mine"),), scope="a"),
          Contributor(idiom=Idiom.PREPEND, content=(prefix_message("theirs"),), scope="b",
                      inject=JsonObject((("content", ()),)), throws="never invoked"))
    result = compose(cs, "a")
    # The other agent's listener is not invoked: it neither contributes, injects nor throws.
    assert result.failure is None and result.injects == ()
    assert _texts(result.held) == ["global", "mine"]
    assert _texts(compose(cs[:2], None).held) == ["global"]


def test_PFX_3_the_seed_is_frozen_and_the_fallback_returns_it_empty() -> None:
    from sessionspec.model.prefix import EMPTY_SEED

    assert EMPTY_SEED == () and isinstance(EMPTY_SEED, tuple)  # no in-place mutation is possible
    # Only returned contributions reach the result: a contributor of nothing adds nothing.
    assert frozen_copy(compose((Contributor(idiom=Idiom.PREPEND, content=()),)).held) == ()
