"""quality/run's wording-only mutants: a survivor that changes only the text a rejection gives for humans.

A ``Rejected`` is compared by rule and kind, never by reason (model/rejected.py), and conformance compares findings
the same way: a mutant that changes only the reason text (``"..."`` -> ``"XX...XX"``, upper case, a number inside an
f-string's message) changes no decision of the model.  Such survivors are counted apart, never silently: the report
gives the raw score, the score without the listed equivalents, and the score of the decisions (without both).

What is reason text is read from the mutated sources themselves, not from a list: the value of a ``reason=`` keyword,
and an argument passed to a reporting helper at a parameter the helper uses only inside ``reason=`` (``_veto(rule,
event, why)``, ``track.report(rule, event, why)``, ``bad(why)``).  A mutant that puts ``None`` there is *not* wording
only: a rejection must say why (the ``Rejected`` contract), so that mutant breaks the model.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from pathlib import Path

from mutation_copy import MUTATED, PREFIX

ORIGINAL = "__mutmut_orig"
REASON = "reason"
PLACEHOLDER = "<reason text>"


def _base(name: str) -> str | None:
    """The helper name of mutmut's copy of the original (``x_report__mutmut_orig``, ``xǁTrackǁreport__mutmut_orig``)."""
    if not name.endswith(ORIGINAL):
        return None
    stem = name.removesuffix(ORIGINAL)
    return stem.rsplit("ǁ", 1)[-1] if "ǁ" in stem else stem.removeprefix("x_")


def _only_in_reason(function: ast.FunctionDef, parameter: str) -> bool:
    """Whether ``parameter`` is read, and read only inside the value of some ``reason=`` keyword."""
    inside: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.keyword) and node.arg == REASON:
            inside.update(id(n) for n in ast.walk(node.value))
    reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == parameter]
    return bool(reads) and all(id(n) in inside for n in reads)


def _definitions(tree: ast.AST) -> Iterable[ast.FunctionDef]:
    """The function definitions of a mutated module, leaving out mutmut's mutated copies (``..__mutmut_3``) and
    everything inside them: a helper nested in a mutant may itself be the mutated part."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef):
            if "__mutmut_" in node.name and not node.name.endswith(ORIGINAL):
                continue
            yield node
        yield from _definitions(node)


def reason_parameters(trees: Iterable[ast.Module]) -> dict[str, set[tuple[int | None, str]]]:
    """Per helper name: its reason parameters as (positional index, name); a name defined more than once keeps only
    the parameters that are reason parameters at the same place in every definition (so a call is never misread)."""
    found: dict[str, list[set[tuple[int | None, str]]]] = {}
    for tree in trees:
        for node in _definitions(tree):
            name = _base(node.name) if node.name.endswith(ORIGINAL) else node.name
            if name is None:
                continue
            positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args) if a.arg not in ("self", "cls")]
            places: set[tuple[int | None, str]] = {(index, arg) for index, arg in enumerate(positional) if _only_in_reason(node, arg)}
            places |= {(None, a.arg) for a in node.args.kwonlyargs if _only_in_reason(node, a.arg)}
            found.setdefault(name, []).append(places)
    return {name: set.intersection(*sets) for name, sets in found.items() if set.intersection(*sets)}


def helpers_for(tree: ast.Module, everywhere: dict[str, set[tuple[int | None, str]]]) -> dict[str, set[tuple[int | None, str]]]:
    """The reason parameters a call in ``tree`` sees: its own module's helpers first (two modules may each have a
    private ``_veto`` with the reason at another place), then those of every module."""
    return {**everywhere, **reason_parameters([tree])}


def _callee(call: ast.Call) -> str | None:
    match call.func:
        case ast.Name(id=name) | ast.Attribute(attr=name):
            return name
        case _:
            return None


class _BlankReasons(ast.NodeTransformer):
    """Replace every text literal in a reason position by one placeholder (``None`` and other values stay)."""

    def __init__(self, helpers: dict[str, set[tuple[int | None, str]]]) -> None:
        self.helpers = helpers

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        places = self.helpers.get(_callee(node) or "", set())
        indexes = {index for index, _ in places if index is not None}
        names = {name for _, name in places} | {REASON}
        node.args = [_blank(a) if i in indexes else a for i, a in enumerate(node.args)]
        for keyword in node.keywords:
            if keyword.arg in names:
                keyword.value = _blank(keyword.value)
        return node


def _blank(value: ast.expr) -> ast.expr:
    text = isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, str))
    return ast.Constant(PLACEHOLDER) if text else value


def _shape(function: ast.FunctionDef, helpers: dict[str, set[tuple[int | None, str]]] | None) -> str:
    """The function's parameters and body as text, with the reasons blanked when ``helpers`` is given."""
    body = [copy.deepcopy(statement) for statement in function.body]
    if helpers is not None:
        body = [_BlankReasons(helpers).visit(statement) for statement in body]
    return "\n".join([ast.dump(function.args), *(ast.dump(statement) for statement in body)])


def wording_only(original: ast.FunctionDef, mutant: ast.FunctionDef, helpers: dict[str, set[tuple[int | None, str]]]) -> bool:
    """Whether the mutant differs from the original, and only in the text of reasons."""
    return _shape(original, None) != _shape(mutant, None) and _shape(original, helpers) == _shape(mutant, helpers)


def wording_only_mutants(workdir: Path, names: Iterable[str]) -> set[str]:
    """Of ``names`` (mutmut names), those that change only reason text, read from the mutated sources in ``workdir``."""
    root = workdir / "mutants" / MUTATED
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(root.rglob("*.py"))}
    everywhere = reason_parameters(trees.values())
    functions: dict[tuple[Path, str], ast.FunctionDef] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and "__mutmut_" in node.name:
                functions[(path, node.name)] = node
    local: dict[Path, dict[str, set[tuple[int | None, str]]]] = {}
    out: set[str] = set()
    for name in names:
        module, _, key = name.removeprefix(PREFIX).rpartition(".")
        path = root / (module.replace(".", "/") + ".py")
        stem, _, _ = key.rpartition("__mutmut_")
        original, mutant = functions.get((path, stem + ORIGINAL)), functions.get((path, key))
        if original is not None and mutant is not None and wording_only(
                original, mutant, local.setdefault(path, helpers_for(trees[path], everywhere))):
            out.add(name)
    return out
