"""The conformance kit's layout (issue 27, part 8): every module imports on its own, and no two modules
import each other at load time.

A cycle among module-level imports works or fails depending on which module a program happens to import
first; so each module is imported alone, in a fresh interpreter, and the module-level import graph is
checked acyclic from the source (a function-level import, made when the function runs, cannot cycle at
load time and is left out).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sessionspec" / "conformance"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _load_time_imports(path: Path) -> set[str]:
    """The kit's modules ``path`` imports at module level (``import`` and ``from ... import`` statements
    outside any function; ``from package import module`` counts the module)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as the list of modules around it), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_kit_is_the_subpackages_the_issue_names() -> None:
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert packages == {"sessionspec.conformance", "sessionspec.conformance.adapter", "sessionspec.conformance.conform",
                        "sessionspec.conformance.vectors", "sessionspec.conformance.vectors.groups"}
    loose = sorted(name for name in MODULES if name.count(".") == 2 and name not in packages)
    assert loose == ["sessionspec.conformance.mutants"]


def test_no_module_level_import_cycle() -> None:
    graph = {name: _load_time_imports(path) - {name} for name, path in MODULES.items()}
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
