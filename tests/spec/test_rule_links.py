"""The registry's links say who defines each rule (issue 14).

One implementing definition per rule: ``@implements`` marks the one normative
definition in ``model/``; ``@decides`` marks the model functions ``check`` runs to decide a rule in a log;
properties claim only property IDs.  Every rule of the book is defined by the model,
audited by the checker, or says why not in spec/status.py (tests/spec/test_rule_status.py).
"""

from __future__ import annotations

import inspect
import re

from sessionspec.model.rules import IMPLEMENTATIONS
from sessionspec.spec.registry import load_definitions, rules


def _plain(text: str) -> str:
    """Whitespace, backticks, asterisks and quote marks aside: Markdown (the rule book) and reST
    (docstrings) spell them differently."""
    return re.sub(r'[`\s*"\\]+', " ", text).strip()


def _model_definitions(rule_id: str) -> list[str]:
    return sorted({f"{f.__module__}.{f.__qualname__}" for f in IMPLEMENTATIONS.get(rule_id, []) if f.__module__.startswith("sessionspec.model.")})


def test_no_rule_has_two_implementing_definitions() -> None:
    load_definitions()
    twice = {r.id: _model_definitions(r.id) for r in rules() if len(_model_definitions(r.id)) > 1}
    assert twice == {}


def test_only_model_functions_implement_rules() -> None:
    """Outside model/, @implements is for property IDs only."""
    load_definitions()
    ids = {r.id for r in rules()}
    outside = sorted(f"{rule_id}: {f.__module__}.{f.__qualname__}" for rule_id, fs in IMPLEMENTATIONS.items()
                     for f in fs if rule_id in ids and not f.__module__.startswith("sessionspec.model."))
    assert outside == []


def test_no_function_defines_more_than_three_rules_at_any_length() -> None:
    """One named function per rule step (consensus-specs' process_x -> apply_x): a function that
    claims many rules hides which of its lines is which rule's.  Length does not excuse it."""
    load_definitions()
    ids = {r.id for r in rules()}
    claimed: dict[str, set[str]] = {}
    for rule_id, functions in IMPLEMENTATIONS.items():
        for f in functions:
            if rule_id in ids:
                claimed.setdefault(f"{f.__module__}.{f.__qualname__}", set()).add(rule_id)
    assert {name: len(rule_ids) for name, rule_ids in claimed.items() if len(rule_ids) > 3} == {}


def test_every_implementing_function_quotes_the_rule_it_implements() -> None:
    """Issue 28: a reviewer reads a rule's code beside its text, consensus-specs style: each
    implementing function's docstring holds the normative sentence of every rule it implements,
    verbatim (_plain's normalisation).  8 of 157 did."""
    load_definitions()
    by_id = {r.id: r for r in rules()}
    unquoted = sorted(f"{f.__module__}.{f.__qualname__}: {rule_id}" for rule_id, functions in IMPLEMENTATIONS.items()
                      if rule_id in by_id for f in functions
                      if _plain(by_id[rule_id].sentence) not in _plain(inspect.getdoc(f) or ""))
    assert unquoted == []


RERUN_WORDS = 8


def _requoted(sentence: str, doc: str) -> str | None:
    """What of `sentence` `doc` says again besides its one verbatim quote: the whole sentence a
    second time, or its first run of RERUN_WORDS consecutive words found elsewhere in the docstring.
    None if the sentence is not quoted at all (the test above reports that)."""
    if sentence not in doc:
        return None
    if doc.count(sentence) > 1:
        return "the whole sentence, twice"
    rest = doc.replace(sentence, " ", 1)
    words = sentence.split()
    runs = (" ".join(words[i:i + RERUN_WORDS]) for i in range(len(words) - RERUN_WORDS + 1))
    return next((run for run in runs if run in rest), None)


def test_every_implementing_function_quotes_its_rule_once() -> None:
    """Issue 44 item 6: a docstring quotes its rule once and adds only what the quote does not say.
    An older partial re-quote kept after the verbatim sentence drifts from the rule book unseen,
    because only the verbatim quote is tested; a run of 8 of the rule's words found again is such a
    re-quote (a paraphrase by copy).  Quoting a rule the function does not implement is not counted
    here.  28 pairs in 26 functions did."""
    load_definitions()
    by_id = {r.id: r for r in rules()}
    requoted = sorted(f"{f.__module__}.{f.__qualname__}: {rule_id}: {run}"
                      for rule_id, functions in IMPLEMENTATIONS.items() if rule_id in by_id for f in functions
                      if f.__module__.startswith("sessionspec.model.")
                      if (run := _requoted(_plain(by_id[rule_id].sentence), _plain(inspect.getdoc(f) or ""))))
    assert requoted == []


def test_requoted_finds_a_second_quote_and_a_copied_run() -> None:
    """The detector itself: it sees a second whole quote and a copied run of 8 words, and passes a
    lone quote with additions or a shorter shared run."""
    sentence = "A region transaction for (start, end) MUST first validate, without events: both seqs on the surface."
    once = f'CMP-13: "{sentence}" Returns the two surface positions.'
    assert _requoted(sentence, once) is None
    assert _requoted(sentence, f"{once} {sentence}") == "the whole sentence, twice"
    assert _requoted(sentence, f"{once} It MUST first validate, without events: both seqs on the surface.") == \
        "MUST first validate, without events: both seqs on"
    assert _requoted(sentence, f"{once} It MUST first validate, without events: both seqs ...") is None
    assert _requoted(sentence, "CMP-13 is about region transactions.") is None
