"""Layers point one way: model <- spec <- sessionspec (issue 28).

model/ is the normative definition: it imports only itself and the standard
library (plus typing_extensions).  spec/ states the rules' properties, machines
and strategies over the model: it imports the model, itself, the standard
library and Hypothesis, never the tool built on it (sessionspec/), whose
implementations it checks are passed in as arguments (``spec.machines.UnderTest``,
``spec.properties.CacheFactory``, ``spec.loop_properties.RequestPointFinder``,
``spec.compaction_properties.LogAudit``).  Every import counts, the ones inside
functions too, so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = frozenset(sys.stdlib_module_names)

ALLOWED = {
    "model": frozenset({"model", "typing_extensions"}),
    "spec": frozenset({"model", "spec", "typing_extensions", "hypothesis"}),
}


def imported_roots(path: Path) -> set[tuple[int, str]]:
    """(line, top-level package) of every absolute import in ``path``."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.add((node.lineno, node.module.split(".")[0]))
    return found


def upward_edges(layer: str) -> list[str]:
    allowed = ALLOWED[layer] | STDLIB
    return sorted(f"{path.relative_to(ROOT)}:{line} imports {root}"
                  for path in (ROOT / layer).rglob("*.py")
                  for line, root in imported_roots(path) if root not in allowed)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_is_below_it(layer: str) -> None:
    assert upward_edges(layer) == []


def test_the_scan_sees_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    """Control: a lazy import of the tool inside a function is found."""
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from sessionspec.check import audits\n    return audits\n", encoding="utf-8")
    assert (2, "sessionspec") in imported_roots(module)
