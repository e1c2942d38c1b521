"""Layers point one way: model <- spec <- sessionspec (issue 28), all under one import name (issue 42).

model/ and spec/ are the packages ``sessionspec.model`` and ``sessionspec.spec``; a layer below is
named by its package (``sessionspec.model.x`` is in the layer ``model``).  model/ is the normative definition: it imports only itself and the standard
library (plus typing_extensions).  spec/ states the rules' properties, machines
and strategies over the model: it imports the model, itself, the standard
library and Hypothesis, never the tool built on it (sessionspec/), whose
implementations it checks are passed in as arguments (``spec.machine_checks.UnderTest``,
``spec.derivation_cache.CacheFactory``, ``spec.loop_properties.RequestPointFinder``,
``spec.compaction_properties.LogAudit``).  Every import counts, the ones inside
functions too, so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB = frozenset(sys.stdlib_module_names)

ALLOWED = {
    "model": frozenset({"model", "typing_extensions"}),
    "spec": frozenset({"model", "spec", "typing_extensions", "hypothesis"}),
}
# The layers that live under the tool's import name (sessionspec/model -> ../model, sessionspec/spec -> ../spec).
NAMESPACED: Final = ("model", "spec")


def layer_of(module: str) -> str:
    """The layer of an imported module: ``sessionspec.model.x`` -> ``model``; another ``sessionspec.*`` ->
    ``sessionspec``; a top-level ``model`` or ``spec`` (someone else's package, once installed) -> ``top-level model``."""
    parts = module.split(".")
    if parts[0] == "sessionspec" and len(parts) > 1 and parts[1] in NAMESPACED:
        return parts[1]
    if parts[0] in NAMESPACED:
        return f"top-level {parts[0]}"
    return parts[0]


def imported_roots(path: Path) -> set[tuple[int, str]]:
    """(line, layer) of every absolute import in ``path``."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((node.lineno, layer_of(alias.name)) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            # ``from sessionspec import model`` imports the layer it names, not the tool.
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "sessionspec" else [node.module]
            found.update((node.lineno, layer_of(name)) for name in names)
        elif _imports_by_name(node):
            assert isinstance(node, ast.Call)
            found.update((node.lineno, layer_of(arg.value)) for arg in node.args[:1]
                         if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return found


def _imports_by_name(node: ast.AST) -> bool:
    """``importlib.import_module("x")`` or ``__import__("x")``: an import the statement scan would miss."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
    return name in ("import_module", "__import__")


def upward_edges(layer: str) -> list[str]:
    allowed = ALLOWED[layer] | STDLIB
    return sorted(f"{path.relative_to(ROOT)}:{line} imports {root}"
                  for path in (ROOT / layer).rglob("*.py")
                  for line, root in imported_roots(path) if root not in allowed)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_is_below_it(layer: str) -> None:
    assert upward_edges(layer) == []


def _python_sources() -> list[Path]:
    """Every Python file of the repository (scripts without a suffix too), the virtualenv, the data and the links aside."""
    skip = {".venv", ".git", "mutants", "build", "dist"}
    found = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in skip or rel.parts[:2] == ("tests", "data") or rel.parts[:2] in {("sessionspec", n) for n in NAMESPACED}:
            continue
        if path.is_file() and (path.suffix == ".py" or (not path.suffix and path.read_bytes()[:40].startswith(b"#!") and b"python" in path.read_bytes()[:80])):
            found.append(path)
    return found


def test_nothing_imports_model_or_spec_by_their_top_level_names() -> None:
    """Issue 42: a downstream project's own ``model`` or ``spec`` package must stay its own.  Inside the checkout
    ``import model`` would still work (the repository root is on the path), and would load a second copy of every
    definition beside ``sessionspec.model``'s; so no file of the repository may use those names."""
    found = sorted(f"{path.relative_to(ROOT)}:{line} imports {layer}"
                   for path in _python_sources() for line, layer in imported_roots(path) if layer.startswith("top-level"))
    assert found == []


def test_the_scan_sees_a_top_level_model_import(tmp_path: Path) -> None:
    """Control: the name a downstream project owns is seen in both import forms."""
    module = tmp_path / "probe.py"
    module.write_text("import model.surface\nfrom spec import registry\nfrom sessionspec.model import log\nfrom sessionspec import spec\n",
                      encoding="utf-8")
    assert imported_roots(module) == {(1, "top-level model"), (2, "top-level spec"), (3, "model"), (4, "spec")}


def test_the_scan_sees_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    """Control: a lazy import of the tool inside a function is found."""
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from sessionspec.check import audits\n    return audits\n", encoding="utf-8")
    assert (2, "sessionspec") in imported_roots(module)


def test_the_scan_sees_an_import_by_name(tmp_path: Path) -> None:
    """Control: the registry used to load two checker modules through importlib by name."""
    module = tmp_path / "probe.py"
    module.write_text('import importlib\nimportlib.import_module("sessionspec.check.audit")\n', encoding="utf-8")
    assert (2, "sessionspec") in imported_roots(module)


def test_a_command_imports_only_its_own_module() -> None:
    """`sessionspec rules` runs without the checker and its C parser (issue 28: it failed when msgspec was missing)."""
    probe = (
        "import sys\n"
        "sys.modules['msgspec'] = None  # importing it now raises ImportError, as if it were not installed\n"
        "from sessionspec.cli import main\n"
        "code = main(['rules', '--area', 'PFX'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('sessionspec.check') or (m == 'msgspec' and sys.modules[m] is not None))\n"
        "print('RESULT', code, loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.stdout.splitlines()[-1] == "RESULT 0 []", done.stdout[-2000:] + done.stderr[-2000:]
    assert "PFX-1 " in done.stdout


def test_no_test_module_imports_another() -> None:
    """Issue 28: builders shared by tests live in one support module (tests/support.py), never in a test module."""
    found = sorted(f"{path.name}:{line} imports {name}"
                   for path in _test_sources()
                   for line, name in _imported_modules(path) if name.split(".")[-1].startswith("test_"))
    assert found == []


def _test_sources() -> list[Path]:
    """Every Python file of tests/ at any depth (tests by subject live in tests/<area>/), the data aside."""
    return sorted(path for path in (ROOT / "tests").rglob("*.py") if "data" not in path.relative_to(ROOT / "tests").parts[:1])


def _imported_modules(path: Path) -> set[tuple[int, str]]:
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add((node.lineno, node.module))
    return found


def test_every_d08_branch_of_the_model_names_its_dia_rule() -> None:
    """Issue 28: D08 is an overlay on the A55 model (docs/index.md, "D08 as an overlay"); a function that
    branches on the dialect says which DIA rule the branch applies, in its docstring or a comment."""
    import re

    silent = []
    for path in sorted((ROOT / "model").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef):
                continue
            branches = any(isinstance(n, ast.Attribute) and n.attr == "D08" and isinstance(n.value, ast.Name)
                           and n.value.id == "Dialect" for n in ast.walk(node))
            body = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if branches and not re.search(r"DIA-\d+", ast.get_docstring(node) or "") and not re.search(r"#.*DIA-\d+", body):
                silent.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert silent == []


def test_no_test_module_imports_conftest() -> None:
    """Issue 28: conftest.py is pytest's (profiles, hooks); the data paths and builders tests share are
    tests/support.py, imported like any module."""
    found = sorted(f"{path.name}:{line}" for path in _test_sources()
                   for line, name in _imported_modules(path) if name.split(".")[-1] == "conftest")
    assert found == []
